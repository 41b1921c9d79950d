"""Find, validate and load the tip records in ``tips/``.

Validation collects every problem in every file before failing, and reports each one as
``file:line: field.path: reason``.
"""

from __future__ import annotations

import ast
import difflib
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from generator import paths
from generator.command import relative
from generator.errors import InvalidRecords, NotFound, Problem
from generator.records.fields import ID_PATTERN
from generator.records.glossary import chinese_texts
from generator.records.schema import Tip
from generator.records.yamlio import (
    Document,
    Loc,
    YamlProblem,
    folder_digest,
    format_loc,
    read_document,
)

#: Files in ``tips/`` that are not records.
NOT_RECORDS = {"schema.json", "README.md"}


def _all_field_names() -> list[str]:
    """Every field name anywhere in the record schema, for "did you mean" hints."""
    schema = Tip.model_json_schema()
    models = [schema, *schema.get("$defs", {}).values()]
    return sorted({name for model in models for name in model.get("properties", {})})


_FIELD_NAMES = _all_field_names()


def _format_loc(loc: Iterable[str | int]) -> str:
    return format_loc(tuple(loc))


def discover(targets: Sequence[Path] | None = None) -> tuple[list[Path], list[Problem]]:
    """Expand files and folders into the record files to validate.

    Folders are searched recursively; names starting with ``_`` or ``.`` and
    `NOT_RECORDS` are skipped. Any other file that is not ``.yaml`` is a problem, so a
    misnamed record (``.yml``, ``.txt``) is never silently ignored.
    """
    files: list[Path] = []
    problems: list[Problem] = []
    for target in targets or [paths.TIPS]:
        if target.is_dir():
            found = len(files)
            for path in sorted(target.rglob("*")):
                rel = path.relative_to(target)
                if path.is_dir() or any(p.startswith(("_", ".")) for p in rel.parts):
                    continue
                if path.name in NOT_RECORDS:
                    continue
                files.append(path)
            if len(files) == found:
                problems.append(
                    Problem(
                        relative(target), 0, "(file)", "no record files (<id>.yaml) in this folder"
                    )
                )
        elif target.exists() or target.is_symlink():  # a broken link is read, and reported
            files.append(target)
        else:
            problems.append(Problem(relative(target), 0, "(file)", "no such file or folder"))
    kept = []
    for path in files:
        if path.suffix != ".yaml":
            problems.append(
                Problem(relative(path), 1, "(file)", "not a .yaml file: records are tips/<id>.yaml")
            )
        else:
            kept.append(path)
    return kept, problems


