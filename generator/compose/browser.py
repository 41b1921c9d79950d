"""The composer as the site's composer page runs it, in the browser.

The page runs this module in Pyodide (`generator.site.runtime`): its form's flags go in, and
the script comes out of the same calls ``python -m generator compose`` makes
(`generator.compose.flags.parse_flags`, `generator.compose.script.compose`), so the page
shows the very bytes the command writes, and the command's own message when the flags
contradict each other.
"""

from __future__ import annotations

import json
import shlex
from functools import cache

from generator import paths
from generator.compose.options import ComposeError

#: The tips each feature cites, as the site build read them from ``tips/`` (the archive the
#: page loads has no records). Without it, as in a checkout, the records are read.
CITES_FILE = paths.ROOT / "cites.json"
COMMAND = ("python", "-m", "generator", "compose")


@cache
def cites() -> dict[str, list[str]]:
    """Feature -> the ids of the tips a script cites for it."""
    if CITES_FILE.is_file():
        return json.loads(CITES_FILE.read_text(encoding="utf-8"))
    from generator.compose.tips import read_tips_by_feature

    return read_tips_by_feature()


def compose_flags(flags: list[str]) -> dict[str, object]:
    """What the page shows for ``flags`` (``["--amp", "--accum", "4"]``): the script and the
    command line that writes it, or the error ``python -m generator compose`` prints for them
    (without its ``error:`` prefix) and the command line that gives it."""
    from generator.compose.flags import parse_flags
    from generator.compose.script import compose

    try:
        options = parse_flags(flags)
        text = compose(options, cites())
    except ComposeError as err:
        return {"flags": flags, "error": str(err), "command": shlex.join([*COMMAND, *flags])}
    return {"flags": flags, "text": text, "command": options.command()}


def run(request: str) -> str:
    """The page's entry point: ``{"flags": [...]}`` in, `compose_flags`' answer out (JSON)."""
    flags = json.loads(request)["flags"]
    if not isinstance(flags, list) or not all(isinstance(f, str) for f in flags):
        return json.dumps({"flags": [], "error": "flags must be a list of strings"})
    return json.dumps(compose_flags(flags), ensure_ascii=False)
