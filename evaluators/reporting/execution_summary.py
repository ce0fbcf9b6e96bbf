"""The report's execution metrics: BIRD EX and strict EX, VES and R-VES, Valid@1/Valid@k, LLMetric-Q.

Figures are computed from the instance reports (`InstanceReport.execution` and the
`attempts` entries), with the pure functions of `evaluators.metrics`; see
docs/execution-metrics.md, "In the report", for what each figure is taken over.
"""

from __future__ import annotations

import statistics
from dataclasses import fields
from typing import Any

from evaluators.matching import registry

TIMING_NOTE = (
    "VES timings are machine-dependent: {how}, {n} alternating run(s) of gold and prediction per "
    "BIRD-correct answer (BIRD uses 100); compare VES only between runs on the same machine"
)
VES_OFF_NOTE = "VES not measured (--ves-iterations 0, or SQL was not executed)"
# R-VES rewards (metrics.ves.rves_reward) and the time ratios that earn them; 0 is a wrong or untimed answer.
RVES_BUCKETS = {
    1.25: "ratio >= 2",
    1.0: "1 <= ratio < 2",
    0.75: "0.5 <= ratio < 1",
    0.5: "0.25 <= ratio < 0.5",
    0.25: "ratio < 0.25",
    0.0: "wrong or not timed",
}


def execution_metrics(instances: list, ves_iterations: int) -> dict | None:
    """summary.execution_metrics: only the groups of figures some instance has, None when none has any."""
    sql = [i for i in instances if not _on_graph(i)]
    out = {
        **_ex_and_ves(sql, ves_iterations),
        **_graph_ex(instances),
        **_validity_overall(instances),
        **_llmetric(instances),
    }
    return out or None


def _on_graph(instance) -> bool:
    return instance.execution.get("backend") == "cypher" or "kg_valid" in instance.execution


def _graph_ex(instances: list) -> dict:
    """Cypher answers: EX (the typed-rows rule) and KG Valid, over the instances graded on a graph."""
    graph = [i for i in instances if _on_graph(i) and any(registry.is_sql_func(f) for f in i.funcs)]
    if not graph:
        return {}
    n = len(graph)
    return {
        "cypher_instances": n,
        "cypher_ex": sum(i.execution.get("ex_strict") is True for i in graph) / n,
        "kg_valid": sum(i.execution.get("kg_valid") is True for i in graph) / n,
    }


# ------------------------------------------------------------------ EX and VES


def _ex_and_ves(instances: list, iterations: int) -> dict:
    """Over every gold instance with an execution_match spec: a missing or failed answer counts 0, as in BIRD."""
    matched = [i for i in instances if any(registry.is_sql_func(f) for f in i.funcs)]
    if not matched:
        return {}
    n = len(matched)
    out = {
        "execution_match_instances": n,
        "ex_bird": sum(i.execution.get("ex_bird") is True for i in matched) / n,
        "ex_strict": sum(i.execution.get("ex_strict") is True for i in matched) / n,
        "ves_iterations": iterations,
    }
    if iterations <= 0:
        return {**out, "ves": None, "r_ves": None, "timing_note": VES_OFF_NOTE}
    from evaluators.metrics.ves import aggregate_ves  # the metrics load only for reports that have such figures

    scored = [_ves_instance(i.execution.get("ves")) for i in matched]
    summary = aggregate_ves(scored)
    ratios = [s.ratio for s in scored if s.correct and s.ratio is not None]
    how = next(
        (i.execution["ves"]["timed"] for i in matched if (i.execution.get("ves") or {}).get("timed")),
        "nothing was timed",
    )
    return {
        **out,
        "ves": summary.ves,
        "r_ves": summary.rves,
        "ves_correct": summary.n_correct,
        "median_ratio": summary.median_ratio,
        "ratio_min": min(ratios, default=None),
        "ratio_max": max(ratios, default=None),
        "ratio_stdev": statistics.pstdev(ratios) if len(ratios) > 1 else None,
        "r_ves_buckets": _buckets(scored),
        "timing_note": TIMING_NOTE.format(how=how, n=iterations),
    }


def _ves_instance(ves: dict | None):
    from evaluators.metrics.ves import VesInstance, score_instance

    if not ves:
        return score_instance(False)  # not submitted, failed, or not BIRD-correct: VES 0
    values: dict[str, Any] = {f.name: ves.get(f.name) for f in fields(VesInstance)}
    return VesInstance(**values)


def _buckets(scored: list) -> dict:
    counts = {label: 0 for label in RVES_BUCKETS.values()}
    for s in scored:
        counts[RVES_BUCKETS[s.reward]] += 1
    return counts


