"""The shape of the code (the README's "How it is built"): layers that import one way
only, no import circle between any two modules, nothing below the GUI that loads Qt, the
document and the options readable without torch, rooms of few modules, files short of the
cap, and module paths in docstrings and comments that exist."""
from __future__ import annotations

import ast
import io
import re
import subprocess
import sys
import tokenize
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "posviz"

# The layers, lowest first. A module imports its own layer and the layers below it;
# the command line and the Python API import the GUI only inside a function (a command
# or a call that draws no figure never loads Qt).
LAYERS = ("version", "errors", "boot", "models", "analysis", "document", "views",
          "runtime", "desktop", "gui", "api", "cli", "__main__")
LAZY_ONLY = {("cli", "gui"), ("api", "gui")}
# Within the models, lowest first: the encodings' records, the options and configuration
# that read them, what a run records, the way in and the backend interface, the files of
# other tools read (formats), a checkpoint's tokenizer, corpus and record, the built-in
# model, the memory estimate, the built-in model's training, then the Hugging Face models.
# A wing's modules are named where the order runs through it.
MODEL_PARTS = ("encodings", "options", "config", "facts", "orders", "maps", "trace", "hooks",
               "request", "backend", "formats", "training.bpe", "training.corpus",
               "training.checkpoint", "builtin.transformer", "builtin.backend",
               "limits.memory", "training.order_use", "training.train", "hf")
