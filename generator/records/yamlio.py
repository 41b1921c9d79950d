"""Read one YAML record strictly, keeping the line of every key for error messages."""

from __future__ import annotations

import hashlib
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

Loc = tuple[str | int, ...]


class YamlProblem(Exception):
    """The file cannot be read as one YAML mapping; ``line`` is 1-based, ``loc`` the key path of
    the offending value where one is known (``()``: the file as a whole)."""

    def __init__(self, line: int, reason: str, loc: Loc = ()):
        super().__init__(reason)
        self.line = line
        self.reason = reason
        self.loc = loc

    @property
    def field(self) -> str:
        """``loc`` as a problem's field (``bench.sizes.cpu[0]``), or ``(file)``."""
        return format_loc(self.loc) if self.loc else "(file)"


def format_loc(loc: Loc) -> str:
    """A key path as written in problems: ``after.launch.env``, ``related[1]``."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(record)"


@dataclass
class Document:
    """A parsed record: its data, and for each key path the line it starts on."""

    data: dict[str, Any]
    lines: dict[Loc, int] = field(default_factory=dict)
    #: For scalar values, the line their content starts on (block scalars start below the key).
    content_lines: dict[Loc, int] = field(default_factory=dict)

    def line_of(self, loc: Loc) -> int:
        """The line of ``loc``, or of its nearest ancestor that exists in the file."""
        loc = tuple(loc)
        while loc and loc not in self.lines:
            loc = loc[:-1]
        return self.lines.get(loc, 1)


#: libyaml's parser when PyYAML was built with it (several times faster), else pure Python.
#: The type checker sees the pure-Python loader, whose methods CSafeLoader shares.
if TYPE_CHECKING:
    _BaseLoader = yaml.SafeLoader
else:
    _BaseLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _StrictLoader(_BaseLoader):
    """Safe loader that rejects duplicate keys instead of keeping the last one."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            try:
                first = seen.get(key)
            except TypeError:
                raise yaml.constructor.ConstructorError(
                    None, None, "a key must be a plain string", key_node.start_mark
                ) from None
            if first is not None:
                raise yaml.constructor.ConstructorError(
                    None,
                    None,
                    f"duplicate key {key!r} (first defined on line {first})",
                    key_node.start_mark,
                )
            seen[key] = key_node.start_mark.line + 1
        return super().construct_mapping(node, deep=deep)


