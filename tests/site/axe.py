"""axe-core for the accessibility tests: the npm package at a pinned version, checked against
its registry integrity hash and cached outside the repository, as the build fetches Pyodide
(`generator.site.runtime.npm_tarball`): downloaded once, offline afterwards.

Not committed: axe-core is MPL-2.0, whose copies must come with the source form, and its
minified build alone is 650 kB; the tarball (700 kB) is what npm serves, checked by hash.
"""

from __future__ import annotations

import io
import os
import tarfile
from functools import cache
from typing import Any

import pytest

from generator.site.runtime import RuntimeUnavailable, npm_tarball

AXE_VERSION = "4.14.1"
#: ``dist.integrity`` of axe-core 4.14.1 in the npm registry.
AXE_INTEGRITY = "sha512-FHfa+lmNjQZfJz1q8wKqIDwC6DExcHt/pkjNQb09a3NPjCKg2rhu5qb2S4r76ASyFNNtuFooJpZe37OgudVGtQ=="
#: True once every finite CSS animation and transition of the page has finished.
SETTLED = """() => document.getAnimations().every(
    (a) => a.playState !== 'running' || a.effect.getComputedTiming().iterations === Infinity)"""
#: The impacts a page must not have.
BLOCKING = ("serious", "critical")


@cache
def axe_source() -> str:
    """``axe.min.js``; skips the test without it (fails under CI, where it is mandatory)."""
    try:
        tarball = npm_tarball(
            "axe-core", AXE_VERSION, AXE_INTEGRITY, "the accessibility tests run it in Chromium"
        )
    except RuntimeUnavailable as err:
        if os.environ.get("CI"):
            pytest.fail(f"axe-core is needed in CI: {err}", pytrace=False)
        pytest.skip(f"accessibility test skipped: {err}")
    with tarfile.open(fileobj=io.BytesIO(tarball), mode="r:gz") as tar:
        member = tar.extractfile("package/axe.min.js")
        assert member is not None
        return member.read().decode("utf-8")


def violations(page: Any) -> list[str]:
    """axe-core's serious and critical violations on ``page`` as it is now, one line each:
    ``rule (impact): target, target...``."""
    if not page.evaluate("typeof window.axe === 'object'"):
        page.add_script_tag(content=axe_source())
    # After a resize, Material's sidebars fade their colours in: read them when they are done.
    page.wait_for_function(SETTLED)
    found = page.evaluate(
        """async (blocking) => (await axe.run(document, {resultTypes: ['violations']}))
            .violations.filter(v => blocking.includes(v.impact))
            .map(v => `${v.id} (${v.impact}): ${v.nodes.map(n => n.target.join(' ')).join(', ')}`)""",
        list(BLOCKING),
    )
    return list(found)
