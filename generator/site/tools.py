"""The two tool pages: the composer's form (on the composer page) and the lint playground.

Both are rendered from the definitions the command line uses, and run its code in the
browser (`generator.site.runtime`):

- the composer's form has one control per flag of ``python -m generator compose``, read from
  its argument parser (`generator.compose.flags.add_arguments`): a checkbox for a switch, a
  choice for a flag with choices, a number field for a flag with a numeric value; each with
  the flag's help text and links to the tips it applies. A second model's flags need no code
  here, only their definitions;
- the playground's rule table (each code's tip and, where it exists, its rule page) comes from
  the rule classes.

The pages start with what the command writes for no flags and the sample script, so they show
content before the runtime has loaded; the runtime then takes over (``docs/assets/tools/``).
"""

from __future__ import annotations

import argparse
import functools
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from generator import paths
from generator.records import ui
from generator.records.render import plain_text, render
from generator.site.runtime import BUNDLE_DIR, ENTRY_POINTS, PYODIDE_DIR

if TYPE_CHECKING:
    from generator.records.schema import Tip

#: Flags of ``compose`` that the page leaves out: they name the output file, which a page
#: does not write (it offers the script for download instead).
SKIPPED = ("help", "output", "force")

#: The marker of a page that runs a tool, replaced with its style sheet and script.
RUNTIME_MARKER = "<!-- tool-runtime: {tool} -->"
#: The marker on the composer page where the form and the preview go.
COMPOSER_MARKER = "<!-- compose-tool -->"


@dataclass(frozen=True)
class Control:
    """One control of the composer's form, for one flag.

    Attributes:
        name: the flag's long name without dashes (``accum``): the form field's name and the
            query parameter.
        kind: ``switch`` (a checkbox), ``choice`` (radio buttons when a value is always set,
            else a list with "not given"), ``number`` or ``text``.
        help: the flag's help text, as ``--help`` prints it (without the tips).
        metavar: the value's placeholder (``N``), for value flags.
        choices: the values of a ``choice``.
        default: the value the command uses when the flag is not given, for a ``choice``
            that always has one (``--device auto``); ``None`` otherwise.
        step: ``1`` for an integer, ``any`` for a float.
        tips: the (id, title) of each tip the flag applies.
        const: the value of a ``choice`` given without one, as the command reads it
            (``--activation-checkpointing`` alone is ``full``); ``None`` if it needs one.
    """

    name: str
    kind: str
    help: str
    metavar: str | None = None
    choices: tuple[str, ...] = ()
    default: str | None = None
    step: str = "1"
    tips: tuple[tuple[str, str], ...] = field(default=())
    const: str | None = None


def _long_name(action: argparse.Action) -> str | None:
    longs = [s for s in action.option_strings if s.startswith("--")]
    return longs[0][2:] if longs else None


def _help(action: argparse.Action) -> str:
    # argparse's own expansion of %(default)s and the like, as --help prints it.
    text = argparse.HelpFormatter("compose")._expand_help(action) if action.help else ""
    return " ".join(text.split())


def option_helps(lang: str) -> dict[str, str]:
    """Each composer option's help in ``lang``, by its ``dest``, as plain text, with what
    ``--help`` adds to the English (the models it is limited to, its default) in ``lang``."""
    from generator.compose.flags import plain as plain_help
    from generator.compose.options import MODELS, OPTIONS

    L = ui.labels()[lang]
    out = {}
    for option in OPTIONS:
        notes = []
        if tuple(option.models) != tuple(MODELS):
            notes.append(L["composer_only_for"].format(models=" / ".join(option.models)))
        if option.kind == "choice" and option.default is not None:
            notes.append(L["composer_default"].format(value=option.default))
        text = " ".join(plain_help(option.help[lang]).split())
        out[option.name] = text + "".join(L["composer_note"].format(note=n) for n in notes)
    return out