QT = ("PySide6", "PyQt5", "PyQt6", "pyqtgraph", "qtpy")


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def imports(source: str, module: str, is_package: bool) -> list[tuple[str, bool]]:
    """(imported module, inside a function?) for every import statement in ``source``,
    except those under ``if TYPE_CHECKING``. ``from a import b`` imports the module a.b
    when there is one, else a."""
    package = module.split(".") if is_package else module.split(".")[:-1]
    found = []

    def visit(node, lazy: bool) -> None:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            return
        if isinstance(node, ast.Import):
            found.extend((alias.name, lazy) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else []
            target = ".".join(base + ([node.module] if node.module else []))
            for alias in node.names:
                inner = f"{target}.{alias.name}"
                found.append((inner if inner in MODULES else target, lazy))
        inner = lazy or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        for child in ast.iter_child_nodes(node):
            visit(child, inner)

    visit(ast.parse(source), False)
    return list(dict.fromkeys(found))


def module_graph() -> dict[str, dict[str, bool]]:
    """posviz module -> {posviz module it imports: only inside functions?}."""
    graph = {}
    for module, path in MODULES.items():
        edges: dict[str, bool] = {}
        for target, lazy in imports(path.read_text(encoding="utf-8"), module,
                                    path.name == "__init__.py"):
            if target in MODULES and target != module:
                edges[target] = edges.get(target, True) and lazy
        graph[module] = edges
    return graph


def layer(module: str, layers=LAYERS, depth: int = 1) -> str | None:
    parts = module.split(".")
    return parts[depth] if len(parts) > depth and parts[depth] in layers else None


def model_part(module: str) -> str | None:
    """The entry of MODEL_PARTS a module of the models belongs to: its wing's module
    ("training.bpe") when the order names it, else its wing or module ("hf")."""
    rest = module.split(".")[2:]
    return next((".".join(rest[:k]) for k in (2, 1)
                 if len(rest) >= k and ".".join(rest[:k]) in MODEL_PARTS), None)


def cycle(graph) -> list[str]:
    """One cycle (its first node repeated at the end), or [] when there is none."""
    done: set = set()

    def walk(node, path):
        if node in path:
            return path[path.index(node):] + [node]
        if node in done:
            return []
        for nxt in graph.get(node, {}):
            found = walk(nxt, path + [node])
            if found:
                return found
        done.add(node)
        return []

    for start in sorted(graph):
        found = walk(start, [])
        if found:
            return found
    return []


def test_the_import_scanner_sees_relative_lazy_and_typing_imports():
    source = ("from ..document.files import check_folder\nfrom . import report\n"
              "import posviz.gui.app\n"
              "from typing import TYPE_CHECKING\n"
              "if TYPE_CHECKING:\n    from ..views import mosaic\n"
              "def run():\n    from ..gui.plots import panel\n")
    assert imports(source, "posviz.cli.export", False) == [
        ("posviz.document.files", False), ("posviz.cli.report", False),
        ("posviz.gui.app", False), ("typing", False), ("posviz.gui.plots.panel", True)]


def test_the_cycle_finder():
    assert cycle({"a": {"b": 0}, "b": {"c": 0}}) == []
    assert cycle({"a": {"b": 0}, "b": {"c": 0}, "c": {"b": 0}}) == ["b", "c", "b"]


def test_every_module_is_in_a_layer():
    loose = [m for m in MODULES if m != "posviz" and layer(m) is None]
    assert not loose, f"modules outside the layers {LAYERS}: {loose}"


def test_layers_import_downward_only():
    """Imports inside functions count too: a lazy import is still a dependency."""
    wrong = []
    for module, edges in module_graph().items():
        own = layer(module)
        for target, lazy in edges.items():
            other = layer(target)
            if own is None or other is None or other == own:
                continue
            allowed = (LAYERS.index(other) < LAYERS.index(own)
                       and ((own, other) not in LAZY_ONLY or lazy))
            if not allowed:
                wrong.append(f"{module} imports {target}" + " (in a function)" * lazy)
    assert not wrong, f"imports against the layers {' < '.join(LAYERS)}:\n" + "\n".join(wrong)


def test_the_models_import_downward_only():
    wrong = [f"{module} imports {target}"
             for module, edges in module_graph().items() if layer(module) == "models"
             for target in edges if layer(target) == "models"
             and model_part(module) and model_part(target)
             and MODEL_PARTS.index(model_part(target)) > MODEL_PARTS.index(model_part(module))]
    assert not wrong, f"imports against {' < '.join(MODEL_PARTS)}:\n" + "\n".join(wrong)


def test_no_import_circle_between_any_two_modules():
    graph = module_graph()
    found = cycle(graph)
    assert found == [], "an import circle: " + " -> ".join(found)


def test_nothing_below_the_gui_loads_qt():
    below = [m for m in MODULES if layer(m) in LAYERS[:LAYERS.index("desktop")]]
    code = (f"import sys, importlib\nfor m in {below!r}: importlib.import_module(m)\n"
            f"print(','.join(m for m in sys.modules if m.split('.')[0] in {QT!r}))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "", f"Qt loaded below the GUI: {result.stdout}"
    assert len(below) >= 40


def test_the_document_loads_without_torch():
    """The window builds a ModelSpec and reads the options before its first paint, and
    the command line validates before any model: none of that may wait for torch."""
    modules = ["posviz.models.options", "posviz.models.config", "posviz.document.spec",
               "posviz.document.events", "posviz.document.session", "posviz.document.files"]
    code = (f"import sys, importlib\nfor m in {modules!r}: importlib.import_module(m)\n"
            "print('torch' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"


def test_no_source_file_is_long():
    long = {m: n for m, p in MODULES.items()
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > 400}
    assert not long, f"files over 400 lines: {long}"


def hidden_imports(source: str) -> list[str]:
    """Modules of posviz imported by name at run time (importlib.import_module or
    __import__ with a relative or posviz.* name): dependencies the scanner cannot see."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, ast.Call) and node.args
                and ast.unparse(node.func).split(".")[-1] in ("import_module", "__import__")):
            name = ast.unparse(node.args[0])
            if name.strip("'\"").startswith((".", "posviz.")) or "__package__" in ast.unparse(
                    node):
                found.append(name)
    return found


def test_modules_are_imported_by_import_statements():
    """An import by name at run time would hide an edge of the graph above (and so an
    import circle): the window hands the controller the plots it imports, for one."""
    assert hidden_imports("import importlib\nimportlib.import_module('.plots', __package__)"
                          "\nimportlib.import_module('pyqtgraph')") == ["'.plots'"]
    hidden = {m: found for m, p in MODULES.items()
              if (found := hidden_imports(p.read_text(encoding="utf-8")))}
    assert not hidden, f"modules imported by name: {hidden}"


# -- rooms, lengths and names ---------------------------------------------------------
CAP = 400                       # lines of a source file (test_no_source_file_is_long)
NEAR = 20                       # a file this close to the cap is cut by responsibility
ROOMS = {"gui": 25, "models": 12}   # most modules directly in the folder, __init__.py counted
FORMER = ("core",)              # names the package once had: a reference to one is stale
REFERENCE = re.compile(r"(?<![\w./-])(?:posviz\.)?((?:%s)(?:\.[A-Za-z_]\w*)+)"
                       % "|".join(LAYERS[:-1] + FORMER))
PATH = re.compile(r"(?<![\w./-])(?:posviz/)?((?:%s)(?:/\w+)*\.py)\b"
                  % "|".join(LAYERS[:-1] + FORMER))


def test_rooms_hold_few_modules():
    """A reader finds the architecture in the folders' names: a room too full is split
    into wings by what its modules are for."""
    full = {room: n for room, most in ROOMS.items()
            if (n := len(list((PACKAGE / room).glob("*.py")))) > most}
    assert not full, f"modules directly in a room, over {ROOMS}: {full}"


def test_few_files_sit_near_the_cap():
    near = {m: n for m, p in MODULES.items()
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > CAP - NEAR}
    assert len(near) <= 3, f"files within {NEAR} lines of {CAP} (at most 3): {near}"


WORKAROUNDS = ("boot.py", "gui/plots/workarounds.py", "models/hf/workarounds.py")
WORKAROUND_LINES = 300          # the start-up and the patches of other libraries, together


def test_the_workarounds_stay_small():
    """Machinery pays its way: the start-up and the patches of other libraries stay few
    lines, their measurements in benchmarks/README.md, not in their docstrings."""
    lines = {name: len((PACKAGE / name).read_text(encoding="utf-8").splitlines())
             for name in WORKAROUNDS}
    assert sum(lines.values()) <= WORKAROUND_LINES, f"over {WORKAROUND_LINES} lines: {lines}"


def defined_names(path: Path) -> set[str]:
    """The names a module binds at its top level (and in its top-level ifs and trys)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
    return names


def missing(reference: str) -> str | None:
    """The part of a dotted path below posviz ("models.hf.families.Family") that names
    no module or package, or no name of the package it follows; None when it exists."""
    parts, folder = reference.split("."), PACKAGE
    for i, part in enumerate(parts):
        if (folder / part / "__init__.py").exists():
            folder = folder / part
        elif (folder / f"{part}.py").exists():
            return None                     # a module: what follows are its names
        elif i and part in defined_names(folder / "__init__.py"):
            return None
        else:
            return ".".join(parts[:i + 1])
    return None


def prose(path: Path) -> list[tuple[int, str]]:
    """(line, text) of every docstring and comment of a Python file."""
    source = path.read_text(encoding="utf-8")
    found = [(tok.start[0], tok.string) for tok in
             tokenize.generate_tokens(io.StringIO(source).readline)
             if tok.type == tokenize.COMMENT]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            if (doc := ast.get_docstring(node, clean=False)) is not None:
                found.append((node.body[0].lineno, doc))
    return found


def stale_names(path: Path, texts) -> list[str]:
    where = path.relative_to(PACKAGE.parent) if path.is_absolute() else path
    wrong = []
    for line, text in texts:
        for match in REFERENCE.finditer(text):
            if gone := missing(match.group(1)):
                wrong.append(f"{where}:{line}: {match.group(0)} (no {gone})")
        for match in PATH.finditer(text):
            if not (PACKAGE / match.group(1)).exists():
                wrong.append(f"{where}:{line}: {match.group(0)} (no such file)")
    return wrong


def test_the_name_checker():
    assert missing("models.hf.families.Family") is None
    assert missing("views.shown.Shown") is None and missing("models.hf.load_backend") is None
    assert missing("core.symmetry") == "core" and missing("views.Shown") == "views.Shown"
    assert stale_names(Path("x.py"), [(1, "see core.hooks and gui/window.py, gui/gone.py")]) \
        == ["x.py:1: core.hooks (no core)", "x.py:1: gui/gone.py (no such file)"]


def test_module_paths_named_in_docstrings_and_comments_exist():
    """A module moved or renamed leaves no docstring, comment or README line naming its
    old path, dotted or as a file, in the code, its tests, the benchmarks and the
    README."""
    root = PACKAGE.parent
    sources = [*PACKAGE.rglob("*.py"), *(root / "tests").glob("*.py"),
               *(root / "benchmarks").glob("*.py"), *(root / "scripts").glob("*.py")]
    wrong = [w for path in sources for w in stale_names(path, prose(path))]
    readme = root / "README.md"
    wrong += stale_names(readme, enumerate(readme.read_text(encoding="utf-8").splitlines(), 1))
    assert not wrong, "names of modules that do not exist:\n" + "\n".join(wrong)



def test_every_section_of_benchmarks_readme_the_code_cites_exists():
    """A docstring that cites `benchmarks/README.md, "Title"` for its numbers names a
    section there (models/hf/precision.py cited one that was never written)."""
    root = Path(__file__).resolve().parents[1]
    headings = {line.lstrip("#").strip() for line in
                (root / "benchmarks" / "README.md").read_text(encoding="utf-8").splitlines()
                if line.startswith("#")}
    cited = {}
    for path in (root / "posviz").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        for title in re.findall(r'benchmarks/README\.md,\s*(?:#\s*)?"([^"]+)"', text):
            cited.setdefault(" ".join(title.split()), path.name)
    assert cited, "no citation found: the pattern no longer matches the code's"
    missing = {title: name for title, name in cited.items()
               if not any(heading.startswith(title) for heading in headings)}
    assert not missing, missing


def test_the_words_speak_of_the_project_and_its_users():
    """A docstring, comment or README line tells where a number came from as a user's
    run of posviz, never as a "trial" of a researcher's or a teacher's (an experiment's
    ``TRIALS``, its copy windows, is a word of the project's)."""
    root = PACKAGE.parent
    files = [*PACKAGE.rglob("*.py"), *(root / "tests").glob("*.py"),
             *(root / "benchmarks").glob("*.py"), *(root / "scripts").iterdir(),
             root / "README.md", root / "benchmarks" / "README.md"]
    said = re.compile(r"(?:\b(?:a|an|the|in|by)\s+|'s\s+)trials?\b", re.IGNORECASE)
    wrong = [f"{path.name}:{number}" for path in files if path.is_file()
             for number, line in enumerate(
                 path.read_text(encoding="utf-8", errors="replace").splitlines(), 1)
             if said.search(line)]
    assert not wrong, wrong
