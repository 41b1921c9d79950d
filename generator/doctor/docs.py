"""The doctor's page: its markers, expanded from the committed measurements.

``<!-- doctor-example -->`` becomes the text report of a real run of
``benchmarks/doctor/example_train.py`` in the page's language
(``benchmarks/results/doctor-example-cpu.json``, written by ``benchmarks/doctor_example.py``);
``<!-- doctor-overhead -->`` the overhead benchmark's figures
(``benchmarks/results/doctor-overhead-cpu.json``, by ``benchmarks/doctor_overhead.py``).
Standard library and the labels only: the site build runs it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from generator import paths
from generator.doctor.report import to_text
from generator.errors import UserError

EXAMPLE = "<!-- doctor-example -->"
OVERHEAD = "<!-- doctor-overhead -->"


def _results(name: str) -> dict[str, Any]:
    path: Path = paths.ROOT / "benchmarks" / "results" / name
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise UserError(f"{path}: cannot read the doctor's results: {err}") from None
    if not isinstance(data, dict):
        raise UserError(f"{path}: expected a JSON object")
    return data


def example(lang: str, labels: dict[str, str]) -> str:
    """The example run's command and its text report, as Markdown."""
    data = _results("doctor-example-cpu.json")
    report = data["reports"][lang]
    text = to_text(report, labels).rstrip("\n")
    machine = labels["doctor_example_machine"].format(
        cpu=data["cpu"], torch=data["torch"], date=data["date"], command=data["command"]
    )
    return f"``` bash\n{data['run']}\n```\n\n``` text\n{text}\n```\n\n{machine}"


def overhead(labels: dict[str, str]) -> str:
    """The overhead benchmark's figures, as one Markdown paragraph."""
    data = _results("doctor-overhead-cpu.json")
    return labels["doctor_overhead_measured"].format(
        steps=data["steps"],
        plain=f"{data['plain_s']:.2f}",
        doctor=f"{data['doctor_s']:.2f}",
        ratio=f"{data['ratio']:.2f}",
        target=f"{data['target_ratio']:g}",
        cpu=data["cpu"],
        torch=data["torch"],
        date=data["date"],
        command=data["command"],
    )


def expand(markdown: str, lang: str, labels: dict[str, str]) -> str:
    """``markdown`` with the doctor's markers expanded."""
    if EXAMPLE in markdown:
        markdown = markdown.replace(EXAMPLE, example(lang, labels))
    if OVERHEAD in markdown:
        markdown = markdown.replace(OVERHEAD, overhead(labels))
    return markdown
