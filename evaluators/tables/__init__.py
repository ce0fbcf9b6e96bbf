"""Tables read for both rules: CSVs read once (size counted decompressed), frames' columns made once, pairs too
big for memory spilled to a DuckDB file.  Reads only: the comparing is matching/'s (official/ and strict/)."""
