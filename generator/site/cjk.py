"""Chinese line breaks: join lines that break between two Chinese characters.

Writers wrap long Chinese lines in Markdown and YAML like English ones. In HTML a newline is
white space, and browsers render it as a space, which Chinese text must not have
("适得其反， 并附带"). `join_lines` removes such newlines from a page's HTML when it is
rendered (the MkDocs hook calls it on every page), so sources may keep wrapping freely.

Only white space that contains a newline and sits between two Chinese characters (ideographs
or full-width punctuation) is removed, with any tags in between kept: ``显存\\n不足`` and
``<a>显存</a>\\n不足`` join, ``显存\\nCUDA`` keeps its space. Code (``<pre>``, ``<code>``),
scripts, styles and comments are left as they are.
"""

from __future__ import annotations

import re

#: Ideographs, full-width forms and CJK punctuation (。、，：；！？（）《》「」…).
CJK = (
    "\u2e80-\u2fff"  # radicals
    "\u3000-\u303f"  # CJK symbols and punctuation
    "\u3040-\u30ff"  # kana
    "\u3400-\u4dbf"  # extension A
    "\u4e00-\u9fff"  # unified ideographs
    "\uf900-\ufaff"  # compatibility ideographs
    "\uff00-\uffef"  # full-width forms
)
#: Quotation marks and ellipsis as Chinese text uses them (also English, so they join only
#: next to a character of `CJK`).
_SHARED = "\u2018\u2019\u201c\u201d\u2026\u2014"

_PROTECTED = re.compile(r"<(pre|code|script|style|textarea)\b.*?</\1\s*>|<!--.*?-->", re.S | re.I)
_BREAK = re.compile(
    rf"(?<=[{CJK}{_SHARED}])"  # a Chinese character before,
    r"((?:[ \t]*<[^<>]*>)*[ \t]*\n\s*(?:<[^<>]*>\s*)*)"  # tags and white space with a newline,
    rf"(?=[{CJK}{_SHARED}])"  # a Chinese character after
)
_CJK_CHAR = re.compile(f"[{CJK}]")
_TAGS = re.compile(r"<[^<>]*>")


def _join(match: re.Match[str]) -> str:
    text = match.string
    before, after = text[match.start() - 1], text[match.end()]
    if not (_CJK_CHAR.match(before) or _CJK_CHAR.match(after)):
        return match.group(0)  # two English quotation marks: leave the space
    return "".join(_TAGS.findall(match.group(1)))


def join_lines(html: str) -> str:
    """``html`` without line breaks between two Chinese characters outside code."""
    out = []
    pos = 0
    for protected in _PROTECTED.finditer(html):
        out.append(_BREAK.sub(_join, html[pos : protected.start()]))
        out.append(protected.group(0))
        pos = protected.end()
    out.append(_BREAK.sub(_join, html[pos:]))
    return "".join(out)
