"""Run mini-interact's official batch loop (`batch_run_bird_interact/main.run_batch_evaluation`, unmodified)
with its LLM calls answered from scripts: the agent's turns from ROOT/scripts.json, the user simulator a
fixed sentence.  Run with the official venv's Python (jsonlines, tqdm, sqlglot):

    python tests/interact_official_driver.py AGENT_DIR ROOT      writes ROOT/output.jsonl
    python tests/interact_official_driver.py AGENT_DIR ROOT --debug --output oracle.jsonl   the gold submitted

The LLM client libraries the loop imports (openai, anthropic, google-generativeai, vertexai, tiktoken) psycopg2 and docker
(the PostgreSQL handler and the container environment it imports beside the SQLite one) are stood in by empty modules: none of them is
called on this path.  Nothing of the official code is changed; only `collect_response_from_api`, the one
function that calls an LLM, is replaced in the loop's namespace.
"""

from __future__ import annotations

import argparse
import importlib.machinery
import json
import sys
import types
from pathlib import Path


class _Anything:
    def __init__(self, *args, **kwargs):
        pass

    def __getattr__(self, name):
        return _Anything

    def __call__(self, *args, **kwargs):
        return _Anything()


class _Stub(types.ModuleType):
    __path__: list = []

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Anything


class _StubFinder:
    """Every module under a stubbed package name is an empty `_Stub` too."""

    roots: set = set()

    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name.split(".")[0] in cls.roots:
            return importlib.machinery.ModuleSpec(name, cls)
        return None

    @staticmethod
    def create_module(spec):
        return _Stub(spec.name)

    @staticmethod
    def exec_module(module):
        pass


def _stub(*names: str) -> None:
    for name in names:
        try:
            __import__(name)
        except ImportError:
            _StubFinder.roots.add(name)
    sys.meta_path.insert(0, _StubFinder)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("agent", type=Path)
    parser.add_argument("root", type=Path)
    parser.add_argument("--patience", type=int, default=10)
    parser.add_argument("--postgres", metavar="HOST:PORT", help="bird_interact_agent's loop on this server")
    parser.add_argument("--debug", action="store_true", help="the loop's --debug: the gold submitted, to OUTPUT")
    parser.add_argument("--output", default="output.jsonl")
    args = parser.parse_args()
    _stub("openai", "anthropic", "google", "vertexai", "docker", "tiktoken", *(() if args.postgres else ("psycopg2",)))
    sys.path.insert(0, str(args.agent))
    from batch_run_bird_interact import main as loop

    scripts = json.loads((args.root / "scripts.json").read_text())
    order = [json.loads(line)["instance_id"] for line in (args.root / "tasks.jsonl").read_text().splitlines()]
    turns: dict = {}

    def answer(prompt_list, model_name, data_list, output_path, num_threads=1, **kwargs):
        with open(output_path, "w") as out:
            for item in data_list:
                text = _response(item["id"], model_name)
                if text is not None:
                    out.write(json.dumps({"id": item["id"], "response": text}) + "\n")

    def _response(idx: int, model: str):
        if model != "agent":
            return "I can only say: Paris."
        script = scripts[order[idx]]
        turn = turns.get(idx, 0)
        turns[idx] = turn + 1
        if turn >= len(script):
            return None  # no response: the loop ends the task
        obj, action = script[turn]
        return f"<thought>step {turn}</thought><interaction_object>{obj}</interaction_object><action>{action}</action>"

    loop.collect_response_from_api = answer
    run_args = argparse.Namespace(
        data_path=str(args.root / "tasks.jsonl"),
        output_path=str(args.root / args.output),
        agent_output_path=None,
        user_output_path=None,
        agent_model="agent",
        user_model="user",
        user_sim_mode="vanilla",
        user_sim_prompt_version="v2",
        user_num_threads=1,
        num_threads=1,
        max_turns=30,
        start_index=0,
        start_actual_index=0,
        limit=None,
        resume=False,
        mini_interact=not args.postgres,
        db_host="unused",
        db_port=5432,
        user_patience_budget=args.patience,
        verbose=False,
        log_level="ERROR",
        log_file=str(args.root / "official.log"),
        debug=args.debug,
    )
    loop.setup_logging(verbose=False, log_level="ERROR", log_file=run_args.log_file)
    if args.postgres:  # what main() does with --db_host/--db_port; the user and password are the loop's defaults
        from src.config.db_config import set_global_db_config

        host, port = args.postgres.rsplit(":", 1)
        set_global_db_config(host=host, port=int(port))
    loop.run_batch_evaluation(run_args)


if __name__ == "__main__":
    main()
