"""The user-facing strings of the site, in English and Chinese.

They live in one data file next to the templates, ``generator/templates/site/ui.yaml``
(``key: {en: ..., zh: ...}``), never in Python: the templates look them up by key
(``L.measured``), and the code that builds table cells formats them the same way
(``L["bench_faster"].format(...)``). The file is read once per process.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from pathlib import Path

import yaml

from generator import paths
from generator.errors import UserError

#: The languages of the site; every key needs a text in each.
LANGS = ("en", "zh")

UI_FILE = paths.TEMPLATES / "site" / "ui.yaml"

_PLACEHOLDER = re.compile(r"\{([a-z_]*)\}")


def placeholders(text: str) -> set[str]:
    """The ``{name}`` placeholders of a label (``{}`` counts as the empty name)."""
    return set(_PLACEHOLDER.findall(text))


def read_labels(path: Path) -> dict[str, dict[str, str]]:
    """The labels of ``path`` by language: ``{"en": {key: text}, "zh": {...}}``.

    Raises:
        UserError: the file is not a mapping of keys to ``{en, zh}`` texts, a text is
            empty, or the two languages of a key use different placeholders.
    """
    try:
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml where present: 10x
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=loader)
    except (OSError, yaml.YAMLError) as err:
        raise UserError(f"cannot read the UI labels in {path}: {err}") from None
    if not isinstance(data, dict):
        raise UserError(f"{path}: expected a mapping of label keys to {{en, zh}}")
    out: dict[str, dict[str, str]] = {lang: {} for lang in LANGS}
    for key, texts in data.items():
        if not isinstance(texts, dict) or set(texts) != set(LANGS):
            raise UserError(f"{path}: {key}: give exactly the languages {', '.join(LANGS)}")
        for lang in LANGS:
            text = texts[lang]
            if not isinstance(text, str) or not text.strip():
                raise UserError(f"{path}: {key}.{lang}: must be a non-empty string")
            out[lang][str(key)] = text
        if placeholders(texts["en"]) != placeholders(texts["zh"]):
            raise UserError(f"{path}: {key}: en and zh use different {{placeholders}}")
    return out


@cache
def labels() -> dict[str, dict[str, str]]:
    """The site's labels by language, read from `UI_FILE` once."""
    return read_labels(UI_FILE)


def fill(text: str, L: Mapping[str, str], params: Mapping[str, object]) -> str:
    """``text``, a label of the language whose labels are ``L``, with its placeholders filled
    from ``params``; a list or tuple is joined as that language joins one (``, `` or ``、``)."""
    values = {
        name: L["list_sep"].join(map(str, value)) if isinstance(value, list | tuple) else value
        for name, value in params.items()
    }
    return text.format(**values)
