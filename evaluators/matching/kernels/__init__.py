"""Comparison kernels shared by the official and strict table rules (arrays in, facts out)."""
