"""The lint under fuzzing, longer than the suite's test (tests/lint/test_fuzz.py): mutants of
the rules' INVALID examples (tests/lint/mutants.py) and programs hypothesmith writes from
Python's grammar, each linted with every rule in every output format, then fixed with the
unsafe fixes too; the mutants also as files on disk, in the encodings of the reliability
review (a latin-1 coding declaration, a byte-order mark, UTF-16, invalid UTF-8), through
``python -m generator lint``'s own function (`generator.cli.main`).

Counted: crashes (an exception, or an internal-error line), fixes that leave code that does
not compile, fixes that a second ``--fix`` changes again, fixes shown that ``--fix`` does not
apply. This is a benchmark, not a test: run it by hand; it exits 1 when any count is not 0.

    python benchmarks/lint_fuzz.py                       # 2,000 mutants, 300 programs
    python benchmarks/lint_fuzz.py --mutants 200 --programs 0 --seed 3
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
import tempfile
import time
import traceback
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from generator import cli  # noqa: E402
from generator.lint import api, report  # noqa: E402
from generator.lint.edits import compiles  # noqa: E402
from tests.lint.mutants import mutants  # noqa: E402

FORMATS = ("text", "json", "sarif", "github", "gitlab")
ENCODINGS = {
    "latin-1": lambda t: b"# -*- coding: latin-1 -*-\n" + t.encode("latin-1", "replace"),
    "bom": lambda t: b"\xef\xbb\xbf" + t.encode("utf-8"),
    "utf-16": lambda t: t.encode("utf-16"),
    "bad-utf8": lambda t: t.encode("utf-8") + b"\n# \xff\xfe\n",
}


def in_memory(text: str, counts: Counter[str], failures: list[str], where: str) -> None:
    def fail(kind: str, detail: str) -> None:
        counts[kind] += 1
        failures.append(f"{kind} [{where}]: {detail}\n{text!r}"[:2000])

    try:
        run = api.run_source(text, "f.py", select="ALL", diff=True, unsafe=True, isolated=True)
        for fmt in FORMATS:
            report.outputs(run, fmt)
        fixed = api.run_source(text, "f.py", select="ALL", fix=True, unsafe=True, isolated=True)
    except Exception:
        fail("crash", traceback.format_exc(limit=4))
        return
    counts["runs"] += 1
    counts["findings"] += len(run.result.findings)
    counts["unparsable"] += bool(run.result.errors)
    if run.result.internal or fixed.result.internal:
        fail(
            "internal error", "; ".join(e.message for e in run.result.errors + fixed.result.errors)
        )
    if not fixed.changes:
        if any(f.fix for f in run.result.findings):
            fail("fix shown, not applied", "")
        return
    counts["fixed files"] += 1
    counts["fixes"] += fixed.fixed
    if not compiles(fixed.text):
        fail("fix does not compile", fixed.text)
        return
    again = api.run_source(fixed.text, "f.py", select="ALL", fix=True, unsafe=True, isolated=True)
    if again.changes:
        fail("not idempotent", again.diff_text())


def on_disk(folder: Path, text: str, counts: Counter[str], failures: list[str], where: str) -> None:
    for name, encode in ENCODINGS.items():
        try:
            data = encode(text)
        except UnicodeError:
            continue
        path = folder / f"{name}.py"
        path.write_bytes(data)
        for args in (["--select", "ALL"], ["--select", "ALL", "--fix", "--unsafe-fixes"]):
            out, err = io.StringIO(), io.StringIO()
            try:
                with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                    code = cli.main(["lint", str(path), *args])
            except Exception:
                counts["crash"] += 1
                failures.append(f"crash [{where} {name} {args}]: {traceback.format_exc(limit=4)}")
                continue
            counts["cli runs"] += 1
            if code not in (0, 1):
                counts["internal error" if code == 3 else f"exit {code}"] += 1
                failures.append(f"exit {code} [{where} {name} {args}]: {err.getvalue()}")
        if path.read_bytes() != data and not compiles_file(path):
            counts["fix does not compile"] += 1
            failures.append(f"fix does not compile [{where} {name}]")


def compiles_file(path: Path) -> bool:
    try:
        compile(path.read_bytes(), str(path), "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return False
    return True


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mutants", type=int, default=2000)
    parser.add_argument("--programs", type=int, default=300, help="hypothesmith programs")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--disk-every", type=int, default=10, help="every Nth mutant on disk too")
    args = parser.parse_args()
    counts: Counter[str] = Counter()
    failures: list[str] = []
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="lint-fuzz-") as tmp:
        for n, (where, text) in enumerate(mutants(args.seed, args.mutants)):
            in_memory(text, counts, failures, where)
            if args.disk_every and n % args.disk_every == 0:
                on_disk(Path(tmp), text, counts, failures, where)
    if args.programs:
        from hypothesis import HealthCheck, given, settings
        from hypothesmith import from_grammar

        @settings(
            max_examples=args.programs,
            database=None,
            deadline=None,
            derandomize=True,
            suppress_health_check=list(HealthCheck),
        )
        @given(from_grammar())
        def programs(source: str) -> None:
            in_memory(source, counts, failures, "hypothesmith")

        programs()
    seconds = time.perf_counter() - start
    for failure in failures[:20]:
        print(failure, end="\n\n")
    bad = (
        "crash",
        "internal error",
        "fix does not compile",
        "not idempotent",
        "fix shown, not applied",
    )
    print(
        f"{args.mutants} mutants (seed {args.seed}), {args.programs} hypothesmith programs, {seconds:.0f} s"
    )
    for key in ("runs", "cli runs", "findings", "unparsable", "fixed files", "fixes", *bad):
        print(f"  {key:<24} {counts[key]:>8,}")
    other = {k: v for k, v in counts.items() if k.startswith("exit ")}
    if other:
        print("  other exit statuses:", other)
    return 1 if any(counts[k] for k in bad) or other else 0


if __name__ == "__main__":
    sys.exit(main())
