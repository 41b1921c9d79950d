"""``pytorch-tips lsp``: the lint as a Language Server over stdio (pygls), for any editor
with an LSP client.

* Diagnostics when a file is opened or saved, and while it is edited (after `DEBOUNCE`
  seconds without a change): the findings of ``python -m generator lint`` on the buffer's
  text, held in memory (`generator.lint.api.run_source` under the file's absolute path, so
  the nearest ``pyproject.toml`` applies as on the command line; nothing is written). A
  file that does not parse gets one diagnostic at the error; a configuration that cannot be
  used, one at the top of the file.
* Code actions: each finding's fix (a safe one marked preferred; an unsafe one says so in
  its title), ``# noqa: PTTnnn`` for the statement, and "fix all" (the safe fixes of the
  file, as ``--fix``; also offered as the ``source.fixAll`` kind editors run on save).
* Hover over a finding: the rule's ``--explain`` text.

Messages in English, or in Chinese with ``--lang zh`` or the initialization option
``{"lang": "zh"}``. The editor's settings are on the lint page (docs/lint.md).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from dataclasses import dataclass
from typing import Any

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from generator import paths
from generator.lint.api import SourceRun, run_source
from generator.lint.editor import Document, Range, TextEdit, hover_text
from generator.lint.engine import Finding
from generator.lint.messages import LintError, labels_for

#: Seconds without a change before a changed buffer is linted again.
DEBOUNCE = 0.3
SOURCE = "pytorch-tips"
FIX_ALL = f"{lsp.CodeActionKind.SourceFixAll.value}.{SOURCE}"
_SEVERITY = {
    "error": lsp.DiagnosticSeverity.Error,
    "warning": lsp.DiagnosticSeverity.Warning,
    "info": lsp.DiagnosticSeverity.Information,
}


@dataclass
class Linted:
    """The last lint of one buffer: its version and text, and what the lint found."""

    version: int | None
    document: Document
    run: SourceRun


class TipsServer(LanguageServer):
    """The server: the buffers' last lints, the pending (debounced) ones, the language."""

    def __init__(self, version: str, lang: str = "en") -> None:
        super().__init__(
            SOURCE, version, text_document_sync_kind=lsp.TextDocumentSyncKind.Incremental
        )
        self.lang = lang
        self.linted: dict[str, Linted] = {}
        self.pending: dict[str, asyncio.TimerHandle] = {}
        # one lint at a time, off the event loop: requests are answered while a file is linted
        self.pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)

    def labels(self) -> Any:
        return labels_for(self.lang)


def _filename(uri: str) -> tuple[str, bool]:
    """The path the findings are checked under, and whether no configuration applies (a
    buffer that is not a file: ``untitled:``)."""
    path = to_fs_path(uri) if uri.startswith("file:") else None
    return (path, False) if path else ("untitled.py", True)


def lint_text(uri: str, text: str, lang: str) -> SourceRun:
    """The lint of one buffer, as ``python -m generator lint`` would check that file."""
    name, isolated = _filename(uri)
    return run_source(text, name, lang=lang, isolated=isolated)


def _range(r: Range) -> lsp.Range:
    (line, char), (end_line, end_char) = r
    return lsp.Range(lsp.Position(line, char), lsp.Position(end_line, end_char))


def _edit(e: TextEdit) -> lsp.TextEdit:
    return lsp.TextEdit(range=_range(e.range), new_text=e.text)


def diagnostic(doc: Document, f: Finding, labels: Any) -> lsp.Diagnostic:
    from generator.lint.report import rule_url, tip_ref

    base = paths.site_url()
    return lsp.Diagnostic(
        range=_range(doc.finding_range(f)),
        message=f.message + tip_ref(f.tip, labels),
        severity=_SEVERITY[f.severity],
        code=f.rule,
        code_description=lsp.CodeDescription(href=rule_url(f.rule, base)) if base else None,
        source=SOURCE,
    )


