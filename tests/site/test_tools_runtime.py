"""The runtime of the two tool pages (generator/site/runtime.py) and what they call
(generator/compose/browser.py, generator/lint/browser.py), without a browser: the archive is
self-contained and imports nothing heavy, Pyodide's download is checked and cached, and a
failure is one line. The browser side is tests/site/test_tools.py."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from generator.compose.browser import compose_flags
from generator.compose.script import compose, parse_flags, read_tips_by_feature
from generator.lint.browser import file_name, lint_text
from generator.site import runtime

#: Runs in a fresh interpreter without site-packages (-I -S): only the standard library and
#: the unpacked archive can be imported, as in Pyodide.
PROBE = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
extra = sys.argv[2]
if extra:
    __import__(extra)
from generator.compose import browser as compose
from generator.lint import browser as lint
out = {
    "compose": [json.loads(compose.run(json.dumps({"flags": f}))) for f in json.loads(sys.argv[3])],
    "lint": json.loads(lint.run(json.dumps({"source": sys.argv[4], "name": "t.py"}))),
    "lint_zh": json.loads(
        lint.run(json.dumps({"source": sys.argv[4], "name": "t.py", "lang": "zh", "unsafe": True}))
    ),
}
roots = (sys.argv[1], sys.base_prefix)
out["outside"] = sorted(
    name for name, m in list(sys.modules.items())
    if getattr(m, "__file__", None) and not m.__file__.startswith(roots)
)
out["modules"] = sorted(sys.modules)
print(json.dumps(out))
"""

FLAG_SETS = [[], ["--amp", "--accum", "4", "--ddp"], ["--deterministic", "--cudnn-benchmark"]]
SOURCE = "import torch\nx = torch.load('w.pt')\ny = torch.tensor([1]).cuda()\n"


