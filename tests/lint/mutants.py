"""Hostile variants of the rules' INVALID examples, for the lint's fuzz test
(tests/lint/test_fuzz.py) and its longer run (benchmarks/lint_fuzz.py): the shapes of the
reliability review of 2026-11-28 (line ends, encodings, NFKC names, parentheses and comments
where a fix goes, deep nesting, f-strings, repeated and deleted lines), drawn with a seeded
``random.Random`` so a failure is reproduced by its seed."""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterator

from generator.lint.rules import RULES

#: Lines that trigger a fixable rule, inserted into examples.
TRIGGERS = (
    "x = torch.zeros(3).cuda()",
    "m = torch.cuda.memory_cached()",
    "s = torch.cuda.amp.GradScaler()",
    "state = torch.load(path)",
    "torch.nn.utils.clip_grad_norm(model.parameters(), 1.0)",
    "torch.nn.init.xavier_normal(w)",
    "torch.cuda.reset_max_memory_allocated()",
    "y = torch.tensor([1, 2]).to(device)",
    "with torch.cuda.amp.autocast():\n    pass",
    "optimizer.zero_grad(set_to_none=False)",
)

#: Fullwidth and other characters Python's NFKC reading maps to ASCII letters.
_NFKC = {"d": "ｄ", "m": "ｍ", "l": "ｌ", "e": "ｅ", "a": "ａ", "r": "ｒ"}


def examples() -> list[str]:
    """Every INVALID example of every rule."""
    return [i.code for r in RULES for i in r.invalid_examples()]


def _lines(text: str) -> list[str]:
    return text.split("\n")


def cr_only(text: str, rnd: random.Random) -> str:
    return text.replace("\n", "\r")


def crlf(text: str, rnd: random.Random) -> str:
    return text.replace("\n", "\r\n")


def mixed_ends(text: str, rnd: random.Random) -> str:
    return "".join(line + rnd.choice(["\n", "\r\n", "\r"]) for line in _lines(text.rstrip("\n")))


def nfkc_names(text: str, rnd: random.Random) -> str:
    """The last letter of attribute names written as its fullwidth form."""

    def swap(m: re.Match[str]) -> str:
        name = m.group(1)
        if name[-1] in _NFKC and rnd.random() < 0.7:
            return "." + name[:-1] + _NFKC[name[-1]]
        return m.group(0)

    return re.sub(r"\.([A-Za-z_][A-Za-z_0-9]*)", swap, text)


def paren_comments(text: str, rnd: random.Random) -> str:
    """A comment holding ``(`` between a callee and its parenthesis."""
    return re.sub(
        r"(torch(?:\.\w+)+)\(",
        lambda m: (
            f"{m.group(1)}  # (see {rnd.randint(0, 9)})\n    ("
            if rnd.random() < 0.5
            else m.group(0)
        ),
        text,
    )


def parenthesised(text: str, rnd: random.Random) -> str:
    """Receivers and arguments in parentheses: ``(torch.zeros(3)).cuda()``."""
    text = re.sub(r"(torch\.\w+\([^()]*\))\.", r"(\1).", text)
    return re.sub(r"\(([A-Za-z_]\w*)\)", r"((\1))", text)


def generator_args(text: str, rnd: random.Random) -> str:
    return re.sub(r"\((\w+)\)", r"(i for i in \1)", text, count=1)


def in_fstring(text: str, rnd: random.Random) -> str:
    lines = _lines(text)
    for i, line in enumerate(lines):
        m = re.match(r"^(\s*)(\w+) = (torch\..*)$", line)
        if m and '"' not in m.group(3):
            lines[i] = f'{m.group(1)}{m.group(2)} = f"{{{m.group(3)}=}}"'
            break
    return "\n".join(lines)


def nested(text: str, rnd: random.Random) -> str:
    depth = rnd.randint(5, 40)
    body = ["    " * (i + 1) + f"if c{i}:" for i in range(depth)]
    inner = "    " * (depth + 1)
    return "\n".join(["import torch", "if c:", *body] + [inner + ln for ln in _lines(text)]) + "\n"


def tabs(text: str, rnd: random.Random) -> str:
    return "\n".join(
        re.sub(r"^( {4})+", lambda m: "\t" * (len(m.group(0)) // 4), ln) for ln in _lines(text)
    )


def with_bom(text: str, rnd: random.Random) -> str:
    return "\ufeff" + text


def shuffle_lines(text: str, rnd: random.Random) -> str:
    """Delete, duplicate or swap lines (the result may not parse: that is a finding too)."""
    lines = _lines(text)
    for _ in range(rnd.randint(1, 3)):
        i = rnd.randrange(len(lines))
        op = rnd.choice(["del", "dup", "swap"])
        if op == "del" and len(lines) > 1:
            del lines[i]
        elif op == "dup":
            lines.insert(i, lines[i])
        else:
            j = rnd.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
    return "\n".join(lines)


def insert_trigger(text: str, rnd: random.Random) -> str:
    lines = _lines(text)
    i = rnd.randrange(len(lines) + 1)
    prev = lines[i - 1] if i > 0 else ""
    indent = prev[: len(prev) - len(prev.lstrip(" \t"))]
    if i > 0 and lines[i - 1].rstrip().endswith(":"):
        indent += "    "
    trigger = rnd.choice(TRIGGERS).replace("\n", "\n" + indent)
    lines.insert(i, indent + trigger)
    return "\n".join(lines)


def odd_characters(text: str, rnd: random.Random) -> str:
    """Form feeds, ``\\v``, ``\\u2028``, ``\\x85`` inside comments (not line ends for Python)."""
    char = rnd.choice(["\f", "\v", "\u2028", "\x85", "\u202e"])
    return re.sub(r"\n", f"  # note{char}x\n", text, count=1)


def continuation(text: str, rnd: random.Random) -> str:
    return re.sub(r"= torch\.", "= \\\\\n    torch.", text, count=1)


MUTATIONS: tuple[Callable[[str, random.Random], str], ...] = (
    cr_only,
    crlf,
    mixed_ends,
    nfkc_names,
    paren_comments,
    parenthesised,
    generator_args,
    in_fstring,
    nested,
    tabs,
    with_bom,
    shuffle_lines,
    insert_trigger,
    odd_characters,
    continuation,
)


def mutants(seed: int, count: int) -> Iterator[tuple[str, str]]:
    """``count`` mutants of the INVALID examples: (how it was made, text). Each applies one
    to three mutations to one example."""
    rnd = random.Random(seed)
    pool = examples()
    for n in range(count):
        text = rnd.choice(pool)
        names = []
        for mutate in rnd.sample(MUTATIONS, rnd.randint(1, 3)):
            text = mutate(text, rnd)
            names.append(mutate.__name__)
        yield f"{seed}:{n}:{'+'.join(names)}", text
