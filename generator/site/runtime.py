"""The Python runtime of the site's two tools, the composer page and the lint playground.

Both pages run the project's own code in the browser, the way ruff's playground runs ruff
compiled to WebAssembly: `Pyodide <https://pyodide.org>`_ (CPython compiled to WebAssembly)
loads one archive holding the composer's and the linter's code paths, the templates and data
they read, and the pure-Python parts of Jinja2, MarkupSafe and PyYAML. Nothing is
reimplemented in JavaScript, so a script composed on the page is the one
``python -m generator compose`` writes, and a finding is the one ``python -m generator lint``
reports.

Both halves are made when the site is built, never committed:

- `pyodide_files`: the core files of the ``pyodide`` package of the npm registry, at the
  pinned `PYODIDE_VERSION`, checked against its registry integrity hash and cached outside
  the repository (`cache_dir`), so a rebuild works offline;
- `bundle`: the archive (a zip with fixed dates and order, so the same sources give the same
  bytes and the same name).

`write_runtime` puts both under ``assets/`` of the built site (the MkDocs hook calls it once
per build). Pyodide needs no package of its own distribution: its lock file is written
without any, so the runtime never asks another host for one.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import importlib.util
import io
import json
import os
import tarfile
import urllib.error
import urllib.request
import zipfile
from dataclasses import dataclass
from pathlib import Path

from generator import paths
from generator.errors import UserError

PYODIDE_VERSION = "314.0.7"
#: ``dist.integrity`` of the version in the npm registry (Subresource Integrity format).
PYODIDE_INTEGRITY = "sha512-0YvXxEhfEdpLfb/XkM2BFAeMROq0iMUX2bzzH9pOttyMcWkwq+HbE5uyuGD82LN7y2q+SNvi/6V5JEsOlD2R1A=="
#: The npm registry, unless ``npm_config_registry`` names a mirror (as it does for npm).
REGISTRY = "https://registry.npmjs.org/"
#: What the pages load of the package: the loader, the interpreter and the standard library
#: (no console page, source maps or type declarations).
PYODIDE_FILES = ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip")
LOCK_FILE = "pyodide-lock.json"

#: Where the built site holds the runtime (relative to the site root).
PYODIDE_DIR = f"assets/pyodide/{PYODIDE_VERSION}"
BUNDLE_DIR = "assets/tools"

#: The project's files the tools run, relative to the repository root: the composer's and
#: the linter's code paths (their subpackages and the records modules they import), the
#: foundation, the templates the composer renders and the UI labels the lint's text reads.
OWN_FILES = (
    "generator/__init__.py",
    "generator/command.py",
    "generator/errors.py",
    "generator/paths.py",
    "generator/compose",
    "generator/lint",
    "generator/records",
    "generator/templates/compose",
    "generator/templates/site/ui.yaml",
)
#: Third-party packages the code paths import, by import name, with their distribution
#: names (for the licence files). Only their Python files go in: MarkupSafe falls back to
#: ``markupsafe._native`` without its C extension, PyYAML to its pure-Python loader.
DEPENDENCIES = {"jinja2": "Jinja2", "markupsafe": "MarkupSafe", "yaml": "PyYAML"}
#: Files of those folders that go into the archive.
SUFFIXES = (".py", ".j2", ".yaml", ".json", ".typed")
#: The Python modules the pages call, each with one function taking and returning JSON.
ENTRY_POINTS = {"compose": "generator.compose.browser", "lint": "generator.lint.browser"}
#: Modules that must never be imported in the browser: they have no Pyodide build here, or
#: are far too large to download for a page (pydantic-core, torch, NumPy).
FORBIDDEN = ("pydantic", "pydantic_core", "torch", "numpy")

_ZIP_DATE = (1980, 1, 1, 0, 0, 0)


class RuntimeUnavailable(UserError):
    """Pyodide could not be downloaded or failed its integrity check, and no good copy is
    cached."""


def cache_dir() -> Path:
    """Where downloads are kept between builds: ``$PYTORCH_TIPS_CACHE``, else
    ``$XDG_CACHE_HOME/pytorch-tips``, else ``~/.cache/pytorch-tips``."""
    if os.environ.get("PYTORCH_TIPS_CACHE"):
        return Path(os.environ["PYTORCH_TIPS_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "pytorch-tips"


def integrity_of(data: bytes, algorithm: str = "sha512") -> str:
    """``data``'s hash in Subresource Integrity format (``sha512-<base64>``)."""
    digest = hashlib.new(algorithm, data).digest()
    return f"{algorithm}-{base64.b64encode(digest).decode('ascii')}"