@pytest.fixture(scope="module")
def unpacked(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("bundle")
    data = runtime.zip_bytes(runtime.bundle_files())
    zipfile.ZipFile(io.BytesIO(data)).extractall(folder)
    return folder


def _probe(folder: Path, extra: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-I",
            "-S",
            "-c",
            PROBE,
            str(folder),
            extra,
            json.dumps(FLAG_SETS),
            SOURCE,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=folder,
    )


def test_the_archive_runs_both_tools_alone_importing_nothing_heavy(unpacked: Path) -> None:
    proc = _probe(unpacked)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["outside"] == []  # every module from the archive or the standard library
    loaded = {name.split(".")[0] for name in out["modules"]}
    assert not loaded & set(runtime.FORBIDDEN), loaded & set(runtime.FORBIDDEN)
    assert {"jinja2", "markupsafe", "yaml"} <= loaded
    assert "markupsafe._speedups" not in out["modules"]  # the pure-Python fallbacks
    # The same answers as in this interpreter, with its C extensions and the records.
    cites = read_tips_by_feature()
    plain, full, contradiction = out["compose"]
    assert plain["text"] == compose(parse_flags([]), cites)
    assert full["text"] == compose(parse_flags(FLAG_SETS[1]), cites)
    assert full["command"] == "python -m generator compose --amp --accum 4 --ddp"
    assert contradiction == compose_flags(FLAG_SETS[2])
    assert "--deterministic" in contradiction["error"]
    assert out["lint"] == lint_text(SOURCE, "t.py")
    assert [f["rule"] for f in out["lint"]["findings"]] == ["PTT011", "PTT015"]
    # Chinese messages and labels (ui.yaml, read from the archive), the unsafe fixes too.
    assert out["lint_zh"] == lint_text(SOURCE, "t.py", "zh", unsafe=True)
    assert out["lint_zh"]["text"] != out["lint"]["text"]


def test_the_probe_fails_when_a_tool_imports_pydantic(unpacked: Path) -> None:
    """generator.records.schema needs pydantic: the probe must not find it."""
    proc = _probe(unpacked, extra="generator.records.schema")
    assert proc.returncode != 0
    assert "pydantic" in proc.stderr


def test_the_archive_holds_python_sources_licences_and_cites_and_is_reproducible() -> None:
    files = runtime.bundle_files()
    assert runtime.zip_bytes(files) == runtime.zip_bytes(runtime.bundle_files())
    names = set(files)
    assert {"generator/compose/browser.py", "generator/lint/browser.py"} <= names
    assert "generator/templates/compose/train.py.j2" in names
    # The lint's text output reads its labels from the site's ui.yaml
    # (generator.lint.report.labels_for): the one file of the site's templates that goes in.
    assert [n for n in names if n.startswith("generator/templates/site/")] == [
        "generator/templates/site/ui.yaml"
    ]
    assert "generator/command.py" in names  # imported by generator/lint/cli.py, packed with it
    assert {"LICENSES/Jinja2.txt", "LICENSES/MarkupSafe.txt", "LICENSES/PyYAML.txt"} <= names
    assert not [n for n in names if n.endswith((".so", ".pyd", ".c", ".pyc"))]
    assert json.loads(files["cites.json"]) == read_tips_by_feature()


# --- Pyodide: pinned, checked, cached ----------------------------------------------------------


def _package(**extra: bytes) -> bytes:
    files = {name: f"fake {name}".encode() for name in runtime.PYODIDE_FILES}
    files[runtime.LOCK_FILE] = json.dumps(
        {"info": {"python": "3.14.2"}, "packages": {"numpy": {"file_name": "numpy.whl"}}}
    ).encode()
    files.update(extra)
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(f"package/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def test_pyodide_is_downloaded_checked_cached_and_then_read_offline(tmp_path: Path) -> None:
    data = _package()
    source = tmp_path / "pyodide.tgz"
    source.write_bytes(data)
    cache = tmp_path / "cache"
    integrity = runtime.integrity_of(data)
    got = runtime.pyodide_tarball(cache, url=source.as_uri(), integrity=integrity)
    assert got == data and (cache / f"pyodide-{runtime.PYODIDE_VERSION}.tgz").read_bytes() == data
    offline = (tmp_path / "gone.tgz").as_uri()  # the registry is unreachable: the cache serves
    assert runtime.pyodide_tarball(cache, url=offline, integrity=integrity) == data
    files = runtime.pyodide_files(got)
    assert set(files) == {*runtime.PYODIDE_FILES, runtime.LOCK_FILE}
    # No package of Pyodide's distribution: the runtime never asks for one.
    assert json.loads(files[runtime.LOCK_FILE]) == {"info": {"python": "3.14.2"}, "packages": {}}


def test_an_unwritable_cache_costs_only_the_download(tmp_path: Path) -> None:
    data = _package()
    source = tmp_path / "pyodide.tgz"
    source.write_bytes(data)
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    got = runtime.pyodide_tarball(
        blocked / "cache", url=source.as_uri(), integrity=runtime.integrity_of(data)
    )
    assert got == data


def test_a_download_that_fails_its_hash_is_refused_in_one_line(tmp_path: Path) -> None:
    source = tmp_path / "pyodide.tgz"
    source.write_bytes(_package())
    cache = tmp_path / "cache"
    with pytest.raises(runtime.RuntimeUnavailable) as err:
        runtime.pyodide_tarball(cache, url=source.as_uri(), integrity=runtime.PYODIDE_INTEGRITY)
    assert "integrity" in str(err.value) and "\n" not in str(err.value)
    assert not cache.exists() or not any(cache.iterdir())  # nothing cached


def test_no_network_and_no_cache_is_one_line_naming_the_url_and_the_cache(tmp_path: Path) -> None:
    url = (tmp_path / "missing.tgz").as_uri()
    with pytest.raises(runtime.RuntimeUnavailable) as err:
        runtime.pyodide_tarball(tmp_path / "cache", url=url)
    message = str(err.value)
    assert url in message and str(tmp_path / "cache") in message and "\n" not in message


def test_a_package_without_a_needed_file_is_refused(tmp_path: Path) -> None:
    data = _package()
    broken = io.BytesIO()
    with (
        tarfile.open(fileobj=io.BytesIO(data)) as src,
        tarfile.open(fileobj=broken, mode="w:gz") as tar,
    ):
        for member in src.getmembers():
            if not member.name.endswith(".wasm"):
                tar.addfile(member, src.extractfile(member))
    with pytest.raises(runtime.RuntimeUnavailable, match="pyodide.asm.wasm"):
        runtime.pyodide_files(broken.getvalue())


def test_the_registry_can_be_a_mirror_and_the_cache_moved(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("npm_config_registry", "https://registry.npmmirror.com/")
    assert runtime.pyodide_url() == (
        f"https://registry.npmmirror.com/pyodide/-/pyodide-{runtime.PYODIDE_VERSION}.tgz"
    )
    monkeypatch.delenv("npm_config_registry")
    assert runtime.pyodide_url().startswith(runtime.REGISTRY)
    monkeypatch.setenv("PYTORCH_TIPS_CACHE", "/somewhere")
    assert runtime.cache_dir() == Path("/somewhere")


def test_the_build_fails_in_one_line_without_pyodide(tmp_path: Path) -> None:
    """No cached copy and an unreachable registry: MkDocs stops with one line, not a traceback."""
    from generator import paths

    env = dict(
        os.environ,
        PYTORCH_TIPS_CACHE=str(tmp_path / "empty"),
        npm_config_registry="http://127.0.0.1:9/",
        NO_MKDOCS_2_WARNING="1",
    )
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "s")],
        cwd=paths.ROOT,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert proc.returncode != 0
    lines = [line for line in proc.stderr.splitlines() if "Pyodide" in line]
    assert len(lines) == 1 and "http://127.0.0.1:9/pyodide/-/" in lines[0], proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr


# --- the entry points ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("my train.py", "my_train.py"),
        ("../../etc/passwd", "passwd"),
        ("C:\\work\\x.py", "x.py"),
        ("", "train.py"),
        (None, "train.py"),
        ("..", "train.py"),
    ],
)
def test_a_script_name_is_one_plain_file_name(name: object, expected: str) -> None:
    assert file_name(name) == expected


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_lint_text_reports_what_the_command_reports(
    lang: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The page's answer is the command's output for ``--lang``, with ``--unsafe-fixes`` and
    without: the JSON, the text (labels from ui.yaml), the diff and the count of fixes."""
    from generator import cli
    from generator.lint.report import counted
    from generator.lint.rules import RULES
    from generator.records.ui import labels

    L = labels()[lang]
    (tmp_path / "t.py").write_text(SOURCE, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    for unsafe in (False, True):
        options = ["--lang", lang, *(["--unsafe-fixes"] if unsafe else [])]
        cli.main(["lint", "t.py", "--format", "json", *options])
        as_json = capsys.readouterr().out
        cli.main(["lint", "t.py", *options])
        as_text = capsys.readouterr().out
        cli.main(["lint", "t.py", "--diff", *options])
        diff = capsys.readouterr()
        got = lint_text(SOURCE, "t.py", lang, unsafe)
        assert (got["json"], got["text"], got["diff"]) == (as_json, as_text, diff.out), unsafe
        would_fix = L["lint_would_fix"].format(
            findings=counted(L, "finding", got["fixes"]), files=counted(L, "file", 1)
        )
        assert diff.err == would_fix + "\n"  # the count --diff gives
        # PTT015's fix (.cuda() -> device=) is safe; PTT011's (weights_only=True) is unsafe.
        assert got["fixes"] == (2 if unsafe else 1)
        assert ("weights_only=True" in got["fixed"]) is unsafe
    by_code = {r.code: r for r in RULES}
    assert [f["message"] for f in got["findings"]] == [
        by_code[f["rule"]].message_in(lang) for f in got["findings"]
    ]
    assert [f["fix"] for f in got["findings"]] == ["unsafe", "safe"]
    broken = lint_text("def f(:\n", "t.py", lang)
    (tmp_path / "t.py").write_text("def f(:\n", encoding="utf-8")
    cli.main(["lint", "t.py", "--lang", lang])  # the same line, in the same language
    assert broken["findings"] == [] and broken["errors"] == capsys.readouterr().err.splitlines()
    assert broken["errors"][0].startswith("t.py:1:")


def test_compose_flags_answers_with_the_command_s_error_and_command(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from generator import cli

    flags = ["--deterministic", "--cudnn-benchmark"]
    assert cli.main(["compose", *flags]) == 2
    stderr = capsys.readouterr().err
    answer = compose_flags(flags)
    assert stderr == f"error: {answer['error']}\n"
    assert answer["command"] == "python -m generator compose --deterministic --cudnn-benchmark"
    assert cli.main(["compose", "--amp"]) == 0
    assert capsys.readouterr().out == compose_flags(["--amp"])["text"]


def test_compose_flags_gives_the_launch_commands_of_a_distributed_script() -> None:
    """The commands for several machines are the ones the script's docstring gives (the
    torchrun line and the SLURM job), dedented, for a script that runs on several processes;
    none for one that does not. The page shows them next to Download."""
    for flags in (["--ddp"], ["--model", "gpt", "--fsdp"]):
        answer = compose_flags(flags, "zh")
        text, launch = str(answer["text"]), answer["launch"]
        assert isinstance(launch, list) and [c["kind"] for c in launch] == ["torchrun", "slurm"]
        docstring = text.split('"""')[1]
        for command in launch:
            lines = command["text"].splitlines()
            assert "--nnodes" in command["text"] and "\n".join(lines) == command["text"]
            assert "\n".join("    " + line for line in lines) in docstring
        assert launch[0]["text"].startswith("torchrun --nnodes=")
        assert launch[1]["text"].startswith("#!/bin/bash\n#SBATCH")
    assert compose_flags([])["launch"] == compose_flags(["--amp"])["launch"] == []
