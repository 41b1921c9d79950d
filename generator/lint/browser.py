"""The linter as the site's lint playground runs it, in the browser.

The page runs this module in Pyodide (`generator.site.runtime`). The pasted or dropped script
is written to a scratch folder of the browser's in-memory file system and checked by the very
steps of ``python -m generator lint --format json`` and ``--diff`` (`lint_paths`,
`fix_files`, `generator.lint.report`), so the page reports what the command reports, in the
same words (``--lang``), and proposes the same fixes: the safe ones, and the unsafe ones too
when the reader opts in (``--unsafe-fixes``). The scratch folder has no ``pyproject.toml``, and
none above it is read (``--isolated``): the page has no project to configure it. Nothing
leaves the page: there is no network here.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path

from generator.lint.rules.base import LANGS

#: The name a script gets when the page has none (a pasted script).
DEFAULT_NAME = "train.py"
_SAFE_NAME = re.compile(r"[^\w.\-]+")


def file_name(name: object) -> str:
    """A plain file name for the script: the last part of ``name``, with any character other
    than letters, digits, ``.``, ``-`` and ``_`` replaced (default `DEFAULT_NAME`)."""
    text = str(name or "").replace("\\", "/").rsplit("/", 1)[-1]
    text = _SAFE_NAME.sub("_", text).strip(".")
    return text or DEFAULT_NAME


def lint_text(
    source: str, name: str = DEFAULT_NAME, lang: str = "en", unsafe: bool = False
) -> dict[str, object]:
    """Check ``source`` as the file ``name``, as ``python -m generator lint --lang <lang>``
    (and ``--unsafe-fixes`` when ``unsafe``) does: the findings (with their end positions),
    the JSON and text reports, the lines of files that could not be checked, and the fixes
    (the safe ones, and the unsafe ones when ``unsafe``) as a diff with the fixed text."""
    from generator.lint import report
    from generator.lint.engine import lint_paths
    from generator.lint.fix import fix_files

    name = file_name(name)
    lang = lang if lang in LANGS else "en"
    cwd = os.getcwd()
    with tempfile.TemporaryDirectory(prefix="lint-") as folder:
        Path(folder, name).write_bytes(source.encode("utf-8", errors="surrogatepass"))
        os.chdir(folder)
        try:
            result = lint_paths([name], lang=lang, isolated=True)
        finally:
            os.chdir(cwd)
    changes = fix_files(result.sources, result.rules, unsafe=unsafe)
    return {
        "name": name,
        "lang": lang,
        "unsafe": unsafe,
        "findings": [
            {**f.as_dict(), "end_line": f.end_line, "end_column": f.end_column}
            for f in result.findings
        ],
        "json": report.json_report(result),
        "text": report.text(result, 0, report.labels_for(lang), unsafe),
        "errors": [str(e) for e in result.errors],
        "diff": "".join(c.diff() for c in changes),
        "fixes": sum(c.fixed for c in changes),
        "fixed": changes[0].after if changes else None,
    }


def run(request: str) -> str:
    """The page's entry point: ``{"source": ..., "name": ..., "lang": ..., "unsafe": ...}``
    in, `lint_text`'s answer out (JSON)."""
    data = json.loads(request)
    answer = lint_text(
        str(data.get("source", "")),
        data.get("name"),
        str(data.get("lang") or "en"),
        data.get("unsafe") is True,
    )
    return json.dumps(answer, ensure_ascii=False)
