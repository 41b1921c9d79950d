"""One public address: $PYTORCH_TIPS_SITE_URL is mkdocs.yml's site_url and the base of the
lint's tip and rule links; unset, links are relative to the site and SARIF has no helpUri (SARIF
2.1.0 wants an absolute URI there), never a local server's address."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from generator import paths
from generator.cli import main
from generator.lint import report
from generator.lint.engine import LintResult
from generator.lint.rules import RULES

SITE = "https://tips.example.org/pytorch"
REPO = "https://git.example.org/pytorch-tips"


def _mkdocs_config() -> dict:
    from mkdocs.utils import yaml_load  # MkDocs' own loader: !ENV as a build reads it

    with open(paths.ROOT / "mkdocs.yml", encoding="utf-8") as f:
        return yaml_load(f)


def test_mkdocs_reads_both_addresses_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(paths.SITE_URL_VARIABLE, raising=False)
    monkeypatch.delenv(paths.REPO_URL_VARIABLE, raising=False)
    unset = _mkdocs_config()
    assert unset["site_url"] is None and unset["repo_url"] is None
    monkeypatch.setenv(paths.SITE_URL_VARIABLE, SITE)
    monkeypatch.setenv(paths.REPO_URL_VARIABLE, REPO)
    config = _mkdocs_config()
    assert (config["site_url"], config["repo_url"]) == (SITE, REPO)


def test_without_an_address_links_are_relative_and_sarif_has_no_help_uri(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(paths.SITE_URL_VARIABLE, raising=False)
    assert paths.site_url() == ""
    assert report.tip_url("gradient-accumulation") == "tips/gradient-accumulation/"
    log = json.loads(report.sarif(LintResult()))
    driver = log["runs"][0]["tool"]["driver"]
    assert "informationUri" not in driver
    for rule, descriptor in zip(RULES, driver["rules"], strict=True):
        assert "helpUri" not in descriptor
        assert f"pytorch-tips show {rule.tip}" in descriptor["help"]["text"]
    assert "127.0.0.1" not in json.dumps(log) and "localhost" not in json.dumps(log)


def test_with_an_address_links_are_absolute(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(paths.SITE_URL_VARIABLE, SITE)  # no trailing slash: one is added
    assert report.tip_url("gradient-accumulation") == f"{SITE}/tips/gradient-accumulation/"
    driver = json.loads(report.sarif(LintResult()))["runs"][0]["tool"]["driver"]
    assert driver["informationUri"] == f"{SITE}/lint/"
    for rule, descriptor in zip(RULES, driver["rules"], strict=True):
        url, page = f"{SITE}/tips/{rule.tip}/", f"{SITE}/lint/rules/{rule.code}/"
        assert (
            descriptor["helpUri"] == page  # the rule's page, which links its tip
            and f"[{rule.tip}]({url})" in descriptor["help"]["markdown"]
        )


@pytest.mark.parametrize("value", ["tips.example.org", "file:///srv/site", "https://"])
def test_a_bad_address_is_one_line_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    value: str,
) -> None:
    (tmp_path / "train.py").write_text("import torch\n", encoding="utf-8")
    monkeypatch.setenv(paths.SITE_URL_VARIABLE, value)
    assert main(["lint", str(tmp_path / "train.py"), "--format", "sarif"]) == 2
    out, err = capsys.readouterr()
    (line,) = err.splitlines()
    assert line.startswith(f"error: {paths.SITE_URL_VARIABLE}=") and "absolute" in line, line
    assert out == ""
