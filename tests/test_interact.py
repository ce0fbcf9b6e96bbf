"""`evaluate.py interact`: the readers (tasks with the GT merged, recorded runs, file:line problems), the
replay's budget and rewards, strict beside the official quirks, c-Interact, --oracle and the command."""

import json

import interact_generator
import pytest
from helpers_io import run_cli

from evaluators.interact import native, replay
from evaluators.interact.run import InteractOptions, grade_interact
from evaluators.matching.verdicts import Verdict


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    root = tmp_path_factory.mktemp("interact_unit")
    interact_generator.build(root)
    recorded = json.loads(interact_generator.RECORDED.read_text())
    (root / "run.jsonl").write_text("".join(json.dumps(s) + "\n" for s in recorded["run"]))
    return root


@pytest.fixture(scope="module")
def graded(folder):
    options = InteractOptions(db_root=folder, work_dir=folder / "work")
    report = grade_interact(folder / "public.jsonl", folder / "gt.jsonl", folder / "run.jsonl", options, jobs=2)
    return report, {i.instance_id: i for i in report.instances}


def test_the_gt_file_is_laid_over_the_public_lines_as_the_benchmark_script_does(folder):
    problems: list = []
    merged = {t.instance_id: t.data for t in native.read_tasks(folder / "public.jsonl", folder / "gt.jsonl", problems)}
    whole = {t["instance_id"]: t for t in map(json.loads, (folder / "tasks.jsonl").read_text().splitlines())}
    assert not problems
    assert merged["m_replay"]["follow_up"]["test_cases"] == whole["m_replay"]["follow_up"]["test_cases"]
    assert merged["q_first"]["sol_sql"] == whole["q_first"]["sol_sql"]
    assert merged["q_first"]["external_knowledge"] == []  # the script writes it, empty when the GT has none


def test_broken_lines_of_a_run_are_problems_with_their_place(tmp_path):
    run = tmp_path / "run.jsonl"
    good = {"original_data": {"instance_id": "a"}, "interaction_history": [{"action": "submit('x')"}, 3]}
    run.write_text(json.dumps(good) + "\n{not json\n" + json.dumps({"idx": 1}) + "\n")
    problems: list = []
    records = native.read_run(run, problems)
    said = [str(p) for p in problems]
    assert [r.instance_id for r in records] == ["a"] and len(records[0].actions) == 1
    assert any("run.jsonl:1" in s and "interaction_history[1]" in s for s in said)
    assert any("run.jsonl:2" in s for s in said) and any("run.jsonl:3" in s and "original_data" in s for s in said)
    assert records[0].actions[0].location.endswith("run.jsonl:1 interaction_history[0]")


def test_the_budget_is_3_plus_3_plus_2_per_ambiguity_plus_patience():
    task = native.Task(
        {"user_query_ambiguity": {"critical_ambiguity": [1, 2]}, "knowledge_ambiguity": [1]}, native.Location("t", 1)
    )
    assert replay.budget(task.ambiguities, 10) == 3 + 3 + 2 * 3 + 10
    assert replay.cost("get_column_meaning('a', 'b')") == 0.5 and replay.cost("") == 0.2 and replay.cost("hi") == 0.2


def _verdicts(*passed):
    answers = iter(passed)
    return lambda phase, sql, phase1: Verdict(1.0 if next(answers) else 0.0, "match", "")


def _act(action):
    return native.Action(None, None, "User", action, None, None, "here")


FOLLOWED = native.Task({"follow_up": {"query": "and then?"}}, native.Location("t", 1))


def test_a_failed_submit_resets_the_official_reward_and_strict_keeps_it():
    acts = [_act("submit('a')"), _act("submit('b')"), _act("submit('c')")]
    official = replay.replay(FOLLOWED, acts, replay.Rules("official", "full"), _verdicts(True, False, True), 100)
    strict = replay.replay(FOLLOWED, acts, replay.Rules("strict", "full"), _verdicts(True, False, True), 100)
    assert [s.reward_after for s in official.submits] == [0.7, 0.0, 0.3] and official.reward == 0.3
    assert strict.reward == 1.0
    mini = replay.replay(FOLLOWED, acts, replay.Rules("official", "mini"), _verdicts(True, True), 100)
    assert mini.reward == 1 and [s.phase for s in mini.submits] == [1, 2]  # phase 2 adds nothing in mini


def test_c_interact_from_the_per_submit_verdicts():
    acts = [_act("submit('a')")] * 4
    cases = {(True, True): 1.0, (False, True, True): 0.8, (False, True, False, True): 0.7, (False, False): 0.0}
    cases |= {(True, False, False, True): 0.7, (False, False, True, True): 0.0}  # a third try earns nothing
    for passed, expected in cases.items():
        state = replay.replay(FOLLOWED, acts[: len(passed)], replay.Rules("official", "full"), _verdicts(*passed), 100)
        assert state.c_interact() == expected, passed


