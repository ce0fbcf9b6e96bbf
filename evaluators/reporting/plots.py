"""Pictures of a report: SVG by default (`svg.py`, no library), PNG with matplotlib (an extra) on request.

Honest axes: every panel runs from 0 to 100 %, every bar carries its denominator and its bootstrap 95 %
interval as an error bar, and bars are horizontal with the figure as tall as its rows, so 40 labels of a
breakdown never overlap."""

from __future__ import annotations

from pathlib import Path

from evaluators.errors import MissingExtra
from evaluators.limits import MAX_FIGURE_PANELS
from evaluators.reporting.figures import Bar, breakdown_bars, semantics_bars

MAX_PANELS = MAX_FIGURE_PANELS
ROW_INCHES = 0.28


def _figure(**options):
    """A figure drawn without pyplot (whose import alone takes longer than drawing)."""
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise MissingExtra("matplotlib", "plots") from None
    return Figure(**options)


def plot_report(report, path: Path) -> Path:
    """The figure at `path`: SVG or PNG by its suffix."""
    from evaluators.atomic import atomic_path

    if Path(path).suffix.lower() == ".svg":
        from evaluators.atomic import write_text
        from evaluators.reporting.svg import report_svg
        from evaluators.terminal_safe import encodable

        write_text(path, encodable(report_svg(report)))
        return Path(path)
    fig = report_figure(report)
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=110, format="png")
    return Path(path)


def report_figure(report):
    s = report.summary
    panels = [("semantics", semantics_bars(report), False)]
    breakdowns = breakdown_bars(report)
    for key in ["func", *[k for k in breakdowns if k != "func"]][: MAX_PANELS - 1]:
        if key in breakdowns:
            panels.append((f"by {key}", breakdowns[key], True))
    rows = [len(bars) * (2 if paired else 1) for _, bars, paired in panels]
    fig = _figure(figsize=(9, max(2.5, ROW_INCHES * sum(rows) + 1.2 * len(panels))), layout="constrained")
    axes = fig.subplots(len(panels), 1, gridspec_kw={"height_ratios": [max(r, 1) for r in rows]}, squeeze=False)
    for ax, (title, bars, paired) in zip(axes[:, 0], panels, strict=True):
        _panel(ax, title, bars, paired, s.semantics)
    fig.suptitle(f"{s.gold_instances} gold instances; score under {s.semantics}, strict beside it")
    return fig


def _panel(ax, title: str, bars: list[Bar], paired: bool, semantics: str) -> None:
    labels = [f"{b.label[:40]} (n={b.n})" for b in bars]
    positions = list(range(len(bars)))
    height = 0.4 if paired else 0.7
    series = [(semantics, [b.score for b in bars], [b.score_ci for b in bars], "#4C72B0", -0.2 if paired else 0)]
    if paired:
        series.append(("strict", [b.strict for b in bars], [b.strict_ci for b in bars], "#C44E52", 0.2))
    for name, values, cis, color, shift in series:
        ys = [p + shift for p in positions]
        errors = [
            [100 * (v - (ci or (v, v))[0]) for v, ci in zip(values, cis, strict=True)],
            [100 * ((ci or (v, v))[1] - v) for v, ci in zip(values, cis, strict=True)],
        ]
        ax.barh(
            ys,
            [100 * v for v in values],
            height=height,
            color=color,
            label=name,
            xerr=errors,
            error_kw={"elinewidth": 0.8, "capsize": 2},
        )
    ax.set_yticks(positions, labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, 100)
    ax.set_xlabel("score (%), error bars: bootstrap 95 % interval")
    ax.set_title(title, loc="left", fontsize=10)
    if paired:
        ax.legend(fontsize=8, loc="lower right")
