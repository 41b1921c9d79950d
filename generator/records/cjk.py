"""Chinese line breaks: join lines that break where Chinese text has no space.

Writers wrap long Chinese lines in Markdown and YAML like English ones. In HTML a newline is
white space, and browsers render it as a space, which Chinese text must not have
("适得其反， 并附带", "保持 float32。 autocast", "10% （实测"). `join_lines` removes such newlines
from a page's HTML when it is rendered (the MkDocs hook calls it on every page), so sources may
keep wrapping freely.

White space that contains a newline is removed, with any tags in between kept (and the spaces
between two of them that hold no newline), where
- either side is full-width punctuation (。，、：；！？（）《》「」…), whatever the other side is:
  ``保持 float32。\nautocast``, ``10%\n（实测`` and ``。\n<code>x</code>`` join; or
- both sides are Chinese characters (ideographs, or a quotation mark next to one):
  ``显存\n不足`` and ``<a>显存</a>\n不足`` join.
A break between Chinese and Latin (``显存\nCUDA``) or between two Latin words keeps its space.
Code (``<pre>``, ``<code>``), scripts, styles and comments are left as they are; the side of a
break that is code counts as Latin.
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
#: Full-width punctuation (、。〈〉《》「」『』【】〔〕 and the full-width forms ，：；！？（）％ …):
#: a line break next to one never renders as a space.
PUNCT = (
    "\u3001-\u3003"  # 、。〃
    "\u3008-\u3011"  # 〈〉《》「」『』【】
    "\u3014-\u301f"  # 〔〕〖〗〘〙〚〛〜〝〞〟
    "\uff01-\uff0f"  # ！＂＃＄％＆＇（）＊＋，－．／
    "\uff1a-\uff20"  # ：；＜＝＞？＠
    "\uff3b-\uff40"  # ［＼］＾＿｀
    "\uff5b-\uff65"  # ｛｜｝～ and the half-width CJK punctuation
)
#: Quotation marks and ellipsis as Chinese text uses them (also English, so they join only
#: next to a character of `CJK`).
_SHARED = "\u2018\u2019\u201c\u201d\u2026\u2014"

_PROTECTED = re.compile(r"<(pre|code|script|style|textarea)\b.*?</\1\s*>|<!--.*?-->", re.S | re.I)
#: Stands for a protected part while the breaks around it are joined (NUL never occurs in HTML).
_HOLE = "\x00"
_BREAK = re.compile(
    r"(?<=\S)"  # something before,
    r"((?:[ \t]*<[^<>]*>)*[ \t]*\n\s*(?:<[^<>]*>\s*)*)"  # tags and white space with a newline,
    r"(?=\S)"  # something after
)
_PUNCT_CHAR = re.compile(f"[{PUNCT}]")
_CJK_CHAR = re.compile(f"[{CJK}]")
_CHINESE = re.compile(f"[{CJK}{_SHARED}]")
_TAGS = re.compile(r"<[^<>]*>")


def joins(before: str, after: str) -> bool:
    """Whether a line break between the characters ``before`` and ``after`` is no space."""
    if _PUNCT_CHAR.match(before) or _PUNCT_CHAR.match(after):
        return True
    both_chinese = bool(_CHINESE.match(before) and _CHINESE.match(after))
    return both_chinese and bool(_CJK_CHAR.match(before) or _CJK_CHAR.match(after))


def _join(match: re.Match[str]) -> str:
    text = match.string
    if not joins(text[match.start() - 1], text[match.end()]):
        return match.group(0)
    # The tags stay, and so does a space that holds no newline: it is the writer's (an icon
    # before a card's title: <span>…</span> <strong>).
    parts = _TAGS.split(match.group(1))
    tags = _TAGS.findall(match.group(1))
    out = [parts[0] if "\n" not in parts[0] else ""]
    for tag, space in zip(tags, parts[1:], strict=True):
        out += [tag, space if "\n" not in space else ""]
    return "".join(out)


def join_lines(html: str) -> str:
    """``html`` without the line breaks that Chinese text renders without a space, outside code."""
    if _HOLE in html:
        raise ValueError("join_lines: the HTML contains a NUL character")
    protected = [m.group(0) for m in _PROTECTED.finditer(html)]
    joined = _BREAK.sub(_join, _PROTECTED.sub(_HOLE, html)).split(_HOLE)
    out = [joined[0]]
    for code, rest in zip(protected, joined[1:], strict=True):
        out += [code, rest]
    return "".join(out)
