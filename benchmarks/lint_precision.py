"""How precise `python -m generator lint` is on public training scripts it was not written for.

The corpus is a list of public files (``lint_precision/sources.tsv``: set, repository, path,
commit, SHA-256, lines), never committed: fetch them into a folder first, each named
``<owner>__<repo>__<path with / as __>``::

    python benchmarks/lint_precision.py CORPUS --download   # from raw.githubusercontent.com
    python benchmarks/lint_precision.py CORPUS              # lint, match verdicts, report

Every finding of the lint on that folder is looked up in ``lint_precision/verdicts.tsv``
(file, line, column, rule, verdict, reason), where a person judged it ``true``, ``false``
(a false alarm) or ``debatable``, with a one-line reason. The report gives, per set of
scripts and in total, the scripts, lines, findings, the three verdicts and two precisions:
``true / all findings`` and ``true / (true + false)`` (debatable findings count for neither,
as in the review of 2026-11-24), then the findings per rule, then any finding without a
verdict and any verdict whose finding is gone: both mean the verdicts are out of date. The
sets say how the scripts were used: ``tuning`` scripts were read while the rules were
narrowed, ``holdout-1`` was judged before its false alarms led to narrowing, ``holdout-2``
only after the last change, ``holdout-3`` before the rules of issue 24 changed
(``holdout-3-first.tsv`` keeps that first judgement).

Recall of host syncs: ``lint_precision/syncs.tsv`` lists the per-step (or per-evaluation-batch)
synchronisations a person found by reading scripts, each a site of lines ``line..end_line``.
A site is found when a finding of a sync rule (`SYNC_RULES`) lies on those lines; the report
gives found / all per set and lists the sites still missed.

This is a benchmark, not a test: run it by hand. ``--check`` exits 1 on a false alarm, an
unjudged finding, a stale verdict or a file whose content differs from the recorded hash.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import sys
import urllib.request
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

HERE = Path(__file__).resolve().parent / "lint_precision"
SOURCES = HERE / "sources.tsv"
VERDICTS = HERE / "verdicts.tsv"
SYNCS = HERE / "syncs.tsv"
VERDICT_KINDS = ("true", "false", "debatable")
#: The rules whose findings are host-device synchronisations (recall of `SYNCS`).
SYNC_RULES = frozenset({"PTT020", "PTT021", "PTT022", "PTT023", "PTT024", "PTT036", "PTT052"})


@dataclass(frozen=True)
class Source:
    set: str
    repo: str
    path: str
    commit: str
    sha256: str
    lines: int

    @property
    def file_name(self) -> str:
        return f"{self.repo.replace('/', '__')}__{self.path.replace('/', '__')}"

    @property
    def raw_url(self) -> str:
        return f"https://raw.githubusercontent.com/{self.repo}/{self.commit}/{self.path}"


def read_tsv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as f:
        rows = [line for line in f if line.strip() and not line.startswith("#")]
    return list(csv.DictReader(rows, delimiter="\t"))


def load_sources(path: Path = SOURCES) -> list[Source]:
    return [
        Source(r["set"], r["repo"], r["path"], r["commit"], r["sha256"], int(r["lines"]))
        for r in read_tsv(path)
    ]


def download(sources: list[Source], folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for s in sources:
        target = folder / s.file_name
        if target.exists():
            continue
        with urllib.request.urlopen(s.raw_url, timeout=60) as response:
            target.write_bytes(response.read())
        print(f"fetched {s.repo}:{s.path}@{s.commit[:10]}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", type=Path, help="folder holding the files of sources.tsv")
    parser.add_argument("--sources", type=Path, default=SOURCES)
    parser.add_argument("--verdicts", type=Path, default=VERDICTS)
    parser.add_argument("--syncs", type=Path, default=SYNCS)
    parser.add_argument("--download", action="store_true", help="fetch missing files first")
    parser.add_argument(
        "--check", action="store_true", help="exit 1 unless everything is judged and true"
    )
    args = parser.parse_args()

    from generator.lint import lint_paths

    sources = load_sources(args.sources)
    if args.download:
        download(sources, args.corpus)
    problems: list[str] = []
    files = []
    for s in sources:
        path = args.corpus / s.file_name
        if not path.is_file():
            problems.append(f"missing: {path} (run with --download)")
            continue
        if hashlib.sha256(path.read_bytes()).hexdigest() != s.sha256:
            problems.append(f"content differs from sources.tsv: {path}")
        files.append(path)
    set_of = {s.file_name: s.set for s in sources}
    lines_of = {s.file_name: s.lines for s in sources}

    result = lint_paths(files, isolated=True)
    problems += [f"could not be checked: {e}" for e in result.errors]
    verdicts = {
        (v["file"], int(v["line"]), int(v["column"]), v["rule"]): v for v in read_tsv(args.verdicts)
    }
    bad_kinds = [k for k, v in verdicts.items() if v["verdict"] not in VERDICT_KINDS]
    problems += [f"unknown verdict {verdicts[k]['verdict']!r} for {k}" for k in bad_kinds]

    counts: dict[str, Counter[str]] = defaultdict(Counter)
    by_rule: dict[str, Counter[str]] = defaultdict(Counter)
    seen = set()
    for f in result.findings:
        key = (Path(f.path).name, f.line, f.column, f.rule)
        seen.add(key)
        verdict = verdicts.get(key, {}).get("verdict", "unjudged")
        counts[set_of.get(key[0], "?")][verdict] += 1
        by_rule[f.rule][verdict] += 1
        if verdict == "unjudged":
            problems.append(f"no verdict: {key[0]}:{f.line}:{f.column}: {f.rule} {f.message}")
        elif verdict == "false":
            problems.append(f"false alarm: {key[0]}:{f.line}:{f.column}: {f.rule}")
    problems += [f"stale verdict (no such finding now): {k}" for k in verdicts if k not in seen]

    def row(name: str, names: list[str], c: Counter[str]) -> str:
        found = sum(c.values())
        judged = c["true"] + c["false"]
        of_all = f"{100 * c['true'] / found:.1f}%" if found else "-"
        precision = f"{100 * c['true'] / judged:.1f}%" if judged else "-"
        lines = sum(lines_of[n] for n in names)
        return (
            f"| {name} | {len(names)} | {lines:,} | {found} | {c['true']} | {c['false']} | "
            f"{c['debatable']} | {c['unjudged']} | {of_all} | {precision} |"
        )

    print(
        "| set | scripts | lines | findings | true | false | debatable | unjudged "
        "| true / all | true / (true + false) |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    total: Counter[str] = Counter()
    for name in dict.fromkeys(s.set for s in sources):
        names = [s.file_name for s in sources if s.set == name]
        print(row(name, names, counts[name]))
        total += counts[name]
    print(row("all", [s.file_name for s in sources], total))
    print()
    print("| rule | findings | true | false | debatable |")
    print("|---|---|---|---|---|")
    for rule in sorted(by_rule):
        c = by_rule[rule]
        print(f"| {rule} | {sum(c.values())} | {c['true']} | {c['false']} | {c['debatable']} |")
    if args.syncs.is_file():
        print()
        report_recall(read_tsv(args.syncs), result.findings, set_of)
    if problems:
        print()
        print("\n".join(problems))
    return 1 if args.check and problems else 0


def report_recall(sites: list[dict[str, str]], findings: list, set_of: dict[str, str]) -> None:
    """Print found / all sync sites per set (and as first judged), then the sites missed."""
    lines_hit: dict[str, set[int]] = defaultdict(set)
    for f in findings:
        if f.rule in SYNC_RULES:
            lines_hit[Path(f.path).name].add(f.line)
    now: dict[str, Counter[str]] = defaultdict(Counter)
    missed = []
    for s in sites:
        span = range(int(s["line"]), int(s["end_line"]) + 1)
        hit = any(n in lines_hit[s["file"]] for n in span)
        key = set_of.get(s["file"], "?")
        now[key]["found" if hit else "missed"] += 1
        now[key]["first_found"] += s["first"] == "found"
        if not hit:
            missed.append(f"missed sync: {s['file']}:{s['line']}: {s['reason']}")
    print("| set | sync sites | found | recall | found as first judged | recall then |")
    print("|---|---|---|---|---|---|")
    for key, c in now.items():
        total = c["found"] + c["missed"]
        print(
            f"| {key} | {total} | {c['found']} | {100 * c['found'] / total:.1f}% | "
            f"{c['first_found']} | {100 * c['first_found'] / total:.1f}% |"
        )
    if missed:
        print()
        print("\n".join(missed))


if __name__ == "__main__":
    sys.exit(main())
