"""The output formats of ``python -m generator lint``: text, JSON, SARIF 2.1.0, and for CI
GitHub workflow commands and a GitLab Code Quality report (`generator.lint.ci`); and the
rule list of ``--list-rules``.

* ``text``: ``path:line:col: CODE [severity] message (tip: <id>)`` per finding, then one
  summary line (in Chinese with full-width punctuation: ``（技巧：<id>）``);
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
so standard output stays machine-readable. A file name is written so that it stays on one
line and can be encoded (`generator.lint.files.printable`; JSON escapes it, a SARIF URI
percent-encodes its bytes).
"""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote

from generator import paths
from generator.lint import ci
from generator.lint.engine import FileError, Finding, LintResult
from generator.lint.files import printable
from generator.lint.messages import labels_for
from generator.lint.rules import RULES
from generator.lint.rules.base import Rule

if TYPE_CHECKING:
    from generator.lint.api import LintRun

#: The output formats of findings (``--format``).
FORMATS = ("text", "json", "sarif", "github", "gitlab")
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


def tip_ref(tip: str, labels: Mapping[str, str]) -> str:
    """`` (tip: <id>)``, or ``（技巧：<id>）`` after a Chinese message."""
    return labels["lint_tip_ref"].format(tip=labels["lint_tip"], id=tip)


def text_line(finding: Finding, labels: Mapping[str, str] | None = None) -> str:
    """``path:line:col: CODE [severity] message (tip: <id>)``."""
    f = finding
    label = labels_for("en", labels)
    severity = label[f"lint_severity_{f.severity}"]
    where = f"{printable(f.path)}:{f.line}:{f.column}"
    return f"{where}: {f.rule} [{severity}] {f.message}{tip_ref(f.tip, label)}"


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
                L["lint_summary_notes"].format(notes=L["lint_notes_sep"].join(notes))
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
    out = parts[0]
    for part in parts[1:]:
        out = L["lint_sentences"].format(first=out, then=part)
    return out


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
    return ci.dumps([f.as_dict() for f in result.findings])


def _uri(path: str) -> tuple[str, bool]:
    """A SARIF artifact URI for ``path`` (its bytes percent-encoded, whatever they are), and
    whether it is relative to ``%SRCROOT%``."""
    p = Path(path)
    encoded = quote(os.fsencode(p.as_posix()))
    if p.is_absolute():
        return "file://" + encoded, False
    return encoded, True


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
            "message": {"text": f"{f.message}{tip_ref(f.tip, labels_for(lang))}"},
            "locations": [_location(f.path, f.line, f.column, f.end_line, f.end_column)],
        }
        for f in result.findings
        if f.rule in index
    ]
    notifications = [
        {
            "level": "error",
            "message": {"text": e.text(lang)},
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
    return ci.dumps(log)


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
        return ci.dumps([rule_record(r, lang) for r in rules])
    L = labels_for(lang, labels)
    width = max(display_width(L[f"lint_severity_{s}"]) for s in ("error", "warning", "info"))
    fixes = {"safe": L["lint_fix_safe"], "unsafe": L["lint_fix_unsafe"], None: "-"}
    fix_width = max(display_width(v) for v in fixes.values())
    lines = []
    for r in rules:
        severity = L[f"lint_severity_{r.severity}"]
        opt = "" if r.default else L["lint_paren"].format(text=L["lint_opt_in"])
        lines.append(
            f"{r.code}  {pad(severity, width)}  {pad(fixes[r.fix_safety], fix_width)}  "
            f"{r.name}{opt}{L['colon']}{r.message_in(lang)}"
        )
    return "\n".join(lines) + "\n"


def display_width(text: str) -> int:
    """The cells ``text`` takes in a terminal: two for a wide or full-width character
    (East Asian width W or F), none for a combining mark, else one."""
    width = 0
    for ch in text:
        if unicodedata.combining(ch):
            continue
        width += 2 if unicodedata.east_asian_width(ch) in "WF" else 1
    return width


def pad(text: str, width: int) -> str:
    """``text`` padded with spaces to ``width`` terminal cells."""
    return text + " " * max(width - display_width(text), 0)


def error_lines(errors: Sequence[FileError], lang: str = "en") -> str:
    """One line per file that could not be checked: ``path:line:col: message``."""
    return "".join(f"{printable(e.path)}:{e.line}:{e.column}: {e.text(lang)}\n" for e in errors)


def would_fix(run: LintRun, labels: Mapping[str, str] | None = None) -> str:
    """``--diff``'s closing line: ``Would fix N findings in M files.``"""
    L = labels_for(run.lang, labels)
    findings, files = counted(L, "finding", run.fixable), counted(L, "file", len(run.changes))
    return L["lint_would_fix"].format(findings=findings, files=files) + "\n"


def outputs(run: LintRun, fmt: str, version: str = "0") -> tuple[str, str, str]:
    """``run`` as ``python -m generator lint --format <fmt>`` prints it: what goes to
    standard error first (the files that could not be checked), to standard output (the
    findings in ``fmt``, or for a ``--diff`` run the diff), and to standard error last
    (what ``--diff`` would fix). ``version``: the tool's, for SARIF."""
    errors = error_lines(run.result.errors, run.lang)
    if run.diff:
        return errors, run.diff_text(), would_fix(run)
    return errors, render(run, fmt, version), ""


def render(run: LintRun, fmt: str, version: str = "0") -> str:
    """The findings of ``run`` in the format ``fmt`` (`FORMATS`), as standard output gets
    them."""
    if fmt == "json":
        return json_report(run.result)
    if fmt == "sarif":
        return sarif(run.result, run.rules, version, run.lang)
    if fmt == "github":
        return ci.github(run.result, labels_for(run.lang))
    if fmt == "gitlab":
        return ci.gitlab(run.result, labels=labels_for(run.lang))
    return text(run.result, run.fixed, labels_for(run.lang), run.unsafe)
