"""Chinese style rules that a glossary cannot express, checked on every Chinese text.

``倍`` (docs/contributing.zh.md): Chinese editorial norms read "提升 2 倍" and "快 2 倍" as
"increased *by* 2 times", three times the old value (《语文信箱：表示数字减少不宜用“倍”》,
人民日报海外版 2017-05-08: “增加了×倍” and “增加到×倍” differ), and refuse 倍 for a decrease
("减少 4 倍", "小了八倍"). A multiple is written so that it has one reading: "提高到 N 倍",
"是原来的 N 倍", "加速比 N"; a decrease as a fraction or a percentage: "降为原来的 1/N".
`bei_problems` finds both forms: an increase verb right before "N 倍", and a decrease verb before
"N 倍" in the same clause.

Calques: phrases that read as translated English ("真正要紧的是 GPU" for "it matters on a GPU").

Code is skipped, and a wrapped line is read as the page renders it (提升\\n2 倍 is one phrase).
A phrase quoted verbatim from a Chinese source may keep its wording: the text's ``allow`` lists
it (`generator.records.fields.Text`), and it must stand inside quotation marks (“…”, 「…」).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from generator.records.cjk import joins
from generator.records.fields import Text

#: A number as the tips write one: 2, 1.5, 1.27–1.70, 十, 好几, 成千上万, or a symbol (N, V).
_NUM = (
    r"(?:[0-9]+(?:\.[0-9]+)?(?:\s*[–~—-]\s*[0-9]+(?:\.[0-9]+)?)?"
    r"|[一二两三四五六七八九十百千万几数好成上]+"
    r"|(?<![A-Za-z])[A-Za-z](?![A-Za-z]))"
)
#: What may stand between the verb and the number: 了, 上, 约, 近, 超过...
_BETWEEN = r"(?:了|上|出)?\s*(?:约|近|大约|将近|超过|最多|足足|达)?\s*"
#: The multiple itself: "2 倍", "十多倍", not 倍数, 倍率 or 倍速.
_TIMES = rf"{_NUM}\s*多?倍(?![数率速])"
#: An increase verb right before the multiple: "提升 2 倍", "快 1.5 倍", "大了 V 倍".
_INCREASE = re.compile(
    r"(?:提升|提高|增加|增长|增大|扩大|加快|加速|提速|(?<!最)快|(?<![放最])大(?!约)"
    rf"|(?<![最不差至])多|(?<!最)高){_BETWEEN}{_TIMES}"
)
#: A decrease: a verb of two characters before the multiple in the same clause ("从 148.8 秒降到
#: 6.3 秒（23.6 倍）"), or one of one character right before it ("小了八倍", "少 N 倍").
_DECREASE = re.compile(
    r"(?:减少|降低|缩短|缩小|下降|减小|降到|降至|降为|减到|减为)"
    rf"[^，。；：！？,;:\n倍]{{0,16}}?{_TIMES}"
    r"|(?:(?<![至最不多])少|(?<![最大])小|(?<!最)低|(?<!最)短|慢|(?<![升下])降|(?<![增加])减)"
    rf"{_BETWEEN}{_TIMES}"
)
#: Phrases that read as a calque of English, and what to write instead.
CALQUES = {
    "真正要紧的是": "a calque of “it matters on …”: say where and why it matters "
    "(“但只有在 GPU 上才真正关键”, “在 GPU 上收益最大”)",
}

#: Fenced code and inline code, as `generator.records.glossary` skips them.
_CODE = re.compile(r"```.*?```|`(?:[^`\n]|\n(?![ \t]*\n))*`", re.S)
_WRAP = re.compile(r"(?<=(.))[ \t]*\n[ \t]*(?=(.))")
_QUOTED = re.compile(r"“[^“”]*”|「[^「」]*」")


@dataclass(frozen=True)
class StyleProblem:
    """One phrase that breaks a rule: the phrase, its line within the text (0-based), why."""

    phrase: str
    line: int
    reason: str


def _readable(text: str) -> tuple[str, list[int]]:
    """``text`` with code blanked and wrapped lines joined as the page renders them, and for
    each of its characters the position it had in ``text``."""
    blank = _CODE.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    out: list[str] = []
    where: list[int] = []
    pos = 0
    for wrap in _WRAP.finditer(blank):
        out.append(blank[pos : wrap.start()])
        where.extend(range(pos, wrap.start()))
        if not joins(wrap.group(1), wrap.group(2)):
            out.append(" ")
            where.append(wrap.start())
        pos = wrap.end()
    out.append(blank[pos:])
    where.extend(range(pos, len(blank)))
    return "".join(out), where


def _allowed(text: str, allow: Iterable[str]) -> list[tuple[int, int]]:
    """The spans of ``text`` that an ``allow`` phrase covers."""
    return [(m.start(), m.end()) for phrase in allow for m in re.finditer(re.escape(phrase), text)]


def style_problems(text: str, allow: Iterable[str] = ()) -> list[StyleProblem]:
    """Each phrase of a Chinese ``text`` that breaks a style rule (倍, calques), outside code
    and outside the phrases of ``allow``."""
    readable, where = _readable(text)
    spans = _allowed(readable, allow)
    found: list[StyleProblem] = []

    def add(start: int, end: int, reason: str) -> None:
        if any(s <= start and end <= e for s, e in spans):
            return
        phrase = " ".join(readable[start:end].split())
        found.append(StyleProblem(phrase, text.count("\n", 0, where[start]), reason))

    for m in _INCREASE.finditer(readable):
        add(
            m.start(),
            m.end(),
            f"{m.group(0).strip()!r}: a multiple right after an increase verb reads as N+1 times in "
            "edited Chinese (增加了 N 倍 is not 增加到 N 倍); "
            "write “提高到 N 倍”, “是原来的 N 倍” or “加速比 N” (docs/contributing.zh.md)",
        )
    for m in _DECREASE.finditer(readable):
        add(
            m.start(),
            m.end(),
            f"{' '.join(m.group(0).split())!r}: 倍 cannot express a decrease; write a fraction "
            "or a percentage, such as “耗时降为原来的 1/N” (docs/contributing.zh.md)",
        )
    for phrase, why in CALQUES.items():
        for m in re.finditer(re.escape(phrase), readable):
            add(m.start(), m.end(), f"{phrase!r}: {why} (docs/contributing.zh.md)")
    return sorted(found, key=lambda p: p.line)


def allow_problems(text: str, allow: Iterable[str]) -> list[str]:
    """Why each phrase of ``allow`` is no escape for ``text``: it must occur in the text, inside
    quotation marks (a source quoted verbatim), and break a rule there."""
    readable, _ = _readable(text)
    quoted = [m.group(0) for m in _QUOTED.finditer(readable)]
    out = []
    for phrase in allow:
        if phrase not in readable:
            out.append(f"allow: {phrase!r} is not in the Chinese text")
        elif not any(phrase in q for q in quoted):
            out.append(
                f"allow: {phrase!r} must be quoted (“…”): only a source's own words may keep "
                "a form the style rules refuse"
            )
        elif not style_problems(phrase):
            out.append(f"allow: {phrase!r} breaks no style rule: remove it")
    return out


def text_problems(text: Text) -> list[tuple[int, str]]:
    """(line within the Chinese text, reason) for each phrase of a bilingual ``text`` that breaks
    a style rule, and for each phrase of its ``allow`` that is no escape."""
    out = [(0, reason) for reason in allow_problems(text.zh, text.allow)]
    return out + [(p.line, p.reason) for p in style_problems(text.zh, text.allow)]
