"""BIRD-Platinum (uiuc-kang-lab/BIRD-Platinum): its files, `evaluation/grade.py`'s verdicts, a run (docs/platinum.md)."""
