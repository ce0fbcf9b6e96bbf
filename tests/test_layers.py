"""The rules of docs/architecture.md that a reader of the code can check: read the source, not run it."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from evaluators.matching import registry

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "evaluators"
SOURCES = sorted(PACKAGE.rglob("*.py"))


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def _strings(node: ast.AST) -> list[str]:
    """The string constants a comparison's operand holds, itself or in a tuple, list or set."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return [s for item in node.elts for s in _strings(item)]
    return []


def _func_name_comparisons(path: Path, root: Path = ROOT) -> list[str]:
    names = set(registry.FUNCS)
    found = []
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            hits = {s for operand in operands for s in _strings(operand)} & names
            if hits:
                found.append(f"{path.relative_to(root)}:{node.lineno} compares with {sorted(hits)}")
        elif isinstance(node, ast.Dict):  # a table keyed by func names is a second registry
            hits = {s for key in node.keys if key is not None for s in _strings(key)} & names
            if len(hits) > 1:
                found.append(f"{path.relative_to(root)}:{node.lineno} maps {sorted(hits)}")
    return found


def test_only_the_registry_knows_func_names():
    found = [hit for path in SOURCES if path.name != "registry.py" for hit in _func_name_comparisons(path)]
    assert not found, "\n".join(found)


def test_the_scan_finds_a_comparison_with_a_func_name(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text('if spec.func in ("tables_match", "other"):\n    pass\nx = {"qa_f1": 1, "math_equal": 2}\n')
    found = _func_name_comparisons(sample, tmp_path)
    assert found == ["sample.py:1 compares with ['tables_match']", "sample.py:3 maps ['math_equal', 'qa_f1']"]


@pytest.mark.parametrize(
    "path",
    sorted((PACKAGE / "matching").rglob("*.py")) + sorted((PACKAGE / "metrics").rglob("*.py")),
    ids=lambda p: f"{p.parent.name}/{p.name}",
)
def test_matchers_and_metrics_never_import_engines(path):
    """Matchers compare answers and metrics compute figures from results: neither opens a database."""
    engines = {"duckdb", "sqlite3", "psycopg", "pymysql", "falkordb"}
    bad = [m for m in _imports(path) if m.startswith("evaluators.execution") or m.split(".")[0] in engines]
    assert not bad, f"{path.relative_to(ROOT)} imports {bad}"


def test_only_the_cli_imports_click():
    bad = [
        str(p.relative_to(ROOT))
        for p in SOURCES
        if "click" in {m.split(".")[0] for m in _imports(p)} and p.parent.name != "cli"
    ]
    assert not bad


def test_every_registered_grader_exists():
    for name in registry.FUNCS:
        info = registry.lookup(name)
        if info.answers == "sql":
            assert info.grader is None, f"{name}: a .sql answer is graded by grading/sql_answers, above this floor"
        elif info.extra is None:
            assert callable(registry.grader(name)), name


def test_exit_codes_come_from_the_error_family_only():
    """One place turns errors into exit codes (cli/options.handle_errors); nothing else calls sys.exit."""
    calls = [
        f"{p.relative_to(ROOT)}:{node.lineno}"
        for p in SOURCES
        for node in ast.walk(_tree(p))
        if isinstance(node, ast.Call)
        and ast.unparse(node.func) in ("sys.exit", "exit", "quit", "os._exit")
        and p.name not in ("options.py", "entry.py", "signals.py", "lifeline.py", "zygote.py")
    ]  # entry: a signal before the CLI's handler; signals: the stop deadline and a child whose parent is gone;
    # lifeline: its own small program; zygote: a forked worker's end, which must never return to the fork loop
    assert not calls, calls


# The floors of docs/architecture.md ("The floors"), ground first: a module imports modules of its own floor
# and of the floors below, never above; a room is a package under evaluators/ or a module beside them
# ("__init__" is the package itself, the Python API).
FLOORS = (
    (
        "ground",
        (
            "errors",
            "cwd",
            "signals",
            "atomic",
            "sqltext",
            "official_statements",
            "specs",
            "terminal_safe",
            "pinned",
            "reasons",
            "limits",
        ),
    ),
    ("metrics", ("metrics",)),
    ("execution", ("execution",)),
    ("tables and rewards", ("tables", "rewards")),
    ("matching", ("matching",)),
    ("loading and reporting", ("loading", "reporting")),
    ("grading", ("grading",)),
    ("formats", ("bird", "testsuite", "livesql", "interact", "goldtools", "ehrsql", "platinum", "health")),
    ("cli", ("cli",)),
    ("entry", ("entry", "__init__")),
)
# Imports that still point up, each with the change that removes it.  The test fails when one is gone as well,
# so that this list stays true: delete its line then.
KNOWN_UP_ARROWS: dict[tuple[str, str], str] = {}


def _module_name(path: Path, root: Path) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _import_graph(root: Path = ROOT, package: str = "evaluators") -> dict[str, dict[str, int]]:
    """{module: {module it imports: first line}} over every import of the package, those inside functions too."""
    paths = {_module_name(p, root): p for p in sorted((root / package).rglob("*.py"))}
    graph: dict[str, dict[str, int]] = {}
    for name, path in paths.items():
        found = graph.setdefault(name, {})
        for node in ast.walk(_tree(path)):
            for target in _targets(node, name, path.name == "__init__.py", paths):
                found.setdefault(target, node.lineno)
    return graph


def _named_module(text: str, modules) -> str | None:
    """The module a string names, as `"evaluators.x.y"` or `"evaluators.x.y:attr"` (a lazy import: the
    registry's graders, the worker's and Ray's actions), or None."""
    name = text.partition(":")[0]
    if not re.fullmatch(r"\w+(\.\w+)+", name) or name.split(".")[0] not in {m.split(".")[0] for m in modules}:
        return None
    while "." in name and name not in modules:
        name = name.rpartition(".")[0]
    return name if "." in name else None  # a module of a room; the bare package is no lazy import


def _targets(node: ast.AST, name: str, is_package: bool, modules) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        named = _named_module(node.value, modules)
        return [named] if named else []
    if isinstance(node, ast.JoinedStr):  # f"{PACKAGE}.x:attr" is not resolved; a plain prefix is
        head = node.values[0] if node.values else None
        text = head.value if isinstance(head, ast.Constant) and isinstance(head.value, str) else ""
        named = _named_module(text.rstrip("."), modules)
        return [named] if named else []
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names if alias.name in modules]
    if not isinstance(node, ast.ImportFrom):
        return []
    base = node.module or ""
    if node.level:  # a relative import, from the module's own package
        package = name.split(".")[: len(name.split(".")) - (0 if is_package else 1) - (node.level - 1)]
        base = ".".join(package + ([node.module] if node.module else []))
    found = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names]
    return [target for target in found if target in modules]