def _index(node: yaml.Node, loc: Loc, doc: Document) -> None:
    doc.lines.setdefault(loc, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            key_loc = (*loc, str(key_node.value))
            doc.lines[key_loc] = key_node.start_mark.line + 1
            _index(value_node, key_loc, doc)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _index(item, (*loc, i), doc)
    elif isinstance(node, yaml.ScalarNode):
        block = node.style in ("|", ">")
        doc.content_lines[loc] = node.start_mark.line + (2 if block else 1)


def _decode(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as err:
        line = raw[: err.start].count(b"\n") + 1
        bad = raw[err.start : err.start + 1].hex()
        raise YamlProblem(
            line, f"file is not valid UTF-8 (byte 0x{bad}); save it as UTF-8"
        ) from None


#: A record is a small text file; anything larger is refused before it is parsed.
MAX_BYTES = 512 * 1024
#: The most digits an integer in a record may have: far above any real value (a 64-bit
#: integer has 20 digits) and far below the 4,300 digits past which Python refuses to convert
#: text to an integer (a ValueError, with a traceback, before this limit).
MAX_INT_DIGITS = 100
#: Records nest about six levels deep (bench.sizes.cuda[0].values.x); far more is hostile.
MAX_DEPTH = 24
#: The YAML core tags a record may spell out; anything else (``!!python/object``, custom
#: ``!tags``) is refused before any object is constructed.
_PLAIN_TAGS = {
    None,
    "!",
    "tag:yaml.org,2002:str",
    "tag:yaml.org,2002:int",
    "tag:yaml.org,2002:float",
    "tag:yaml.org,2002:bool",
    "tag:yaml.org,2002:null",
    "tag:yaml.org,2002:map",
    "tag:yaml.org,2002:seq",
}


def _refuse_hostile(text: str) -> None:
    """Walk the YAML event stream (no objects are built) and refuse what no record needs.

    Anchors and aliases are refused outright: a few lines of nested aliases expand
    exponentially once constructed or walked (the "billion laughs" file). So are nesting
    deeper than `MAX_DEPTH` and tags outside the YAML core schema. Runs in time linear
    in the file's size.

    Raises:
        YamlProblem: with the line of the first offending event.
    """
    depth = 0
    try:
        for event in yaml.parse(text, Loader=_BaseLoader):
            line = getattr(event.start_mark, "line", 0) + 1
            if isinstance(event, yaml.AliasEvent):
                raise YamlProblem(
                    line,
                    f"YAML alias *{event.anchor} is not allowed in a record: write the value out",
                )
            anchor = getattr(event, "anchor", None)
            if anchor is not None:
                raise YamlProblem(
                    line,
                    f"YAML anchor &{anchor} is not allowed in a record: write the value out",
                )
            tag = getattr(event, "tag", None)
            if tag not in _PLAIN_TAGS:
                raise YamlProblem(line, f"YAML tag {tag} is not allowed in a record")
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > MAX_DEPTH:
                    raise YamlProblem(
                        line, f"nesting deeper than {MAX_DEPTH} levels is not allowed in a record"
                    )
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
    except yaml.YAMLError:
        # Some parsers refuse deep nesting themselves, with their own message and limit (the
        # libyaml of PyYAML 6.0.4 does), often before the events above reach MAX_DEPTH because
        # the scanner reads ahead. Deep flow nesting is found here, in the text, whatever the
        # parser; anything else is a syntax error that the full parse below reports.
        deep = _deep_flow_line(text)
        if deep is not None:
            raise YamlProblem(
                deep, f"nesting deeper than {MAX_DEPTH} levels is not allowed in a record"
            ) from None


#: What the flow-nesting scan stops at: brackets, quotes, comments, line ends.
_FLOW_TOKEN = re.compile(r"""[\[\]{}'"#\n]""")
#: A line that opens a block scalar (``key: |``, ``- >-``): its indented lines are text.
_BLOCK_SCALAR = re.compile(r"""^(\s*)(?:.*:|-)\s+[|>][-+0-9]*\s*(?:#.*)?$""")


def _deep_flow_line(text: str) -> int | None:
    """The line where flow collections (``[`` / ``{``) first nest deeper than `MAX_DEPTH`.

    A small lexer, independent of the YAML parser: it skips quoted strings, comments and the
    text of block scalars, and counts brackets. Returns None when the nesting is sane.
    """
    depth, quote, block_indent = 0, "", -1
    for number, line in enumerate(text.split("\n"), 1):
        indent = len(line) - len(line.lstrip(" "))
        if block_indent >= 0:
            if not line.strip() or indent > block_indent:
                continue  # a line of a block scalar's text
            block_indent = -1
        if not quote and depth == 0 and (match := _BLOCK_SCALAR.match(line)):
            block_indent = len(match.group(1))
            continue
        pos = 0
        while (token := _FLOW_TOKEN.search(line, pos)) is not None:
            char, pos = token.group(), token.end()
            if quote:
                if char == quote == "'" and line.startswith("'", pos):
                    pos += 1  # '' inside a single-quoted string
                elif char == quote and not (quote == '"' and _escaped(line, token.start())):
                    quote = ""
            elif char in "'\"":
                quote = char
            elif char == "#" and (token.start() == 0 or line[token.start() - 1] in " \t"):
                break  # a comment runs to the end of the line
            elif char in "[{":
                depth += 1
                if depth > MAX_DEPTH:
                    return number
            elif char in "]}":
                depth = max(depth - 1, 0)
    return None


def _escaped(line: str, index: int) -> bool:
    """Whether the character at ``index`` follows an odd number of backslashes."""
    slashes = len(line[:index]) - len(line[:index].rstrip("\\"))
    return slashes % 2 == 1


_FILE_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def read_bytes(path: Path) -> bytes:
    """The bytes of the record file ``path``, refusing before reading anything but a regular file
    (a FIFO would block the reader for ever, a device may never end) and more than `MAX_BYTES`.

    Raises:
        YamlProblem: not a regular file, or too large.
        OSError: the file cannot be opened (missing, no permission, a symlink loop).
    """
    # O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer.
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    with os.fdopen(fd, "rb") as file:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = next((name for test, name in _FILE_KINDS if test(mode)), "not a plain file")
            raise YamlProblem(1, f"not a regular file ({kind}): a record is a plain text file")
        raw = file.read(MAX_BYTES + 1)
        if len(raw) > MAX_BYTES:
            size = max(os.fstat(fd).st_size, len(raw))
            raise YamlProblem(1, f"file is {size} bytes; a record may hold at most {MAX_BYTES}")
    return raw


def _refuse_long_integers(node: yaml.Node, loc: Loc) -> None:
    """Refuse an integer longer than `MAX_INT_DIGITS` before it is converted (see there)."""
    if isinstance(node, yaml.ScalarNode):
        is_int = node.tag == "tag:yaml.org,2002:int" and len(node.value) > MAX_INT_DIGITS
        digits = sum(c.isdigit() for c in node.value) if is_int else 0
        if digits > MAX_INT_DIGITS:
            raise YamlProblem(
                node.start_mark.line + 1,
                f"an integer of {digits} digits: a record's integers have at most {MAX_INT_DIGITS}",
                loc,
            )
    elif isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            _refuse_long_integers(key_node, loc)
            _refuse_long_integers(value_node, (*loc, str(key_node.value)))
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _refuse_long_integers(item, (*loc, i))


def read_document(path: Path) -> Document:
    """Parse ``path`` as one YAML mapping.

    Raises:
        YamlProblem: the file is not a regular file, empty, too large, not UTF-8, not YAML, uses
            anchors, aliases, non-core tags, absurd nesting or absurdly long integers, has
            duplicate keys, or is not a mapping at the top level.
        OSError: the file cannot be opened.
    """
    return parse_document(read_bytes(path))


def parse_document(raw: bytes) -> Document:
    """Parse the bytes of a record file as one YAML mapping (as `read_document`)."""
    if len(raw) > MAX_BYTES:
        raise YamlProblem(1, f"file is {len(raw)} bytes; a record may hold at most {MAX_BYTES}")
    text = _decode(raw)
    if not text.strip():
        raise YamlProblem(1, "file is empty")
    _refuse_hostile(text)
    loader = _StrictLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            raise YamlProblem(1, "file holds no YAML document")
        _refuse_long_integers(node, ())
        data = loader.construct_document(node)
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        line = mark.line + 1 if mark else 1
        reason = " ".join(str(p) for p in (err.context, err.problem) if p)
        source_lines = text.splitlines()
        if 0 < line <= len(source_lines) and "\t" in source_lines[line - 1]:
            reason += " (tabs are not allowed for indentation in YAML: use spaces)"
        raise YamlProblem(line, f"invalid YAML: {reason}") from None
    except yaml.YAMLError as err:
        raise YamlProblem(1, f"invalid YAML: {err}") from None
    finally:
        loader.dispose()
    if not isinstance(data, dict):
        kind = "list" if isinstance(data, list) else type(data).__name__
        raise YamlProblem(node.start_mark.line + 1, f"expected a mapping of fields, found a {kind}")
    doc = Document(data=data)
    _index(node, (), doc)
    return doc


def folder_digest(folder: Path) -> str | None:
    """A digest of every name and regular file's bytes under ``folder`` (the records, and the
    glossary and entry points their validation reads), or None when something there is not a
    plain, readable file of at most `MAX_BYTES` (validation then says what)."""
    digest = hashlib.blake2b(digest_size=20)
    try:
        for path in sorted(folder.rglob("*")):
            name = str(path.relative_to(folder)).encode("utf-8", "surrogateescape")
            digest.update(b"%d:" % len(name) + name)
            status = path.stat()
            if stat.S_ISDIR(status.st_mode):
                digest.update(b"d")
            elif stat.S_ISREG(status.st_mode) and status.st_size <= MAX_BYTES:
                raw = path.read_bytes()
                digest.update(b"f%d:" % len(raw) + raw)
            else:
                return None
    except OSError:
        return None
    return digest.hexdigest()