def _flag_tips(
    features: Sequence[str], cites: Mapping[str, Sequence[str]], titles: Mapping[str, str]
) -> tuple[tuple[str, str], ...]:
    """The (id, title) of each tip of ``features``, each once, in their order."""
    ids = dict.fromkeys(t for f in features for t in cites.get(f, ()))
    return tuple((t, titles.get(t, t)) for t in ids)


def controls(
    cites: Mapping[str, Sequence[str]],
    titles: Mapping[str, str],
    parser: argparse.ArgumentParser | None = None,
    helps: Mapping[str, str] | None = None,
    features: Mapping[str, Sequence[str]] | None = None,
) -> list[Control]:
    """The form's controls, in the order of the parser's flags.

    Args:
        cites: feature -> tip ids (`generator.compose.tips.read_tips_by_feature`).
        titles: tip id -> title in the page's language.
        parser: the parser to read (default: a parser with ``compose``'s flags).
        helps: each flag's help in the page's language, by ``dest`` (`option_helps`);
            a flag without one shows its ``--help`` text.
        features: the features each flag applies, by ``dest`` (default: the composer's,
            `generator.compose.flags.FEATURES`): a control names their tips.
    """
    from generator.compose.flags import FEATURES, add_arguments

    if parser is None:
        parser = argparse.ArgumentParser(prog="compose", add_help=False)
        add_arguments(parser)
    features = FEATURES if features is None else features
    out = []
    for action in parser._actions:  # every flag, in the order --help lists them
        name = _long_name(action)
        if name is None or action.dest in SKIPPED:
            continue
        tips = _flag_tips(features.get(action.dest, ()), cites, titles)
        control = functools.partial(
            Control, name=name, help=(helps or {}).get(action.dest) or _help(action), tips=tips
        )
        if action.nargs == 0:
            out.append(control(kind="switch"))
        elif action.choices:
            default = None if action.default is None else str(action.default)
            choices = tuple(str(c) for c in action.choices)
            const = None if action.nargs != "?" or action.const is None else str(action.const)
            out.append(control(kind="choice", choices=choices, default=default, const=const))
        else:
            numeric = action.type in (int, float)
            metavar = action.metavar if isinstance(action.metavar, str) else None
            out.append(
                control(
                    kind="number" if numeric else "text",
                    metavar=metavar or name.upper(),
                    step="any" if action.type is float else "1",
                )
            )
    return out


def _titles(tips: Sequence[Tip], lang: str) -> dict[str, str]:
    return {str(t.id): plain_text(t.title.get(lang)) for t in tips}


def _lang_root(page_url: str, lang: str) -> str:
    """The relative path from a page (``zh/composer/``) to its language's root."""
    parts = [p for p in page_url.strip("/").split("/") if p]
    if lang != "en" and parts[:1] == [lang]:
        parts = parts[1:]
    return "../" * len(parts)


def _site_root(page_url: str) -> str:
    return "../" * len([p for p in page_url.strip("/").split("/") if p])


#: A section heading of the composer page's Markdown: ``## Title { #id }``.
_SECTION = re.compile(r"^## (.+?) \{ #([\w-]+) \}\s*$", re.MULTILINE)


def page_sections(markdown: str) -> list[tuple[str, str]]:
    """The (id, title) of each ``##`` section of a page's Markdown, for its jump links."""
    return [(anchor, plain_text(title)) for title, anchor in _SECTION.findall(markdown)]


def composer_tool(
    lang: str,
    page_url: str,
    cites: Mapping[str, Sequence[str]],
    tips: Sequence[Tip],
    sections: Sequence[tuple[str, str]] = (),
) -> str:
    """The composer's form, command line and preview (HTML), for the page at ``page_url``,
    with jump links to the form, the script and the page's ``sections`` ((id, title)).

    The preview starts with the script ``python -m generator compose`` writes for no flags.
    """
    from generator.compose.browser import compose_flags

    titles = _titles(tips, lang)
    plain = compose_flags([])
    always = tuple((t, titles.get(t, t)) for t in cites.get("always", ()))
    return render(
        "site/composer_tool.html.j2",
        L=ui.labels()[lang],
        controls=controls(cites, titles, helps=None if lang == "en" else option_helps(lang)),
        always=always,
        root=_lang_root(page_url, lang),
        script=plain["text"],
        command=plain["command"],
        sections=sections,
    )


