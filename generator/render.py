"""The Jinja environment shared by every renderer (templates live in ``generator/templates``)."""

from __future__ import annotations

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
    return env


def render(template: str, **context: object) -> str:
    """Render ``template`` (a file name in ``generator/templates``) with ``context``."""
    return environment().get_template(template).render(**context)
