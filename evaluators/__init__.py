"""Offline grading of Spider 2.0-style submissions: official and strict semantics side by side.

    from evaluators import grade
    report = grade("example_submission_folder", "gold", semantics="spider2")
    print(report.summary.score, report.summary.strict_score)
"""
from .run import grade

__all__ = ["grade"]
