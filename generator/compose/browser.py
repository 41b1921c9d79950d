"""The composer as the site's composer page runs it, in the browser.

The page runs this module in Pyodide (`generator.site.runtime`): its form's flags go in, and
the script comes out of the same calls ``python -m generator compose`` makes
(`generator.compose.flags.parse_flags`, `generator.compose.script.compose`), so the page
shows the very bytes the command writes, and the command's own message when the flags
contradict each other.
"""

from __future__ import annotations

import json
import re
import shlex
import textwrap
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


def launch_commands(script: str) -> list[dict[str, str]]:
    """The commands that start a composed script on several machines, read from its
    docstring (``compose/includes/launch.txt.j2``), so the page shows what the script says:
    each indented block that runs ``torchrun --nnodes``, dedented, as ``{"kind": "slurm"}``
    (a job script) or ``{"kind": "torchrun"}``. None for a script that runs in one process.
    """
    start = script.find('"""')
    end = script.find('"""', start + 3)
    if start < 0 or end < 0:
        return []
    out = []
    for block in re.split(r"\n\s*\n", script[start + 3 : end]):
        lines = block.strip("\n").splitlines()
        if lines and all(line.startswith("    ") for line in lines) and "--nnodes" in block:
            text = textwrap.dedent(block.strip("\n"))
            kind = "slurm" if text.startswith("#!") or "#SBATCH" in text else "torchrun"
            out.append({"kind": kind, "text": text})
    return out


def compose_flags(flags: list[str], lang: str = "en") -> dict[str, object]:
    """What the page shows for ``flags`` (``["--amp", "--accum", "4"]``): the script, the
    command line that writes it and its multi-node launch commands (`launch_commands`), or
    the error ``python -m generator compose`` prints for them (without its ``error:``
    prefix; in Chinese for ``lang="zh"``) and the command line that gives it."""
    from generator.compose.flags import parse_flags
    from generator.compose.script import compose

    try:
        options = parse_flags(flags)
        text = compose(options, cites())
    except ComposeError as err:
        return {
            "flags": flags,
            "error": err.in_lang(lang),
            "command": shlex.join([*COMMAND, *flags]),
        }
    return {
        "flags": flags,
        "text": text,
        "command": options.command(),
        "launch": launch_commands(text),
    }


def run(request: str) -> str:
    """The page's entry point: ``{"flags": [...], "lang": "en"}`` in, `compose_flags`'
    answer out (JSON)."""
    data = json.loads(request)
    flags, lang = data["flags"], data.get("lang", "en")
    if not isinstance(flags, list) or not all(isinstance(f, str) for f in flags):
        return json.dumps({"flags": [], "error": "flags must be a list of strings"})
    return json.dumps(compose_flags(flags, "zh" if lang == "zh" else "en"), ensure_ascii=False)
