"""One self-contained HTML file for a report or a comparison: no external scripts, styles or fonts.

The summary with both scores and their intervals, bar charts as inline SVG (0-100 %, denominators, interval
whiskers), and a table of every instance that sorts by a click on a header and filters as you type."""

from __future__ import annotations

import json

from evaluators.reporting.figures import breakdown_bars, semantics_bars
from evaluators.reporting.svg import escape, interval, percent, svg_bars

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


def page(title: str, body: str) -> str:
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title>'
        f"<style>{STYLE}</style></head><body>{body}<script>{SCRIPT}</script></body></html>\n"
    )


def report_html(report) -> str:
    s = report.summary
    rows = "".join(
        f'<tr><td>{escape(name)}</td><td class="num">{percent(value)}</td><td class="num">'
        f"{interval(s.score_ci95 if name == s.semantics else s.strict_score_ci95 if name == 'strict' else None)}</td></tr>"
        for name, value in s.scores.items()
    )
    head = (
        f'<h1>Grading report</h1><p class="muted">{escape(s.provenance.get("command", ""))} · '
        f"{escape(s.provenance.get('utc_time', ''))} · spider-grade {escape(s.provenance.get('project_version', ''))}</p>"
        f'<p>Graded <b id="graded">{s.graded}</b> of <b id="gold-instances">{s.gold_instances}</b> gold instances; '
        f"{len(s.missing)} missing; {len(s.gold_errors)} gold error(s).</p>"
        f'<p>score ({escape(s.semantics)}) <b id="score">{percent(s.score)}</b> {interval(s.score_ci95)} · strict '
        f'<b id="strict-score">{percent(s.strict_score)}</b> {interval(s.strict_score_ci95)} · over the graded only: '
        f'<b id="graded-score">{percent(s.graded_score)}</b></p>'
        f"<table><thead><tr><th>semantics</th><th>score</th><th>95% interval</th></tr></thead><tbody>{rows}"
        "</tbody></table>"
    )
    charts = [svg_bars("semantics", semantics_bars(report), False)]
    charts += [svg_bars(f"by {key}", bars, True, s.semantics) for key, bars in breakdown_bars(report).items()]
    body = (
        head
        + '<h2>Breakdowns</h2><div class="charts">'
        + "".join(f'<div class="chart">{c}</div>' for c in charts)
        + "</div>"
        + _instances_table(report)
    )
    return page("Grading report", body)


def _instances_table(report) -> str:
    s = report.summary
    body = "".join(
        f"<tr><td>{escape(i.instance_id)}</td><td>{escape('+'.join(i.funcs))}</td>"
        f'<td class="num {"pass" if i.score >= 1 else "fail"}" data-value="{i.score}">{i.score:g}</td>'
        f'<td class="num {"pass" if i.strict_score >= 1 else "fail"}" data-value="{i.strict_score}">'
        f'{i.strict_score:g}</td><td>{escape(i.reason)}</td><td class="detail">{escape(i.detail)}</td>'
        f"<td>{escape(i.strict_reason)}</td></tr>"
        for i in report.instances
    )
    return (
        '<h2>Instances</h2><input type="search" placeholder="filter: id, reason, words of the detail" '
        "oninput=\"filterTable(this, document.getElementById('instances'))\"> "
        f'<span class="muted"><span id="instances-shown">{len(report.instances)}</span> shown</span>'
        '<table id="instances" class="sortable"><thead><tr><th>instance</th><th>funcs</th>'
        f'<th data-numeric="1">{escape(s.semantics)}</th><th data-numeric="1">strict</th><th>reason</th>'
        f"<th>detail</th><th>strict reason</th></tr></thead><tbody>{body}</tbody></table>"
    )


def comparison_html(comparison) -> str:
    data = comparison.to_dict()
    rows = []
    for label in ("score", "strict"):
        part = data if label == "score" else data["strict"]
        rows.append(
            f"<tr><td>{escape(data['semantics'] if label == 'score' else 'strict')}</td>"
            f'<td class="num">{percent(part["baseline"]["score"])}</td>'
            f'<td class="num">{percent(part["candidate"]["score"])}</td>'
            f'<td class="num">{100 * part["delta"]:+.2f}</td><td class="num">{interval(part["delta_ci95"])}</td>'
            f'<td class="num">{part["mcnemar"]["p_value"]:.4g}</td>'
            f'<td class="num">{len(part["fixed"])} / {len(part["broken"])}</td></tr>'
        )
    flips = "".join(f'<tr><td>{escape(i)}</td><td class="pass">fixed (0 → 1)</td></tr>' for i in data["fixed"])
    flips += "".join(f'<tr><td>{escape(i)}</td><td class="fail">broken (1 → 0)</td></tr>' for i in data["broken"])
    body = (
        f'<h1>Baseline vs Candidate</h1><p class="muted">{escape(data["baseline_path"])} vs '
        f"{escape(data['candidate_path'])} · {data['n']} instances · paired bootstrap, {data['resamples']} resamples"
        "</p><table><thead><tr><th>semantics</th><th>baseline</th><th>candidate</th><th>Δ (points)</th>"
        "<th>Δ 95% interval</th><th>McNemar p</th><th>fixed / broken</th></tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table><h2>By breakdown</h2>"
        + _breakdown_table(data)
        + '<h2>Flips</h2><input type="search" placeholder="filter" '
        'oninput="filterTable(this, document.getElementById(\'flips\'))"> <span class="muted">'
        f'<span id="flips-shown">{len(data["fixed"]) + len(data["broken"])}</span> shown</span>'
        '<table id="flips" class="sortable"><thead><tr><th>instance</th><th>change</th></tr></thead>'
        f'<tbody>{flips}</tbody></table><script type="application/json" id="data">'
        f"{escape(json.dumps(data))}</script>"
    )
    return page("Baseline vs Candidate", body)


def _breakdown_table(data: dict) -> str:
    rows = "".join(
        f'<tr><td>{escape(key)}</td><td>{escape(label)}</td><td class="num">{row["n"]}</td>'
        f'<td class="num">{percent(row["baseline"])}</td><td class="num">{percent(row["candidate"])}</td>'
        f'<td class="num">{100 * row["delta"]:+.2f}</td></tr>'
        for key, groups in data["breakdowns"].items()
        for label, row in groups.items()
    )
    return (
        '<table class="sortable"><thead><tr><th>by</th><th>group</th><th data-numeric="1">n</th><th>baseline</th>'
        f'<th>candidate</th><th data-numeric="1">Δ</th></tr></thead><tbody>{rows}</tbody></table>'
    )
