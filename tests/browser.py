"""Headless Chromium for the HTML report tests: Debian's `chromium`, installed by the test run when missing."""

from __future__ import annotations

import html
import re
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


MIN_WINDOW = 500  # headless Chromium's narrowest window; a phone's width is shown in an iframe of that width


def render(page: Path, screenshot: Path, width: int = 1280, height: int = 1600, probe: str = "") -> str:
    """The DOM after the page's scripts ran (at this viewport width), and a screenshot of it.

    `probe`: JavaScript run after the page's own scripts, in a copy of the page; what it writes into the DOM
    (say, layout measurements into a <pre>) comes back with the DOM. Below Chromium's narrowest window the
    page runs in an iframe of that width inside a host page, and comes back as the iframe's DOM."""
    binary = chromium()
    narrow = width < MIN_WINDOW
    if probe or narrow:
        copy = screenshot.with_suffix(".page.html")
        script = probe + (NARROW_REPLY if narrow else "")
        copy.write_text(page.read_text().replace("</body>", f"<script>{script}</script></body>", 1))
        page = copy
    if narrow:
        host = screenshot.with_suffix(".host.html")
        host.write_text(NARROW_HOST.format(src=page.name, width=width, height=height))
        page = host
    window = max(width, MIN_WINDOW)
    with tempfile.TemporaryDirectory() as profile:
        command = [binary, *FLAGS, f"--user-data-dir={profile}", f"--window-size={window},{height}"]
        command += ["--virtual-time-budget=15000"] if narrow else []
        # One browser start for both: Chromium writes the DOM to stdout and the screenshot to its file.
        done = subprocess.run(
            [*command, "--dump-dom", f"--screenshot={screenshot}", page.resolve().as_uri()],
            capture_output=True,
            text=True,
            timeout=180,
        )
    if done.returncode != 0 or not done.stdout.strip():
        pytest.fail(f"chromium could not render {page}: {done.stderr[-600:]}")
    if not screenshot.exists():
        pytest.fail(f"chromium took no screenshot: {done.stderr[-600:]}")
    if narrow:
        found = re.search(r'<textarea id="framed"[^>]*>(.*)</textarea>', done.stdout, re.S)
        if not found:
            pytest.fail(f"the framed page sent nothing back: {done.stdout[-600:]}")
        return html.unescape(found.group(1))
    return done.stdout


NARROW_REPLY = "parent.postMessage(document.documentElement.outerHTML, '*');"
NARROW_HOST = """<!DOCTYPE html><html><body style="margin:0">
<iframe src="{src}" style="width:{width}px;height:{height}px;border:0;display:block"></iframe>
<script>addEventListener('message', e => {{ const t = document.createElement('textarea'); t.id = 'framed';
t.style.display = 'none'; t.textContent = e.data; document.body.appendChild(t); }});</script></body></html>
"""
