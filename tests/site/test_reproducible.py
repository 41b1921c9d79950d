"""A reproducible build: two builds of the same tree give the same bytes in every file of the
site, the Pagefind indexes included (generator/site/search.py: the page kind is metadata, not
a Pagefind filter, whose index Pagefind writes in hash-map order), the tools' archive and the
sitemaps. The second build costs one more `mkdocs build` (about 16 s on the CI machine)."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

from generator import paths


def _digests(site: Path) -> dict[str, str]:
    return {
        str(p.relative_to(site)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(site.rglob("*"))
        if p.is_file()
    }


def test_two_builds_of_the_same_tree_are_byte_identical(built_site: Path, tmp_path: Path) -> None:
    again = tmp_path / "site"
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(again)],
        cwd=paths.ROOT,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    first, second = _digests(built_site), _digests(again)
    assert any(name.endswith(".pf_meta") for name in first)  # Pagefind's index is compared
    assert sorted(first) == sorted(second), set(first) ^ set(second)
    differ = [name for name in first if first[name] != second[name]]
    assert not differ, f"{len(differ)} file(s) differ: {differ[:10]}"
