"""Site pages rendered from the records: one page per tip, category pages, catalog, tags.

Pages are written into ``docs/`` (both languages, ``page.md`` and ``page.zh.md``) by the
MkDocs hook before every build, so they can never be stale; they are not committed.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from generator import benchview, paths
from generator.coverage import load_coverage
from generator.errors import UserError
from generator.generated import write_managed
from generator.render import render
from generator.results import load_all
from generator.schema import Tip
from generator.snippets import snippet_files
from generator.taxonomy import CATEGORIES, COMPOSE_FEATURES, DEVICES, IMPACTS, SEEDS, TAGS

LANGS = ("en", "zh")

#: Folders of docs/ whose content is generated; anything else there is removed on build.
GENERATED_DIRS = ("tips", "categories", "snippets")

LABELS = {
    "en": {
        "why": "Why it works",
        "hardware": "Hardware",
        "caveats": "Caveats",
        "caveat": "Caveat",
        "code": "Code",
        "before": "Before",
        "after": "After",
        "download": "Download",
        "no_code": "No code",
        "tested": "Tested on",
        "tested_intro": "The test suite runs both snippets in a fresh process and then asserts "
        "the tip's checks, with deprecation warnings as errors:",
        "tested_cpu": "on every CI run.",
        "tested_cuda": "on machines with a CUDA GPU (skipped, with the reason, where there is none).",
        "tested_multi_gpu": "on machines with several GPUs only.",
        "tested_none": "Advice only: there is no code to run.",
        "compose": "In a generated training script",
        "compose_intro": "The composer applies this tip when you pass:",
        "sources": "Sources",
        "seed": "Seed document",
        "related": "Related tips",
        "min_cc": "compute capability ≥",
        "category_intro": "Every tip in this category, with the devices its snippets run on.",
        "tip": "Tip",
        "summary": "Summary",
        "devices": "Devices",
        "category": "Category",
        "impact": "Impact",
        "all": "All",
        "shown": "{n} tips shown",
        "catalog_title": "Catalog",
        "catalog_intro": "All tips in one table. Filter by category, device and impact.",
        "tags_title": "Tags",
        "coverage_title": "Coverage",
        "coverage_intro": "Every topic of the seed documents, of PyTorch's Performance Tuning Guide "
        "and of the common distributed-training traps, with the tips that cover it.",
        "coverage_seed_inventory": "Seed documents",
        "coverage_tuning_guide": "PyTorch Performance Tuning Guide",
        "coverage_distributed_traps": "Distributed training traps",
        "topic": "Topic",
    },
    "zh": {
        "why": "原理",
        "hardware": "硬件",
        "caveats": "注意事项",
        "caveat": "注意",
        "code": "代码",
        "before": "改进前",
        "after": "改进后",
        "download": "下载",
        "no_code": "无代码",
        "tested": "测试环境",
        "tested_intro": "测试套件会在独立进程中运行两段代码，再执行该技巧的断言检查，"
        "弃用警告一律视为错误：",
        "tested_cpu": "每次 CI 都会运行。",
        "tested_cuda": "在有 CUDA GPU 的机器上运行（没有 GPU 时跳过并注明原因）。",
        "tested_multi_gpu": "仅在多 GPU 机器上运行。",
        "tested_none": "仅为建议，没有可运行的代码。",
        "compose": "在生成的训练脚本中",
        "compose_intro": "使用下面的参数时，生成器会在脚本中应用这条技巧：",
        "sources": "来源",
        "seed": "原始资料",
        "related": "相关技巧",
        "min_cc": "计算能力 ≥",
        "category_intro": "本分类下的全部技巧，以及代码运行的设备。",
        "tip": "技巧",
        "summary": "概要",
        "devices": "设备",
        "category": "分类",
        "impact": "收益",
        "all": "全部",
        "shown": "显示 {n} 条技巧",
        "catalog_title": "技巧总表",
        "catalog_intro": "所有技巧汇总在一张表里，可按分类、设备和收益筛选。",
        "tags_title": "标签",
        "coverage_title": "覆盖范围",
        "coverage_intro": "原始资料、PyTorch 性能调优指南以及分布式训练常见陷阱中的每个主题，"
        "以及覆盖它的技巧（主题名保留原文）。",
        "coverage_seed_inventory": "原始资料",
        "coverage_tuning_guide": "PyTorch 性能调优指南",
        "coverage_distributed_traps": "分布式训练陷阱",
        "topic": "主题",
    },
}

for _lang, _labels in benchview.LABELS.items():  # the Measured section and benchmarks page
    assert not set(_labels) & set(LABELS[_lang]), "benchview.LABELS reuses a site label"
    LABELS[_lang].update(_labels)

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


def page_files(tips: Sequence[Tip]) -> dict[Path, str]:
    """Every generated page in both languages, plus the downloadable snippet copies."""
    by_id = {t.id: t for t in tips}
    coverage = load_coverage()
    bench_results = load_all()
    files: dict[Path, str] = {}
    for lang in LANGS:
        ctx = dict(_COMMON, lang=lang, L=LABELS[lang], labels=LABELS[lang])
        for tip in tips:
            flag = COMPOSE_FEATURES.get(tip.compose) if tip.compose else None
            related = [by_id[r] for r in tip.related if r in by_id]
            measured = benchview.tip_view(tip, bench_results, lang, LABELS[lang], SEEDS)
            files[_page(f"tips/{tip.id}", lang)] = render(
                "site/tip.md.j2", tip=tip, flag=flag, related=related, measured=measured, **ctx
            )
        for category in CATEGORIES:
            members = [t for t in tips if t.category == category]
            if members:
                files[_page(f"categories/{category}", lang)] = render(
                    "site/category.md.j2", category=category, tips=members, **ctx
                )
        files[_page("catalog", lang)] = render("site/catalog.md.j2", tips=tips, **ctx)
        tables = [(k, getattr(coverage, k)) for k in type(coverage).model_fields]
        files[_page("coverage", lang)] = render(
            "site/coverage.md.j2", tables=tables, by_id=by_id, **ctx
        )
        summaries = [
            benchview.device_summary(d, tips, bench_results.get(d), lang, LABELS[lang])
            for d in ("cpu", "cuda")
        ]
        files[_page("benchmarks", lang)] = render(
            "site/benchmarks.md.j2",
            devices_summary=summaries,
            compose=benchview.compose_overhead(lang, LABELS[lang]),
            tolerance=benchview.TOLERANCE_TEXT,
            **ctx,
        )
        by_tag = [(tag, [t for t in tips if tag in t.tags]) for tag in TAGS]
        files[_page("tags", lang)] = render(
            "site/tags.md.j2", by_tag=[(k, v) for k, v in by_tag if v], **ctx
        )
    for path, content in snippet_files(tips).items():
        files[paths.DOCS / "snippets" / path.relative_to(paths.SNIPPETS)] = content
    return files


def write_pages(tips: Sequence[Tip]) -> list[Path]:
    """Write the generated pages into docs/ (only those that changed); remove orphans."""
    managed = [paths.DOCS / d for d in GENERATED_DIRS]
    return write_managed(page_files(tips), managed)


def nav(tips: Sequence[Tip]) -> list[object]:
    """The site navigation: hand-written pages, then one section per category."""
    sections = []
    for category, label in CATEGORIES.items():
        members = [f"tips/{t.id}.md" for t in tips if t.category == category]
        if members:
            sections.append({label.en: [f"categories/{category}.md", *members]})
    return [
        "index.md",
        "usage.md",
        "catalog.md",
        {"Tips": sections},
        "tags.md",
        "coverage.md",
        "benchmarks.md",
        "composer.md",
        "contributing.md",
        {"Reference": ["reference/api.md"]},
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
