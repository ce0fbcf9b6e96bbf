"""PNG pictures of a report: score per semantics and per breakdown (matplotlib is an extra)."""
from __future__ import annotations

from pathlib import Path

from .errors import MissingExtra


def _figure(**options):
    """A figure drawn without pyplot (whose import alone takes longer than drawing)."""
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise MissingExtra("matplotlib", "plots") from None
    return Figure(**options)


def plot_report(report, path: Path) -> Path:
    """Bars of every semantics' score, then score vs strict per func."""
    s = report.summary
    funcs = s.breakdowns.get("func", {})
    fig = _figure(figsize=(11, 4), layout="constrained")
    axes = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1, max(1, len(funcs))]})
    names = list(s.scores)
    axes[0].bar(names, [s.scores[n] * 100 for n in names], color=["#4C72B0"] * (len(names) - 1) + ["#C44E52"])
    axes[0].set_ylabel("score (%)")
    axes[0].set_title(f"{s.gold_instances} gold instances")
    axes[0].tick_params(axis="x", rotation=30)
    labels = list(funcs)
    xs = range(len(labels))
    axes[1].bar([x - 0.2 for x in xs], [funcs[k]["score"] * 100 for k in labels], width=0.4, label=s.semantics)
    axes[1].bar([x + 0.2 for x in xs], [funcs[k]["strict_score"] * 100 for k in labels], width=0.4, label="strict")
    axes[1].set_xticks(list(xs), [f"{k}\n(n={funcs[k]['n']})" for k in labels])
    axes[1].set_title("by func")
    axes[1].legend()
    tmp = Path(path).with_suffix(".tmp.png")
    fig.savefig(tmp, dpi=110)
    tmp.replace(path)
    return Path(path)
