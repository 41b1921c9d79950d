"""Where the project's files live, and where its site is published.

In a checkout (a clone, or an editable install of one) everything is relative to the repository
root: the records in ``tips/``, the generated ``snippets/``, the pages in ``docs/``. An installed
wheel has no repository around it: its build copies ``tips/`` into the package as
``generator/_tips/`` (``[tool.hatch.build.targets.wheel]`` in pyproject.toml), and
only the commands that read the records work there (`CHECKOUT` is False).
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlsplit

from generator.errors import UserError

PACKAGE = Path(__file__).resolve().parent
#: The records inside an installed wheel; absent from a checkout.
PACKAGED_TIPS = PACKAGE / "_tips"
#: True in a checkout, False in an installed wheel.
CHECKOUT = not PACKAGED_TIPS.is_dir()
ROOT = PACKAGE.parent
TIPS = ROOT / "tips" if CHECKOUT else PACKAGED_TIPS
SNIPPETS = ROOT / "snippets"
DOCS = ROOT / "docs"
TEMPLATES = PACKAGE / "templates"
SCHEMA_JSON = TIPS / "schema.json"

#: The site's public address, the one setting for every absolute link: mkdocs.yml reads it as
#: ``site_url`` (``!ENV``), the lint's tip links and SARIF ``helpUri`` are built on it.
SITE_URL_VARIABLE = "PYTORCH_TIPS_SITE_URL"
#: The repository's public address: mkdocs.yml's ``repo_url``.
REPO_URL_VARIABLE = "PYTORCH_TIPS_REPO_URL"


class BadSiteURL(UserError):
    """`SITE_URL_VARIABLE` is set to something that is not an absolute http(s) URL."""


def site_url() -> str:
    """The site's public address from `SITE_URL_VARIABLE`, ending in ``/``; "" when unset.

    Raises:
        BadSiteURL: the variable holds no absolute http(s) URL (MkDocs refuses it too).
    """
    url = os.environ.get(SITE_URL_VARIABLE, "").strip()
    if not url:
        return ""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise BadSiteURL(
            f"{SITE_URL_VARIABLE}={url!r} is not an absolute http(s) URL "
            "(e.g. https://tips.example.org/)"
        )
    return url if url.endswith("/") else url + "/"
