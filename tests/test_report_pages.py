"""The report and compare pages in headless Chromium, at 1400 px and at a phone's width, with 11 and 2,000 instances.

Each page must show what the terminal shows (reasons, likely false positives with strict's detail, Valid@1 and
LLMetric-Q, the executed-queries line), carry a legend on every breakdown chart, keep whiskers off the value
labels, and list the flips under both the chosen semantics and strict. Layout is measured in the browser (a
probe script writes bounding boxes into the DOM); screenshots are kept beside the test's files.
"""

from __future__ import annotations

import json
import re
from dataclasses import fields, replace
from pathlib import Path

import pytest
from browser import render
from helpers_io import run_cli

from evaluators.reporting.compare import compare_reports
from evaluators.reporting.report import InstanceReport, Report, build_summary

ROOT = Path(__file__).resolve().parents[1]
WIDTHS = {"desktop": 1400, "phone": 390}
PROBE = """
const out = {width: window.innerWidth, scroll: document.documentElement.scrollWidth, hits: [], legends: 0};
document.querySelectorAll('svg').forEach(svg => {
  const lines = Array.from(svg.querySelectorAll('line[stroke="#222"]')).filter(l => !l.closest('.legend'))
    .map(l => l.getBoundingClientRect());
  svg.querySelectorAll('text').forEach(t => { if (!/%$/.test(t.textContent) || t.getAttribute('text-anchor')) return;
    const b = t.getBoundingClientRect();
    lines.forEach(l => { if (l.right > b.left + 0.5 && l.left < b.right - 0.5 && l.bottom >= b.top && l.top <= b.bottom)
      out.hits.push(t.textContent); }); });
  if (svg.querySelector('.legend')) out.legends += 1; });
const pre = document.createElement('pre'); pre.id = 'probe'; pre.textContent = JSON.stringify(out);
document.body.appendChild(pre);
"""


def _probe(dom: str) -> dict:
    found = re.search(r'<pre id="probe">(.*?)</pre>', dom, re.S)
    assert found, "the probe did not run"
    return json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&"))


