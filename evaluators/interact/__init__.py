"""BIRD-Interact: tasks and recorded runs graded offline (docs/interact.md)."""