# ------------------------------------------------------------------ validity


def validity_runs(instances: list) -> dict:
    """{instance_id: [ValidityResult per attempt]} for instances with at least one checked .sql attempt.

    A single answer counts as one attempt; an attempt that was not a .sql file is `not_checked`."""
    runs = {}
    for i in instances:
        if i.attempts:
            entries = [(a.get("valid"), a.get("validity")) for a in i.attempts]
        else:
            found = i.execution.get("validity")
            entries = [(found.get("valid"), found.get("reason"))] if found else []
        if any(reason for _, reason in entries):
            from evaluators.metrics.validity import ValidityResult

            runs[i.instance_id] = [ValidityResult(valid, reason or "not_checked") for valid, reason in entries]
    return runs


def _validity_overall(instances: list) -> dict:
    runs = validity_runs(instances)
    if not runs:
        return {}
    from evaluators.metrics.validity import summarize_validity

    summary = summarize_validity(runs)
    return {
        "valid_at_1": summary.valid_at_1,
        "valid_at_k": summary.valid_at_k,
        "validity_instances": summary.n_instances,
        "validity_undetermined_at_k": summary.n_undetermined_at_k,
        "first_attempt_validity": summary.first_attempt_reasons,
    }


def validity_section(instances: list, groups: dict) -> dict | None:
    """Valid@k overall and per breakdown (`groups`: name -> {instance_id: label}), for summary.attempts."""
    runs = validity_runs(instances)
    if not runs:
        return None
    from evaluators.metrics.attempts import UNGROUPED
    from evaluators.metrics.validity import summarize_validity

    out = {"overall": summarize_validity(runs).to_dict()}
    for name, labels in groups.items():
        members: dict = {}
        for iid, run in runs.items():
            members.setdefault(str(labels.get(iid, UNGROUPED)), {})[iid] = run
        out[f"by_{name}"] = {label: summarize_validity(m).to_dict() for label, m in sorted(members.items())}
    return out


# ------------------------------------------------------------------ LLMetric-Q


def _llmetric(instances: list) -> dict:
    """Mean over the instances where it was computed (a .sql answer, a gold query, a checked validity)."""
    values = [i.execution["llmetric_q"] for i in instances if isinstance(i.execution.get("llmetric_q"), float)]
    if not values:
        return {}
    return {"llmetric_q": sum(values) / len(values), "llmetric_q_instances": len(values)}


# ------------------------------------------------------------------ text


def render_lines(m: dict | None) -> list[str]:
    if not m:
        return []
    lines = []
    if "ex_bird" in m:
        lines.append(
            f"  Execution match ({m['execution_match_instances']} instance(s)): EX (BIRD sets of rows, "
            f"the official presets) {m['ex_bird']:.2%}  strict {m['ex_strict']:.2%}"
        )
        if m.get("ves") is not None:
            spread = (
                ""
                if m["median_ratio"] is None
                else f"; time ratio gold/pred median {m['median_ratio']:.3g}, "
                f"range {m['ratio_min']:.3g}-{m['ratio_max']:.3g}"
            )
            lines.append(f"    VES {m['ves']:.2f}  R-VES {m['r_ves']:.2f}  ({m['ves_correct']} correct{spread})")
        lines.append(f"    {m['timing_note']}")
    if "cypher_ex" in m:
        lines.append(
            f"  Cypher ({m['cypher_instances']} instance(s)): EX {m['cypher_ex']:.2%}  KG Valid {m['kg_valid']:.2%}"
        )
    if "valid_at_1" in m:
        lines.append(
            f"  Validity of query answers ({m['validity_instances']} instance(s); SQL compiled with EXPLAIN"
            f"{', Cypher by KG Valid' if m.get('cypher_instances') else ''}): "
            f"{valid_at_k_text(m['valid_at_k'])}"
        )
    if "llmetric_q" in m:
        lines.append(
            f"  LLMetric-Q {m['llmetric_q']:.3f} (mean over {m['llmetric_q_instances']} instance(s), first attempt)"
        )
    return lines


def valid_at_k_text(rates: dict) -> str:
    return "  ".join(f"Valid@{k} {'n/a' if v is None else f'{v:.2%}'}" for k, v in rates.items())


def execution_value(key: str, value) -> str:
    """A figure of the execution line as a reader wants it: rates in %, VES with two decimals, times in ms."""
    if value is None:
        return "n/a"
    if key == "mean_seconds":
        return f"{1000 * value:.1f} ms"
    if key.startswith("ex_"):
        return f"{value:.2%}"
    return f"{value:.2f}"
