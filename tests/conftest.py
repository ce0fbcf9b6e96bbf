"""Shared test setup: `tests/` on the path for helper modules, emulator fixtures when present."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"

pytest_plugins = ["dbservers"]
if (Path(__file__).parent / "emulators" / "fixtures.py").exists():
    pytest_plugins.append("emulators.fixtures")
