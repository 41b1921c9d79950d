"""What the two tool pages cost on a cold load: bytes transferred and time to the first result.

Serves a built site from a local server on this machine and opens each tool page in a fresh
Chromium context (an empty cache, so everything is downloaded), several times:

- the composer page with a query (``/composer/?amp&accum=4&ddp``): the time from navigation
  to the first script the in-browser composer writes (the page's ``compose-first``
  performance mark), after the runtime has loaded;
- the lint playground (``/lint/playground/``): the time to the first findings of its sample
  script (``lint-first``).

Both also give the first contentful paint (the composer page shows the plain script from the
start), and the CPU time the browser's processes spent until the first result (Linux /proc),
which a busy machine inflates far less than the wall time. Bytes are those of every request, the worker's included, as the local server sends
them (uncompressed), with what gzip would make of them for a host that compresses. This is a
benchmark, not a test: run it by hand, on a built site.

    python -m generator build && python benchmarks/tools_load.py
    python benchmarks/tools_load.py --site-dir site --runs 5 --write benchmarks/results/tools-load.json

Needs Playwright and Debian's Chromium (/usr/bin/chromium), like the browser tests.
"""

from __future__ import annotations

import argparse
import functools
import gzip
import http.server
import json
import os
import platform
import statistics
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
PAGES = {
    "composer": ("composer/?amp&accum=4&ddp", "#compose-output", "compose-first"),
    "lint playground": ("lint/playground/", "#lint-output", "lint-first"),
}


def serve(site: Path) -> tuple[http.server.ThreadingHTTPServer, str]:
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Quiet, directory=str(site))
    )
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


def cpu_seconds() -> dict[int, float]:
    """CPU time (user + system) of every process below this one (the browser's), by pid."""
    ticks = os.sysconf("SC_CLK_TCK")
    stats = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            stats[int(entry.name)] = (int(fields[1]), (int(fields[11]) + int(fields[12])) / ticks)
    below, frontier = {}, {os.getpid()}
    while frontier:
        frontier = {pid for pid, (ppid, _) in stats.items() if ppid in frontier} - set(below)
        below.update({pid: stats[pid][1] for pid in frontier})
    return below


def measure(browser, base: str, site: Path, path: str, output: str, mark: str) -> dict:
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    finished = []
    page.on("requestfinished", lambda request: finished.append(request))
    before = cpu_seconds()
    start = time.perf_counter()
    page.goto(base + path)
    page.wait_for_function(
        f"document.querySelector('{output}').dataset.state === 'done'", timeout=300_000
    )
    wall = time.perf_counter() - start
    after = cpu_seconds()
    cpu = sum(t - before.get(pid, 0.0) for pid, t in after.items())
    page.wait_for_load_state("networkidle")
    timings = page.evaluate(
        f"""() => ({{
        fcp: performance.getEntriesByName('first-contentful-paint')[0].startTime,
        first: performance.getEntriesByName('{mark}')[0].startTime,
    }})"""
    )
    files = []
    for request in finished:
        sizes = request.sizes()
        local = site / urlsplit(request.url).path.lstrip("/")
        if local.is_dir():
            local = local / "index.html"
        raw = local.read_bytes() if local.is_file() else b""
        files.append(
            {
                "file": urlsplit(request.url).path,
                "bytes": sizes["responseBodySize"] + sizes["responseHeadersSize"],
                "gzip": len(gzip.compress(raw, 6)) if raw else sizes["responseBodySize"],
            }
        )
    context.close()
    return {
        "bytes": sum(f["bytes"] for f in files),
        "gzip_bytes": sum(f["gzip"] for f in files),
        "requests": len(files),
        "fcp_ms": round(timings["fcp"]),
        "first_result_ms": round(timings["first"]),
        "wall_s": round(wall, 2),
        "cpu_s": round(cpu, 2),
        "files": sorted(files, key=lambda f: -f["bytes"]),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site-dir", default=str(ROOT / "site"), help="a built site")
    parser.add_argument("--runs", type=int, default=3, help="cold loads per page (default 3)")
    parser.add_argument("--write", metavar="PATH", help="also write the figures as JSON")
    args = parser.parse_args()
    site = Path(args.site_dir)
    if not (site / "composer" / "index.html").is_file():
        parser.error(f"{site} holds no built site: run `python -m generator build` first")
    from playwright.sync_api import sync_playwright

    server, base = serve(site)
    load_before = os.getloadavg()
    out: dict = {
        "date": time.strftime("%Y-%m-%d"),
        "machine": {
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "load_average_before": [round(x, 2) for x in load_before],
        },
        "pages": {},
    }
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(
                executable_path="/usr/bin/chromium", args=["--headless", "--no-sandbox"]
            )
            out["machine"]["chromium"] = browser.version
            for name, (path, output, mark) in PAGES.items():
                runs = [measure(browser, base, site, path, output, mark) for _ in range(args.runs)]
                first = [r["first_result_ms"] for r in runs]
                page = {
                    "url": "/" + path,
                    "bytes": runs[0]["bytes"],
                    "gzip_bytes": runs[0]["gzip_bytes"],
                    "requests": runs[0]["requests"],
                    "fcp_ms": statistics.median(r["fcp_ms"] for r in runs),
                    "first_result_ms": statistics.median(first),
                    "first_result_ms_runs": first,
                    "cpu_s": statistics.median(r["cpu_s"] for r in runs),
                    "largest_files": runs[0]["files"][:6],
                }
                out["pages"][name] = page
                print(
                    f"{name:16} {page['bytes'] / 1e6:6.2f} MB in {page['requests']} requests "
                    f"({page['gzip_bytes'] / 1e6:.2f} MB gzipped); first paint "
                    f"{page['fcp_ms'] / 1000:.2f} s; first result {page['first_result_ms'] / 1000:.2f} s "
                    f"(median of {args.runs}: {', '.join(f'{x / 1000:.2f}' for x in first)}); "
                    f"{page['cpu_s']:.1f} CPU-s of the browser to get there"
                )
            browser.close()
    finally:
        server.shutdown()
    out["machine"]["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    print(f"load average before {load_before[0]:.2f}, after {os.getloadavg()[0]:.2f}")
    if args.write:
        Path(args.write).write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
