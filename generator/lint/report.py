"""The three output formats of ``python -m generator lint``: text, JSON and SARIF 2.1.0,
and the rule list of ``--list-rules``.

* ``text``: ``path:line:col: CODE [severity] message (tip: <id>)`` per finding, then one
  summary line;
* ``json``: a list of objects with the keys ``path``, ``line``, ``column``, ``rule``,
  ``tip``, ``message``, ``severity``, ``fixable`` (``--fix`` applies its fix) and ``fix``
  (the fix's applicability: ``safe``, ``unsafe`` or null);
* ``sarif``: one run for GitHub code scanning; every rule carries its description and, when
  the site's public address is set (``$PYTORCH_TIPS_SITE_URL``), a ``helpUri`` to its rule
  page; files that could not be read become tool notifications.

Messages and labels come in English or Chinese: the rules carry their own messages, and the
labels (severity names, the summary line) are those of ``generator/templates/site/ui.yaml``,
passed in as ``labels`` (read from that file when not given). Files that could not be checked
are written to standard error in every format, one line each (``path:line:col: message``),
so standard output stays machine-readable.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO
from urllib.parse import quote

from generator import paths
from generator.lint.engine import FileError, Finding, LintResult
from generator.lint.rules import RULES
from generator.lint.rules.base import Rule

if TYPE_CHECKING:
    from generator.lint.api import LintRun

#: The output formats of findings (``--format``).
FORMATS = ("text", "json", "sarif")
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_LEVELS = {"error": "error", "warning": "warning", "info": "note"}


def tip_url(tip: str, base: str | None = None) -> str:
    """The page of ``tip``: absolute under the public address, else relative to the site's
    root (``tips/<id>/``); never a local server's address."""
    return f"{paths.site_url() if base is None else base}tips/{tip}/"


def rule_path(code: str) -> str:
    """The path of a rule's page below the site's root: ``lint/rules/PTT020/``."""
    return f"lint/rules/{code}/"


def rule_url(code: str, base: str | None = None) -> str:
    """The page of the rule ``code``: absolute under the public address, else relative to the
    site's root, like `tip_url`."""
    return f"{paths.site_url() if base is None else base}{rule_path(code)}"


def labels_for(lang: str = "en", labels: Mapping[str, str] | None = None) -> Mapping[str, str]:
    """``labels``, or the UI labels of ``lang`` read from ``ui.yaml``."""
    if labels is not None:
        return labels
    from generator.records.ui import labels as ui_labels

    return ui_labels()[lang]


def text_line(finding: Finding, labels: Mapping[str, str] | None = None) -> str:
    """``path:line:col: CODE [severity] message (tip: <id>)``."""
    f = finding
    label = labels_for("en", labels)
    severity, tip = label[f"lint_severity_{f.severity}"], label["lint_tip"]
    return f"{f.path}:{f.line}:{f.column}: {f.rule} [{severity}] {f.message} ({tip}: {f.tip})"


def counted(labels: Mapping[str, str], key: str, n: int) -> str:
    """``1 finding``, ``2 findings`` (``lint_n_finding``, ``lint_n_findings`` in ui.yaml)."""
    L = labels
    return L["lint_n_" + key + ("" if n == 1 else "s")].format(n=n)


def summary(
    result: LintResult,
    fixed: int = 0,
    labels: Mapping[str, str] | None = None,
    unsafe_fixes: bool = False,
) -> str:
    """The one-line summary that ends the text output; ``unsafe_fixes``: whether
    ``--unsafe-fixes`` was given (otherwise the findings it would fix are counted)."""
    L = labels_for("en", labels)
    files = counted(L, "file", result.files)
    parts = []
    if fixed:
        parts.append(L["lint_summary_fixed"].format(findings=counted(L, "finding", fixed)))
    if result.findings:
        n_files = len({f.path for f in result.findings})
        found = L["lint_summary_found"].format(
            findings=counted(L, "finding", len(result.findings)), n=n_files, files=files
        )
        fixable = sum(f.fixable or (unsafe_fixes and f.fix == "unsafe") for f in result.findings)
        hidden = 0 if unsafe_fixes else sum(f.fix == "unsafe" for f in result.findings)
        notes = []
        if fixable:
            notes.append(L["lint_summary_fixable"].format(n=fixable))
        if hidden:
            notes.append(L["lint_summary_unsafe"].format(n=hidden))
        parts.append(
            found
            + (
                L["lint_summary_notes"].format(notes="; ".join(notes))
                if notes
                else L["lint_summary_end"]
            )
        )
    else:
        parts.append(L["lint_summary_none"].format(files=files))
    if result.errors:
        parts.append(
            L["lint_summary_unreadable"].format(files=counted(L, "file", len(result.errors)))
        )
    return " ".join(parts)


