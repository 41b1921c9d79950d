"""The linter as the site's lint playground runs it, in the browser.

The page runs this module in Pyodide (`generator.site.runtime`). The pasted or dropped script
is written to a scratch folder of the browser's in-memory file system and checked by the very
steps of ``python -m generator lint --format json`` and ``--diff`` (`lint_paths`,
`fix_files`, `generator.lint.report`), so the page reports what the command reports, in the
same words, and proposes the same fixes. Nothing leaves the page: there is no network here.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path

#: The name a script gets when the page has none (a pasted script).
DEFAULT_NAME = "train.py"
_SAFE_NAME = re.compile(r"[^\w.\-]+")


def file_name(name: object) -> str:
    """A plain file name for the script: the last part of ``name``, with any character other
    than letters, digits, ``.``, ``-`` and ``_`` replaced (default `DEFAULT_NAME`)."""
    text = str(name or "").replace("\\", "/").rsplit("/", 1)[-1]
    text = _SAFE_NAME.sub("_", text).strip(".")
    return text or DEFAULT_NAME


def lint_text(source: str, name: str = DEFAULT_NAME) -> dict[str, object]:
    """Check ``source`` as the file ``name``: the findings (with their end positions), the
    JSON and text reports, the lines of files that could not be checked, and the safe fixes
    as a diff with the fixed text."""
    from generator.lint import report
    from generator.lint.engine import lint_paths, select_rules
    from generator.lint.fix import fix_files

    name = file_name(name)
    cwd = os.getcwd()
    with tempfile.TemporaryDirectory(prefix="lint-") as folder:
        Path(folder, name).write_bytes(source.encode("utf-8", errors="surrogatepass"))
        os.chdir(folder)
        try:
            result = lint_paths([name])
        finally:
            os.chdir(cwd)
    changes = fix_files(result.sources, select_rules())
    return {
        "name": name,
        "findings": [
            {**f.as_dict(), "end_line": f.end_line, "end_column": f.end_column}
            for f in result.findings
        ],
        "json": report.json_report(result),
        "text": report.text(result),
        "errors": [str(e) for e in result.errors],
        "diff": "".join(c.diff() for c in changes),
        "fixes": sum(c.fixed for c in changes),
        "fixed": changes[0].after if changes else None,
    }


def run(request: str) -> str:
    """The page's entry point: ``{"source": ..., "name": ...}`` in, `lint_text`'s answer out
    (JSON)."""
    data = json.loads(request)
    return json.dumps(lint_text(str(data.get("source", "")), data.get("name")), ensure_ascii=False)
