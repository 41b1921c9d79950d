"""A reproducible build: two builds of the same tree give the same bytes in every file of the
site, the Pagefind indexes included (generator/site/search.py: the page kind is metadata, not
a Pagefind filter, whose index Pagefind writes in hash-map order), the tools' archive and the
sitemaps. The second build costs one more `mkdocs build` (about 16 s on the CI machine)."""

from __future__ import annotations

import hashlib
from pathlib import Path

from tests.helpers import build_site


def _digests(site: Path) -> dict[str, str]:
    return {
        str(p.relative_to(site)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(site.rglob("*"))
        if p.is_file()
    }


def test_two_builds_of_the_same_tree_are_byte_identical(built_site: Path, tmp_path: Path) -> None:
    again = tmp_path / "site"
    failure = build_site(again)
    assert failure is None, failure
    first, second = _digests(built_site), _digests(again)
    assert any(name.endswith(".pf_meta") for name in first)  # Pagefind's index is compared
    assert sorted(first) == sorted(second), set(first) ^ set(second)
    differ = [name for name in first if first[name] != second[name]]
    assert not differ, f"{len(differ)} file(s) differ: {differ[:10]}"
