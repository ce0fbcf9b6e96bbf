"""One self-contained HTML file for a report or a comparison: no external scripts, styles or fonts.

The summary with both scores and their intervals, bar charts as inline SVG (0-100 %, denominators, interval
whiskers), and a table of every instance that sorts by a click on a header and filters as you type."""

from __future__ import annotations

import json
from pathlib import PurePath

from evaluators.reporting.figures import breakdown_bars, semantics_bars
from evaluators.reporting.svg import escape, interval, percent, svg_bars

STYLE = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px;color:#222;max-width:1200px}
h1{font-size:22px}h2{font-size:17px;margin-top:28px}table{border-collapse:collapse;font-size:13px}
td,th{border:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top}th{background:#f3f3f3;cursor:pointer}
.num{text-align:right;font-variant-numeric:tabular-nums}.pass{color:#1a7f37}.fail{color:#b42318}
.charts{display:flex;flex-wrap:wrap;gap:24px}.chart{flex:0 1 360px;max-width:100%}input{padding:4px;width:320px;margin:8px 0}
.detail{max-width:520px;word-break:break-word}.muted{color:#666;font-size:12px}
.scroll{overflow-x:auto;max-width:100%}.chart svg{max-width:100%;height:auto}
th.sort-asc::after{content:" \\25B2"}th.sort-desc::after{content:" \\25BC"}th[title]{text-decoration:underline dotted}
ul.ids{columns:3 260px;font-size:13px;padding-left:18px}ul.ids li{break-inside:avoid;word-break:break-word}
@media (max-width:700px){body{margin:10px}.chart{flex:1 1 100%}
input{width:100%;box-sizing:border-box}
ul.ids{columns:1}}
"""

SCRIPT = """
function sortTable(table, column, numeric){
  const body = table.tBodies[0]; const rows = Array.from(body.rows);
  const dir = table.dataset.sortColumn == column && table.dataset.sortDir == 'asc' ? 'desc' : 'asc';
  rows.sort((a, b) => { let x = a.cells[column].dataset.value ?? a.cells[column].textContent;
    let y = b.cells[column].dataset.value ?? b.cells[column].textContent;
    if (numeric) { x = parseFloat(x); y = parseFloat(y); }
    return (x < y ? -1 : x > y ? 1 : 0) * (dir == 'asc' ? 1 : -1); });
  rows.forEach(r => body.appendChild(r)); table.dataset.sortColumn = column; table.dataset.sortDir = dir;
  table.querySelectorAll('th').forEach(h => h.classList.remove('sort-asc', 'sort-desc'));
  table.tHead.rows[0].cells[column].classList.add('sort-' + dir); }
function filterTable(input, table){
  const words = input.value.toLowerCase();
  Array.from(table.tBodies[0].rows).forEach(r => { r.style.display = r.textContent.toLowerCase().includes(words) ? '' : 'none'; });
  document.getElementById(table.id + '-shown').textContent = Array.from(table.tBodies[0].rows).filter(r => r.style.display == '').length; }
document.querySelectorAll('table.sortable th').forEach(th => { th.title = 'click to sort';
  th.addEventListener('click', () => sortTable(th.closest('table'), th.cellIndex, th.dataset.numeric == '1')); });
"""


def page(title: str, body: str) -> str:
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1"><title>{escape(title)}</title>'
        f"<style>{STYLE}</style></head><body>{body}<script>{SCRIPT}</script></body></html>\n"
    )


def report_html(report) -> str:
    s = report.summary
    bars = semantics_bars(report)
    rows = "".join(
        f'<tr><td>{escape(bar.label)}</td><td class="num">{percent(bar.score)}</td><td class="num">'
        f"{interval(bar.score_ci)}</td><td>{_role(bar.label, s.semantics)}</td></tr>"
        for bar in bars
    )
    title = run_title(report)
    head = (
        f'<h1>{escape(title)}</h1><p class="muted">{escape(s.provenance.get("command", ""))} · '
        f"{escape(s.provenance.get('utc_time', ''))} · spider-grade {escape(s.provenance.get('project_version', ''))}</p>"
        f'<p>Graded <b id="graded">{s.graded}</b> of <b id="gold-instances">{s.gold_instances}</b> gold instances; '
        f"{len(s.missing)} missing; {len(s.gold_errors)} gold error(s).</p>"
        f'<p>score ({escape(s.semantics)}) <b id="score">{percent(s.score)}</b> {interval(s.score_ci95)} · strict '
        f'<b id="strict-score">{percent(s.strict_score)}</b> {interval(s.strict_score_ci95)} · over the graded only: '
        f'<b id="graded-score">{percent(s.graded_score)}</b></p>'
        '<div class="scroll"><table id="semantics"><thead><tr><th>semantics</th><th>score</th><th>95% interval</th>'
        f"<th></th></tr></thead><tbody>{rows}</tbody></table></div>"
    )
    charts = [svg_bars("semantics", bars, False, stacked=True)]
    charts += [
        svg_bars(f"by {key}", group, True, s.semantics, stacked=True) for key, group in breakdown_bars(report).items()
    ]
    body = (
        head
        + '<h2>Breakdowns</h2><div class="charts">'
        + "".join(f'<div class="chart">{c}</div>' for c in charts)
        + "</div>"
        + _summary_sections(report)
        + _instances_table(report)
    )
    return page(title, body)


# The option that names the graded run, per command (grade, bird, test-suite, livesql).
_RUN_OPTIONS = ("--result-dir", "--result_dir", "--predicted_sql_path", "--pred", "--jsonl_file")
_FILE_SUFFIXES = (".json", ".jsonl", ".txt", ".sql")  # a predictions file is named without them


def run_title(report) -> str:
    """The page's title from the run: the submission's name, the semantics and the score ("runA: spider2
    81.82%"), so two pages open side by side (or pasted into a paper's notes) say which run each is."""
    s = report.summary
    name = _run_name(s.provenance.get("command", ""))
    score = f"{s.semantics} {percent(s.score)}"
    return f"{name}: {score}" if name else f"Grading report: {score}"


def _run_name(command: str) -> str:
    import shlex

    try:
        words = shlex.split(command)
    except ValueError:
        return ""
    for k, word in enumerate(words):
        option, _, value = word.partition("=")
        if option in _RUN_OPTIONS:
            value = value or (words[k + 1] if k + 1 < len(words) else "")
            name = PurePath(value.rstrip("/")).name if value else ""
            return name.removesuffix(PurePath(name).suffix) if PurePath(name).suffix in _FILE_SUFFIXES else name
    return ""


def _role(name: str, semantics: str) -> str:
    return "the score" if name == semantics else "strict_score" if name == "strict" else ""


def _summary_sections(report) -> str:
    """What the terminal prints beside the scores: reasons, execution figures, attempts, false positives, gold
    errors, missing predictions and input problems."""
    from evaluators.reporting.execution_summary import render_lines
    from evaluators.reporting.report_lines import REASONS, attempt_lines, executed_line, lite_headline

    s = report.summary
    reasons = "".join(
        f'<tr><td>{escape(reason)}</td><td class="num">{count}</td><td class="muted">{escape(REASONS.get(reason, ""))}'
        "</td></tr>"
        for reason, count in sorted(s.reasons.items(), key=lambda item: (-item[1], item[0]))
    )
    out = (
        '<h2>Reasons</h2><div class="scroll"><table id="reasons" class="sortable"><thead><tr><th>reason</th>'
        f'<th data-numeric="1">instances</th><th>meaning</th></tr></thead><tbody>{reasons}</tbody></table></div>'
    )
    figures = [line.strip() for line in render_lines(s.execution_metrics)]
    figures += [executed_line(report)] if executed_line(report) else []
    figures += [line.strip() for line in attempt_lines(s.attempts)] if s.attempts else []
    figures += [line.strip() for line in lite_headline(report) if line.strip()] if s.semantics == "spider2-lite" else []
    if figures:
        out += '<h2>Execution and attempts</h2><ul id="figures">' + "".join(f"<li>{escape(f)}</li>" for f in figures)
        out += "</ul>"
    by_id = {i.instance_id: i for i in report.instances}
    out += _id_list(
        "false-positives",
        f"Likely false positives ({len(s.likely_false_positives)}: {s.semantics} passes, strict fails)",
        [(i, f"strict: {by_id[i].strict_reason}: {by_id[i].strict_detail}") for i in s.likely_false_positives],
    )
    out += _id_list(
        "gold-errors",
        f"Gold errors ({len(s.gold_errors)}; the gold's problems, not the model's)",
        [(g, f"{by_id[g].reason}: {by_id[g].detail}") for g in s.gold_errors],
    )
    out += _id_list("missing", f"Missing predictions ({len(s.missing)}, scored 0)", [(m, "") for m in s.missing])
    out += _id_list("problems", f"Input problems ({len(s.problems)})", [(str(p), "") for p in s.problems])
    return out


def _id_list(list_id: str, title: str, items: list[tuple[str, str]]) -> str:
    if not items:
        return ""
    entries = "".join(
        f"<li><b>{escape(name)}</b>{' · ' + escape(' '.join(note.split())) if note else ''}</li>"
        for name, note in items
    )
    return f'<h2>{escape(title)}</h2><ul id="{list_id}" class="ids">{entries}</ul>'


def _instances_table(report) -> str:
    s = report.summary
    body = "".join(
        f"<tr><td>{escape(i.instance_id)}</td><td>{escape('+'.join(i.funcs))}</td>"
        f'<td class="num {"pass" if i.score >= 1 else "fail"}" data-value="{i.score}">{i.score:g}</td>'
        f'<td class="num {"pass" if i.strict_score >= 1 else "fail"}" data-value="{i.strict_score}">'
        f'{i.strict_score:g}</td><td>{escape(i.reason)}</td><td class="detail">{escape(i.detail)}</td>'
        f'<td>{escape(i.strict_reason)}</td><td class="detail">{escape(i.strict_detail)}</td></tr>'
        for i in report.instances
    )
    return (
        '<h2>Instances</h2><p class="muted hint">Click a column header to sort (again to reverse); type to filter.'
        '</p><input type="search" placeholder="filter: id, reason, words of the detail" '
        "oninput=\"filterTable(this, document.getElementById('instances'))\"> "
        f'<span class="muted"><span id="instances-shown">{len(report.instances)}</span> shown</span>'
        '<div class="scroll"><table id="instances" class="sortable"><thead><tr><th>instance</th><th>funcs</th>'
        f'<th data-numeric="1">{escape(s.semantics)}</th><th data-numeric="1">strict</th><th>reason</th>'
        f"<th>detail</th><th>strict reason</th><th>strict detail</th></tr></thead><tbody>{body}</tbody></table></div>"
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
    shown = sum(len(part[k]) for part in (data, data["strict"]) for k in ("fixed", "broken"))
    body = (
        f'<h1>Baseline vs Candidate</h1><p class="muted">{escape(shown_path(data["baseline_path"]))} vs '
        f"{escape(shown_path(data['candidate_path']))} · {data['n']} instances · paired bootstrap, {data['resamples']} resamples"
        '</p><div class="scroll"><table id="overall"><thead><tr><th>semantics</th><th>baseline</th><th>candidate</th>'
        "<th>Δ (points)</th><th>Δ 95% interval</th><th>McNemar p</th><th>fixed / broken</th></tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table></div>"
        + _execution_table(data)
        + '<h2>By breakdown</h2><p class="muted hint">Click a column header to sort (again to reverse).</p>'
        + _breakdown_table(data)
        + '<h2>Flips</h2><p class="muted hint">Under the chosen semantics and under strict; click a header to sort, '
        'type to filter.</p><input type="search" placeholder="filter: id, fixed, broken, strict" '
        'oninput="filterTable(this, document.getElementById(\'flips\'))"> <span class="muted">'
        f'<span id="flips-shown">{shown}</span> shown</span>'
        '<div class="scroll"><table id="flips" class="sortable"><thead><tr><th>instance</th><th>semantics</th>'
        f"<th>change</th></tr></thead><tbody>{_flip_rows(data)}</tbody></table></div>"
        f'<script type="application/json" id="data">{escape(json.dumps(data))}</script>'
    )
    names = " vs ".join(PurePath(data[key]).stem for key in ("baseline_path", "candidate_path"))
    return page(f"{names}: compare", body)


def shown_path(path: str) -> str:
    """A report's path relative to the working directory when it lies inside it (the CLI hands paths on made
    absolute): a pasted page should not carry /home/someone/...; a path outside it stays as it is."""
    from pathlib import Path

    try:
        return str(Path(path).relative_to(Path.cwd()))
    except ValueError:  # outside the working directory: as given
        return str(path)


def _flip_rows(data: dict) -> str:
    rows = []
    for label, part in ((data["semantics"], data), ("strict", data["strict"])):
        rows += [
            f'<tr><td>{escape(i)}</td><td>{escape(label)}</td><td class="pass">fixed (0 → 1)</td></tr>'
            for i in part["fixed"]
        ]
        rows += [
            f'<tr><td>{escape(i)}</td><td>{escape(label)}</td><td class="fail">broken (1 → 0)</td></tr>'
            for i in part["broken"]
        ]
    return "".join(rows)


def _execution_table(data: dict) -> str:
    from evaluators.reporting.execution_summary import execution_value

    if not data.get("execution"):
        return ""
    rows = "".join(
        f'<tr><td>{escape(key)}</td><td class="num">{execution_value(key, v.get("baseline"))}</td>'
        f'<td class="num">{execution_value(key, v.get("candidate"))}</td></tr>'
        for key, v in data["execution"].items()
    )
    return (
        '<h2>Execution</h2><div class="scroll"><table id="execution"><thead><tr><th>figure</th><th>baseline</th>'
        f"<th>candidate</th></tr></thead><tbody>{rows}</tbody></table></div>"
    )


def _breakdown_table(data: dict) -> str:
    rows = []
    for key, groups in data["breakdowns"].items():
        for label, row in groups.items():
            strict = row.get("strict") or {}
            cells = [
                (row["n"], str(row["n"])),
                (row["baseline"], percent(row["baseline"])),
                (row["candidate"], percent(row["candidate"])),
                (row["delta"], f"{100 * row['delta']:+.2f}"),
                (row.get("fixed", 0), f"{row.get('fixed', 0)} / {row.get('broken', 0)}"),
            ]
            if strict:
                cells += [
                    (strict["baseline"], percent(strict["baseline"])),
                    (strict["candidate"], percent(strict["candidate"])),
                    (strict["delta"], f"{100 * strict['delta']:+.2f}"),
                    (strict["fixed"], f"{strict['fixed']} / {strict['broken']}"),
                ]
            rows.append(
                f"<tr><td>{escape(key)}</td><td>{escape(label)}</td>"
                + "".join(f'<td class="num" data-value="{value}">{text}</td>' for value, text in cells)
                + "</tr>"
            )
    semantics = escape(data["semantics"])
    numeric = [
        "n",
        f"{semantics} baseline",
        f"{semantics} candidate",
        f"{semantics} Δ",
        f"{semantics} fixed / broken",
        "strict baseline",
        "strict candidate",
        "strict Δ",
        "strict fixed / broken",
    ]
    head = "".join(f'<th data-numeric="1">{name}</th>' for name in numeric)
    return (
        f'<div class="scroll"><table id="breakdowns" class="sortable"><thead><tr><th>by</th><th>group</th>{head}'
        f"</tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
    )
