"""Spider2-style entry point: `python evaluate.py --result_dir SUB --gold_dir GOLD`."""

import gc

# Importing pandas, numpy and pyarrow makes some 10^5 long-lived objects; collecting garbage while
# they are made finds none and costs about a tenth of the start-up.
gc.disable()
from evaluators.cli import main  # noqa: E402

gc.enable()

if __name__ == "__main__":
    main()