def rule_table(
    lang: str, tips: Sequence[Tip], lang_root: str, pages: Collection[Path] = ()
) -> dict[str, dict[str, str]]:
    """Each rule code's tip (id, title, link) and rule page link, where the site has one:
    the page at `generator.lint.report.rule_path` (the path of the SARIF ``helpUri`` and of
    ``--list-rules``' URL), written as ``docs/lint/rules/<CODE>.md`` among the generated
    ``pages`` or by hand. The links are relative to ``lang_root``, the root of the page's
    language, so a Chinese page links the Chinese tip and rule pages."""
    from generator.lint.report import rule_path
    from generator.lint.rules import RULES

    titles = _titles(tips, lang)
    out = {}
    for rule in RULES:
        entry = {
            "tip": rule.tip,
            "title": titles.get(rule.tip, rule.tip),
            "url": f"{lang_root}tips/{rule.tip}/",
        }
        path = rule_path(rule.code)
        source = paths.DOCS / f"{path.rstrip('/')}.md"
        if source in pages or source.is_file():
            entry["page"] = f"{lang_root}{path}"
        out[rule.code] = entry
    return out


#: The script the playground starts with: a few lines that several rules find fault with.
SAMPLE = """\
import torch
from torch.cuda.amp import GradScaler, autocast

model = torch.nn.Linear(512, 10).cuda()
optimizer = torch.optim.AdamW(model.parameters())
scaler = GradScaler()
model.load_state_dict(torch.load("last.pt"))

for x, y in loader:
    x = torch.tensor(x).cuda()
    with autocast():
        loss = torch.nn.functional.cross_entropy(model(x), y.cuda())
    optimizer.zero_grad(set_to_none=False)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    print(loss.item())
"""


def playground_page(lang: str, tips: Sequence[Tip], pages: Collection[Path] = ()) -> str:
    """The Markdown of the lint playground (``docs/lint/playground.md``) in ``lang``;
    ``pages`` are the other generated pages (to link the rule pages among them)."""
    from generator.lint.rules import RULES

    lang_root = "../../"
    return render(
        "site/lint_playground.md.j2",
        lang=lang,
        L=ui.labels()[lang],
        rules=rule_table(lang, tips, lang_root, pages),
        n_rules=len(RULES),
        sample=SAMPLE,
    )


def runtime_tags(tool: str, page_url: str, bundle_name: str) -> str:
    """The style sheet and module script of ``tool`` (``compose`` or ``lint``), with the
    runtime's places as data attributes, for the page at ``page_url``."""
    root = _site_root(page_url)
    return (
        f'<link rel="stylesheet" href="{root}assets/tools/tools.css">\n'
        f'<script type="module" src="{root}assets/tools/{tool}.js" data-tool-runtime '
        f'data-pyodide="{root}{PYODIDE_DIR}/" data-bundle="{root}{BUNDLE_DIR}/{bundle_name}" '
        f'data-entry="{ENTRY_POINTS[tool]}"></script>'
    )


def expand_markers(
    markdown: str,
    page_url: str,
    lang: str,
    bundle_name: str,
    cites: Mapping[str, Sequence[str]],
    tips: Sequence[Tip],
) -> str:
    """Replace the tool markers of a page's Markdown: `COMPOSER_MARKER` with the composer's
    form, each `RUNTIME_MARKER` with the tool's style sheet and script."""
    if "<!-- " not in markdown:
        return markdown
    if COMPOSER_MARKER in markdown:
        tool = composer_tool(lang, page_url, cites, tips, page_sections(markdown))
        markdown = markdown.replace(COMPOSER_MARKER, tool)
    for tool in ENTRY_POINTS:
        marker = RUNTIME_MARKER.format(tool=tool)
        if marker in markdown:
            markdown = markdown.replace(marker, runtime_tags(tool, page_url, bundle_name))
    return markdown