def test_a_submit_that_spends_the_last_of_the_budget_ends_the_task():
    acts = [_act("ask('x')")] * 2 + [_act("submit('a')"), _act("submit('b')")]
    state = replay.replay(FOLLOWED, acts, replay.Rules("official", "full"), _verdicts(True, True), 1)
    assert state.budget_exceeded and state.ended_by == "budget" and len(state.submits) == 1 and state.ignored == [3]


def test_the_mini_quirks_are_named_and_strict_corrects_them(graded):
    _, by_id = graded
    quote, multi, rounded = by_id["q_quote_end"], by_id["q_multi"], by_id["q_round"]
    assert quote.score == 0 and quote.strict_score == 1  # the closing quote of 'Paris' stripped, officially
    assert multi.score == 0 and multi.strict_score == 1  # two statements: SQLite's execute refuses them
    assert rounded.score == 1 and rounded.strict_score == 0  # ROUND removed from both sides
    lost = by_id["q_phase2_fail_fix"]
    assert lost.reason == "reward_reset" and lost.score == 0 and lost.strict_score == 1.0


def test_the_report_keeps_every_submit_with_its_place_and_the_budget(graded):
    report, by_id = graded
    replayed = by_id["m_replay"].execution
    assert [s["phase"] for s in replayed["submits"]] == [1, 2, 2]
    assert replayed["submits"][0]["logged_phase"] == 2  # the loop logs the passing phase-1 submit as phase 2
    assert replayed["submits"][0]["location"].endswith("interaction_history[0]")
    assert by_id["b_exceeded"].execution["budget"]["exceeded"] and by_id["b_exceeded"].execution["ended_by"] == "budget"
    assert by_id["b_forced_other"].reason == "no_submit"
    figures = report.summary.execution_metrics["interact"]
    assert figures["overall"]["n"] == len(by_id) and "category=Management" in figures


def test_oracle_lists_the_golds_that_miss_the_full_reward_by_cause(folder, tmp_path):
    options = InteractOptions(db_root=folder, work_dir=tmp_path / "work", oracle=True)
    report = grade_interact(folder / "tasks.jsonl", None, None, options)
    by_id = {i.instance_id: i for i in report.instances}
    assert by_id["q_first"].reason == "gold_full_reward"
    assert by_id["q_empty_gold"].reason == "gold_empty_or_unequal"  # ex_base: 0 when either side is empty
    assert by_id["q_quote_end"].reason == "gold_full_reward"  # the oracle submits the text as is (main --debug)
    assert by_id["m_bad_preprocess"].reason == "gold_does_not_run"  # phase 2's set-up fails


def test_the_command_grades_a_run_from_another_folder(folder, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for name in ("public.jsonl", "gt.jsonl", "run.jsonl"):
        (tmp_path / name).write_text((folder / name).read_text())
    args = ["--tasks", "public.jsonl", "--gt", "gt.jsonl", "--run", "run.jsonl", "--db_root", str(folder)]
    result = run_cli("interact", *args, "--output", "out/i.json")
    assert result.exit_code == 0, result.output
    assert "c-Int." in result.output and (tmp_path / "out" / "i.json").exists()
    assert run_cli("interact", "--tasks", "public.jsonl", "--db_root", str(folder)).exit_code == 2


def test_the_shared_tail_json_fail_under_and_gold_errors(folder, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    args = ["--tasks", str(folder / "tasks.jsonl"), "--run", str(folder / "run.jsonl"), "--db_root", str(folder)]
    done = run_cli("interact", *args, "--format", "json", "--fail-under", "0.99")
    assert done.exit_code == 1
    broken = tmp_path / "tasks.jsonl"
    lines = [json.loads(line) for line in (folder / "tasks.jsonl").read_text().splitlines()]
    lines[0]["sol_sql"] = []  # q_first: no gold for phase 1, the handler fails every submit
    broken.write_text("".join(json.dumps(line) + "\n" for line in lines))
    args[1] = str(broken)
    assert run_cli("interact", *args).exit_code == 2
    assert run_cli("interact", *args, "--allow-gold-errors").exit_code == 0


def test_a_db_root_holding_none_of_the_databases_is_exit_2(folder, tmp_path):
    args = ["--tasks", str(folder / "tasks.jsonl"), "--run", str(folder / "run.jsonl"), "--db_root", str(tmp_path)]
    done = run_cli("interact", *args)
    assert done.exit_code == 2 and "shop" in done.output
