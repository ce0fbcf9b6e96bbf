"""The benchmark's table, summary and plot."""

from __future__ import annotations

import math

SHORT = {"spider2": "spider2", "spider2-2024": "2024", "spider2-lite": "lite", "strict": "strict"}
HEADER = (
    f"{'rows':>9} {'cols':>4} {'read':>7} | "
    + " ".join(f"{v:>7}" for v in SHORT.values())
    + f" {'all4':>7} | {'e2e all4':>8} | {'baseline':>9} | ratio to read: "
    + " ".join(f"{v:>7}" for v in SHORT.values())
    + f" {'all4':>6} {'e2e':>6} {'base':>7}"
)


def _s(x: float) -> str:
    return f"{x:7.3f}" if x < 100 else f"{x:7.0f}"


def pair_line(e: dict, clock: str = "cpu") -> str:
    read = e["read"][clock]
    cmp_ = [e["compare"][s][clock] for s in SHORT]
    base = e.get("baseline")
    base_time = None if not base else (base[clock] if base.get(clock) is not None else base["wall"])
    base_text = "-" if not base else (_s(base_time) + ("*" if base.get("extrapolated") else " "))
    ratios = [c / read for c in cmp_] + [e["all4"][clock] / read, e["e2e"]["all4"][clock] / read]
    base_ratio = f"{base_time / read:7.1f}" if base else f"{'-':>7}"
    bad = [s for s in SHORT if not e["compare"][s]["ok"]]
    return (
        f"{e['rows']:>9} {e['cols']:>4} {_s(read)} | "
        + " ".join(_s(c) for c in cmp_)
        + f" {_s(e['all4'][clock])} | {e['e2e']['all4'][clock]:8.3f} | {base_text:>9} | {'':15}"
        + " ".join(f"{x:7.2f}" for x in ratios[:4])
        + f" {ratios[4]:6.2f} {ratios[5]:6.2f} {base_ratio}"
        + (" noise" if e.get("noise") else "")
        + (f"  VERDICT MISMATCH {bad}" if bad else "")
    )


def extrapolate_baseline(pairs: list[dict]) -> None:
    """Fill the baseline for sizes it was not run at from a log-log fit of its measured times (per width)."""
    for cols in {p["cols"] for p in pairs}:
        for noise in (False, True):
            group = [p for p in pairs if p["cols"] == cols and p["noise"] == noise]
            measured = [p for p in group if "baseline" in p]
            if len(measured) < 2:
                continue
            guess = {clock: _fit([(p["rows"], p["baseline"][clock]) for p in measured]) for clock in ("wall", "cpu")}
            for p in group:
                if "baseline" not in p:
                    p["baseline"] = {clock: fit(p["rows"]) for clock, fit in guess.items()}
                    p["baseline"].update(ok=None, extrapolated=True, slope=guess["cpu"].slope)


def _fit(points):
    """log t = a + b log rows, least squares; returns t(rows) with the slope b attached."""
    xs, ys = [math.log(r) for r, _ in points], [math.log(t) for _, t in points]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=False)) / sum((x - mx) ** 2 for x in xs)

    def at(rows):
        return math.exp(my + slope * (math.log(rows) - mx))

    at.slope = slope
    return at


def summary(results: dict) -> str:
    clock = results["settings"].get("clock", "cpu")
    lines = ["", HEADER]
    lines += [pair_line(p, clock) for p in results["pairs"]]
    lines.append(f"({clock} seconds, medians; * = baseline extrapolated from a log-log fit of the sizes it ran at)")
    big = [p for p in results["pairs"] if p["rows"] >= 10_000 and not p["noise"]]
    worst = max(
        ((p["compare"][s][clock] / p["read"][clock], p["rows"], p["cols"], s) for p in big for s in SHORT), default=None
    )
    if worst:
        lines.append(f"worst compare/read ratio at >= 10^4 rows: {worst[0]:.2f} ({worst[3]}, {worst[1]} x {worst[2]})")
    for name, r in results.get("equal_columns", {}).items():
        lines.append(f"strict, 30 equal columns x 2000 rows, {name}: {r[clock]:.3f} s, match={r['ok']}")
    m = results.get("memory")
    if m:
        lines.append(
            f"memory, {m['rows']} x {m['cols']}: tables {m['tables_bytes'] / 1e6:.0f} MB; peak RSS during a "
            f"comparison {m['peak_rss_bytes'] / 1e6:.0f} MB; above the RSS before comparing "
            f"{m['peak_over_before_bytes'] / 1e6:.0f} MB = {m['extra_per_tables']:.2f}x the tables; "
            f"tables + comparison = {m['tables_and_work_per_tables']:.2f}x the tables"
        )
    c = results.get("corpus")
    if c:
        lines.append(
            f"corpus self-grade, {c['instances']} instances, wall (process start included): evaluate.py "
            f"(default --jobs auto = {c['jobs']}) {c['ours_jobs_wall']:.2f} s, --jobs 1 "
            f"{c['ours_wall']:.2f} s; baseline {c['baseline_wall']:.2f} s; ratio "
            f"{c['ours_jobs_wall'] / c['baseline_wall']:.2f} (--jobs 1: "
            f"{c['ours_wall'] / c['baseline_wall']:.2f}); CPU (--jobs 1): evaluate.py "
            f"{c['ours_cpu']:.2f} s, baseline {c['baseline_cpu']:.2f} s, "
            f"ratio {c['ours_cpu'] / c['baseline_cpu']:.2f}; "
            f"matches: ours {c['matched_ours']}, baseline {c['matched_baseline']}; "
            f"verdicts differ: {c['verdicts_differ']}"
        )
    return "\n".join(lines)


