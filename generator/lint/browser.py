"""The linter as the site's lint playground runs it, in the browser.

The page runs this module in Pyodide (`generator.site.runtime`). The pasted or dropped script
is checked in memory by the function behind ``python -m generator lint --diff``
(`generator.lint.api.run_source`) and reported by `generator.lint.report`, so the page
reports what the command reports, in the same words (``--lang``), and proposes the same
fixes: the safe ones, and the unsafe ones too when the reader opts in (``--unsafe-fixes``).
No ``pyproject.toml`` is read (``--isolated``): the page has no project to configure it.
Nothing leaves the page: there is no network here.
"""

from __future__ import annotations

import json
import re

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
    from generator.lint.api import run_source

    name = file_name(name)
    lang = lang if lang in LANGS else "en"
    run = run_source(source, name, diff=True, unsafe=unsafe, lang=lang, isolated=True)
    result = run.result
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
        "errors": report.error_lines(result.errors, lang).splitlines(),
        "diff": run.diff_text(),
        "fixes": run.fixable,
        "fixed": run.text if run.changes else None,
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
