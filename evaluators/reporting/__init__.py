"""Reporting: frozen report objects rendered to text, JSON, CSV, PNG and HTML; compare; provenance."""
