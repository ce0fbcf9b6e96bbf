"""KG Valid for Cypher: a query that parses and fits the graph's schema, by OpenCyVer's three validators.

A query is KG-valid when the syntax validator passes it, the schema validator scores it 1 and the
properties validator scores it 1 (or None: the query names no property).  The schema and properties
validators score a query that does not parse as fine, which is why the syntax check is part of it.
Running is not: a query that parses and fits the schema but fails at run time (a timeout, a type
error) is KG-valid and wrong.  An unknown label or property is no FalkorDB error (the result is just
empty), which is what the validators are for.

OpenCyVer (CC BY-SA 4.0, a port of CyVer to FalkorDB) reports any division by a literal below 1
(`x / 0.5`) as a division by zero.  Its arithmetic note is therefore kept only when the query really
divides by a zero literal (`/ 0`, `/ 0.0`, `/ (0)`); otherwise it is dropped and named in the notes.
"""

from __future__ import annotations

import re

ZERO_DIVISOR = re.compile(r"/\s*\(?\s*[+-]?(?:0+(?:\.0*)?|\.0+)\s*\)?(?![\d.eE])")
ARITHMETIC = "ArithmeticError"
SCHEMA_REASONS = {  # OpenCyVer's schema codes -> our reason words, most telling first
    "UnknownLabel": "unknown_label",
    "UnknownRelationshipType": "unknown_relationship",
    "UnknownIndex": "unknown_index",
    "Path": "unknown_path",
}


def divides_by_zero_literal(query: str) -> bool:
    return ZERO_DIVISOR.search(query) is not None


def kg_verdict(found: dict, query: str) -> dict:
    """{"valid", "reason", "message", "syntax", "schema_score", "properties_score", "notes"} from the
    validators' raw results (`execution/backends/cypher_backend.kg_validity`)."""
    notes = list(found.get("notes", []))
    syntax_notes = [n for n in notes if n["validator"] == "syntax"]
    dropped = [n for n in syntax_notes if ARITHMETIC in n["code"] and not divides_by_zero_literal(query)]
    syntax = bool(found.get("syntax")) or (bool(syntax_notes) and len(dropped) == len(syntax_notes))
    schema, properties = found.get("schema_score"), found.get("properties_score")
    kept = [n for n in notes if n not in dropped]
    reason = _reason(syntax, schema, properties, kept)
    message = "; ".join(
        f"{n['validator']}: {n['description']}" for n in kept if n["validator"] != "syntax" or not syntax
    )
    if dropped:
        message = (message + "; " if message else "") + "a division by a non-zero literal is not a division by zero"
    return {
        "valid": reason == "valid",
        "reason": reason,
        "message": message[:2000],
        "syntax": syntax,
        "schema_score": schema,
        "properties_score": properties,
        "notes": kept,
    }


def _reason(syntax: bool, schema, properties, notes: list) -> str:
    if not syntax:
        return "syntax_error"
    if schema is not None and schema < 1:
        codes = " ".join(n["code"] for n in notes if n["validator"] == "schema")
        return next((word for key, word in SCHEMA_REASONS.items() if key in codes), "schema_mismatch")
    if properties is not None and properties < 1:
        return "unknown_property"
    return "valid"
