"""Where the project's files live. Everything is relative to the repository root."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TIPS = ROOT / "tips"
SNIPPETS = ROOT / "snippets"
DOCS = ROOT / "docs"
TEMPLATES = Path(__file__).resolve().parent / "templates"
SCHEMA_JSON = TIPS / "schema.json"
