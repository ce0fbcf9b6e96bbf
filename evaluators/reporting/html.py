"""One self-contained HTML file for a report or a comparison: no external scripts, styles or fonts.

The summary with both scores and their intervals, bar charts as inline SVG (0-100 %, denominators, interval
whiskers), and a table of every instance that sorts by a click on a header and filters as you type."""

from __future__ import annotations

import html
import json

from evaluators.reporting.figures import Bar, breakdown_bars, semantics_bars

STYLE = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px;color:#222;max-width:1200px}
h1{font-size:22px}h2{font-size:17px;margin-top:28px}table{border-collapse:collapse;font-size:13px}
td,th{border:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top}th{background:#f3f3f3;cursor:pointer}
.num{text-align:right;font-variant-numeric:tabular-nums}.pass{color:#1a7f37}.fail{color:#b42318}
.charts{display:flex;flex-wrap:wrap;gap:24px}.chart{flex:1 1 460px}input{padding:4px;width:320px;margin:8px 0}
.detail{max-width:520px;word-break:break-word}.muted{color:#666;font-size:12px}
"""

SCRIPT = """
function sortTable(table, column, numeric){
  const body = table.tBodies[0]; const rows = Array.from(body.rows);
  const dir = table.dataset.sortColumn == column && table.dataset.sortDir == 'asc' ? 'desc' : 'asc';
  rows.sort((a, b) => { let x = a.cells[column].dataset.value ?? a.cells[column].textContent;
    let y = b.cells[column].dataset.value ?? b.cells[column].textContent;
    if (numeric) { x = parseFloat(x); y = parseFloat(y); }
    return (x < y ? -1 : x > y ? 1 : 0) * (dir == 'asc' ? 1 : -1); });
  rows.forEach(r => body.appendChild(r)); table.dataset.sortColumn = column; table.dataset.sortDir = dir; }
function filterTable(input, table){
  const words = input.value.toLowerCase();
  Array.from(table.tBodies[0].rows).forEach(r => { r.style.display = r.textContent.toLowerCase().includes(words) ? '' : 'none'; });
  document.getElementById(table.id + '-shown').textContent = Array.from(table.tBodies[0].rows).filter(r => r.style.display == '').length; }
document.querySelectorAll('table.sortable th').forEach((th, i) => th.addEventListener('click',
  () => sortTable(th.closest('table'), th.cellIndex, th.dataset.numeric == '1')));
"""


def _e(value) -> str:
    return html.escape(str(value), quote=True)


def _pct(value) -> str:
    return "n/a" if value is None else f"{100 * value:.2f}%"


def _ci(ci) -> str:
    return "" if not ci else f"[{100 * ci[0]:.2f}%, {100 * ci[1]:.2f}%]"


def page(title: str, body: str) -> str:
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{_e(title)}</title>"
            f"<style>{STYLE}</style></head><body>{body}<script>{SCRIPT}</script></body></html>\n")


def svg_bars(title: str, bars: list[Bar], paired: bool, first: str = "score") -> str:
    """Horizontal bars on a fixed 0-100 % axis, the denominator in each label, whiskers for the interval."""
    row, left, width = (34 if paired else 22), 230, 360
    height = 30 + row * len(bars) + 24
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + width + 70}" height="{height}" role="img" '
             f'aria-label="{_e(title)}"><text x="0" y="14" font-size="13" font-weight="bold">{_e(title)}</text>']
    for tick in range(0, 101, 20):
        x = left + width * tick / 100
        parts.append(f'<line x1="{x}" y1="22" x2="{x}" y2="{height - 20}" stroke="#e5e5e5"/>'
                     f'<text x="{x}" y="{height - 6}" font-size="10" text-anchor="middle">{tick}%</text>')
    for k, bar in enumerate(bars):
        y = 26 + k * row
        parts.append(f'<text x="{left - 6}" y="{y + 12}" font-size="11" text-anchor="end">{_e(bar.label[:34])} '
                     f'(n={bar.n})</text>')
        series = [(bar.score, bar.score_ci, "#4C72B0", first)] + ([(bar.strict, bar.strict_ci, "#C44E52", "strict")]
                                                                  if paired else [])
        for j, (value, ci, color, name) in enumerate(series):
            top = y + j * 15
            parts.append(f'<rect x="{left}" y="{top}" width="{width * value:.1f}" height="13" fill="{color}">'
                         f'<title>{_e(name)} {_pct(value)} {_ci(ci)} n={bar.n}</title></rect>'
                         f'<text x="{left + width * value + 4:.1f}" y="{top + 11}" font-size="10">{_pct(value)}</text>')
            if ci:
                x0, x1 = left + width * ci[0], left + width * ci[1]
                parts.append(f'<line x1="{x0:.1f}" y1="{top + 6.5}" x2="{x1:.1f}" y2="{top + 6.5}" stroke="#222"/>')
    parts.append("</svg>")
    return "".join(parts)


def report_html(report) -> str:
    s = report.summary
    rows = "".join(
        f"<tr><td>{_e(name)}</td><td class=\"num\">{_pct(value)}</td><td class=\"num\">"
        f"{_ci(s.score_ci95 if name == s.semantics else s.strict_score_ci95 if name == 'strict' else None)}</td></tr>"
        for name, value in s.scores.items())
    head = (f"<h1>Grading report</h1><p class=\"muted\">{_e(s.provenance.get('command', ''))} · "
            f"{_e(s.provenance.get('utc_time', ''))} · spider-grade {_e(s.provenance.get('project_version', ''))}</p>"
            f"<p>Graded <b id=\"graded\">{s.graded}</b> of <b id=\"gold-instances\">{s.gold_instances}</b> gold instances; "
            f"{len(s.missing)} missing; {len(s.gold_errors)} gold error(s).</p>"
            f"<p>score ({_e(s.semantics)}) <b id=\"score\">{_pct(s.score)}</b> {_ci(s.score_ci95)} · strict "
            f"<b id=\"strict-score\">{_pct(s.strict_score)}</b> {_ci(s.strict_score_ci95)} · over the graded only: "
            f"<b id=\"graded-score\">{_pct(s.graded_score)}</b></p>"
            f"<table><thead><tr><th>semantics</th><th>score</th><th>95% interval</th></tr></thead><tbody>{rows}"
            "</tbody></table>")
    charts = [svg_bars("semantics", semantics_bars(report), False)]
    charts += [svg_bars(f"by {key}", bars, True, s.semantics) for key, bars in breakdown_bars(report).items()]
    body = head + "<h2>Breakdowns</h2><div class=\"charts\">" + "".join(
        f"<div class=\"chart\">{c}</div>" for c in charts) + "</div>" + _instances_table(report)
    return page("Grading report", body)


def _instances_table(report) -> str:
    s = report.summary
    body = "".join(
        f"<tr><td>{_e(i.instance_id)}</td><td>{_e('+'.join(i.funcs))}</td>"
        f"<td class=\"num {'pass' if i.score >= 1 else 'fail'}\" data-value=\"{i.score}\">{i.score:g}</td>"
        f"<td class=\"num {'pass' if i.strict_score >= 1 else 'fail'}\" data-value=\"{i.strict_score}\">"
        f"{i.strict_score:g}</td><td>{_e(i.reason)}</td><td class=\"detail\">{_e(i.detail)}</td>"
        f"<td>{_e(i.strict_reason)}</td></tr>" for i in report.instances)
    return ("<h2>Instances</h2><input type=\"search\" placeholder=\"filter: id, reason, words of the detail\" "
            "oninput=\"filterTable(this, document.getElementById('instances'))\"> "
            f"<span class=\"muted\"><span id=\"instances-shown\">{len(report.instances)}</span> shown</span>"
            "<table id=\"instances\" class=\"sortable\"><thead><tr><th>instance</th><th>funcs</th>"
            f"<th data-numeric=\"1\">{_e(s.semantics)}</th><th data-numeric=\"1\">strict</th><th>reason</th>"
            f"<th>detail</th><th>strict reason</th></tr></thead><tbody>{body}</tbody></table>")


def comparison_html(comparison) -> str:
    data = comparison.to_dict()
    rows = []
    for label in ("score", "strict"):
        part = data if label == "score" else data["strict"]
        rows.append(f"<tr><td>{_e(data['semantics'] if label == 'score' else 'strict')}</td>"
                    f"<td class=\"num\">{_pct(part['baseline']['score'])}</td>"
                    f"<td class=\"num\">{_pct(part['candidate']['score'])}</td>"
                    f"<td class=\"num\">{100 * part['delta']:+.2f}</td><td class=\"num\">{_ci(part['delta_ci95'])}</td>"
                    f"<td class=\"num\">{part['mcnemar']['p_value']:.4g}</td>"
                    f"<td class=\"num\">{len(part['fixed'])} / {len(part['broken'])}</td></tr>")
    flips = "".join(f"<tr><td>{_e(i)}</td><td class=\"pass\">fixed (0 → 1)</td></tr>" for i in data["fixed"])
    flips += "".join(f"<tr><td>{_e(i)}</td><td class=\"fail\">broken (1 → 0)</td></tr>" for i in data["broken"])
    body = (f"<h1>Baseline vs Candidate</h1><p class=\"muted\">{_e(data['baseline_path'])} vs "
            f"{_e(data['candidate_path'])} · {data['n']} instances · paired bootstrap, {data['resamples']} resamples"
            "</p><table><thead><tr><th>semantics</th><th>baseline</th><th>candidate</th><th>Δ (points)</th>"
            "<th>Δ 95% interval</th><th>McNemar p</th><th>fixed / broken</th></tr></thead><tbody>"
            + "".join(rows) + "</tbody></table><h2>By breakdown</h2>" + _breakdown_table(data)
            + "<h2>Flips</h2><input type=\"search\" placeholder=\"filter\" "
            "oninput=\"filterTable(this, document.getElementById('flips'))\"> <span class=\"muted\">"
            f"<span id=\"flips-shown\">{len(data['fixed']) + len(data['broken'])}</span> shown</span>"
            "<table id=\"flips\" class=\"sortable\"><thead><tr><th>instance</th><th>change</th></tr></thead>"
            f"<tbody>{flips}</tbody></table><script type=\"application/json\" id=\"data\">"
            f"{_e(json.dumps(data))}</script>")
    return page("Baseline vs Candidate", body)


def _breakdown_table(data: dict) -> str:
    rows = "".join(f"<tr><td>{_e(key)}</td><td>{_e(label)}</td><td class=\"num\">{row['n']}</td>"
                   f"<td class=\"num\">{_pct(row['baseline'])}</td><td class=\"num\">{_pct(row['candidate'])}</td>"
                   f"<td class=\"num\">{100 * row['delta']:+.2f}</td></tr>"
                   for key, groups in data["breakdowns"].items() for label, row in groups.items())
    return ("<table class=\"sortable\"><thead><tr><th>by</th><th>group</th><th data-numeric=\"1\">n</th><th>baseline</th>"
            f"<th>candidate</th><th data-numeric=\"1\">Δ</th></tr></thead><tbody>{rows}</tbody></table>")
