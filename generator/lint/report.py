"""The three output formats of ``python -m generator lint``: text, JSON and SARIF 2.1.0.

* ``text``: ``path:line:col: CODE message (tip: <id>)`` per finding, then one summary line;
* ``json``: a list of objects with the keys ``path``, ``line``, ``column``, ``rule``,
  ``tip``, ``message``, ``severity``, ``fixable``;
* ``sarif``: one run for GitHub code scanning; every rule carries its description and a
  ``helpUri`` to its tip page, and files that could not be read become tool notifications.

Files that could not be checked are written to standard error in every format, one line
each (``path:line:col: message``), so standard output stays machine-readable.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import quote

from generator import paths
from generator.lint.engine import FileError, Finding, LintResult
from generator.lint.rules import RULES
from generator.lint.rules.base import Rule

FORMATS = ("text", "json", "sarif")
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
#: Where the site lives when ``mkdocs.yml`` cannot be read (an installed package).
DEFAULT_SITE_URL = "http://127.0.0.1:8000/"
_LEVELS = {"error": "error", "warning": "warning", "info": "note"}


def site_url() -> str:
    """The site's base URL, from ``site_url`` in ``mkdocs.yml`` (ending in ``/``)."""
    try:
        text = (paths.ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    except OSError:
        return DEFAULT_SITE_URL
    match = re.search(r"^site_url:\s*['\"]?([^'\"\s#]+)", text, re.M)
    url = match.group(1) if match else DEFAULT_SITE_URL
    return url if url.endswith("/") else url + "/"


def tip_url(tip: str, base: str | None = None) -> str:
    """The page of ``tip`` on the site."""
    return f"{base or site_url()}tips/{tip}/"


def text_line(finding: Finding) -> str:
    """``path:line:col: CODE message (tip: <id>)``."""
    f = finding
    return f"{f.path}:{f.line}:{f.column}: {f.rule} {f.message} (tip: {f.tip})"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def summary(result: LintResult, fixed: int = 0) -> str:
    """The one-line summary that ends the text output."""
    files = _plural(result.files, "file")
    parts = []
    if fixed:
        parts.append(f"Fixed {_plural(fixed, 'finding')}.")
    if result.findings:
        n_files = len({f.path for f in result.findings})
        fixable = sum(f.fixable for f in result.findings)
        found = f"Found {_plural(len(result.findings), 'finding')} in {n_files} of {files}"
        parts.append(found + (f" ({fixable} fixable with --fix)." if fixable else "."))
    else:
        parts.append(f"No findings in {files}.")
    if result.errors:
        parts.append(f"{_plural(len(result.errors), 'file')} could not be checked.")
    return " ".join(parts)


def text(result: LintResult, fixed: int = 0) -> str:
    lines = [text_line(f) for f in result.findings]
    lines.append(summary(result, fixed))
    return "\n".join(lines) + "\n"


def json_report(result: LintResult) -> str:
    return json.dumps([f.as_dict() for f in result.findings], ensure_ascii=False, indent=2) + "\n"


def _uri(path: str) -> tuple[str, bool]:
    """A SARIF artifact URI for ``path``, and whether it is relative to ``%SRCROOT%``."""
    p = Path(path)
    if p.is_absolute():
        return p.as_uri(), False
    return quote(p.as_posix()), True


def _location(path: str, line: int, column: int, end_line: int = 0, end_column: int = 0) -> dict:
    uri, relative = _uri(path)
    artifact: dict[str, str] = {"uri": uri}
    if relative:
        artifact["uriBaseId"] = "%SRCROOT%"
    region: dict[str, int] = {"startLine": line, "startColumn": column}
    if end_line:
        region |= {"endLine": end_line, "endColumn": max(end_column, 1)}
    return {"physicalLocation": {"artifactLocation": artifact, "region": region}}


def sarif_rule(rule: type[Rule], base: str) -> dict:
    """The ``reportingDescriptor`` of one rule."""
    url = tip_url(rule.tip, base)
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.message},
        "fullDescription": {"text": rule.description()},
        "helpUri": url,
        "help": {
            "text": f"{rule.description()} Tip: {url}",
            "markdown": f"{rule.description()}\n\nTip: [{rule.tip}]({url})",
        },
        "defaultConfiguration": {"level": _LEVELS[rule.severity]},
        "properties": {
            "tags": ["pytorch", rule.severity, rule.tip],
            "tip": rule.tip,
            "fixable": rule.fixable,
        },
    }


def sarif(result: LintResult, rules: Sequence[type[Rule]] = RULES, version: str = "0") -> str:
    """The findings as a SARIF 2.1.0 log with one run."""
    base = site_url()
    index = {r.code: i for i, r in enumerate(rules)}
    results = [
        {
            "ruleId": f.rule,
            "ruleIndex": index[f.rule],
            "level": _LEVELS[f.severity],
            "message": {"text": f"{f.message} (tip: {f.tip})"},
            "locations": [_location(f.path, f.line, f.column, f.end_line, f.end_column)],
        }
        for f in result.findings
        if f.rule in index
    ]
    notifications = [
        {
            "level": "error",
            "message": {"text": e.message},
            "locations": [_location(e.path, e.line, e.column)],
        }
        for e in result.errors
    ]
    log = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "pytorch-tips-lint",
                        "informationUri": f"{base}lint/",
                        "version": version,
                        "rules": [sarif_rule(r, base) for r in rules],
                    }
                },
                "originalUriBaseIds": {"%SRCROOT%": {"uri": Path.cwd().as_uri() + "/"}},
                "columnKind": "unicodeCodePoints",
                "invocations": [
                    {
                        "executionSuccessful": not result.errors,
                        "toolExecutionNotifications": notifications,
                    }
                ],
                "results": results,
            }
        ],
    }
    return json.dumps(log, ensure_ascii=False, indent=2) + "\n"


def error_lines(errors: Sequence[FileError]) -> str:
    """One line per file that could not be checked: ``path:line:col: message``."""
    return "".join(f"{e}\n" for e in errors)
