"""`gold import-text2cypher`: a Text2Cypher data set as execution_match gold on embedded graphs.

The common rows hold `question`, `cypher`, `schema` and the graph as `database_reference_alias`,
`data_source` or `database`.  Each row becomes an instance `<prefix><n>` whose folder holds `gold.cypher`
(the query) and, when given, `schema.txt`, and whose gold line is

    {"instance_id": "t2c_0", "evaluation": {"func": "execution_match", "parameters": {"gold_query":
     "gold.cypher"}}, "type": "cypher", "db": "<graph>", "question": "..."}

Rows whose graph script (`<graph>.cypher`) is not in `--db-dir` are imported all the same and listed, so
that nothing is dropped silently; a row without a query or a graph is listed and left out.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from evaluators.atomic import write_text
from evaluators.errors import Location, UsageError
from evaluators.execution.graphs import GRAPH_NAME, SCRIPT_SUFFIX
from evaluators.loading.specs import GOLD_FILE
from evaluators.specs import Problem

GRAPH_KEYS = ("database_reference_alias", "data_source", "database", "db")
SPEC = {"func": "execution_match", "parameters": {"gold_query": "gold.cypher"}}


@dataclass(frozen=True)
class Text2CypherImport:
    target: Path
    instances: int
    graphs: dict  # graph -> instances
    problems: tuple[Problem, ...]

    def to_text(self) -> str:
        lines = [str(p) for p in self.problems]
        graphs = ", ".join(f"{g} ({n})" for g, n in sorted(self.graphs.items()))
        lines.append(
            f"imported {self.instances} instance(s) into {self.target} on graph(s) {graphs or 'none'}; "
            f"{len(self.problems)} problem(s)"
        )
        return "\n".join(lines) + "\n"


def read_rows(source: Path) -> list[tuple[Location, dict]]:
    """(where, row) for each row of a JSON list, a JSONL file or (with pyarrow) a Parquet file."""
    suffix = source.suffix.lower()
    if suffix == ".parquet":
        import pyarrow.parquet as pq

        return [(Location(str(source), n), row) for n, row in enumerate(pq.read_table(source).to_pylist(), start=1)]
    text = source.read_text(encoding="utf-8-sig")
    if suffix == ".json":
        data = json.loads(text)
        if not isinstance(data, list):
            raise UsageError(f"{source}: expected a JSON list of rows")
        return [(Location(str(source), n), row) for n, row in enumerate(data, start=1)]
    return [
        (Location(str(source), n), json.loads(line))
        for n, line in enumerate(text.splitlines(), start=1)
        if line.strip()
    ]


def import_text2cypher(source: Path, gold_dir: Path, db_dir: Path | None, prefix: str = "t2c_") -> Text2CypherImport:
    if gold_dir.exists() and any(gold_dir.iterdir()):
        raise UsageError(f"{gold_dir} is not empty: import into a new folder")
    problems: list[Problem] = []
    lines: list[str] = []
    graphs: dict[str, int] = {}
    for where, row in read_rows(Path(source)):
        query, graph = _query_and_graph(row, where, problems)
        if query is None or graph is None:
            continue
        iid = f"{prefix}{len(lines)}"
        folder = gold_dir / iid
        folder.mkdir(parents=True)
        write_text(folder / "gold.cypher", query.strip() + "\n")
        if isinstance(row.get("schema"), str) and row["schema"].strip():
            write_text(folder / "schema.txt", row["schema"])
        line = {"instance_id": iid, "evaluation": SPEC, "type": "cypher", "db": graph}
        line.update({k: row[k] for k in ("question", "type_of_query", "data_source") if isinstance(row.get(k), str)})
        lines.append(json.dumps(line, ensure_ascii=False))
        graphs[graph] = graphs.get(graph, 0) + 1
    problems += _missing_graphs(graphs, db_dir)
    gold_dir.mkdir(parents=True, exist_ok=True)
    write_text(gold_dir / GOLD_FILE, "\n".join(lines) + ("\n" if lines else ""))
    return Text2CypherImport(gold_dir, len(lines), graphs, tuple(problems))


def _query_and_graph(row, where: Location, problems: list[Problem]) -> tuple[str | None, str | None]:
    if not isinstance(row, dict):
        problems.append(Problem(where, "not an object"))
        return None, None
    query = row.get("cypher")
    graph = next((row[k] for k in GRAPH_KEYS if isinstance(row.get(k), str) and row[k].strip()), None)
    if not isinstance(query, str) or not query.strip():
        problems.append(Problem(where, "no 'cypher' query: left out"))
        return None, None
    if graph is None or not GRAPH_NAME.fullmatch(graph) or ".." in graph:
        problems.append(Problem(where, f"no usable graph name in {', '.join(GRAPH_KEYS)} ({graph!r}): left out"))
        return None, None
    return query, graph


def _missing_graphs(graphs: dict, db_dir: Path | None) -> list[Problem]:
    where = Location(str(db_dir) if db_dir else "--db-dir")
    return [
        Problem(
            where,
            f"graph {g!r} ({n} instance(s)) has no {g}{SCRIPT_SUFFIX} "
            f"{f'in {db_dir}' if db_dir else '(no --db-dir given)'}: they are imported, "
            "but grading them needs that script",
        )
        for g, n in sorted(graphs.items())
        if db_dir is None or not (Path(db_dir) / f"{g}{SCRIPT_SUFFIX}").is_file()
    ]
