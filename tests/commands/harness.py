"""Headless Chromium for the tests of the HTML reports: where it is, a probe that records a
page's script errors, and the DOM a page ends with."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from tests.bounds import PROCESS_SECONDS

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
HAS_CHROMIUM = Path(CHROMIUM).is_file()
PROBE = (
    "<script>window.addEventListener('error', function (e) {"
    "document.documentElement.setAttribute('data-js-error', String(e.message)); });</script>"
)


def dump_dom(page: Path, profile: Path) -> tuple[str, str]:
    command = [
        CHROMIUM,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        f"--user-data-dir={profile}",
        "--enable-logging=stderr",
        "--v=0",
        "--dump-dom",
        page.as_uri(),
    ]
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=PROCESS_SECONDS, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout, done.stderr