def plot(results: dict, path) -> None:
    clock = results["settings"].get("clock", "cpu")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    widths = sorted({p["cols"] for p in results["pairs"]})
    fig, axes = plt.subplots(1, len(widths), figsize=(5.2 * len(widths), 4.4), squeeze=False, sharey=True)
    for ax, cols in zip(axes[0], widths, strict=False):
        pairs = sorted((p for p in results["pairs"] if p["cols"] == cols and not p["noise"]), key=lambda p: p["rows"])
        rows = [p["rows"] for p in pairs]
        ax.plot(rows, [p["read"][clock] for p in pairs], "k-o", lw=2.5, label="read both CSVs (pandas)")
        for s, style, color in zip(
            SHORT, ("-s", "--^", ":v", "-D"), ("tab:blue", "tab:orange", "tab:green", "tab:purple"), strict=False
        ):
            ax.plot(rows, [p["compare"][s][clock] for p in pairs], style, color=color, label=f"compare: {s}")
        _baseline_lines(ax, pairs, clock)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(f"{cols} columns, rows shuffled, columns reordered")
        ax.set_xlabel("rows")
        ax.grid(True, which="both", alpha=0.3)
    axes[0][0].set_ylabel(f"{clock} seconds (median)")
    axes[0][-1].legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _baseline_lines(ax, pairs, clock: str) -> None:
    measured = [
        (p["rows"], p["baseline"][clock]) for p in pairs if p.get("baseline") and not p["baseline"]["extrapolated"]
    ]
    guessed = [(p["rows"], p["baseline"][clock]) for p in pairs if p.get("baseline") and p["baseline"]["extrapolated"]]
    if measured:
        ax.plot(*zip(*measured, strict=False), "-x", color="tab:red", label="baseline (public scorer's loop)")
    if guessed and measured:
        ax.plot(*zip(*([measured[-1]] + guessed), strict=False), ":x", color="tab:red", label="baseline, extrapolated")


def markdown(results: dict) -> str:
    """The results as a markdown table (`python bench/report.py bench/results/bench.json` prints it for the
    README): medians and ratios to the read."""
    clock = results["settings"].get("clock", "cpu")
    head = (
        "| rows × cols | read | spider2 | spider2-2024 | spider2-lite | strict | all four | "
        "end-to-end (all four) | baseline |"
    )
    lines = [head, "|" + "---:|" * 9]
    for p in results["pairs"]:
        if p["noise"]:
            continue
        read = p["read"][clock]
        cells = [f"{p['compare'][s][clock]:.3f} ({p['compare'][s][clock] / read:.2f}×)" for s in SHORT]
        base = p.get("baseline")
        base_text = (
            "–"
            if not base
            else (f"{base[clock]:.1f}{' (extrapolated)' if base['extrapolated'] else ''} ({base[clock] / read:.0f}×)")
        )
        lines.append(
            f"| {p['rows']:,} × {p['cols']} | {read:.3f} | "
            + " | ".join(cells)
            + f" | {p['all4'][clock]:.3f} ({p['all4'][clock] / read:.2f}×) | "
            f"{p['e2e']['all4'][clock]:.3f} ({p['e2e']['all4'][clock] / read:.2f}×) | {base_text} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    import json
    import sys

    print(markdown(json.loads(open(sys.argv[1]).read())))
