"""`compare`: is the candidate better than the baseline?  Two reports of the same gold, instance by instance.

- flips: fixed (0 → 1) and broken (1 → 0);
- each run's score, the difference Δ and its paired bootstrap 95 % interval (instances resampled jointly,
  seeded, 2,000 resamples, percentile interval);
- McNemar's exact test on the discordant pairs (two-sided binomial at 1/2): b = broken (baseline right,
  candidate wrong), c = fixed;
- all of it under the reports' semantics and again under strict, and Δ per breakdown.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from evaluators.errors import SpecError, UsageError
from evaluators.metrics.stats import RESAMPLES, mcnemar_exact, paired_bootstrap_ci
from evaluators.reporting.execution_summary import execution_value
from evaluators.reporting.figures import MAX_GROUPS, in_benchmark_order
from evaluators.terminal_safe import one_line


@dataclass(frozen=True)
class Comparison:
    data: dict

    def to_dict(self) -> dict:
        return self.data

    def to_json(self) -> str:
        return json.dumps(self.data, indent=2, ensure_ascii=False)

    def to_text(self) -> str:
        return comparison_text(self.data)

    def to_html(self) -> str:
        from evaluators.reporting.html import comparison_html

        return comparison_html(self)


def load_report(path: Path) -> dict:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SpecError(f"not a readable JSON report: {exc}") from None
    if not isinstance(data, dict) or "instances" not in data or "summary" not in data:
        raise SpecError(f"{path}: not a grading report (no summary and instances)")
    return data


def compare_reports(baseline_path: Path, candidate_path: Path) -> Comparison:
    baseline, candidate = load_report(baseline_path), load_report(candidate_path)
    _same_gold(baseline, candidate, baseline_path, candidate_path)
    base = {i["instance_id"]: i for i in baseline["instances"]}
    cand = {i["instance_id"]: i for i in candidate["instances"]}
    if set(base) != set(cand):
        only = sorted(set(base) ^ set(cand))
        raise UsageError(
            f"the reports grade different instances ({len(only)} differ, e.g. {', '.join(map(one_line, only[:3]))})",
            hint="compare reports of the same gold",
        )
    ids = sorted(base)
    semantics = baseline["summary"]["semantics"]
    if candidate["summary"]["semantics"] != semantics:
        raise UsageError(
            f"the baseline's score is under {semantics}, the candidate's under {candidate['summary']['semantics']}",
            hint="grade both with the same --semantics",
        )
    data = {
        "semantics": semantics,
        "n": len(ids),
        "baseline_path": str(baseline_path),
        "candidate_path": str(candidate_path),
        "resamples": RESAMPLES,
        **_part([base[i]["score"] for i in ids], [cand[i]["score"] for i in ids], ids),
        "strict": _part([base[i]["strict_score"] for i in ids], [cand[i]["strict_score"] for i in ids], ids),
        "breakdowns": _breakdowns(ids, base, cand),
        "execution": _execution(baseline, candidate),
    }
    return Comparison(data)


def _same_gold(baseline: dict, candidate: dict, baseline_path: Path, candidate_path: Path) -> None:
    left = (baseline["summary"].get("provenance") or {}).get("gold_digest")
    right = (candidate["summary"].get("provenance") or {}).get("gold_digest")
    if left and right and left != right:
        raise UsageError(
            f"{baseline_path} and {candidate_path} were graded against different gold "
            f"(gold digests {left[:12]} and {right[:12]})",
            hint="grade both against the same gold folder",
        )


def _part(baseline: list[float], candidate: list[float], ids: list[str]) -> dict:
    fixed = [i for i, b, c in zip(ids, baseline, candidate, strict=True) if b < 1 <= c]
    broken = [i for i, b, c in zip(ids, baseline, candidate, strict=True) if c < 1 <= b]
    n = len(ids) or 1
    base_score, cand_score = sum(baseline) / n, sum(candidate) / n
    ci = paired_bootstrap_ci(baseline, candidate)
    return {
        "baseline": {"score": base_score},
        "candidate": {"score": cand_score},
        "delta": cand_score - base_score,
        "delta_ci95": list(ci) if ci else None,
        "mcnemar": {"b": len(broken), "c": len(fixed), "p_value": mcnemar_exact(len(fixed), len(broken))},
        "fixed": fixed,
        "broken": broken,
    }


def _breakdowns(ids: list[str], base: dict, cand: dict) -> dict:
    groups: dict = {}
    for iid in ids:
        keys = {"func": "+".join(base[iid].get("funcs") or []) or "?"}
        keys.update(
            {
                k: str(v)
                for k, v in (base[iid].get("metadata") or {}).items()
                if isinstance(v, (str, int, bool)) and k not in ("question", "instruction")
            }
        )
        for key, label in keys.items():
            groups.setdefault(key, {}).setdefault(label, []).append(iid)
    out: dict = {}
    for key, buckets in groups.items():
        if key != "func" and len(buckets) > MAX_GROUPS:
            continue
        out[key] = {}
        for label in in_benchmark_order(buckets):
            members = buckets[label]
            out[key][label] = {"n": len(members), **_group(members, base, cand, "score")}
            out[key][label]["strict"] = _group(members, base, cand, "strict_score")
    return out


def _group(members: list[str], base: dict, cand: dict, key: str) -> dict:
    b = sum(base[i][key] for i in members) / len(members)
    c = sum(cand[i][key] for i in members) / len(members)
    fixed = sum(base[i][key] < 1 <= cand[i][key] for i in members)
    broken = sum(cand[i][key] < 1 <= base[i][key] for i in members)
    return {"baseline": b, "candidate": c, "delta": c - b, "fixed": fixed, "broken": broken}


def _execution(baseline: dict, candidate: dict) -> dict:
    """EX, VES, R-VES and mean execution times of both runs, when the reports have them."""
    keys = ("ex_bird", "ex_strict", "ves", "r_ves")
    left = baseline["summary"].get("execution_metrics") or {}
    right = candidate["summary"].get("execution_metrics") or {}
    out = {k: {"baseline": left.get(k), "candidate": right.get(k)} for k in keys if k in left or k in right}
    for label, report in (("baseline", baseline), ("candidate", candidate)):
        times = [
            i["execution"].get("seconds") for i in report["instances"] if (i.get("execution") or {}).get("seconds")
        ]
        if times:
            out.setdefault("mean_seconds", {})[label] = sum(times) / len(times)
    return out


def comparison_text(data: dict) -> str:
    def row(name: str, part: dict) -> str:
        low, high = part["delta_ci95"] or (0.0, 0.0)
        return (
            f"  {name:<14}{100 * part['baseline']['score']:>10.2f}{100 * part['candidate']['score']:>11.2f}"
            f"{100 * part['delta']:>+9.2f}   [{100 * low:+.2f}, {100 * high:+.2f}]"
            f"{part['mcnemar']['p_value']:>11.4g}   {len(part['fixed'])}/{len(part['broken'])}"
        )

    lines = [
        f"Baseline vs Candidate ({data['n']} instances; Δ in points, paired bootstrap 95% interval, McNemar exact p)",
        "",
        f"  {'':<14}{'Baseline':>10}{'Candidate':>11}{'Δ':>9}   {'95% interval':<18}{'p':>7}   fixed/broken",
        row(data["semantics"], data),
        row("strict", data["strict"]),
    ]
    for key, groups in data["breakdowns"].items():
        title = f"by {one_line(key)}:"
        lines += ["", f"  {title:<40}{'n':>5}  {'baseline':>8} {'candidate':>9} {'Δ':>7}   strict: Δ"]
        for label, g in groups.items():
            strict = g.get("strict") or {}
            lines.append(
                f"    {one_line(label)[:36]:<38}{g['n']:>5}  {100 * g['baseline']:>8.2f} {100 * g['candidate']:>9.2f}"
                f" {100 * g['delta']:>+7.2f}" + (f"   {100 * strict['delta']:+.2f}" if strict else "")
            )
    if data["execution"]:
        lines += [
            "",
            "  execution: "
            + ", ".join(
                f"{k} {execution_value(k, v.get('baseline'))} -> {execution_value(k, v.get('candidate'))}"
                for k, v in data["execution"].items()
            ),
        ]
    for label, part in ((data["semantics"], data), ("strict", data["strict"])):
        for name, ids in (
            (f"fixed (0 -> 1) under {label}", part["fixed"]),
            (f"broken (1 -> 0) under {label}", part["broken"]),
        ):
            if ids:
                lines += [
                    "",
                    f"  {name}: "
                    + ", ".join(one_line(i) for i in ids[:20])
                    + (f" ... (+{len(ids) - 20})" if len(ids) > 20 else ""),
                ]
    return "\n".join(lines) + "\n"
