"""Spider2-style entry point: `python evaluate.py --result_dir SUB --gold_dir GOLD`."""
from evaluators.cli import main

if __name__ == "__main__":
    main()
