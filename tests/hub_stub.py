"""A stand-in for the Hugging Face hub's HTTP interface on the loopback interface.

It answers the requests huggingface_hub makes to download a model (revision info, the
file tree, HEAD and GET of each file, ranges included) for model folders saved in a test,
so the real client downloads and caches them through ``HF_ENDPOINT``. It keeps every
request it was asked (``requests``), can send its files slowly (``bytes_per_second``,
to cancel a download halfway) and can stop answering at all (``silent``: a hub that
accepts connections and never replies).
"""
from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

CHUNK = 64 * 1024


class Commit:
    """One commit of a model repository: its files (path -> bytes)."""

    def __init__(self, folder: Path, sha: str):
        self.files = {p.relative_to(folder).as_posix(): p.read_bytes()
                      for p in sorted(folder.rglob("*")) if p.is_file()}
        self.commit = sha

    def etag(self, path: str) -> str:
        return hashlib.sha256(self.files[path]).hexdigest()


class Repo:
    """A model repository: its commits, and the refs ("main", tags) naming them."""

    def __init__(self):
        self.commits: dict[str, Commit] = {}
        self.refs: dict[str, str] = {}

    def at(self, revision: str) -> Commit | None:
        return self.commits.get(self.refs.get(revision, revision))


class Hub:
    """The stand-in hub: ``add(repo_id, folder)`` serves a folder as the repository's
    newest commit (its main branch); ``url`` is its address."""

    def __init__(self):
        self.repos: dict[str, Repo] = {}
        self.requests: list[tuple[str, str]] = []      # (method, path)
        self.bytes_per_second: float | None = None
        self.silent = False
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def add(self, repo_id: str, folder: Path, tags: tuple[str, ...] = ()) -> str:
        """Serve ``folder`` as a new commit of ``repo_id`` (now its main); its hash."""
        repo = self.repos.setdefault(repo_id, Repo())
        sha = hashlib.sha1(f"{repo_id}:{len(repo.commits)}".encode()).hexdigest()
        repo.commits[sha] = Commit(Path(folder), sha)
        repo.refs.update({"main": sha, **{tag: sha for tag in tags}})
        return sha

    def files_fetched(self) -> list[str]:
        """The files downloaded so far (GET of …/resolve/…), by name."""
        return [path.rsplit("/", 1)[-1] for method, path in self.requests
                if method == "GET" and "/resolve/" in path]

    def __enter__(self) -> "Hub":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.silent = False
        self._server.shutdown()
        self._server.server_close()


# a repository id is ORG/NAME, or NAME alone (gpt2)
REVISION = re.compile(r"^/api/models/(?P<repo>[^/]+(?:/[^/]+)?)/revision/(?P<rev>[^/?]+)$")
TREE = re.compile(r"^/api/models/(?P<repo>[^/]+(?:/[^/]+)?)/tree/(?P<rev>[^/?]+)(/.*)?$")
RESOLVE = re.compile(r"^/(?P<repo>[^/]+(?:/[^/]+)?)/resolve/(?P<rev>[^/]+)/(?P<path>.+)$")


def _handler(hub: Hub):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args) -> None:       # quiet
            pass

        def do_HEAD(self) -> None:
            self._answer(body=False)

        def do_GET(self) -> None:
            self._answer(body=True)

        def _answer(self, body: bool) -> None:
            path = unquote(urlsplit(self.path).path)
            hub.requests.append((self.command, path))
            if hub.silent:
                while hub.silent:
                    time.sleep(0.05)
                self.close_connection = True
                return
            for pattern, answer in ((REVISION, self._revision), (TREE, self._tree),
                                    (RESOLVE, self._file)):
                match = pattern.match(path)
                if match:
                    repo = hub.repos.get(match["repo"])
                    if repo is None:
                        return self._error(404, "RepoNotFound", "Repository not found")
                    commit = repo.at(match["rev"])
                    if commit is None:
                        return self._error(404, "RevisionNotFound", "Invalid rev id")
                    return answer(commit, match, body)
            self._error(404, "EntryNotFound", "no such route")

        def _json(self, data) -> None:
            payload = json.dumps(data).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def _error(self, status: int, code: str, message: str) -> None:
            payload = json.dumps({"error": message}).encode()
            self.send_response(status)
            self.send_header("X-Error-Code", code)
            self.send_header("X-Error-Message", message)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(payload)

        def _revision(self, repo: Commit, match, body: bool) -> None:
            self._json({"id": match["repo"], "modelId": match["repo"], "sha": repo.commit,
                        "private": False,
                        "siblings": [{"rfilename": name} for name in repo.files]})

        def _tree(self, repo: Commit, match, body: bool) -> None:
            self._json([{"type": "file", "path": name, "size": len(data),
                         "oid": hashlib.sha1(data).hexdigest()}
                        for name, data in repo.files.items()])

        def _file(self, repo: Commit, match, body: bool) -> None:
            name = match["path"]
            if name not in repo.files:
                return self._error(404, "EntryNotFound", f"{name} does not exist")
            data = repo.files[name]
            start = 0
            ranged = re.match(r"bytes=(\d+)-", self.headers.get("Range", ""))
            if ranged and body:
                start = int(ranged[1])
            self.send_response(206 if start else 200)
            self.send_header("ETag", f'"{repo.etag(name)}"')
            self.send_header("X-Repo-Commit", repo.commit)
            self.send_header("Content-Length", str(len(data) - start))
            if start:
                self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
            self.end_headers()
            if not body:
                return
            for offset in range(start, len(data), CHUNK):
                piece = data[offset:offset + CHUNK]
                if hub.bytes_per_second:
                    time.sleep(len(piece) / hub.bytes_per_second)
                try:
                    self.wfile.write(piece)
                except (BrokenPipeError, ConnectionResetError):
                    return
    return Handler
