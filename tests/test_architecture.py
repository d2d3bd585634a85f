"""The shape of the code: the core never imports Qt (DESIGN.md, principle 1), and the
three packages import one way only: cli -> gui -> core, the GUI from the command line
only inside a function (so a command that needs no window never loads Qt)."""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "posviz"
CORE = PACKAGE / "core"
# package -> the packages it may import at module level / also inside a function
EAGER = {"core": set(), "gui": {"core"}, "cli": {"core"}}
LAZY = {"core": set(), "gui": {"core"}, "cli": {"core", "gui"}}


def test_core_modules_load_without_qt():
    modules = sorted(
        "posviz.core." + ".".join(p.relative_to(CORE).with_suffix("").parts).removesuffix(
            ".__init__")
        for p in CORE.rglob("*.py")
    )
    code = (f"import sys, importlib\nfor m in {modules!r}: importlib.import_module(m.rstrip('.'))\n"
            "bad = [m for m in sys.modules if m.split('.')[0] in "
            "('PySide6', 'PyQt5', 'PyQt6', 'pyqtgraph', 'qtpy')]\n"
            "print(','.join(bad))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "", f"Qt loaded by the core: {result.stdout}"
    assert len(modules) >= 10


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(source: str, module: str, is_package: bool) -> list[tuple[str, bool]]:
    """(imported module, inside a function?) for every import statement in ``source``.

    ``from a import b`` counts as importing both a and a.b (b may be a module).
    """
    package = module.split(".") if is_package else module.split(".")[:-1]
    found = []

    def visit(node, lazy: bool) -> None:
        if isinstance(node, ast.Import):
            found.extend((alias.name, lazy) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else []
            target = ".".join(base + ([node.module] if node.module else []))
            found.append((target, lazy))
            found.extend((f"{target}.{alias.name}", lazy) for alias in node.names)
        inner = lazy or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        for child in ast.iter_child_nodes(node):
            visit(child, inner)

    visit(ast.parse(source), False)
    return found


def unit(module: str) -> str | None:
    """The top-level package or module of posviz that ``module`` belongs to (None for
    anything else, such as posviz.__version__)."""
    parts = module.split(".")
    if len(parts) < 2 or parts[0] != "posviz":
        return None
    exists = (PACKAGE / parts[1]).is_dir() or (PACKAGE / f"{parts[1]}.py").is_file()
    return parts[1] if exists else None


def import_graph() -> dict[str, dict[str, list[tuple[str, str, bool]]]]:
    """unit -> other unit -> [(importing module, imported module, lazy)]."""
    graph: dict = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        module = module_name(path)
        own = unit(module)
        for target, lazy in imports(path.read_text(encoding="utf-8"), module,
                                    path.name == "__init__.py"):
            other = unit(target)
            if own and other and other != own:
                graph.setdefault(own, {}).setdefault(other, []).append((module, target, lazy))
    return graph


def cycle(graph) -> list[str]:
    """One cycle of units (first unit repeated at the end), or [] when there is none."""
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


def test_the_import_scanner_sees_relative_and_lazy_imports():
    source = ("from ..core.files import check_folder\nfrom . import report\n"
              "import posviz.gui.app\n"
              "def run():\n    from ..gui.plots import PlotsPanel\n")
    assert imports(source, "posviz.cli.export", False) == [
        ("posviz.core.files", False), ("posviz.core.files.check_folder", False),
        ("posviz.cli", False), ("posviz.cli.report", False),
        ("posviz.gui.app", False),
        ("posviz.gui.plots", True), ("posviz.gui.plots.PlotsPanel", True)]
    assert imports("from .. import cli\n", "posviz.gui", True)[1] == ("posviz.cli", False)


def test_the_cycle_finder():
    assert cycle({"a": {"b": []}, "b": {"c": []}}) == []
    assert cycle({"a": {"b": []}, "b": {"c": []}, "c": {"b": []}}) == ["b", "c", "b"]


def test_packages_import_one_way():
    """core imports neither gui nor cli; gui never imports cli; cli imports gui only
    inside a function. Imports inside functions count too."""
    graph = import_graph()
    wrong = [f"{module} imports {target}" + " (in a function)" * lazy
             for own in EAGER for other, edges in graph.get(own, {}).items() if other in EAGER
             for module, target, lazy in edges
             if other not in (LAZY if lazy else EAGER)[own]]
    assert not wrong, "imports against the direction cli -> gui -> core:\n" + "\n".join(wrong)
    assert "gui" in graph["cli"] and "core" in graph["gui"]      # the scan sees them


def test_no_import_cycle_between_the_parts_of_posviz():
    """Not even through a top-level module (as cli -> export -> gui -> export once was)."""
    graph = import_graph()
    assert cycle(graph) == [], " -> ".join(cycle(graph)) + ": " + "; ".join(
        f"{m} imports {t}" for a, b in zip(cycle(graph), cycle(graph)[1:])
        for m, t, _ in graph[a][b][:2])


def test_the_document_loads_without_torch():
    """The window builds a ModelSpec and reads the options before its first paint, and
    the command line validates before any model: none of that may wait for torch."""
    modules = ["posviz.core.options", "posviz.core.config", "posviz.core.document",
               "posviz.core.events", "posviz.core.session", "posviz.core.files"]
    code = (f"import sys, importlib\nfor m in {modules!r}: importlib.import_module(m)\n"
            "print('torch' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"
