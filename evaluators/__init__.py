"""Offline grading of Spider 2.0-style submissions: official and strict semantics side by side.

    from evaluators import grade
    report = grade("example_submission_folder", "gold", semantics="spider2")
    print(report.summary.score, report.summary.strict_score)

`grade` is loaded on first use: importing the package (as `evaluate.py --help` does) loads no pandas.
"""

__all__ = ["grade"]


def __getattr__(name: str):
    if name == "grade":
        from evaluators.grading.run import grade

        return grade
    raise AttributeError(f"module 'evaluators' has no attribute {name!r}")