def diagnostics(linted: Linted, lang: str) -> list[lsp.Diagnostic]:
    doc, result = linted.document, linted.run.result
    labels = labels_for(lang)
    out = [diagnostic(doc, f, labels) for f in result.findings]
    for e in result.errors:
        at = doc.position(e.line, e.column - 1)
        out.append(
            lsp.Diagnostic(
                range=_range((at, at)),
                message=e.text(lang),
                severity=lsp.DiagnosticSeverity.Error,
                source=SOURCE,
            )
        )
    return out


def create(version: str = "0", lang: str = "en") -> TipsServer:
    """A server with its features registered."""
    server = TipsServer(version, lang)

    @server.feature(lsp.INITIALIZE)
    def initialize(ls: TipsServer, params: lsp.InitializeParams) -> None:
        options = params.initialization_options
        if isinstance(options, dict) and options.get("lang") in ("en", "zh"):
            ls.lang = options["lang"]

    async def publish(ls: TipsServer, uri: str) -> None:
        if uri not in ls.workspace.text_documents:
            return  # closed meanwhile
        doc = ls.workspace.get_text_document(uri)
        version, text = doc.version, doc.source
        encoding = str(ls.workspace.position_encoding or "utf-16")
        loop = asyncio.get_running_loop()
        try:
            run = await loop.run_in_executor(ls.pool, lint_text, uri, text, ls.lang)
        except LintError as err:  # a pyproject.toml that cannot be used
            message = err.text(ls.lang)
            ls.window_log_message(lsp.LogMessageParams(lsp.MessageType.Error, message))
            item = lsp.Diagnostic(range=_range(((0, 0), (0, 0))), message=message, source=SOURCE)
            ls.text_document_publish_diagnostics(
                lsp.PublishDiagnosticsParams(uri=uri, version=version, diagnostics=[item])
            )
            return
        if uri not in ls.workspace.text_documents or doc.version != version:
            return  # changed while it was linted: the next lint publishes
        linted = Linted(version, Document(text, encoding), run)
        ls.linted[uri] = linted
        ls.text_document_publish_diagnostics(
            lsp.PublishDiagnosticsParams(
                uri=uri, version=version, diagnostics=diagnostics(linted, ls.lang)
            )
        )

    def schedule(ls: TipsServer, uri: str, delay: float) -> None:
        old = ls.pending.pop(uri, None)
        if old is not None:
            old.cancel()
        loop = asyncio.get_running_loop()
        ls.pending[uri] = loop.call_later(delay, lambda: loop.create_task(publish(ls, uri)))

    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    async def did_open(ls: TipsServer, params: lsp.DidOpenTextDocumentParams) -> None:
        schedule(ls, params.text_document.uri, 0)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    async def did_change(ls: TipsServer, params: lsp.DidChangeTextDocumentParams) -> None:
        schedule(ls, params.text_document.uri, DEBOUNCE)

    @server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
    async def did_save(ls: TipsServer, params: lsp.DidSaveTextDocumentParams) -> None:
        schedule(ls, params.text_document.uri, 0)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: TipsServer, params: lsp.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        pending = ls.pending.pop(uri, None)
        if pending is not None:
            pending.cancel()
        ls.linted.pop(uri, None)
        ls.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    @server.feature(
        lsp.TEXT_DOCUMENT_CODE_ACTION,
        lsp.CodeActionOptions(code_action_kinds=[lsp.CodeActionKind.QuickFix, FIX_ALL]),
    )
    def code_action(ls: TipsServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
        return actions(ls, params)

    @server.feature(lsp.TEXT_DOCUMENT_HOVER)
    def hover(ls: TipsServer, params: lsp.HoverParams) -> lsp.Hover | None:
        linted = current(ls, params.text_document.uri)
        if linted is None:
            return None
        at = (params.position.line, params.position.character)
        under = [
            f for f in linted.run.result.findings if _contains(linted.document.finding_range(f), at)
        ]
        if not under:
            return None
        text = hover_text(under, lambda code: explain_text(code, ls.lang))
        return lsp.Hover(contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=text))

    return server


