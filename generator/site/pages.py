"""Site pages rendered from the records: one page per tip, category pages, catalog, tags.

Pages are written into ``docs/`` (both languages, ``page.md`` and ``page.zh.md``) by the
MkDocs hook before every build, so they can never be stale; they are not committed.
"""

from __future__ import annotations

import difflib
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from generator import paths
from generator.bench import summary
from generator.bench import view as benchview
from generator.bench.results import ResultsFile, load_all
from generator.bench.stats import EQUIVALENCE
from generator.bench.texts import TOLERANCE_TEXT
from generator.doctor.kinds import kinds_by_tip
from generator.errors import UserError
from generator.lint.docs import page_markdown as lint_page
from generator.lint.docs import rule_pages
from generator.records import ui
from generator.records.coverage import load_coverage
from generator.records.generated import write_managed
from generator.records.glossary import load_glossary
from generator.records.glossary import page_markdown as glossary_page
from generator.records.render import plain_text, render
from generator.records.schema import Tip
from generator.records.snippets import snippet_files
from generator.records.taxonomy import CATEGORIES, COMPOSE_FEATURES, DEVICES, IMPACTS, SEEDS, TAGS
from generator.site.tools import playground_page

LANGS = ("en", "zh")

#: Folders of docs/ whose content is generated; anything else there is removed on build.
GENERATED_DIRS = ("tips", "categories", "snippets", "lint")

#: Every label of the pages by language, from ``generator/templates/site/ui.yaml``.
LABELS = ui.labels()

_COMMON = {
    "categories": CATEGORIES,
    "devices": DEVICES,
    "impacts": IMPACTS,
    "tags": TAGS,
    "seeds": SEEDS,
}


def _page(rel: str, lang: str) -> Path:
    stem = rel.removesuffix(".md")
    return paths.DOCS / (f"{stem}.md" if lang == "en" else f"{stem}.{lang}.md")


#: A category whose subject is a kind of hardware, and that kind: its page says that tips of
#: other categories pay off there too, and links the catalog filtered to all of them.
CATEGORY_DEVICES = {"distributed": "multi-gpu"}


def _context(lang: str) -> dict[str, object]:
    return dict(_COMMON, lang=lang, L=LABELS[lang], labels=LABELS[lang])


def tip_page(
    tip: Tip,
    lang: str,
    tips: Sequence[Tip],
    bench_results: Mapping[str, ResultsFile] | None = None,
) -> str:
    """The page of ``tip`` in ``lang`` (``tips`` gives the related tips; ``bench_results``
    the results by device, default: the committed files)."""
    by_id = {t.id: t for t in tips}
    bench_results = load_all() if bench_results is None else bench_results
    flag = COMPOSE_FEATURES.get(tip.compose) if tip.compose else None
    related = [by_id[r] for r in tip.related if r in by_id]
    measured = benchview.tip_view(tip, bench_results, lang, LABELS[lang], SEEDS)
    verified = benchview.verified(tip, bench_results, lang, LABELS[lang])
    return render(
        "site/tip.md.j2",
        tip=tip,
        unmeasured=unmeasured_helps(tip, bench_results),
        flag=flag,
        resume=composed_resume(tip),
        multinode=tip.compose == "ddp",
        related=related,
        measured=measured,
        verified=verified,
        diff=code_diff(tip),
        doctor=kinds_by_tip().get(str(tip.id), []),
        **_context(lang),
    )


#: The devices of a "helps on" badge that a results file can measure, by its device class.
_MEASURED_BY = {"cuda": "cuda", "multi-gpu": "cuda"}


def unmeasured_helps(tip: Tip, bench_results: Mapping[str, ResultsFile]) -> set[str]:
    """The GPU devices a speed or memory tip says it helps on (``hardware.helps_on``) with no
    measurement of the tip on that kind of device: their badge says "reported, not measured
    here" until the GPU results exist. A tip of another impact only says where it applies."""
    if not {"speed", "memory"} & set(tip.impact):
        return set()
    out = set()
    for device in tip.hardware.helps_on:
        results = bench_results.get(_MEASURED_BY.get(device, ""))
        if device in _MEASURED_BY and (results is None or not results.regimes(tip.id or "")):
            out.add(device)
    return out


def composed_resume(tip: Tip) -> bool:
    """Whether a tip's page says that a composed script's ``--resume`` does what it teaches:
    a checkpoint tip the composer applies, or one about resuming (not FSDP's distributed
    checkpoints, which the composer does not write)."""
    tags = set(tip.tags)
    return "checkpoint" in tags and bool(tip.compose or "resume" in tags) and "fsdp" not in tags


def code_diff(tip: Tip) -> str | None:
    """The lines that change from the *before* to the *after* snippet, as a unified diff
    (``None`` without both snippets)."""
    if tip.before is None or tip.after is None:
        return None
    lines = difflib.unified_diff(
        tip.before.code.splitlines(),
        tip.after.code.splitlines(),
        "before.py",
        "after.py",
        n=2,
        lineterm="",
    )
    return "\n".join(lines)


def catalog_page(tips: Sequence[Tip], lang: str) -> str:
    """The catalog: every tip in one filterable, sortable table, sorted by title."""
    by_title = sorted(tips, key=lambda t: (plain_text(t.title.get(lang)).casefold(), t.id or ""))
    return render("site/catalog.md.j2", tips=tips, sorted_tips=by_title, **_context(lang))


