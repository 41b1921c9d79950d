"""Chromium for the browser tests (test_site.py, test_tools.py): where it is, how it starts,
and the skip (or, under CI, the failure) when it is missing. The fixtures that serve the built
site and start the browser are in conftest.py beside this file."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

#: Where the tests serve the built site; a request for any other host leaves the machine.
HOST = "127.0.0.1"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
LAUNCH_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def require_chromium() -> None:
    """At a test module's top: skip the module without Chromium, or fail it under CI."""
    if Path(CHROMIUM).exists():
        return
    reason = "Chromium not found at /usr/bin/chromium: apt-get install chromium fonts-wqy-microhei"
    if os.environ.get("CI"):
        pytest.fail(f"browser tests are mandatory in CI: {reason}", pytrace=False)
    pytest.skip(f"browser tests skipped: {reason}", allow_module_level=True)
