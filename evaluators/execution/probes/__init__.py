"""Engine probes: what an engine says about a query without running it (EXPLAIN for validity and plan
cost, OpenCyVer's validators' raw results read as KG Valid).  They live with the engines; `metrics/`
only computes figures from their results and never opens a database."""
