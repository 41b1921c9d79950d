"""The lint's findings for CI services, as ruff writes them for the same services.

* ``github``: one GitHub Actions workflow command per finding, which the run shows as an
  annotation on the line of the pull request's diff::

      ::warning title=pytorch-tips (PTT020),file=train.py,line=12,col=9,endLine=12,endColumn=20::train.py:12:9: PTT020 message (tip: id)

  ``error``, ``warning`` and ``notice`` follow the rule's severity (ruff writes ``error``
  for all). Property values are escaped as the runner reads them (``%``, ``\\r``, ``\\n``,
  ``:`` and ``,``), the message's ``%``, ``\\r`` and ``\\n``. A file that could not be
  checked is an ``error`` at its position.
* ``gitlab``: a GitLab Code Quality report (a JSON list, for ``artifacts: reports:
  codequality``): ``description`` (the code, then the message), ``check_name``,
  ``fingerprint``, ``severity`` and ``location`` (``path`` relative to ``$CI_PROJECT_DIR``
  when it is set, ``positions`` begin and end). GitLab matches the issues of two pipelines
  by fingerprint, so it must not change when lines are added above a finding: it hashes the
  rule, the path and the text of the finding's line (not its number); identical findings
  are told apart by their order (the next fingerprint hashes the previous one, as ruff
  does). Severities: error → major, warning → minor, info → info; a file that could not be
  checked is ``critical``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Mapping

from generator.lint.engine import LintResult
from generator.lint.files import printable
from generator.lint.lines import split

_GITHUB_LEVELS = {"error": "error", "warning": "warning", "info": "notice"}
_GITLAB_SEVERITIES = {"error": "major", "warning": "minor", "info": "info"}
_SURROGATE = re.compile("[\ud800-\udfff]")


def _data(text: str) -> str:
    """A workflow command's message, escaped."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _prop(text: str) -> str:
    """A workflow command's property value, escaped."""
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def _tip(tip: str, labels: Mapping[str, str] | None) -> str:
    if labels is None:
        return f" (tip: {tip})"
    return labels["lint_tip_ref"].format(tip=labels["lint_tip"], id=tip)


def github(result: LintResult, labels: Mapping[str, str] | None = None) -> str:
    """The findings (and the files that could not be checked) as workflow commands;
    ``labels``: those of the messages' language (default: English)."""
    lines = []
    for f in result.findings:
        path = printable(f.path)
        props = (
            f"title={_prop(f'pytorch-tips ({f.rule})')},file={_prop(path)},line={f.line},"
            f"col={f.column},endLine={f.end_line or f.line},endColumn={f.end_column or f.column}"
        )
        text = f"{path}:{f.line}:{f.column}: {f.rule} {f.message}{_tip(f.tip, labels)}"
        lines.append(f"::{_GITHUB_LEVELS[f.severity]} {props}::{_data(text)}")
    for e in result.errors:
        path = printable(e.path)
        props = f"title=pytorch-tips,file={_prop(path)},line={e.line},col={e.column}"
        lines.append(f"::error {props}::{_data(f'{path}:{e.line}:{e.column}: {e.message}')}")
    return "".join(line + "\n" for line in lines)


def _project_path(path: str, project: str | None) -> str:
    if project:
        try:
            return os.path.relpath(os.path.abspath(path), project)
        except ValueError:  # another drive (Windows)
            return path
    return path


def _fingerprint(*parts: str) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode("utf-8", "surrogateescape"))
        digest.update(b"\0")
    return digest.hexdigest()


def _issue(
    check: str, description: str, severity: str, path: str, begin: dict, end: dict, key: str
) -> dict[str, object]:
    return {
        "check_name": check,
        "description": description,
        "severity": severity,
        "fingerprint": key,
        "location": {"path": path, "positions": {"begin": begin, "end": end}},
    }


def gitlab(
    result: LintResult, project: str | None = None, labels: Mapping[str, str] | None = None
) -> str:
    """The findings as a GitLab Code Quality report; paths relative to ``project`` (default:
    ``$CI_PROJECT_DIR`` when set); ``labels``: those of the messages' language."""
    project = os.environ.get("CI_PROJECT_DIR") if project is None else project
    used: set[str] = set()

    def unique(*parts: str) -> str:
        key = _fingerprint(*parts)
        while key in used:
            key = _fingerprint(key, *parts)
        used.add(key)
        return key

    texts: dict[str, list[str]] = {}

    def line_text(path: str, line: int) -> str:
        if path not in texts:
            texts[path] = split(result.sources.get(path, ""))
        lines = texts[path]
        return lines[line - 1].strip() if 0 < line <= len(lines) else ""

    issues = []
    for f in result.findings:
        path = _project_path(f.path, project)
        begin = {"line": f.line, "column": f.column}
        end = {"line": f.end_line or f.line, "column": f.end_column or f.column}
        key = unique(f.rule, path, line_text(f.path, f.line))
        description = f"{f.rule}: {f.message}{_tip(f.tip, labels)}"
        severity = _GITLAB_SEVERITIES[f.severity]
        issues.append(_issue(f.rule, description, severity, path, begin, end, key))
    for e in result.errors:
        path = _project_path(e.path, project)
        begin = end = {"line": e.line, "column": e.column}
        key = unique("file-error", path, e.message)
        issues.append(_issue("file-error", e.message, "critical", path, begin, end, key))
    return dumps(issues)


def dumps(value: object) -> str:
    """``value`` as indented JSON with its text unescaped, except a lone surrogate (a file
    name byte that was not UTF-8), written ``\\udcff``: JSON readers turn it back into the
    same name, and the output stays encodable."""
    text = json.dumps(value, ensure_ascii=False, indent=2)
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text) + "\n"
