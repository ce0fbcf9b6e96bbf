"""Spider 1's own files, read as test-suite-sql-eval's `evaluation.py` reads them.

- gold: one `SQL<TAB>db_id` a line (`gold.txt`, `dev_gold.sql`);
- predictions: one SQL a line (`pred.txt`); text after a tab is ignored;
- a blank line separates interactions (SParC/CoSQL sessions; Spider's gold has
  none, so it is one session): the scorer pairs the n-th session of each file and,
  inside it, lines in order, and stops if the files have different numbers of
  sessions; lines past the shorter side of a session are never compared (and not
  counted by the scorer);
- databases: `<db-dir>/<db_id>/*.sqlite` (every file whose name contains `.sqlite`,
  the test suite's variants beside the original).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from evaluators.errors import Location, SpecError
from evaluators.loading import pairing
from evaluators.loading.lines import readlines
from evaluators.loading.pairing import GoldLine
from evaluators.loading.paths import read_untrusted
from evaluators.loading.specs import MIN_MAX_METADATA_BYTES
from evaluators.specs import Problem


@dataclass(frozen=True)
class Prediction:
    sql: str
    location: Location
    db_id: str | None = None  # a line `SQL<TAB>db_id` names its database (the scorer reads only the SQL)


MAX_PREDICTIONS_BYTES = MIN_MAX_METADATA_BYTES  # 256 MiB: Spider's 1,034 queries are well under 1 MiB


def _sessions(path: Path, submitted: bool = False) -> list[list[tuple[int, str]]]:
    """Non-blank lines (number, stripped text), grouped into blank-line-separated sessions.  A `submitted`
    file (the predictions) is read as every submitted file is: a regular file (the name the operator gave
    is followed), no FIFO or device, at most MAX_PREDICTIONS_BYTES."""
    try:
        if submitted:
            real = Path(path).resolve()
            text = read_untrusted(real.parent, real.name, MAX_PREDICTIONS_BYTES, "predictions file").decode("utf-8")
        else:
            text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SpecError(f"cannot read: {exc}", Location(str(path))) from None
    sessions: list[list[tuple[int, str]]] = [[]]
    for number, line in enumerate(readlines(text), 1):
        if line.strip():
            sessions[-1].append((number, line.strip()))
        else:
            sessions.append([])  # the scorer closes a session at every blank line, even an empty one
    if not sessions[-1]:
        sessions.pop()  # only a non-empty last session is kept
    return sessions


def read_gold(path: Path, problems: list[Problem]) -> list[list[GoldLine | None]]:
    """Gold sessions; a line without `SQL<TAB>db_id` is None and a gold problem."""
    return [[_gold_line(path, number, line, problems) for number, line in session] for session in _sessions(path)]


def _gold_line(path: Path, number: int, line: str, problems: list[Problem]) -> GoldLine | None:
    where = Location(str(path), number)
    return pairing.gold_line(line, where, problems, strip=True)


def read_predictions(path: Path) -> list[list[Prediction]]:
    sessions = _sessions(path, submitted=True)
    return [[_prediction(line, Location(str(path), n)) for n, line in session] for session in sessions]


def _prediction(line: str, where: Location) -> Prediction:
    fields = line.split("\t")
    return Prediction(fields[0].strip(), where, fields[1].strip() if len(fields) > 1 else None)


def pair(
    golds: list[list[GoldLine | None]], preds: list[list[Prediction]], pred_file: Path, problems: list[Problem]
) -> list[tuple[GoldLine | None, Prediction | None]]:
    """(gold, prediction) for every gold line, as the scorer pairs them; unpaired gold lines get None."""
    if len(golds) != len(preds):
        problems.append(
            Problem(
                Location(str(pred_file)),
                f"{pairing.PREFIX}{len(preds)} session(s) of predictions for {len(golds)} "
                "gold session(s): the official scorer stops here (a blank line starts a session); "
                "graded line by line instead",
                hint="remove blank lines, or write every prediction",
            )
        )
        golds, preds = [[g for s in golds for g in s]], [[p for s in preds for p in s]]
    pairs: list[tuple[GoldLine | None, Prediction | None]] = []
    for number, (gold_session, pred_session) in enumerate(zip(golds, preds, strict=True), 1):
        mismatch = pairing.count_problem(len(pred_session), len(gold_session), Location(str(pred_file)), number)
        problems.extend([mismatch] if mismatch else [])
        pairs += [(g, pred_session[i] if i < len(pred_session) else None) for i, g in enumerate(gold_session)]
    shifted = pairing.shift_problem(
        [(p.db_id if p else None, g.db_id if g else None) for g, p in pairs], Location(str(pred_file))
    )
    problems.extend([shifted] if shifted else [])
    return pairs


def database_variants(db_dir: Path, db_id: str) -> list[Path]:
    """The suite's databases for `db_id`, sorted by name (the scorer lists them in directory order; the
    verdict does not depend on the order, only which failure is named first does)."""
    folder = Path(db_dir) / db_id
    if not folder.is_dir() or db_id in ("", ".", "..") or "/" in db_id or "\\" in db_id:
        return []
    return sorted(p for p in folder.iterdir() if ".sqlite" in p.name and p.is_file())
