"""The report's figure as SVG: written in a few milliseconds, with no plotting library.

The same bars as the PNG (`plots.py`, matplotlib, on request): every panel from 0 to 100 %, each bar with
its denominator and its bootstrap 95 % interval as a whisker, horizontal so long label lists stay
readable.  The HTML report embeds the same panels.
"""

from __future__ import annotations

import html

from evaluators.limits import MAX_FIGURE_PANELS
from evaluators.reporting.figures import Bar, breakdown_bars, semantics_bars

MAX_PANELS = MAX_FIGURE_PANELS


def escape(value) -> str:
    return html.escape(str(value), quote=True)


def percent(value) -> str:
    return "n/a" if value is None else f"{100 * value:.2f}%"


def interval(ci) -> str:
    return "" if not ci else f"[{100 * ci[0]:.2f}%, {100 * ci[1]:.2f}%]"


SCORE_COLOR, STRICT_COLOR = "#4C72B0", "#C44E52"


def svg_bars(title: str, bars: list[Bar], paired: bool, first: str = "score", stacked: bool = False) -> str:
    """Horizontal bars on a fixed 0-100 % axis, the denominator in each label, whiskers for the interval.

    A legend names the colours (the chosen semantics, strict) and the whisker; each value is written past the
    end of its bar and of its whisker, so the whisker never strikes through it.  `stacked` (the HTML page)
    writes each label on its own line above its bars, so the chart is 360 px wide and fits a phone's screen
    at full size; otherwise labels sit left of the bars."""
    label_row = 14 if stacked else 0
    row, left, width = (34 if paired else 22) + label_row, (0 if stacked else 230), (300 if stacked else 360)
    top_margin = 42
    height = top_margin + row * len(bars) + 24
    total = left + width + (60 if stacked else 70)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{total}" height="{height}" viewBox="0 0 {total} {height}" '
        f'role="img" aria-label="{escape(title)}"><text x="0" y="14" font-size="13" font-weight="bold">'
        f"{escape(title)}</text>",
        _legend(first, paired),
    ]
    for tick in range(0, 101, 20):
        x = left + width * tick / 100
        anchor = "start" if stacked and tick == 0 else "middle"
        parts.append(
            f'<line x1="{x}" y1="{top_margin - 4}" x2="{x}" y2="{height - 20}" stroke="#e5e5e5"/>'
            f'<text x="{x}" y="{height - 6}" font-size="10" text-anchor="{anchor}">{tick}%</text>'
        )
    for k, bar in enumerate(bars):
        y = top_margin + k * row
        where = f'x="0" y="{y + 11}"' if stacked else f'x="{left - 6}" y="{y + 12}" text-anchor="end"'
        parts.append(
            f'<text {where} font-size="11">{escape(short_label(bar.label, 52 if stacked else 30))} '
            f"(n={bar.n})<title>{escape(bar.label)}</title></text>"
        )
        series = [(bar.score, bar.score_ci, SCORE_COLOR, first)] + (
            [(bar.strict, bar.strict_ci, STRICT_COLOR, "strict")] if paired else []
        )
        for j, (value, ci, color, name) in enumerate(series):
            parts.append(
                _bar(
                    left,
                    width,
                    y + label_row + j * 15,
                    value,
                    ci,
                    color,
                    f"{name} {percent(value)} {interval(ci)} n={bar.n}",
                )
            )
    parts.append("</svg>")
    return "".join(parts)


def short_label(label: str, limit: int) -> str:
    """A label cut at `limit` characters with an ellipsis, so a cut is seen (the whole label is the tooltip)."""
    return label if len(label) <= limit else label[: limit - 1] + "…"


def _legend(first: str, paired: bool) -> str:
    """The key under the title: the colour of each series and what the whisker is."""
    items = [(SCORE_COLOR, first)] + ([(STRICT_COLOR, "strict")] if paired else [])
    parts, x = ['<g class="legend" font-size="11">'], 0
    for color, name in items:
        parts.append(
            f'<rect x="{x}" y="21" width="12" height="10" fill="{color}"/>'
            f'<text x="{x + 16}" y="30">{escape(name)}</text>'
        )
        x += 24 + 7 * len(name)
    parts.append(
        f'<line x1="{x}" y1="26" x2="{x + 22}" y2="26" stroke="#222"/><line x1="{x}" y1="22" x2="{x}" y2="30" '
        f'stroke="#222"/><line x1="{x + 22}" y1="22" x2="{x + 22}" y2="30" stroke="#222"/>'
        f'<text x="{x + 28}" y="30">95% interval</text></g>'
    )
    return "".join(parts)


def _bar(left: int, width: int, top: float, value: float, ci, color: str, title: str) -> str:
    end = left + width * max(value, ci[1] if ci else value)  # the label starts past the bar and its whisker
    out = (
        f'<rect x="{left}" y="{top}" width="{width * value:.1f}" height="13" fill="{color}">'
        f"<title>{escape(title)}</title></rect>"
        f'<text x="{end + 5:.1f}" y="{top + 11}" font-size="10">{percent(value)}</text>'
    )
    if ci:
        x0, x1, mid = left + width * ci[0], left + width * ci[1], top + 6.5
        out += (
            f'<line x1="{x0:.1f}" y1="{mid}" x2="{x1:.1f}" y2="{mid}" stroke="#222"/>'
            f'<line x1="{x0:.1f}" y1="{mid - 3}" x2="{x0:.1f}" y2="{mid + 3}" stroke="#222"/>'
            f'<line x1="{x1:.1f}" y1="{mid - 3}" x2="{x1:.1f}" y2="{mid + 3}" stroke="#222"/>'
        )
    return out


def panels(report) -> list[tuple[str, list[Bar], bool]]:
    """(title, bars, paired with strict) for the figure: the semantics, then up to three breakdowns, func first."""
    found = [("semantics", semantics_bars(report), False)]
    breakdowns = breakdown_bars(report)
    for key in ["func", *[k for k in breakdowns if k != "func"]][: MAX_PANELS - 1]:
        if key in breakdowns:
            found.append((f"by {key}", breakdowns[key], True))
    return found


def report_svg(report) -> str:
    """One SVG document: a caption, then the panels one under the other."""
    s = report.summary
    caption = f"{s.gold_instances} gold instances; score under {s.semantics}, strict beside it"
    drawn = [
        svg_bars(title, bars, paired, s.semantics if paired else "score") for title, bars, paired in panels(report)
    ]
    heights = [int(d.split('height="', 1)[1].split('"', 1)[0]) for d in drawn]
    widths = [int(d.split('width="', 1)[1].split('"', 1)[0]) for d in drawn]
    top, parts = 28, []
    for d, h in zip(drawn, heights, strict=True):
        parts.append(f'<g transform="translate(0,{top})">{d}</g>')
        top += h + 16
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{max(widths)}" height="{top}" '
        f'font-family="sans-serif" role="img" aria-label="{escape(caption)}"><rect width="100%" height="100%" '
        f'fill="white"/><text x="0" y="16" font-size="14">{escape(caption)}</text>{"".join(parts)}</svg>\n'
    )
