"""The Jinja environment shared by every renderer (templates live in ``generator/templates``)."""

from __future__ import annotations

import json
from functools import cache

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from generator import paths


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
    return env


def render(template: str, **context: object) -> str:
    """Render ``template`` (a file name in ``generator/templates``) with ``context``."""
    return environment().get_template(template).render(**context)
