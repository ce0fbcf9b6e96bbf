"""Matching: the func registry, the semantics presets, and the matchers (never import engines)."""