def benchmarks_page(
    tips: Sequence[Tip], lang: str, bench_results: Mapping[str, ResultsFile] | None = None
) -> str:
    """The benchmarks page: method, then one section (chart and tables) per device."""
    bench_results = load_all() if bench_results is None else bench_results
    summaries = [
        summary.device_summary(d, tips, bench_results.get(d), lang, LABELS[lang])
        for d in ("cpu", "cuda")
    ]
    return render(
        "site/benchmarks.md.j2",
        devices_summary=summaries,
        compose=summary.compose_overhead(lang, LABELS[lang]),
        tolerance=TOLERANCE_TEXT,
        equivalence=f"{EQUIVALENCE:g}",
        **_context(lang),
    )


def page_files(tips: Sequence[Tip]) -> dict[Path, str]:
    """Every generated page in both languages, plus the downloadable snippet copies."""
    by_id = {t.id: t for t in tips}
    coverage = load_coverage()
    bench_results = load_all()
    glossary = load_glossary()
    files: dict[Path, str] = {}
    for lang in LANGS:
        ctx = _context(lang)
        for tip in tips:
            files[_page(f"tips/{tip.id}", lang)] = tip_page(tip, lang, tips, bench_results)
        for category in CATEGORIES:
            members = [t for t in tips if t.category == category]
            if members:
                device = CATEGORY_DEVICES.get(category)
                helping = [t for t in tips if device in t.hardware.helps_on] if device else []
                files[_page(f"categories/{category}", lang)] = render(
                    "site/category.md.j2",
                    category=category,
                    tips=members,
                    device=device,
                    helping=helping,
                    **ctx,
                )
        files[_page("catalog", lang)] = catalog_page(tips, lang)
        files[_page("coverage", lang)] = render(
            "site/coverage.md.j2",
            tables=coverage.tables(),
            section_names=coverage.section_names,
            by_id=by_id,
            **ctx,
        )
        files[_page("benchmarks", lang)] = benchmarks_page(tips, lang, bench_results)
        by_tag = [(tag, [t for t in tips if tag in t.tags]) for tag in TAGS]
        files[_page("tags", lang)] = render(
            "site/tags.md.j2", by_tag=[(k, v) for k, v in by_tag if v], **ctx
        )
        files[_page("glossary", lang)] = glossary_page(lang, glossary)
        files[_page("lint", lang)] = lint_page(lang, tips)
        for rel, text in rule_pages(lang, tips).items():
            files[_page(rel, lang)] = text
    for path, content in snippet_files(tips).items():
        files[paths.DOCS / "snippets" / path.relative_to(paths.SNIPPETS)] = content
    for lang in LANGS:  # last: it links the rule pages among the others
        files[_page("lint/playground", lang)] = playground_page(lang, tips, set(files))
    return files


def write_pages(tips: Sequence[Tip]) -> list[Path]:
    """Write the generated pages into docs/ (only those that changed); remove orphans."""
    managed = [paths.DOCS / d for d in GENERATED_DIRS]
    return write_managed(page_files(tips), managed)


def nav(tips: Sequence[Tip]) -> list[object]:
    """The site navigation: the home page and the composer first (the MkDocs hook puts the
    lint page and the checklist after it), hand-written pages, then one section per category."""
    sections = []
    for category, label in CATEGORIES.items():
        members = [f"tips/{t.id}.md" for t in tips if t.category == category]
        if members:
            sections.append({label.en: [f"categories/{category}.md", *members]})
    return [
        "index.md",
        "composer.md",
        "usage.md",
        "catalog.md",
        {LABELS["en"]["nav_tips"]: sections},
        "tags.md",
        "coverage.md",
        "benchmarks.md",
        # The Python API is for contributors: it sits under Contributing, not beside the tips.
        {LABELS["en"]["nav_contributing"]: ["contributing.md", "reference/api.md"]},
    ]


def serve_site(site_dir: Path, host: str = "127.0.0.1", port: int = 8000) -> None:
    """Serve a built site until interrupted (prints the address first).

    Raises:
        UserError: the site is not built, or the port is taken.
    """
    import functools
    import http.server

    if not (site_dir / "index.html").exists():
        raise UserError(f"{site_dir} holds no built site: run `python -m generator build`")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(site_dir))
    try:
        server = http.server.ThreadingHTTPServer((host, port), handler)
    except OSError as err:
        raise UserError(f"cannot listen on {host}:{port}: {err.strerror}") from None
    print(f"Serving the site at http://{host}:{port}/ (Ctrl+C to stop)", flush=True)
    with server:
        server.serve_forever()


def build_site(strict: bool = True, site_dir: Path | None = None) -> int:
    """Run ``mkdocs build`` (the hook renders the pages first); return its exit status.

    MkDocs' own output is shown only for warnings and errors. (``--quiet`` is not used: it
    hides warnings from strict mode's count, so a broken link would pass.)
    """
    cmd = [sys.executable, "-m", "mkdocs", "build"]
    if strict:
        cmd.append("--strict")
    if site_dir is not None:
        cmd += ["--site-dir", str(site_dir)]
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    proc = subprocess.run(cmd, cwd=paths.ROOT, env=env, capture_output=True, text=True)
    for line in (proc.stdout + proc.stderr).splitlines():
        if (
            line.startswith(("WARNING", "ERROR", "Aborted", "Error", "Traceback"))
            or proc.returncode
        ):
            print(line, file=sys.stderr)
    return proc.returncode
