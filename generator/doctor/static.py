"""The lint's findings on the same script, listed apart in the report as ``static``.

The one place the doctor calls the lint (`static_findings`), through its API (`lint.api.run`).
A static finding on a line and tip that a measured finding already names is left out: the
measured one says the same with evidence.
"""

from __future__ import annotations

from pathlib import Path

from generator.doctor.model import Finding


def lint_script(path: Path, lang: str) -> list[Finding]:
    """Run the lint's default rules on ``path`` (its ``pyproject.toml`` settings apply)."""
    from generator.lint import api

    result = api.run(path, lang=lang).result
    return [
        Finding(
            kind="lint",
            tip=f.tip,
            severity=f.severity,
            title=f.rule,
            evidence=f.message,
            path=f.path,
            line=f.line,
            static=True,
            rule=f.rule,
        )
        for f in sorted(result.findings)
    ]


def static_findings(path: Path, lang: str, measured: list[Finding]) -> list[Finding]:
    """The lint's findings on ``path`` that no measured finding already covers."""
    covered = {(f.tip, f.line) for f in measured if f.line is not None}
    return [f for f in lint_script(path, lang) if (f.tip, f.line) not in covered]
