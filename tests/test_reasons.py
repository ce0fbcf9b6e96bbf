"""The verdict reasons are a closed vocabulary (evaluators/reasons.py): every reason code the code writes is a
member, and the members are what the reports held before (a StrEnum: JSON and comparisons unchanged)."""

from __future__ import annotations

import ast
import json
from pathlib import Path

from evaluators.reasons import GOLD_ERROR_REASONS, INTERNAL_REASONS, MEANINGS, Reason
from evaluators.reporting.report_lines import REASONS

ROOT = Path(__file__).resolve().parents[1]
# Calls whose first string argument (or `reason=`) is a verdict reason.
MAKERS = {"Verdict": 1, "InstanceError": 0, "QueryFailed": 0, "same_for_all": 2}


def _written_reasons() -> dict[str, str]:
    found: dict[str, str] = {}
    for path in sorted((ROOT / "evaluators").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
            if name not in MAKERS:
                continue
            given = [k.value for k in node.keywords if k.arg == "reason"]
            given += node.args[MAKERS[name] : MAKERS[name] + 1]
            for arg in given:
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    found.setdefault(arg.value, f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


def test_every_reason_the_code_writes_is_in_the_vocabulary():
    written = _written_reasons()
    assert len(written) > 20  # the scan sees the code's reasons
    unknown = {reason: where for reason, where in written.items() if reason not in set(Reason)}
    assert unknown == {}, "add them to evaluators/reasons.py with their meaning"


def test_members_are_the_strings_reports_hold():
    assert Reason.MATCH == "match" and json.dumps({"reason": Reason.VALUE_MISMATCH}) == '{"reason": "value_mismatch"}'
    assert f"{Reason.NO_DATABASE}" == "no_database" and "timeout" in set(Reason)
    assert set(MEANINGS) == set(Reason) - INTERNAL_REASONS and all(MEANINGS.values())  # each says what it means
    assert REASONS == {str(r): words for r, words in MEANINGS.items()}
    assert set(GOLD_ERROR_REASONS) == {"invalid_gold", "unknown_func", "invalid_spec", "unreadable_gold"}
