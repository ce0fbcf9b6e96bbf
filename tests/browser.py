"""Headless Chromium for the HTML report tests: Debian's `chromium`, installed by the test run when missing."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from dbservers import apt_install, unavailable

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        apt_install("chromium")
        found = shutil.which("chromium")
    if found is None:
        unavailable("chromium is not installed and could not be installed")
    return found


def render(page: Path, screenshot: Path) -> str:
    """The DOM after the page's scripts ran, and a screenshot of it."""
    binary = chromium()
    with tempfile.TemporaryDirectory() as profile:
        base = [binary, *FLAGS, f"--user-data-dir={profile}"]
        dom = subprocess.run(
            [*base, "--dump-dom", page.resolve().as_uri()], capture_output=True, text=True, timeout=120
        )
        shot = subprocess.run(
            [*base, f"--screenshot={screenshot}", "--window-size=1280,1600", page.resolve().as_uri()],
            capture_output=True,
            text=True,
            timeout=120,
        )
    if dom.returncode != 0 or not dom.stdout.strip():
        pytest.fail(f"chromium could not render {page}: {dom.stderr[-600:]}")
    if shot.returncode != 0 or not screenshot.exists():
        pytest.fail(f"chromium took no screenshot: {shot.stderr[-600:]}")
    return dom.stdout
