"""Every generated file in one place: render them, write them, and find stale ones.

A generated file is stale when its content differs from what the records give now, when
it is missing, or when it sits in a generated folder without a record behind it. The layers
above add theirs as ``extra`` (the composer's typed option fields: `generator.cli`).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from generator import paths
from generator.records.schema import Tip, json_schema
from generator.records.snippets import snippet_files

#: Folders whose whole content is generated: any file there that is not expected is stale.
MANAGED_DIRS: tuple[Path, ...] = (paths.SNIPPETS,)


def expected_files(tips: Sequence[Tip], extra: Mapping[Path, str] | None = None) -> dict[Path, str]:
    """All generated files and their expected content: the records' and ``extra``."""
    files = {paths.SCHEMA_JSON: json_schema()}
    files.update(snippet_files(tips))
    files.update(extra or {})
    return files


def _orphans(expected: dict[Path, str], managed: Sequence[Path]) -> list[Path]:
    out = []
    for folder in managed:
        if folder.is_dir():
            out += [p for p in folder.rglob("*") if p.is_file() and p not in expected]
    return sorted(out)


def stale_files(
    tips: Sequence[Tip],
    managed: Sequence[Path] = MANAGED_DIRS,
    extra: Mapping[Path, str] | None = None,
) -> list[tuple[Path, str]]:
    """Generated files that differ from the records (and ``extra``): (path, why)."""
    expected = expected_files(tips, extra)
    stale = []
    for path, content in sorted(expected.items()):
        if not path.exists():
            stale.append((path, "missing"))
        elif path.read_text(encoding="utf-8") != content:
            stale.append((path, "out of date"))
    stale += [(p, "no record behind it") for p in _orphans(expected, managed)]
    return stale


def write_atomic(path: Path, content: str) -> None:
    """Write ``content`` to ``path`` through a temporary file, so a crash leaves no torn file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(content)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_managed(files: dict[Path, str], managed: Sequence[Path]) -> list[Path]:
    """Write the ``files`` that changed and delete files under ``managed`` that are not in
    ``files``; return the paths written or removed."""
    touched = []
    for path, content in sorted(files.items()):
        if not path.exists() or path.read_text(encoding="utf-8") != content:
            write_atomic(path, content)
            touched.append(path)
    for orphan in _orphans(files, managed):
        orphan.unlink(missing_ok=True)  # two builds may race to remove the same file
        touched.append(orphan)
        if orphan.parent not in managed and not any(orphan.parent.iterdir()):
            with contextlib.suppress(OSError):
                orphan.parent.rmdir()
    return touched


def write_files(
    tips: Sequence[Tip],
    managed: Sequence[Path] = MANAGED_DIRS,
    extra: Mapping[Path, str] | None = None,
) -> list[Path]:
    """Write every committed generated file (and ``extra``) that changed and remove orphans."""
    return write_managed(expected_files(tips, extra), managed)
