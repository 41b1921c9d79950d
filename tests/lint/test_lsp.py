"""``pytorch-tips lsp`` as an editor meets it (issue 24, item 5): one real JSON-RPC session
over the server's standard input and output, in a subprocess: initialize, didOpen ->
publishDiagnostics, codeAction (the fix, preferred when safe; the unsafe one labelled;
``# noqa``; fix all), hover (``--explain``), didChange -> diagnostics again, a
``pyproject.toml`` that selects rules, a syntax error, shutdown and exit. And the editor
helpers (positions in UTF-16 units, the ``noqa`` edit) without a server."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO, Any

import pytest

from generator.lint.api import run_source
from generator.lint.editor import Document

pytest.importorskip("pygls", reason="the [lsp] extra: pip install -e '.[lsp]'")

SOURCE = (
    "import torch\n"
    "state = torch.load(path)\n"  # PTT011: an unsafe fix
    "m = torch.cuda.memory_cached()\n"  # PTT005: a safe fix
    "for x, y in loader:\n"
    "    loss = model(x).sum()\n"
    "    loss.backward()\n"
    "    optimizer.step()\n"
    "    print(loss.item())\n"  # PTT020: no fix
)


class Client:
    """A minimal LSP client: Content-Length framed JSON-RPC over a subprocess's pipes."""

    def __init__(self, cwd: Path, *args: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "generator", "lsp", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=dict(os.environ, PYTHONPATH=os.environ.get("PYTHONPATH", "")),
        )
        self.messages: queue.Queue[dict[str, Any]] = queue.Queue()
        self.next_id = 0
        threading.Thread(target=self._read, args=(self.proc.stdout,), daemon=True).start()

    def _read(self, stream: IO[bytes]) -> None:
        while True:
            length = None
            while line := stream.readline():
                if line in (b"\r\n", b"\n"):
                    break
                name, _, value = line.decode("ascii").partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            if length is None:
                return
            self.messages.put(json.loads(stream.read(length)))

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode("utf-8")
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def notify(self, method: str, params: dict[str, Any]) -> None:
        self.send({"method": method, "params": params})

    def request(self, method: str, params: Any) -> Any:
        self.next_id += 1
        wanted = self.next_id
        self.send({"id": wanted, "method": method, "params": params})
        message = self.wait(lambda m: m.get("id") == wanted and "method" not in m)
        assert "error" not in message, message
        return message["result"]

    def wait(self, match: Any, timeout: float = 20.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            message = self.messages.get(timeout=max(deadline - time.monotonic(), 0.01))
            if match(message):
                return message

    def diagnostics(self, uri: str, version: int | None = None) -> list[dict[str, Any]]:
        def match(m: dict[str, Any]) -> bool:
            params = m.get("params", {})
            return (
                m.get("method") == "textDocument/publishDiagnostics"
                and params.get("uri") == uri
                and (version is None or params.get("version") == version)
            )

        return self.wait(match)["params"]["diagnostics"]


def _apply(text: str, edits: list[dict[str, Any]]) -> str:
    """Apply LSP text edits (ASCII text: characters are UTF-16 units) to ``text``."""
    lines = text.split("\n")
    starts = [0]
    for line in lines[:-1]:
        starts.append(starts[-1] + len(line) + 1)

    def offset(pos: dict[str, int]) -> int:
        return starts[pos["line"]] + pos["character"]

    for edit in sorted(edits, key=lambda e: offset(e["range"]["start"]), reverse=True):
        r = edit["range"]
        text = text[: offset(r["start"])] + edit["newText"] + text[offset(r["end"]) :]
    return text


def test_an_editor_session_over_stdio(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text(
        '[tool.pytorch-tips.lint]\nignore = ["PTT049"]\n', encoding="utf-8"
    )
    path = project / "train.py"  # never written: the buffer is linted in memory
    uri = path.as_uri()
    client = Client(tmp_path)
    try:
        init = client.request(
            "initialize", {"processId": None, "rootUri": project.as_uri(), "capabilities": {}}
        )
        caps = init["capabilities"]
        assert caps["codeActionProvider"]["codeActionKinds"] == [
            "quickfix",
            "source.fixAll.pytorch-tips",
        ]
        assert caps["hoverProvider"] and caps["positionEncoding"] == "utf-16"
        client.notify("initialized", {})
        item = {"uri": uri, "languageId": "python", "version": 1, "text": SOURCE}
        client.notify("textDocument/didOpen", {"textDocument": item})
        found = client.diagnostics(uri, 1)
        assert [(d["code"], d["range"]["start"]["line"], d["severity"]) for d in found] == [
            ("PTT011", 1, 1),
            ("PTT005", 2, 1),
            ("PTT020", 7, 2),
        ]
        load = found[0]
        assert load["source"] == "pytorch-tips" and load["message"].endswith(
            "(tip: save-load-state-dict)"
        )
        assert load["range"] == {
            "start": {"line": 1, "character": 8},
            "end": {"line": 1, "character": 24},
        }
        assert not path.exists()

        # code actions: the unsafe fix labelled, the safe one preferred, noqa, fix all
        def actions(line: int, context: list[dict[str, Any]]) -> list[dict[str, Any]]:
            where = {"start": {"line": line, "character": 9}, "end": {"line": line, "character": 9}}
            return client.request(
                "textDocument/codeAction",
                {"textDocument": {"uri": uri}, "range": where, "context": {"diagnostics": context}},
            )

        assert [a["kind"] for a in actions(0, [])] == ["source.fixAll.pytorch-tips"]
        on_load = actions(1, [])  # the cursor on the call
        titles = [a["title"] for a in on_load]
        assert titles[:2] == [
            "Fix PTT011 (unsafe: it can change what the program does)",
            "Silence PTT011 for this statement (# noqa)",
        ]
        assert not on_load[0].get("isPreferred")
        unsafe = _apply(SOURCE, on_load[0]["edit"]["changes"][uri])
        assert "torch.load(path, weights_only=True)" in unsafe
        noqa = _apply(SOURCE, on_load[1]["edit"]["changes"][uri])
        assert "state = torch.load(path)  # noqa: PTT011\n" in noqa
        assert run_source(noqa, str(path)).result.findings[0].rule == "PTT005"
        on_cached = actions(0, [found[1]])  # the diagnostic the editor shows, not the cursor
        fix = on_cached[0]
        assert fix["title"] == "Fix PTT005" and fix["isPreferred"] and fix["kind"] == "quickfix"
        assert fix["diagnostics"][0]["code"] == "PTT005"
        fixed = _apply(SOURCE, fix["edit"]["changes"][uri])
        assert "m = torch.cuda.memory_reserved()\n" in fixed
        fix_all = next(a for a in on_cached if a["kind"] == "source.fixAll.pytorch-tips")
        assert _apply(SOURCE, fix_all["edit"]["changes"][uri]) == fixed  # the safe fixes only

        hover = client.request(
            "textDocument/hover",
            {"textDocument": {"uri": uri}, "position": {"line": 7, "character": 12}},
        )
        assert hover["contents"]["kind"] == "markdown"
        assert hover["contents"]["value"].startswith("PTT020 (item-every-step) [warning")
        nothing = client.request(
            "textDocument/hover",
            {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}},
        )
        assert nothing is None

        # an edit: the fixed text has one finding fewer; then a syntax error
        change = {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": fixed}]}
        client.notify("textDocument/didChange", change)
        assert [d["code"] for d in client.diagnostics(uri, 2)] == ["PTT011", "PTT020"]
        broken = {
            "textDocument": {"uri": uri, "version": 3},
            "contentChanges": [{"text": "def f(:\n"}],
        }
        client.notify("textDocument/didChange", broken)
        [error] = client.diagnostics(uri, 3)
        assert error["message"].startswith("syntax error") and error["range"]["start"]["line"] == 0

        # the project's configuration applies to the buffer, as on the command line
        (project / "pyproject.toml").write_text(
            '[tool.pytorch-tips.lint]\nselect = ["PTT011"]\n', encoding="utf-8"
        )
        back = {"textDocument": {"uri": uri, "version": 4}, "contentChanges": [{"text": SOURCE}]}
        client.notify("textDocument/didChange", back)
        client.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
        assert [d["code"] for d in client.diagnostics(uri, 4)] == ["PTT011"]

        assert client.request("shutdown", None) is None
        client.notify("exit", None)
        assert client.proc.wait(timeout=20) == 0
    finally:
        if client.proc.poll() is None:
            client.proc.kill()
        client.proc.wait()
    assert not path.exists()


def test_positions_count_utf16_units_and_a_bom() -> None:
    text = "import torch\nx = '😀é'; m = torch.cuda.memory_cached()\n"
    found = run_source(text, "t.py", isolated=True).result.findings
    [f] = [f for f in found if f.rule == "PTT005"]
    assert (f.line, f.column) == (2, 15)  # the lint counts characters
    doc = Document(text)
    assert doc.finding_range(f)[0] == (1, 15)  # the emoji is two UTF-16 units
    assert Document(text, "utf-32").finding_range(f)[0] == (1, 14)
    assert Document(text, "utf-8").finding_range(f)[0] == (1, 18)
    assert doc.char((1, 15)) == (2, 14)
    [edit] = doc.fix_edits(f)
    assert edit.range[0] == (1, 26) and edit.text == "memory_reserved"
    bom = "\ufeffm = torch.cuda.memory_cached()\n"
    [f] = run_source(bom, "t.py", isolated=True).result.findings
    assert Document(bom).finding_range(f)[0] == (0, 5)  # the editor's text keeps the mark


def test_noqa_goes_where_a_comment_can_go() -> None:
    text = 'import torch\nstate = torch.load(  # the checkpoint\n    """a\nb""")\n'
    [f] = run_source(text, "t.py", isolated=True).result.findings
    doc = Document(text)
    edit = doc.noqa_edit(f)
    assert edit is not None and edit.text == "  # noqa: PTT011" and edit.range[0][0] == 1
    with_codes = "import torch\nstate = torch.load(p)  # noqa: PTT020\n"
    [f] = run_source(with_codes, "t.py", isolated=True).result.findings
    edit = Document(with_codes).noqa_edit(f)
    assert edit is not None and edit.text == ", PTT011"


def test_lsp_without_the_extra_says_which_extra_to_install(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import importlib.util

    from generator.cli import main

    real = importlib.util.find_spec

    def find_spec(name: str, *args: object) -> object:
        return None if name.split(".")[0] == "pygls" else real(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    assert main(["lsp"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.splitlines() == [
        "error: pytorch-tips lsp needs the [lsp] extra (pygls is not installed): "
        "pip install -e '.[lsp]'"
    ]
