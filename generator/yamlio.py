"""Read one YAML record strictly, keeping the line of every key for error messages."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

Loc = tuple[str | int, ...]


class YamlProblem(Exception):
    """The file cannot be read as one YAML mapping; ``line`` is 1-based."""

    def __init__(self, line: int, reason: str):
        super().__init__(reason)
        self.line = line
        self.reason = reason


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
_BaseLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _StrictLoader(_BaseLoader):  # type: ignore[misc,valid-type]
    """Safe loader that rejects duplicate keys instead of keeping the last one."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)  # type: ignore[no-untyped-call]
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


def read_document(path: Path) -> Document:
    """Parse ``path`` as one YAML mapping.

    Raises:
        YamlProblem: the file is empty, not UTF-8, not YAML, has duplicate keys, or is not
            a mapping at the top level.
    """
    text = _decode(path.read_bytes())
    if not text.strip():
        raise YamlProblem(1, "file is empty")
    loader = _StrictLoader(text)
    try:
        node = loader.get_single_node()  # type: ignore[no-untyped-call]
        if node is None:
            raise YamlProblem(1, "file holds no YAML document")
        data = loader.construct_document(node)  # type: ignore[no-untyped-call]
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
        loader.dispose()  # type: ignore[no-untyped-call]
    if not isinstance(data, dict):
        kind = "list" if isinstance(data, list) else type(data).__name__
        raise YamlProblem(node.start_mark.line + 1, f"expected a mapping of fields, found a {kind}")
    doc = Document(data=data)
    _index(node, (), doc)
    return doc
