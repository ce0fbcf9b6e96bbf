"""Size thresholds that more than one module uses for one idea, named once (ground floor: every floor may
import them).  A module keeps its own local name where that reads better (`MAX_ROWS = SMALL_TABLE_ROWS`), so
the idea has one value; thresholds that only one module knows stay beside their code."""

from __future__ import annotations

# Floats hold every integer below this exactly; past it a float64 column may have lost integer digits, a whole
# float prints in exponent form, and math.isclose's float conversion loses what an exact engine keeps.
EXACT_FLOAT_INT = 2**53

# Tables with at most this many rows are compared on Python values (the scorers' own loop, strict's plain
# rows): below it the vectorised paths cost more than they save.
SMALL_TABLE_ROWS = 200

# Rows of a column's head looked at before the whole column (its print, its typing).
HEAD_ROWS = 4096

# Cells or rows per step of a column-long pass: temporaries stay in cache, and a miss can stop the scan early.
BLOCK_CELLS = 1 << 16

# A breakdown key with more groups than this is no breakdown (an id, a free-text field): not in the report's
# breakdowns, its charts or compare's table.
MAX_BREAKDOWN_GROUPS = 50

# Panels of the report's figure: the semantics, then up to three breakdowns.
MAX_FIGURE_PANELS = 4

# The memory cap (--memory-limit-mb) when none is given, in MiB.
DEFAULT_MEMORY_LIMIT_MB = 4096
