"""The rules of docs/architecture.md that a reader of the code can check: read the source, not run it."""

from __future__ import annotations

import ast
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


@pytest.mark.parametrize("path", sorted((PACKAGE / "matching").rglob("*.py")), ids=lambda p: p.name)
def test_matchers_never_import_engines(path):
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
        if info.extra is None:
            assert callable(registry.grader(name)), name


def test_exit_codes_come_from_the_error_family_only():
    """One place turns errors into exit codes (cli/options.handle_errors); nothing else calls sys.exit."""
    calls = [
        f"{p.relative_to(ROOT)}:{node.lineno}"
        for p in SOURCES
        for node in ast.walk(_tree(p))
        if isinstance(node, ast.Call)
        and ast.unparse(node.func) in ("sys.exit", "exit", "quit", "os._exit")
        and p.name not in ("options.py", "entry.py", "signals.py", "lifeline.py")
    ]  # entry: a signal before the CLI's handler; signals: the stop deadline and a child whose parent is gone;
    # lifeline: its own small program
    assert not calls, calls


@pytest.mark.parametrize("path", sorted((PACKAGE / "tables").rglob("*.py")), ids=lambda p: p.name)
def test_tables_read_and_never_compare(path):
    """tables/ reads; matching/ compares and may use tables/, never the other way round."""
    bad = [m for m in _imports(path) if m.startswith("evaluators.matching")]
    assert not bad, f"{path.relative_to(ROOT)} imports {bad}"
