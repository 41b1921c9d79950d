"""The single-process path of the harness (almost every snippet takes it): a deprecated or
future-changed API fails the run, in the zygote's forked child and in the plain child alike.

The README promises that every snippet runs "with deprecation warnings as errors"; the
torchrun path has its own test (tests/records/test_launch.py).
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

from generator.records.harness import run_variant

#: A warning the snippet itself raises (attributed to ``__main__``, which Python's default
#: filters would show but not raise).
FROM_SNIPPET = "import warnings\nwarnings.warn('stale API', {category})\n"
#: A warning raised inside a library the snippet calls (attributed to that module, which the
#: default filters would silence): the way torch warns about its own deprecated functions.
FROM_LIBRARY = """
import types

lib = types.ModuleType("somelib")
source = "import warnings\\ndef old():\\n    warnings.warn('stale API', {category})\\n"
exec(source, lib.__dict__)
lib.old()
"""
#: Which child ran: the zygote imported torch before forking; the plain child imports nothing.
WHICH_CHILD = "import sys\nprint('torch imported:', 'torch' in sys.modules)\n"


@pytest.fixture(params=["forked", "plain"])
def child(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each test runs once in the zygote's forked child and once with PYTORCH_TIPS_ZYGOTE=0."""
    if request.param == "forked":
        pytest.importorskip("torch")  # the zygote imports it
        monkeypatch.delenv("PYTORCH_TIPS_ZYGOTE", raising=False)
    else:
        monkeypatch.setenv("PYTORCH_TIPS_ZYGOTE", "0")
    result = run_variant(WHICH_CHILD, None, "which.py")
    assert result.ok, result.output
    assert f"torch imported: {request.param == 'forked'}" in result.output, result.output
    return request.param


@pytest.mark.parametrize("template", [FROM_SNIPPET, FROM_LIBRARY], ids=["snippet", "library"])
@pytest.mark.parametrize("category", ["DeprecationWarning", "FutureWarning"])
def test_a_stale_api_warning_fails_the_snippet(child: str, template: str, category: str) -> None:
    result = run_variant(template.format(category=category), None, "snippets/demo/after.py")
    assert not result.ok, f"{child} child: a {category} passed:\n{result.output}"
    assert f"{category}: stale API" in result.output
    assert "snippets/demo/after.py" in result.output  # the traceback names the snippet


def test_a_warning_in_the_checks_fails_too(child: str) -> None:
    checks = FROM_SNIPPET.format(category="DeprecationWarning")
    result = run_variant("x = 1\n", checks, "snippets/demo/after.py")
    assert not result.ok, f"{child} child: a DeprecationWarning in the checks passed"
    assert "DeprecationWarning: stale API" in result.output


def test_other_warnings_and_clean_snippets_pass(child: str) -> None:
    """The failures above are the warnings' categories, not any warning or the harness."""
    code = "import warnings\nwarnings.warn('just so you know', UserWarning)\nx = 41\n"
    result = run_variant(code, "assert x + 1 == 42\n", "snippets/demo/after.py")
    assert result.ok, f"{child} child:\n{result.output}"
    failing = run_variant(code, "assert x == 42, 'x is 41'\n", "snippets/demo/after.py")
    assert not failing.ok and "x is 41" in failing.output


def test_the_child_hides_gpus_on_cpu_and_fixes_threads_and_hashing(child: str) -> None:
    """On ``cpu`` no GPU is visible, parallel test workers do not oversubscribe the cores, and
    string hashing is the same in every run."""
    names = ("CUDA_VISIBLE_DEVICES", "OMP_NUM_THREADS", "PYTHONHASHSEED")
    code = f"import json, os\nprint(json.dumps({{k: os.environ.get(k) for k in {names!r}}}))\n"
    result = run_variant(code, None, "env.py", device="cpu")
    assert result.ok, result.output
    seen = json.loads(result.output.strip().splitlines()[-1])
    assert seen == {
        "CUDA_VISIBLE_DEVICES": "",
        "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1"),
        "PYTHONHASHSEED": "0",
    }, child


#: A snippet that starts a process of its own (a DataLoader worker, a server) and then hangs:
#: it writes that process's pid where the test can read it.
HANGS_WITH_A_CHILD = """
import subprocess, sys, time
helper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
with open({pid_file!r}, "w") as f:
    f.write(str(helper.pid))
time.sleep(120)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_snippet_past_its_timeout_is_stopped_with_its_children(
    child: str, tmp_path: Path
) -> None:
    pid_file = tmp_path / "helper.pid"
    code = HANGS_WITH_A_CHILD.format(pid_file=str(pid_file))
    result = run_variant(code, "assert False\n", "snippets/demo/after.py", timeout=3)
    assert not result.ok and result.timed_out, f"{child} child:\n{result.output}"
    assert "timed out after 3 s" in result.output
    helper = int(pid_file.read_text())
    for _ in range(100):  # killed with the snippet's process group: gone once reaped
        if not _alive(helper):
            break
        time.sleep(0.05)
    assert not _alive(helper), f"{child} child: the snippet's own process outlived the timeout"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat", encoding="ascii") as stat:  # a zombie is dead
        return stat.read().split(")")[-1].split()[0] != "Z"
