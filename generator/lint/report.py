"""The three output formats of ``python -m generator lint``: text, JSON and SARIF 2.1.0.

* ``text``: ``path:line:col: CODE message (tip: <id>)`` per finding, then one summary line;
* ``json``: a list of objects with the keys ``path``, ``line``, ``column``, ``rule``,
  ``tip``, ``message``, ``severity``, ``fixable``;
* ``sarif``: one run for GitHub code scanning; every rule carries its description and, when
  the site's public address is set (``$PYTORCH_TIPS_SITE_URL``), a ``helpUri`` to its tip
  page; files that could not be read become tool notifications.

Files that could not be checked are written to standard error in every format, one line
each (``path:line:col: message``), so standard output stays machine-readable.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import quote

from generator import paths
from generator.lint.engine import FileError, Finding, LintResult
from generator.lint.rules import RULES
from generator.lint.rules.base import Rule

FORMATS = ("text", "json", "sarif")
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_LEVELS = {"error": "error", "warning": "warning", "info": "note"}


def site_url() -> str:
    """The site's public address, ending in ``/``, or "" while none is set.

    It is ``$PYTORCH_TIPS_SITE_URL``, the setting mkdocs.yml reads as ``site_url`` too
    (`generator.paths.site_url`), so a deployment sets it once for the site and the lint.
    """
    return paths.site_url()


def tip_url(tip: str, base: str | None = None) -> str:
    """The page of ``tip``: absolute under the public address, else relative to the site's
    root (``tips/<id>/``); never a local server's address."""
    return f"{site_url() if base is None else base}tips/{tip}/"


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
    """The ``reportingDescriptor`` of one rule.

    SARIF 2.1.0 wants an absolute URI in ``helpUri`` (section 3.49.12), so without a public
    address (``base`` is "") there is none, and the help names the tip and the command that
    shows it offline.
    """
    if base:
        url = tip_url(rule.tip, base)
        links = {"helpUri": url}
        text, markdown = f"Tip: {url}", f"Tip: [{rule.tip}]({url})"
    else:
        links = {}
        show = f"pytorch-tips show {rule.tip}"
        text, markdown = f"Tip: {rule.tip} ({show})", f"Tip: {rule.tip} (`{show}`)"
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.message},
        "fullDescription": {"text": rule.description()},
        **links,
        "help": {
            "text": f"{rule.description()} {text}",
            "markdown": f"{rule.description()}\n\n{markdown}",
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
                        # absolute, like helpUri (SARIF 2.1.0, section 3.19.17)
                        **({"informationUri": f"{base}lint/"} if base else {}),
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
