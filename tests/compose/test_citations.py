"""A record names the template block that cites its tip (``compose_block``): a part cites
exactly the tips naming it, a feature's main block the others; ``validate`` refuses a block
the templates do not have, or one of another feature, in one line with its position."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.cli import main
from generator.compose.tips import Citations, read_tips_by_feature, template_blocks
from generator.records.taxonomy import COMPOSE_FEATURES
from tests.helpers import example_record, write_record


def test_a_part_cites_the_tips_naming_it_and_the_main_block_the_others() -> None:
    cites = {"f": ["a", "b", "c"], "f.x": ["b"], "g": ["d"]}
    both = Citations(cites, {"f", "f.x", "g"})
    assert (both.ids("f"), both.ids("f.x"), both.ids("f.y"), both.ids("g")) == (
        ["a", "c"],
        ["b"],
        [],  # a part no record names cites nothing
        ["d"],
    )
    assert Citations(cites, {"f"}).ids("f") == ["a", "b", "c"]  # no part here: all in main


def test_the_templates_blocks_are_of_known_features() -> None:
    blocks = template_blocks()
    assert {"always", "always.load", "ddp.rank-zero", "gpt.sdpa"} <= blocks
    assert {b.split(".")[0] for b in blocks} <= set(COMPOSE_FEATURES), blocks


def test_the_records_name_blocks_the_templates_have(tmp_path: Path) -> None:
    """The fast reader of the records keeps a block under its feature and on its own."""
    cites = read_tips_by_feature()
    parts = {key for key in cites if "." in key}
    assert parts and parts <= template_blocks()
    assert all(set(cites[p]) <= set(cites[p.split(".")[0]]) for p in parts)
    data = example_record() | {"compose": "always", "compose_block": "ddp.sampler"}
    write_record(tmp_path, "odd-block.yaml", data)  # not a part of its feature: main block
    assert read_tips_by_feature(tmp_path) == {"always": ["odd-block"]}


def test_the_fast_reader_agrees_with_the_validated_records(tips: list, tmp_path: Path) -> None:
    """The composer reads ``compose`` by a pattern where the value is plain: the same
    citations as the validated records, and a quoted or commented value still read (YAML)."""
    from generator.compose.tips import tips_by_feature

    assert read_tips_by_feature() == tips_by_feature(tips)
    for n, line in enumerate(('compose: "ddp"', "compose: 'ddp'  # quoted", "compose: ddp # c")):
        path = tmp_path / f"quoted-{n}.yaml"
        write_record(tmp_path, path.name, example_record())
        path.write_text(path.read_text(encoding="utf-8") + line + "\n", encoding="utf-8")
    assert read_tips_by_feature(tmp_path) == {"ddp": ["quoted-0", "quoted-1", "quoted-2"]}


@pytest.mark.parametrize(
    ("compose", "block", "reason"),
    [
        (
            "always",
            "always.lod",
            "compose_block: no template block 'always.lod' (generator/templates/compose); "
            "did you mean 'always.load'?",
        ),
        (
            "always",
            "ddp.sampler",
            "compose_block: 'ddp.sampler' is a block of the feature 'ddp', not of the tip's "
            "compose 'always'",
        ),
        (None, "always.load", "compose_block: 'always.load' is a block of the feature 'always'"),
        ("always", "always", "compose_block: 'always' is not a part of a feature's block"),
    ],
    ids=["unknown", "other-feature", "no-compose", "main-block"],
)
def test_validate_refuses_a_block_in_one_line(
    compose: str | None,
    block: str,
    reason: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    data = example_record()
    data.pop("compose", None)
    if compose:
        data["compose"] = compose
    data["compose_block"] = block
    path = write_record(tmp_path, "zero-grad-set-to-none.yaml", data)
    line = path.read_text(encoding="utf-8").splitlines().index(f"compose_block: {block}") + 1
    assert main(["validate", str(path)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith(f"{path}:{line}: {reason}"), err
    assert len(err) == 2  # the problem and the summary