def current(ls: TipsServer, uri: str) -> Linted | None:
    """The lint of the buffer as it is now (linted again if it changed since)."""
    if uri not in ls.workspace.text_documents:
        return None
    doc = ls.workspace.get_text_document(uri)
    linted = ls.linted.get(uri)
    if linted is None or linted.version != doc.version or linted.document.text != doc.source:
        encoding = str(ls.workspace.position_encoding or "utf-16")
        try:
            run = lint_text(uri, doc.source, ls.lang)
        except LintError:
            return None
        linted = Linted(doc.version, Document(doc.source, encoding), run)
        ls.linted[uri] = linted
    return linted


def _contains(r: Range, at: tuple[int, int]) -> bool:
    return r[0] <= at <= r[1]


def _overlaps(r: Range, wanted: lsp.Range) -> bool:
    start = (wanted.start.line, wanted.start.character)
    end = (wanted.end.line, wanted.end.character)
    return r[0] <= end and start <= r[1]


def actions(ls: TipsServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
    """The code actions for the findings in ``params.range``: fixes, ``noqa``, fix all."""
    uri = params.text_document.uri
    linted = current(ls, uri)
    if linted is None:
        return []
    only = params.context.only
    L = labels_for(ls.lang)
    doc = linted.document
    out: list[lsp.CodeAction] = []
    wants_quick = not only or any(k.startswith(lsp.CodeActionKind.QuickFix) for k in only)
    shown = {
        (d.code, d.range.start.line, d.range.start.character) for d in params.context.diagnostics
    }
    findings = [
        f
        for f in linted.run.result.findings
        if _overlaps(r := doc.finding_range(f), params.range) or (f.rule, *r[0]) in shown
    ]
    for f in findings if wants_quick else ():
        diag = diagnostic(doc, f, L)
        if f.edits:
            key = "lint_lsp_fix" if f.fix == "safe" else "lint_lsp_fix_unsafe"
            out.append(
                lsp.CodeAction(
                    title=L[key].format(code=f.rule),
                    kind=lsp.CodeActionKind.QuickFix,
                    diagnostics=[diag],
                    edit=lsp.WorkspaceEdit(changes={uri: [_edit(e) for e in doc.fix_edits(f)]}),
                    is_preferred=f.fix == "safe",
                )
            )
        noqa = doc.noqa_edit(f)
        if noqa is not None:
            out.append(
                lsp.CodeAction(
                    title=L["lint_lsp_noqa"].format(code=f.rule),
                    kind=lsp.CodeActionKind.QuickFix,
                    diagnostics=[diag],
                    edit=lsp.WorkspaceEdit(changes={uri: [_edit(noqa)]}),
                )
            )
    fix_all = not only or any(FIX_ALL.startswith(k) for k in only)
    if fix_all and any(f.fixable for f in linted.run.result.findings):
        name, isolated = _filename(uri)
        fixed = run_source(doc.text, name, fix=True, lang=ls.lang, isolated=isolated)
        if fixed.changes:
            edit = TextEdit(doc.whole(), fixed.text if not doc.bom else "\ufeff" + fixed.text)
            out.append(
                lsp.CodeAction(
                    title=L["lint_lsp_fix_all"],
                    kind=FIX_ALL,
                    edit=lsp.WorkspaceEdit(changes={uri: [_edit(edit)]}),
                )
            )
    return out


def explain_text(code: str, lang: str) -> str:
    """``--explain CODE`` in ``lang``."""
    from generator.lint.explain import as_text, explain, find_rule
    from generator.lint.report import rule_url, tip_url

    rule = find_rule(code)
    return as_text(explain(rule, lang), labels_for(lang), rule_url(rule.code), tip_url(rule.tip))


def serve(version: str = "0", lang: str = "en") -> int:
    """Serve one client on standard input and output until it says ``exit``."""
    create(version, lang).start_io()
    return 0
