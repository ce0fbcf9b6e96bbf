"""Spider2-style entry point: `python evaluate.py --result_dir SUB --gold_dir GOLD`."""

from evaluators.entry import run

if __name__ == "__main__":
    run()
