"""A local engine's worker starts before the grading imports, when some instance will need it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaluators.execution import zygote
from evaluators.grading.warm import warm_from_folders

ROOT = Path(__file__).resolve().parents[1]


def _folders(tmp_path: Path, answer: str, spec: dict) -> tuple[Path, Path]:
    gold, sub = tmp_path / "gold", tmp_path / "sub"
    gold.mkdir()
    sub.mkdir()
    (gold / "spider2_eval.jsonl").write_text(json.dumps({"instance_id": "a", "evaluation": spec}) + "\n")
    line = {"instance_id": "a", "answer_type": "file", "answer_or_path": answer}
    (sub / "results_metadata.jsonl").write_text(json.dumps(line) + "\n")
    return sub, gold


def test_a_duckdb_answer_starts_one_idle_worker_with_its_driver(tmp_path, fresh_pool):
    sub, gold = _folders(tmp_path, "result.duckdb", {"func": "duckdb_match", "parameters": {"gold": "g.duckdb"}})
    warm_from_folders(sub, gold, "nested", "auto")
    assert not fresh_pool.idle and not fresh_pool.busy  # the zygote starts; nothing waits for it
    started = zygote.start(())
    assert "duckdb" in started.proc.args
    warm_from_folders(sub, gold, "nested", "auto")  # one is enough
    assert zygote.start(()) is started
    # the first worker, forked when a query needs it, has the driver loaded before its request
    (first,) = [fresh_pool.acquire()]
    fresh_pool.release(first)
    assert "duckdb" in open(f"/proc/{first.pid}/maps").read()


def test_csv_answers_start_nothing(tmp_path, fresh_pool):
    sub, gold = _folders(tmp_path, "result.csv", {"func": "table_match", "parameters": {"gold": "g.csv"}})
    warm_from_folders(sub, gold, "nested", "auto")
    assert not fresh_pool.idle and not fresh_pool.busy


def test_broken_folders_start_nothing_and_say_nothing(tmp_path, fresh_pool, capsys):
    warm_from_folders(tmp_path / "missing", tmp_path / "missing-too", "nested", "auto")
    assert not fresh_pool.idle
    assert capsys.readouterr() == ("", "")


@pytest.fixture
def load_count(monkeypatch):
    """How often a run read its two files (`loading/inputs.load_inputs`, the one entry point)."""
    from evaluators.loading import inputs

    calls: list = []
    real = inputs.load_inputs
    monkeypatch.setattr(inputs, "load_inputs", lambda *args: calls.append(args) or real(*args))
    return calls


def test_the_api_and_the_cli_read_the_folders_once(tmp_path, fresh_pool, load_count):
    from click.testing import CliRunner

    from evaluators import grade
    from evaluators.cli import main

    sub, gold = _folders(tmp_path, "result.csv", {"func": "table_match", "parameters": {"gold": "g.csv"}})
    grade(sub, gold)
    assert len(load_count) == 1
    result = CliRunner().invoke(main, ["grade", "--result-dir", str(sub), "--gold-dir", str(gold)])
    assert result.exit_code in (0, 1), result.output
    assert len(load_count) == 2
