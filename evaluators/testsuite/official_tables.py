"""The tables test-suite-sql-eval's `evaluation.py` prints, from per-question results, figure for figure.

Each question: its hardness, its execution verdict (`exec`) and exact-match verdict (`exact`) as 0/1, and
its partial results.  Sessions are lists of questions.  Quirks kept: a component's accuracy counts only
questions whose prediction has that component and its recall only those whose gold has it; F1 is 1 when
accuracy and recall are both 0; the `joint_all` column (printed when there is more than one session) has
no partial results, so its accuracy and recall are 0 and its F1 is 1.
"""

from __future__ import annotations

from evaluators.testsuite.exact_match import COMPONENTS
from evaluators.testsuite.hardness import LEVELS

TURNS = ("turn 1", "turn 2", "turn 3", "turn 4", "turn > 4")


def _turn(index: int) -> str:
    return "turn > 4" if index > 3 else f"turn {index + 1}"


def _blank() -> dict:
    return {
        "count": 0,
        "exec": 0,
        "exact": 0.0,
        "partial": {c: dict.fromkeys(("acc", "rec", "f1", "na", "nr"), 0) for c in COMPONENTS},
    }


def scores(sessions: list[list[dict]], etype: str) -> dict:
    table = {name: _blank() for name in (*TURNS, *LEVELS, "all", "joint_all")}
    for session in sessions:
        table["joint_all"]["count"] += 1
        for index, question in enumerate(session):
            for name in (_turn(index), question["hardness"], "all"):
                table[name]["count"] += 1
                for kind in ("exec", "exact"):
                    if etype in ("all", kind if kind == "exec" else "match"):
                        table[name][kind] += question[kind]
            if etype in ("all", "match"):
                for name in (question["hardness"], "all"):
                    _add_partial(table[name]["partial"], question["partial"])
        for kind in ("exec", "exact"):
            table["joint_all"][kind] += all(q[kind] == 1 for q in session)
    for name, row in table.items():
        _finish(row, name in TURNS)
    return table


def _add_partial(sums: dict, partial: dict) -> None:
    for component, entry in partial.items():
        if entry["pred_total"] > 0:
            sums[component]["acc"] += entry["acc"]
            sums[component]["na"] += 1
        if entry["label_total"] > 0:
            sums[component]["rec"] += entry["rec"]
            sums[component]["nr"] += 1


def _finish(row: dict, turn: bool) -> None:
    if row["count"] == 0:
        return
    row["exec"] /= row["count"]
    row["exact"] /= row["count"]
    if turn:
        return
    for sums in row["partial"].values():
        sums["acc"] = sums["acc"] / sums["na"] if sums["na"] else 0
        sums["rec"] = sums["rec"] / sums["nr"] if sums["nr"] else 0
        both = sums["acc"] + sums["rec"]
        sums["f1"] = 1 if sums["acc"] == 0 and sums["rec"] == 0 else 2.0 * sums["acc"] * sums["rec"] / both


def _row(name: str, values: list, fmt: str) -> str:
    return ("{:20} " + " ".join([fmt] * len(values))).format(name, *values)


def render(table: dict, etype: str, with_turns: bool) -> str:
    """The scorer's printed tables, line for line."""
    levels = [*LEVELS, "all", *(["joint_all"] if with_turns else [])]
    lines = [_row("", levels, "{:20}"), _row("count", [table[n]["count"] for n in levels], "{:<20d}")]
    if etype in ("all", "exec"):
        lines.append("=====================   EXECUTION ACCURACY     =====================")
        lines.append(_row("execution", [table[n]["exec"] for n in levels], "{:<20.3f}"))
    if etype in ("all", "match"):
        lines += ["", "====================== EXACT MATCHING ACCURACY ====================="]
        lines.append(_row("exact match", [table[n]["exact"] for n in levels], "{:<20.3f}"))
        for title, key in (
            ("\n---------------------PARTIAL MATCHING ACCURACY----------------------", "acc"),
            ("---------------------- PARTIAL MATCHING RECALL ----------------------", "rec"),
            ("---------------------- PARTIAL MATCHING F1 --------------------------", "f1"),
        ):
            lines += title.split("\n")
            lines += [_row(c, [table[n]["partial"][c][key] for n in levels], "{:<20.3f}") for c in COMPONENTS]
    if with_turns:
        lines += ["", "", _row("", list(TURNS), "{:20}"), _row("count", [table[t]["count"] for t in TURNS], "{:<20d}")]
        if etype in ("all", "exec"):
            lines.append("=====================   TURN EXECUTION ACCURACY     =====================")
            lines.append(_row("execution", [table[t]["exec"] for t in TURNS], "{:<20.3f}"))
        if etype in ("all", "match"):
            lines += ["", "====================== TURN EXACT MATCHING ACCURACY ====================="]
            lines.append(_row("exact match", [table[t]["exact"] for t in TURNS], "{:<20.3f}"))
    return "\n".join(lines) + "\n"