def _reason(error: ErrorDetails) -> str:
    kind, msg = error["type"], error["msg"]
    if kind == "extra_forbidden":
        key = str(error["loc"][-1])
        close = difflib.get_close_matches(key, _FIELD_NAMES, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else "; see tips/schema.json"
        return f"unknown key{hint}"
    if kind == "missing":
        return "required field is missing"
    return msg.removeprefix("Value error, ")


def _code_parts(tip: Tip) -> list[tuple[Loc, str | None, str]]:
    """Every Python text of a record: (location, source, parse mode)."""
    parts: list[tuple[Loc, str | None, str]] = []
    for name, variant in tip.variants().items():
        parts += [
            ((name, part), getattr(variant, part), "exec") for part in ("code", "checks", "probe")
        ]
        if variant.launch is not None:
            parts.append(((name, "launch", "checks"), variant.launch.checks, "exec"))
    if tip.bench is not None:
        parts += [
            (("bench", p), getattr(tip.bench, p), "exec") for p in ("setup", "before", "after")
        ]
        if tip.bench.memory is not None:
            mem = tip.bench.memory
            parts += [
                (("bench", "memory", p), getattr(mem, p), "eval") for p in ("before", "after")
            ]
    return parts


def _python_problems(file: str, doc: Document, tip: Tip) -> list[Problem]:
    problems = []
    for loc, source, mode in _code_parts(tip):
        if source is None:
            continue
        try:
            ast.parse(source.strip() if mode == "eval" else source, mode=mode)
        except SyntaxError as err:
            line = doc.content_lines.get(loc, doc.line_of(loc)) + (err.lineno or 1) - 1
            problems.append(Problem(file, line, _format_loc(loc), f"not valid Python: {err.msg}"))
    return problems


#: The record's fields in the order its page shows them (tip.md.j2), for "first use".
_PAGE_ORDER = ("title", "summary", "after", "before", "no_code", "rationale", "hardware", "caveats")


def _page_position(item: tuple[Loc, str]) -> int:
    field = str(item[0][0])
    return _PAGE_ORDER.index(field) if field in _PAGE_ORDER else len(_PAGE_ORDER)


#: Check-only code left in a snippet readers copy: a comment that speaks of the checks, or a
#: file written for them (``expected-2.pt``). Such code belongs in ``checks`` or ``probe``.
#: Lines are matched as text, so comments in an embedded script count too.
_CHECKS_COMMENT = re.compile(r"#.*(?:\b(?:the|for) checks\b|\bcheck-only\b)", re.IGNORECASE)
_EXPECTED_FILE = re.compile(r"""["'][^"'\n]*\bexpected[-_][^"'\n]*\.(?:pt|pth|json|npy|pkl)["']""")


def _scaffolding_problems(file: str, doc: Document, tip: Tip) -> list[Problem]:
    problems = []
    for name, variant in tip.variants().items():
        loc = (name, "code")
        first = doc.content_lines.get(loc, doc.line_of(loc))
        for number, line in enumerate(variant.code.splitlines(), 1):
            if _CHECKS_COMMENT.search(line):
                what = "a comment speaks of the checks"
            elif _EXPECTED_FILE.search(line):
                what = "it writes an expected-* file for the checks"
            else:
                continue
            problems.append(
                Problem(
                    file,
                    first + number - 1,
                    _format_loc(loc),
                    f"check-only code in the snippet readers copy ({what}): "
                    "move it into `checks` or `probe`",
                )
            )
    return problems


def _glossary_problems(file: str, doc: Document, tip: Tip) -> list[Problem]:
    """A Chinese text that uses a variant the glossary (tips/_glossary.yaml) avoids, or the
    first use of a term that the glossary glosses, left bare, or that breaks a style rule
    (`generator.records.zhstyle`: 倍, calques)."""
    from generator.records.glossary import find_variants, first_use_problems, load_glossary, texts
    from generator.records.zhstyle import text_problems

    glossary = load_glossary()
    problems = [
        Problem(
            file,
            doc.content_lines.get(loc, doc.line_of(loc)),
            _format_loc(loc),
            f"first uses {term!r} without its gloss {gloss!r} (tips/_glossary.yaml)",
        )
        for loc, term, gloss in first_use_problems(
            [it for it in sorted(chinese_texts(tip), key=_page_position) if it[0][0] != "title"],
            glossary,
        )
    ]
    for loc, text in chinese_texts(tip):
        for variant, term in find_variants(text, glossary):
            start = doc.content_lines.get(loc, doc.line_of(loc))
            offset = next(
                (i for i, ln in enumerate(text.splitlines()) if variant.lower() in ln.lower()), 0
            )
            problems.append(
                Problem(
                    file,
                    start + offset,
                    _format_loc(loc),
                    f"uses {variant!r}: the glossary term is {term!r} (tips/_glossary.yaml)",
                )
            )
    for loc, bilingual in texts(tip):
        start = doc.content_lines.get((*loc, "zh"), doc.line_of((*loc, "zh")))
        problems += [
            Problem(file, start + offset, _format_loc((*loc, "zh")), reason)
            for offset, reason in text_problems(bilingual)
        ]
    return problems


def validate_file(path: Path) -> tuple[Tip | None, Document | None, list[Problem]]:
    """Validate one record file in isolation.

    Returns the tip (with ``id`` filled in from the file name), the parsed document (for
    line numbers) and the problems found; the tip is ``None`` when the schema rejects it.
    """
    file = relative(path)
    try:
        doc = read_document(path)
    except YamlProblem as err:
        return None, None, [Problem(file, err.line, err.field, err.reason)]
    except OSError as err:
        return None, None, [Problem(file, 1, "(file)", f"cannot read: {err.strerror}")]
    try:
        tip = Tip.model_validate(doc.data)
    except ValidationError as err:
        return (
            None,
            doc,
            [
                Problem(file, doc.line_of(e["loc"]), _format_loc(e["loc"]), _reason(e))
                for e in err.errors()
            ],
        )
    problems = _python_problems(file, doc, tip)
    problems += _scaffolding_problems(file, doc, tip)
    problems += _glossary_problems(file, doc, tip)
    stem = path.stem
    if tip.id is not None and tip.id != stem:
        problems.append(
            Problem(file, doc.line_of(("id",)), "id", f"must equal the file name {stem!r}")
        )
    if re.fullmatch(ID_PATTERN, stem) is None:
        problems.append(
            Problem(file, 1, "(file)", "file name must be lowercase-hyphenated: <id>.yaml")
        )
    return tip.model_copy(update={"id": stem}), doc, problems


def _cross_problems(loaded: dict[Path, tuple[Tip, Document]], known_ids: set[str]) -> list[Problem]:
    problems = []
    first_path: dict[str, Path] = {}
    for path, (tip, _) in loaded.items():
        assert tip.id is not None
        if tip.id in first_path:
            problems.append(
                Problem(
                    relative(path), 1, "id", f"duplicate id, also {relative(first_path[tip.id])}"
                )
            )
        first_path.setdefault(tip.id, path)
    for path, (tip, doc) in loaded.items():
        for i, rel in enumerate(tip.related):
            if rel == tip.id:
                problems.append(
                    Problem(
                        relative(path),
                        doc.line_of(("related", i)),
                        f"related[{i}]",
                        "a tip cannot relate to itself",
                    )
                )
            elif rel not in known_ids:
                close = difflib.get_close_matches(rel, sorted(known_ids), n=1)
                hint = f"; did you mean {close[0]!r}?" if close else ""
                problems.append(
                    Problem(
                        relative(path),
                        doc.line_of(("related", i)),
                        f"related[{i}]",
                        f"no tip with id {rel!r}{hint}",
                    )
                )
    return problems


def _entry_point_problems(known: set[str]) -> list[Problem]:
    """Unknown tip ids (and glossary variants) in tips/_problems.yaml and tips/_checklist.yaml."""
    from generator.records import problems

    return problems.check_entry_points(known, problems.PROBLEMS_FILE, problems.CHECKLIST_FILE)[1]


#: A check across the loaded records that needs a capability above this layer (the lint
#: rules' codes, `generator.lint.tips.rule_code_problems`): it gets every valid record with its
#: document, and whether the whole corpus was loaded; the caller that knows both passes it.
CrossCheck = Callable[[Mapping[Path, tuple[Tip, Document]], bool], list[Problem]]


def validate(
    targets: Sequence[Path] | None = None, cross_checks: Sequence[CrossCheck] = ()
) -> tuple[list[Tip], list[Problem]]:
    """Validate record files and folders (default: all of ``tips/``).

    ``related`` ids are resolved against every record in ``tips/``, so validating one file
    still checks its links. ``cross_checks`` run last, over every valid record.
    Returns the valid tips (sorted by id) and every problem found.
    """
    if not targets and not paths.TIPS.is_dir():
        what = "not a folder" if paths.TIPS.exists() else "no such folder"
        return [], [
            Problem(relative(paths.TIPS), 0, "(file)", f"{what}: the records live in tips/")
        ]
    files, problems = discover(targets)
    loaded: dict[Path, tuple[Tip, Document]] = {}
    for path in files:
        tip, doc, found = validate_file(path)
        problems.extend(found)
        if tip is not None and doc is not None:
            loaded[path] = (tip, doc)
    known = {t.id for t, _ in loaded.values() if t.id}
    if targets:
        known |= {p.stem for p in discover([paths.TIPS])[0]}
    problems.extend(_cross_problems(loaded, known))
    for check in cross_checks:
        problems.extend(check(loaded, not targets))
    if not targets:
        problems.extend(_entry_point_problems(known))
    tips = sorted((t for t, _ in loaded.values()), key=lambda t: t.id or "")
    return tips, sorted(set(problems))


#: `load_tips()` of the whole folder, per (folder, cross-checks): the digest of the folder's
#: content it was loaded from, and the tips.
_LOADED: dict[tuple[str, tuple[CrossCheck, ...]], tuple[str, tuple[Tip, ...]]] = {}


def load_tips(
    targets: Sequence[Path] | None = None, cross_checks: Sequence[CrossCheck] = ()
) -> list[Tip]:
    """Load every tip, sorted by id (``cross_checks`` as in `validate`).

    The whole folder's tips (no ``targets``) are validated once per content of ``tips/``: a
    second call reads the files again and, when no byte changed, returns the same (frozen) tips
    without validating them again. Callers must not change them.

    Raises:
        InvalidRecords: any record has any problem.
    """
    key = (str(paths.TIPS), tuple(cross_checks))
    digest = None if targets else folder_digest(paths.TIPS)
    if digest is not None and key in _LOADED and _LOADED[key][0] == digest:
        return list(_LOADED[key][1])
    tips, problems = validate(targets, cross_checks)
    if problems:
        raise InvalidRecords(problems)
    if digest is not None and folder_digest(paths.TIPS) == digest:  # unchanged meanwhile
        _LOADED[key] = (digest, tuple(tips))
    return tips


def get_tip(tip_id: str, tips: Sequence[Tip] | None = None) -> Tip:
    """Return the tip with ``tip_id``.

    Without ``tips``, only ``tips/<tip_id>.yaml`` is read and validated on its own, so a
    broken record elsewhere does not stop ``show`` or ``run`` of this one.

    Raises:
        InvalidRecords: the record itself is invalid.
        NotFound: no such tip (the message suggests the closest ids).
    """
    if tips is None:
        path = paths.TIPS / f"{tip_id}.yaml"
        if re.fullmatch(ID_PATTERN, tip_id) and path.is_file():
            tip, _, problems = validate_file(path)
            if problems or tip is None:
                raise InvalidRecords(problems)
            return tip
        known = [p.stem for p in discover([paths.TIPS])[0]]
    else:
        by_id = {t.id: t for t in tips}
        if tip_id in by_id:
            return by_id[tip_id]
        known = [i for i in by_id if i]
    close = difflib.get_close_matches(tip_id, sorted(known), n=3)
    if close:
        raise NotFound(
            f"no tip with id '{tip_id}' (did you mean: {', '.join(close)}?)",
            key="no_tip_close",
            id=tip_id,
            close=close,
        )
    raise NotFound(f"no tip with id '{tip_id}'", key="no_tip", id=tip_id)