def _matches(data: bytes, integrity: str) -> bool:
    algorithm = integrity.split("-", 1)[0]
    return algorithm in hashlib.algorithms_available and integrity_of(data, algorithm) == integrity


def npm_url(package: str, version: str) -> str:
    """Where an npm package's tarball is downloaded from: the registry of
    ``npm_config_registry`` (or ``NPM_CONFIG_REGISTRY``, as npm reads it), else `REGISTRY`."""
    registry = next(
        (v for k, v in os.environ.items() if k.lower() == "npm_config_registry" and v), REGISTRY
    )
    name = package.rsplit("/", 1)[-1]
    return f"{registry.rstrip('/')}/{package}/-/{name}-{version}.tgz"


def pyodide_url() -> str:
    """Where the Pyodide package is downloaded from (`npm_url`)."""
    return npm_url("pyodide", PYODIDE_VERSION)


def npm_tarball(
    package: str,
    version: str,
    integrity: str,
    why: str,
    cache: Path | None = None,
    url: str | None = None,
    timeout: float = 120.0,
) -> bytes:
    """An npm package's tarball: the cached copy if it passes the integrity check, else a
    fresh download from ``url`` (default `npm_url`), checked, then cached. Any mirror
    serves: the integrity hash (the registry's ``dist.integrity``) is what is trusted.
    ``why`` says what needs it, for the error message.

    Raises:
        RuntimeUnavailable: the download failed or its hash is not ``integrity``; the message
            is one line naming the URL, the reason and where a copy would be cached.
    """
    url = url or npm_url(package, version)
    path = (cache or cache_dir()) / f"{package.rsplit('/', 1)[-1]}-{version}.tgz"
    try:
        cached = path.read_bytes()
    except OSError:
        cached = b""
    if cached and _matches(cached, integrity):
        return cached
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:  # fixed https URL
            data = response.read()
    except (urllib.error.URLError, OSError, ValueError) as err:
        reason = getattr(err, "reason", None) or err
        raise RuntimeUnavailable(
            f"cannot download {package} {version} from {url} ({reason}): {why}; it is "
            f"downloaded once and cached at {path}"
        ) from None
    if not _matches(data, integrity):
        raise RuntimeUnavailable(
            f"{url}: the download does not match its integrity hash {integrity[:19]}... "
            f"(got {integrity_of(data, integrity.split('-', 1)[0])[:19]}...); nothing was cached"
        )
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:  # a cache that cannot be written costs the next build a download, nothing more
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_bytes(data)
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()
    return data


def pyodide_tarball(
    cache: Path | None = None,
    url: str | None = None,
    integrity: str = PYODIDE_INTEGRITY,
    timeout: float = 120.0,
) -> bytes:
    """The npm package of Pyodide at `PYODIDE_VERSION` (`npm_tarball`).

    Raises:
        RuntimeUnavailable: the download failed or its hash is not ``integrity``.
    """
    why = "Pyodide runs the composer and lint playground pages"
    return npm_tarball("pyodide", PYODIDE_VERSION, integrity, why, cache, url, timeout)


def pyodide_files(tarball: bytes) -> dict[str, bytes]:
    """The files of `PYODIDE_FILES` from the npm package, and its lock file without packages.

    Raises:
        RuntimeUnavailable: a file is missing from the package.
    """
    out: dict[str, bytes] = {}
    with tarfile.open(fileobj=io.BytesIO(tarball), mode="r:gz") as tar:
        for name in (*PYODIDE_FILES, LOCK_FILE):
            try:
                member = tar.extractfile(f"package/{name}")
            except KeyError:
                member = None
            if member is None:
                raise RuntimeUnavailable(f"the Pyodide package has no {name}")
            out[name] = member.read()
    lock = json.loads(out[LOCK_FILE])
    # No package of Pyodide's distribution is used: an empty list means none is ever fetched.
    out[LOCK_FILE] = json.dumps({"info": lock["info"], "packages": {}}).encode()
    return out


