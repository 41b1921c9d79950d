"""The Jinja environment shared by every renderer (templates live in ``generator/templates``)."""

from __future__ import annotations

import html
import json
import re
from functools import cache

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from generator import paths

_CODE_SPAN = re.compile(r"`([^`]+)`")
#: Markdown emphasis (``*x*``, ``**x**``) and links (``[text](url)``) outside code spans.
_EMPHASIS = re.compile(r"(\*{1,2})(?=\S)(.+?)(?<=\S)\1")
_LINK = re.compile(r"\[([^\]]+)\]\([^)\s]+\)")


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
    """``text`` without its inline Markdown: the backticks of code spans, emphasis marks and
    link targets go, their text stays (for attributes, sort keys, labels, search metadata).

    >>> plain_text("Use `a*b` *and* [the docs](https://x.org), **not** `x`")
    'Use a*b and the docs, not x'
    """
    parts = _CODE_SPAN.split(text)
    return "".join(
        part if i % 2 else _EMPHASIS.sub(r"\2", _LINK.sub(r"\1", part))
        for i, part in enumerate(parts)
    )


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
