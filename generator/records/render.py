"""The Jinja environment shared by every renderer (templates live in ``generator/templates``)."""

from __future__ import annotations

import html
import json
import re
from functools import cache

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from generator import paths

_CODE_SPAN = re.compile(r"`([^`]+)`")


def inline_html(text: str) -> str:
    """Plain text with Markdown code spans as HTML: ``Use `x` here`` -> ``Use <code>x</code> here``.

    For text placed inside raw HTML (catalog rows, charts), where Markdown is not processed:
    everything else is escaped, so the result is safe inside any element.
    """
    parts = _CODE_SPAN.split(text)
    return "".join(
        f"<code>{html.escape(part, quote=False)}</code>"
        if i % 2
        else html.escape(part, quote=False)
        for i, part in enumerate(parts)
    )


def plain_text(text: str) -> str:
    """``text`` without the backticks of its code spans (for attributes, sort keys, labels)."""
    return _CODE_SPAN.sub(r"\1", text)


@cache
def environment() -> Environment:
    """A strict Jinja environment: an undefined variable is an error, not an empty string."""
    env = Environment(
        loader=FileSystemLoader(paths.TEMPLATES),
        undefined=StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )
    # JSON strings are valid YAML scalars: used for front matter, keeps Chinese readable.
    env.filters["yaml_str"] = lambda value: json.dumps(str(value), ensure_ascii=False)
    env.filters["inline_html"] = inline_html
    env.filters["plain_text"] = plain_text
    return env


def render(template: str, **context: object) -> str:
    """Render ``template`` (a file name in ``generator/templates``) with ``context``."""
    return environment().get_template(template).render(**context)