def _room(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _up_arrows(graph: dict[str, dict[str, int]], floors=FLOORS) -> dict[tuple[str, str], int]:
    floor = {room: number for number, (_, rooms) in enumerate(floors) for room in rooms}
    return {
        (module, target): line
        for module, targets in graph.items()
        for target, line in targets.items()
        if floor[_room(target)] > floor[_room(module)]
    }


def _cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The groups of modules that import each other, directly or round a circle (Tarjan's strongly connected
    components of more than one module, or a module that imports itself)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for target in graph.get(module, {}):
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            group = [stack.pop()]
            while group[-1] != module:
                group.append(stack.pop())
            if len(group) > 1 or module in graph.get(module, {}):
                found.append(sorted(group))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return found


def test_every_room_has_a_floor():
    rooms = {_room(module) for module in _import_graph()}
    placed = {room for _, names in FLOORS for room in names}
    assert rooms <= placed, f"put {sorted(rooms - placed)} on a floor (here and in docs/architecture.md)"


def test_no_import_points_up_a_floor():
    arrows = _up_arrows(_import_graph())
    new = [
        f"{m.replace('.', '/')}.py:{line} imports {t}"
        for (m, t), line in arrows.items()
        if (m, t) not in KNOWN_UP_ARROWS
    ]
    assert not new, "\n".join(new)
    gone = [f"{m} -> {t} ({why})" for (m, t), why in KNOWN_UP_ARROWS.items() if (m, t) not in arrows]
    assert not gone, "no longer there, delete from KNOWN_UP_ARROWS:\n" + "\n".join(gone)


def test_no_two_modules_import_each_other():
    assert _cycles(_import_graph()) == []


def test_the_floors_are_the_maps_floors():
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text.split("## The floors", 1)[1].split("\n## ", 1)[0]
    rows = [line.split("|")[1:-1] for line in section.splitlines() if line.startswith("| ") and "---" not in line]
    documented = [(cells[1].strip(), tuple(re.findall(r"`([\w/]+?)(?:/|\.py)?`", cells[2]))) for cells in rows[1:]]
    assert documented == list(reversed(FLOORS))


def test_the_scans_find_an_up_arrow_inside_a_function_and_a_circle(tmp_path):
    package = tmp_path / "pkg"
    (package / "low").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "low" / "__init__.py").write_text("")
    (package / "low" / "a.py").write_text("def f():\n    from pkg.high import b\n")
    (package / "high.py").write_text("from pkg.low import a\nfrom .low.a import f\n")
    (package / "low" / "c.py").write_text("from . import a\n")
    (package / "low" / "d.py").write_text('ACTION = "pkg.high:f"\nDOWN = "pkg.low.a"\nPROSE = "pkg.nowhere"\n')
    graph = _import_graph(tmp_path, "pkg")
    assert graph["pkg.low.c"] == {"pkg.low.a": 1}
    assert graph["pkg.low.d"] == {"pkg.high": 1, "pkg.low.a": 2}
    floors = (("low", ("low",)), ("high", ("high", "__init__")))
    assert _up_arrows(graph, floors) == {("pkg.low.a", "pkg.high"): 2, ("pkg.low.d", "pkg.high"): 1}
    assert _cycles(graph) == [["pkg.high", "pkg.low.a"]]


@pytest.mark.parametrize("path", sorted((PACKAGE / "tables").rglob("*.py")), ids=lambda p: p.name)
def test_tables_read_and_never_compare(path):
    """tables/ reads; matching/ compares and may use tables/, never the other way round."""
    bad = [m for m in _imports(path) if m.startswith("evaluators.matching")]
    assert not bad, f"{path.relative_to(ROOT)} imports {bad}"
