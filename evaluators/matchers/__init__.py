"""Matchers: one module per family, registered by name in `evaluators.registry`."""