def text(
    result: LintResult,
    fixed: int = 0,
    labels: Mapping[str, str] | None = None,
    unsafe_fixes: bool = False,
) -> str:
    L = labels_for("en", labels)
    lines = [text_line(f, L) for f in result.findings]
    lines.append(summary(result, fixed, L, unsafe_fixes))
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


def sarif_rule(rule: type[Rule], base: str, lang: str = "en") -> dict:
    """The ``reportingDescriptor`` of one rule.

    SARIF 2.1.0 wants an absolute URI in ``helpUri`` (section 3.49.12), so without a public
    address (``base`` is "") there is none, and the help names the rule and the commands that
    explain it offline.
    """
    why = rule.why(lang)
    if base:
        url, page = tip_url(rule.tip, base), rule_url(rule.code, base)
        links = {"helpUri": page}
        text = f"Rule: {page} Tip: {url}"
        markdown = f"Rule: [{rule.code}]({page}) · Tip: [{rule.tip}]({url})"
    else:
        links = {}
        explain, show = f"pytorch-tips lint --explain {rule.code}", f"pytorch-tips show {rule.tip}"
        text = f"Rule: {explain} Tip: {rule.tip} ({show})"
        markdown = f"Rule: `{explain}` · Tip: {rule.tip} (`{show}`)"
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.message_in(lang)},
        "fullDescription": {"text": why},
        **links,
        "help": {
            "text": f"{why} {text}",
            "markdown": f"{why}\n\n{markdown}",
        },
        "defaultConfiguration": {"level": _LEVELS[rule.severity], "enabled": rule.default},
        "properties": {
            "tags": ["pytorch", rule.severity, rule.tip],
            "tip": rule.tip,
            "fixable": rule.fixable,
            "fix": rule.fix_safety,
        },
    }


def sarif(
    result: LintResult,
    rules: Sequence[type[Rule]] = RULES,
    version: str = "0",
    lang: str = "en",
) -> str:
    """The findings as a SARIF 2.1.0 log with one run."""
    base = paths.site_url()
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
                        "rules": [sarif_rule(r, base, lang) for r in rules],
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


def rule_record(rule: type[Rule], lang: str = "en", base: str | None = None) -> dict[str, object]:
    """One rule as ``--list-rules --format json`` gives it."""
    return {
        "code": rule.code,
        "name": rule.name,
        "severity": rule.severity,
        "default": rule.default,
        "fix": rule.fix_safety,
        "tip": rule.tip,
        "message": rule.message_in(lang),
        "url": rule_url(rule.code, base),
    }


def rule_list(
    rules: Sequence[type[Rule]],
    fmt: str = "text",
    lang: str = "en",
    labels: Mapping[str, str] | None = None,
) -> str:
    """``--list-rules``: one line per rule (code, severity, fix, name, message), or JSON."""
    if fmt == "json":
        return (
            json.dumps([rule_record(r, lang) for r in rules], ensure_ascii=False, indent=2) + "\n"
        )
    L = labels_for(lang, labels)
    width = max(len(L[f"lint_severity_{s}"]) for s in ("error", "warning", "info"))
    fixes = {"safe": L["lint_fix_safe"], "unsafe": L["lint_fix_unsafe"], None: "-"}
    fix_width = max(len(v) for v in fixes.values())
    lines = []
    for r in rules:
        severity = L[f"lint_severity_{r.severity}"]
        opt = "" if r.default else f" ({L['lint_opt_in']})"
        lines.append(
            f"{r.code}  {severity:<{width}}  {fixes[r.fix_safety]:<{fix_width}}  "
            f"{r.name}{opt}: {r.message_in(lang)}"
        )
    return "\n".join(lines) + "\n"


def error_lines(errors: Sequence[FileError]) -> str:
    """One line per file that could not be checked: ``path:line:col: message``."""
    return "".join(f"{e}\n" for e in errors)


def would_fix(run: LintRun, labels: Mapping[str, str] | None = None) -> str:
    """``--diff``'s closing line: ``Would fix N findings in M files.``"""
    L = labels_for(run.lang, labels)
    findings, files = counted(L, "finding", run.fixable), counted(L, "file", len(run.changes))
    return L["lint_would_fix"].format(findings=findings, files=files) + "\n"


def write(run: LintRun, fmt: str, out: TextIO, err: TextIO, version: str = "0") -> None:
    """``run`` as ``python -m generator lint --format <fmt>`` prints it: the files that
    could not be checked on ``err``; then the findings in ``fmt`` on ``out`` or, for a
    ``--diff`` run, the diff on ``out`` and what it would fix on ``err``. ``version``: the
    tool's, for SARIF."""
    err.write(error_lines(run.result.errors))
    if run.diff:
        out.write(run.diff_text())
        err.write(would_fix(run))
    elif fmt == "json":
        out.write(json_report(run.result))
    elif fmt == "sarif":
        out.write(sarif(run.result, run.rules, version, run.lang))
    else:
        out.write(text(run.result, run.fixed, labels_for(run.lang), run.unsafe))