def _instance(data: dict) -> InstanceReport:
    values = {f.name: data[f.name] for f in fields(InstanceReport) if f.name in data}
    values["funcs"] = tuple(values["funcs"])
    values["attempts"] = tuple(values.get("attempts") or ())
    return InstanceReport(**values)


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    """The example submission graded by the CLI (11 instances), and the same instances repeated to 2,000."""
    folder = tmp_path_factory.mktemp("pages")
    out = folder / "r11.json"
    result = run_cli(
        "--result-dir", ROOT / "example_submission_folder", "--gold-dir", ROOT / "gold", "--output", out,
        "--html", "--no-plot", "--work-dir", folder / "w",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    small = [_instance(i) for i in data["instances"]]
    assert len(small) == 11
    big = [
        replace(i, instance_id=f"{i.instance_id}_{k:03d}", metadata={**i.metadata, "batch": f"b{k % 7}"})
        for k in range(182)
        for i in small
    ][:2000]
    summary = data["summary"]
    built = build_summary(summary["semantics"], big, len(big), [], [], list(summary["scores"]))
    large = Report(replace(built, provenance=summary["provenance"]), tuple(big))
    (folder / "r2000.json").write_text(large.to_json())
    (folder / "r2000.html").write_text(large.to_html())
    flipped = json.loads(large.to_json())
    for k, instance in enumerate(flipped["instances"]):  # a candidate: some fixed, some broken, strict apart
        if k % 5 == 0:
            instance["score"], instance["strict_score"] = 1 - instance["score"], instance["score"]
    (folder / "c2000.json").write_text(json.dumps(flipped))
    (folder / "cmp2000.html").write_text(compare_reports(folder / "r2000.json", folder / "c2000.json").to_html())
    candidate = json.loads(out.read_text())
    for k, instance in enumerate(candidate["instances"]):
        if k % 3 == 0:
            instance["score"] = 1 - instance["score"]
        if k % 2 == 0:
            instance["strict_score"] = 1 - instance["strict_score"]
    (folder / "c11.json").write_text(json.dumps(candidate))
    (folder / "cmp11.html").write_text(compare_reports(out, folder / "c11.json").to_html())
    return folder, {11: (out, folder / "r11.html"), 2000: (folder / "r2000.json", folder / "r2000.html")}


@pytest.mark.parametrize("size", [11, 2000])
@pytest.mark.parametrize("screen", WIDTHS)
def test_report_page_shows_what_the_terminal_shows(reports, size, screen, tmp_path):
    folder, pages = reports
    json_path, page = pages[size]
    summary = json.loads(json_path.read_text())["summary"]
    shot = tmp_path / f"report-{size}-{screen}.png"
    dom = render(page, shot, width=WIDTHS[screen], height=1200, probe=PROBE)
    probe = _probe(dom)
    assert probe["width"] == WIDTHS[screen]
    assert probe["scroll"] <= probe["width"], "the page scrolls sideways (tables must scroll inside their box)"
    assert probe["hits"] == [], f"whiskers strike through value labels: {probe['hits'][:5]}"
    breakdowns = len(summary["breakdowns"])
    assert probe["legends"] == breakdowns + 1 and dom.count('class="legend"') == breakdowns + 1
    assert dom.count(">strict</text>") >= breakdowns  # the legend names strict beside the chosen semantics
    # the semantics table: an interval on every row
    table = re.search(r'<table id="semantics">.*?</table>', dom, re.S).group(0)
    rows = re.findall(r"<tr><td>(.*?)</td><td[^>]*>(.*?)</td><td[^>]*>(.*?)</td>", table)
    assert len(rows) == len(summary["scores"]) and all(re.match(r"\[\d", ci) for _, _, ci in rows), rows
    # the terminal's sections
    false_positives = re.search(r'<ul id="false-positives"[^>]*>(.*?)</ul>', dom, re.S).group(1)
    assert false_positives.count("<li>") == len(summary["likely_false_positives"]) > 0
    assert "strict: " in false_positives  # why strict failed
    reasons = re.search(r'<table id="reasons".*?</table>', dom, re.S).group(0)
    for reason, count in summary["reasons"].items():
        assert re.search(rf"<td>{reason}</td><td[^>]*>{count}</td>", reasons)
    figures = re.search(r'<ul id="figures">(.*?)</ul>', dom, re.S).group(1)
    assert "Valid@1" in figures and "LLMetric-Q" in figures and "Queries executed for" in figures
    assert ">strict detail</th>" in dom and "Click a column header to sort" in dom
    assert dom.count('title="click to sort"') >= 8
    assert shot.stat().st_size > 10_000


@pytest.mark.parametrize("size", [11, 2000])
@pytest.mark.parametrize("screen", WIDTHS)
def test_compare_page_lists_flips_under_both_semantics(reports, size, screen, tmp_path):
    folder, _ = reports
    page = folder / f"cmp{size}.html"
    data = json.loads(re.search(r'id="data">(.*?)</script>', page.read_text(), re.S).group(1).replace("&quot;", '"'))
    shot = tmp_path / f"compare-{size}-{screen}.png"
    dom = render(page, shot, width=WIDTHS[screen], height=1200, probe=PROBE)
    probe = _probe(dom)
    assert probe["scroll"] <= probe["width"]
    flips = re.search(r'<table id="flips".*?</table>', dom, re.S).group(0)
    for label, part in ((data["semantics"], data), ("strict", data["strict"])):
        for kind, arrow in (("fixed", "fixed (0 → 1)"), ("broken", "broken (1 → 0)")):
            shown = re.findall(rf"<tr><td>([^<]*)</td><td>{label}</td><td[^>]*>{re.escape(arrow)}</td></tr>", flips)
            assert shown == part[kind], (label, kind)
    assert data["strict"]["fixed"] != data["fixed"] or data["strict"]["broken"] != data["broken"]
    assert data["fixed"] + data["broken"] and data["strict"]["fixed"] + data["strict"]["broken"]
    breakdowns = re.search(r'<table id="breakdowns".*?</table>', dom, re.S).group(0)
    assert "strict Δ" in breakdowns and "strict fixed / broken" in breakdowns
    groups = sum(len(g) for g in data["breakdowns"].values())
    assert breakdowns.count("<tr>") == groups + 1
    assert shot.stat().st_size > 10_000


def test_grade_help_names_the_figure_it_writes():
    result = run_cli("grade", "--help")
    text = " ".join(result.output.split())
    assert result.exit_code == 0 and "the figure (SVG; PNG with --plot-format png)" in text
    assert "a PNG of the same name" not in text


def test_whiskers_end_before_their_value_labels():
    """The SVG alone (no browser): every value label starts past its bar's whisker."""
    from evaluators.reporting.figures import Bar
    from evaluators.reporting.svg import svg_bars

    drawn = svg_bars(
        "by x", [Bar("a", 10, 0.5, (0.2, 0.9), 0.3, (0.1, 0.6)), Bar("b", 3, 1.0, (1.0, 1.0), 0.0, None)], True
    )
    labels = [float(x) for x in re.findall(r'<text x="([\d.]+)" y="[\d.]+" font-size="10">[\d.]+%</text>', drawn)]
    ends = [float(x) for x in re.findall(r'<line x1="[\d.]+" y1="([\d.]+)"', drawn)]
    assert labels == [230 + 360 * 0.9 + 5, 230 + 360 * 0.6 + 5, 230 + 360 + 5, 230 + 5]
    assert 'class="legend"' in drawn and ">strict</text>" in drawn and ">95% interval</text>" in drawn
    assert ends  # whiskers drawn


FIT = """
const out = {width: window.innerWidth, charts: [], labels: []};
document.querySelectorAll('.chart svg').forEach(svg => { const b = svg.getBoundingClientRect();
  out.charts.push({title: svg.getAttribute('aria-label'), right: b.right, scale: b.width / svg.width.baseVal.value}); });
document.querySelectorAll('.chart svg').forEach(svg => out.labels.push([svg.getAttribute('aria-label'),
  Array.from(svg.querySelectorAll('text[font-size="11"]')).map(t => t.firstChild.textContent.trim())]));
const pre = document.createElement('pre'); pre.id = 'probe'; pre.textContent = JSON.stringify(out);
document.body.appendChild(pre);
"""


@pytest.fixture(scope="module")
def bird_like_page(reports):
    """The 11 instances as a BIRD run: a difficulty per instance, each with its own question_id."""
    folder, pages = reports
    data = json.loads(pages[11][0].read_text())
    levels = ["challenging", "simple", "moderate"]
    instances = [
        replace(
            _instance(i),
            metadata={"question_id": k, "difficulty": levels[k % 3], "db_id": "california_schools_and_more"},
        )
        for k, i in enumerate(data["instances"])
    ]
    summary = data["summary"]
    built = build_summary(summary["semantics"], instances, len(instances), [], [], list(summary["scores"]))
    provenance = {**summary["provenance"], "command": "evaluate.py bird --predicted_sql_path runs/gpt-4o.json"}
    page = folder / "bird11.html"
    page.write_text(Report(replace(built, provenance=provenance), tuple(instances)).to_html())
    return page


@pytest.mark.parametrize("screen", WIDTHS)
def test_report_page_charts_fit_in_the_benchmarks_order_titled_by_the_run(bird_like_page, screen, tmp_path):
    dom = render(bird_like_page, tmp_path / f"bird-{screen}.png", width=WIDTHS[screen], height=1200, probe=FIT)
    probe = _probe(dom)
    # every chart inside the screen at full size (a scaled-down chart's 11 px labels become unreadable)
    for chart in probe["charts"]:
        assert chart["right"] <= probe["width"] and chart["scale"] > 0.95, chart
    labels = dict(probe["labels"])
    assert [label.split(" (n=")[0] for label in labels["by difficulty"]] == ["simple", "moderate", "challenging"]
    assert "by question_id" not in labels  # one bar per question says nothing the instance table does not
    assert labels["by db_id"] == ["california_schools_and_more (n=11)"]
    assert re.search(r"<title>gpt-4o: spider2 \d+\.\d\d%</title>", dom) and "<h1>gpt-4o: spider2" in dom


def test_compare_page_names_the_reports_relative_to_the_working_folder(reports, monkeypatch):
    folder, pages = reports
    monkeypatch.chdir(folder)
    page = compare_reports(folder / "r11.json", folder / "c11.json").to_html()
    assert '<p class="muted">r11.json vs c11.json · 11 instances' in page
    assert "<title>r11 vs c11: compare</title>" in page and str(folder) not in page.split('id="data"')[0]


def test_breakdowns_in_the_benchmarks_order():
    from evaluators.reporting.figures import in_benchmark_order

    assert in_benchmark_order({"hard", "easy", "extra", "medium"}) == ["easy", "medium", "hard", "extra"]
    assert in_benchmark_order(["Challenging", "simple", "moderate"]) == ["simple", "moderate", "Challenging"]
    assert in_benchmark_order(["10", "2", "1"]) == ["1", "2", "10"]
    assert in_benchmark_order(["b", "easy", "a"]) == ["a", "b", "easy"]
