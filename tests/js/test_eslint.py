"""The site's JavaScript is one dialect, ES modules, and passes ESLint.

- Without Node.js: every script of docs/assets is loaded as a module (mkdocs.yml, the tool
  pages' tags) and written as one (no IIFE wrapper, no "use strict", no `var`).
- With Node.js and npm: ESLint, pinned with its dependencies in package.json and
  package-lock.json beside this file, installed by `npm ci` once into the cache outside the
  repository (as the build keeps Pyodide: `generator.site.runtime.cache_dir`), and offline
  afterwards, with eslint.config.mjs beside this file. The suite promises to run with only
  Python and git, so without Node.js this test is skipped, and the skip says why.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from generator import paths
from generator.site.runtime import cache_dir
from generator.site.tools import runtime_tags

HERE = Path(__file__).parent
ASSETS = paths.DOCS / "assets"


def _scripts() -> list[Path]:
    return sorted(ASSETS.rglob("*.js"))


def _mkdocs_yml() -> dict:
    class Loader(yaml.SafeLoader):  # mkdocs.yml's !ENV and !!python/name tags, unread
        pass

    Loader.add_multi_constructor("", lambda loader, suffix, node: None)
    return yaml.load((paths.ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=Loader)


def test_every_script_of_the_site_is_an_es_module() -> None:
    scripts = _scripts()
    assert len(scripts) >= 6
    site_wide = {s.relative_to(paths.DOCS).as_posix() for s in scripts if s.parent == ASSETS}
    extra = _mkdocs_yml()["extra_javascript"]
    assert all(isinstance(e, dict) and e.get("type") == "module" for e in extra), extra
    assert {e["path"] for e in extra} == site_wide  # every site-wide script is loaded, as a module
    tags = runtime_tags("compose", "composer/", "tools-0.zip")
    assert 'type="module"' in tags
    for script in scripts:
        text = script.read_text(encoding="utf-8")
        name = script.relative_to(paths.ROOT)
        assert not re.search(r"^\(function\b", text, re.M), f"{name}: an IIFE, not a module"
        assert '"use strict"' not in text, f"{name}: modules are strict already"
        assert not re.search(r"^\s*var\s", text, re.M), f"{name}: var (const or let)"


def _eslint() -> Path:
    """The folder with ESLint installed (``node_modules``) and the configuration; skips the
    test without Node.js and npm, or without the registry and no installed copy."""
    if not (shutil.which("node") and shutil.which("npm")):
        pytest.skip(
            "ESLint not run: Node.js and npm are not installed (apt-get install nodejs npm)"
        )
    lock = (HERE / "package-lock.json").read_bytes()
    folder = cache_dir() / f"eslint-{hashlib.sha256(lock).hexdigest()[:12]}"
    if not (folder / "node_modules" / ".package-lock.json").is_file():
        work = folder.with_name(f"{folder.name}.{os.getpid()}.tmp")
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        for name in ("package.json", "package-lock.json"):
            shutil.copy(HERE / name, work / name)
        proc = subprocess.run(
            ["npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--prefer-offline"],
            cwd=work,
            capture_output=True,
            text=True,
            timeout=300,
        )
        if proc.returncode:
            shutil.rmtree(work, ignore_errors=True)
            reason = (proc.stderr.strip().splitlines() or ["npm ci failed"])[-1]
            if os.environ.get("CI"):
                pytest.fail(f"cannot install ESLint with npm ci: {reason}", pytrace=False)
            pytest.skip(f"ESLint not run: npm ci failed ({reason})")
        if not folder.exists():
            work.rename(folder)
        else:
            shutil.rmtree(work, ignore_errors=True)
    # The configuration imports @eslint/js and globals: it is read from beside node_modules.
    shutil.copy(HERE / "eslint.config.mjs", folder / "eslint.config.mjs")
    return folder


def _run(folder: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    cmd = ["node", str(folder / "node_modules" / "eslint" / "bin" / "eslint.js")]
    cmd += ["--config", str(folder / "eslint.config.mjs"), "--max-warnings", "0", *args]
    return subprocess.run(
        cmd, cwd=paths.ROOT, input=stdin, capture_output=True, text=True, timeout=120
    )


def test_eslint_finds_nothing_in_the_sites_javascript() -> None:
    folder = _eslint()
    proc = _run(folder, *(str(s.relative_to(paths.ROOT)) for s in _scripts()))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # The same configuration refuses the other dialect: a script of var and globals.
    planted = _run(
        folder,
        "--stdin",
        "--stdin-filename",
        "docs/assets/planted.js",
        stdin="var x = 1;\nundefinedName(x);\n",
    )
    assert planted.returncode == 1, planted.stdout + planted.stderr
    assert "no-var" in planted.stdout and "no-undef" in planted.stdout
