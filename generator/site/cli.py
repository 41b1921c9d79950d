"""The site's subcommands: ``build`` (strict MkDocs build plus the search index) and ``serve``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from generator import paths
from generator.command import CHECKOUT, Command, print_line


def cmd_build(args: argparse.Namespace) -> int:
    import time

    from generator.doctor.tips import finding_tip_problems
    from generator.lint.tips import rule_code_problems
    from generator.records.load import load_tips
    from generator.site.pages import build_site, write_pages

    start = time.perf_counter()
    # Fail here, with file:line problems, before MkDocs starts.
    tips = load_tips(cross_checks=[rule_code_problems, finding_tip_problems])
    write_pages(tips)
    rc = build_site(strict=True, site_dir=Path(args.site_dir) if args.site_dir else None)
    if rc:
        sys.stderr.write("error: mkdocs build --strict failed (see the messages above)\n")
        return 1
    where = args.site_dir or "site/"
    print_line(
        f"Built {len(tips)} tips x 2 languages into {where} in {time.perf_counter() - start:.1f} s."
    )
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    from generator.site.pages import serve_site

    if not args.no_build and cmd_build(argparse.Namespace(site_dir=None)):
        return 1
    serve_site(paths.ROOT / "site", host=args.host, port=args.port)
    return 0


def _add_build(p: argparse.ArgumentParser) -> None:
    p.add_argument("--site-dir", help="output folder (default: site/)")


def _add_serve(p: argparse.ArgumentParser) -> None:
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default: 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="port (default: 8000)")
    p.add_argument("--no-build", action="store_true", help="serve the existing site/ as it is")


COMMANDS = {
    "build": Command(
        "Render the pages from tips/ and build the site (strict).",
        _add_build,
        cmd_build,
        needs=(CHECKOUT, "site"),
    ),
    "serve": Command(
        "Build the site, then serve it on http://127.0.0.1:8000.",
        _add_serve,
        cmd_serve,
        needs=(CHECKOUT, "site"),
    ),
}