# --- the archive of our code -------------------------------------------------------------------


def _package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise UserError(f"the site's tools need the package {name!r}: pip install -e .")
    return Path(next(iter(spec.submodule_search_locations)))


def _tree(folder: Path) -> list[Path]:
    return sorted(
        p
        for p in folder.rglob("*")
        if p.is_file() and p.suffix in SUFFIXES and "__pycache__" not in p.parts
    )


def _licence(distribution: str) -> bytes:
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import distribution as find

    try:
        dist = find(distribution)
    except PackageNotFoundError:
        return b""
    for file in dist.files or ():
        name = file.name.upper()
        if name.startswith(("LICENSE", "LICENCE", "COPYING")):
            return file.read_binary()
    return b""


def bundle_files(cites: dict[str, list[str]] | None = None) -> dict[str, bytes]:
    """What the archive holds, by path inside it: `OWN_FILES`, the `DEPENDENCIES`' Python
    files and licences, and ``cites.json`` (the tips each composer feature cites, as
    ``python -m generator compose`` reads them from ``tips/``)."""
    from generator.compose.tips import read_tips_by_feature

    out: dict[str, bytes] = {}
    for rel in OWN_FILES:
        path = paths.ROOT / rel
        for file in [path] if path.is_file() else _tree(path):
            out[file.relative_to(paths.ROOT).as_posix()] = file.read_bytes()
    for name, distribution in DEPENDENCIES.items():
        folder = _package_dir(name)
        for file in _tree(folder):
            out[f"{name}/{file.relative_to(folder).as_posix()}"] = file.read_bytes()
        licence = _licence(distribution)
        if licence:
            out[f"LICENSES/{distribution}.txt"] = licence
    cites = read_tips_by_feature() if cites is None else cites
    out["cites.json"] = json.dumps(cites, sort_keys=True, indent=1).encode()
    return out


def zip_bytes(files: dict[str, bytes]) -> bytes:
    """A zip of ``files`` with sorted names and fixed dates: the same files, the same bytes."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        for name in sorted(files):
            info = zipfile.ZipInfo(name, date_time=_ZIP_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, files[name])
    return buffer.getvalue()


@dataclass(frozen=True)
class Runtime:
    """What the tool pages load: Pyodide's files and our archive, with its content-hashed
    name (a new build with other code gets a new name, so no browser keeps a stale copy)."""

    pyodide: dict[str, bytes]
    bundle: bytes

    @property
    def bundle_name(self) -> str:
        return f"tools-{hashlib.sha256(self.bundle).hexdigest()[:12]}.zip"

    def files(self) -> dict[str, bytes]:
        """Every file, by its path relative to the site root."""
        out = {f"{PYODIDE_DIR}/{name}": data for name, data in self.pyodide.items()}
        out[f"{BUNDLE_DIR}/{self.bundle_name}"] = self.bundle
        return out


def prepare(cache: Path | None = None, cites: dict[str, list[str]] | None = None) -> Runtime:
    """Fetch (or read from the cache) Pyodide and build the archive.

    Raises:
        RuntimeUnavailable: Pyodide cannot be had (see `pyodide_tarball`).
    """
    return Runtime(pyodide_files(pyodide_tarball(cache)), zip_bytes(bundle_files(cites)))


def write_runtime(runtime: Runtime, site_dir: Path) -> list[Path]:
    """Write the runtime's files under ``site_dir``; return their paths."""
    written = []
    for rel, data in runtime.files().items():
        path = site_dir / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists() or path.stat().st_size != len(data) or path.read_bytes() != data:
            path.write_bytes(data)
        written.append(path)
    return written
