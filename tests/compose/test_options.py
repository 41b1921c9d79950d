"""The composer's options are defined once (`OPTIONS`, `CONFLICTS`): ComposeOptions, the flags,
the checks, the composer page's tables and the browser's JSON all derive from them."""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys

import pytest

from generator import paths
from generator.compose.docs import FLAGS_PLACEHOLDER, flags_table
from generator.compose.flags import add_arguments, parse_flags
from generator.compose.options import (
    BY_NAME,
    MODELS,
    OPTIONS,
    ComposeError,
    ComposeOptions,
    ContradictoryOptions,
    model_conflicts,
    options_schema,
    validate,
)
from generator.compose.script import expand_placeholders, read_tips_by_feature
from generator.records.glossary import find_variants
from generator.records.taxonomy import COMPOSE_FEATURES


def test_compose_options_has_a_field_per_option_and_the_defaults():
    from dataclasses import fields

    assert [f.name for f in fields(ComposeOptions)] == [o.name for o in OPTIONS]
    plain = ComposeOptions()
    assert all(getattr(plain, o.name) == o.default for o in OPTIONS)
    assert plain.features() == ["always"] and plain.flags() == []


def test_the_parser_has_a_flag_per_option():
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    flags = {s for a in parser._actions for s in a.option_strings}
    assert {o.flag for o in OPTIONS} <= flags
    assert flags - {o.flag for o in OPTIONS} == {"-h", "--help", "-o", "--output", "--force"}


def test_every_feature_is_applied_by_an_option():
    """The tips' vocabulary (COMPOSE_FEATURES) and the options' features are the same set."""
    applied = {f.name for o in OPTIONS for f in o.features}
    assert applied == set(COMPOSE_FEATURES) - {"always"}
    for option in OPTIONS:  # conditions name options, and values they can take
        for feature in option.features:
            for name, value in feature.when.items():
                target = BY_NAME[name]
                assert isinstance(value, bool) or value in target.choices, (option, name)


def test_options_schema_is_json_and_says_everything():
    schema = json.loads(json.dumps(options_schema()))
    assert schema["models"] == list(MODELS) and schema["default_model"] == "convnet"
    by_flag = {o["flag"]: o for o in schema["options"]}
    assert list(by_flag) == [o.flag for o in OPTIONS]
    for option in OPTIONS:
        entry = by_flag[option.flag]
        assert entry["name"] == option.name and entry["kind"] == option.kind
        assert entry["default"] == option.default and entry["models"] == list(option.models)
        assert entry["help"]["en"] and entry["help"]["zh"]
        assert entry["usage"] == option.usage()
    assert by_flag["--accum"]["minimum"] == 1 and by_flag["--ema"]["exclusive_maximum"] == 1
    assert by_flag["--activation-checkpointing"]["const"] == "full"
    assert {
        "name": "selective-checkpointing",
        "when": {"activation_checkpointing": "selective"},
    } in (by_flag["--activation-checkpointing"]["features"])
    messages = [c["message"] for c in schema["conflicts"]]
    assert "--channels-last applies to --model convnet only" in messages
    assert "--fsdp applies to --model gpt only" in messages


def _satisfying(when: dict) -> dict:
    """Option values that make the condition ``when`` hold (with what the others need:
    --amp for --amp-dtype on the conv net, --model gpt for the GPT's options)."""
    values = {}
    for name, wanted in when.items():
        option = BY_NAME[name]
        if wanted is False:
            values[name] = option.default
        elif wanted is True:
            on = {"flag": True, "int": 3, "float": 0.5}.get(option.kind)
            values[name] = on if on is not None else option.const or option.choices[-1]
        else:
            values[name] = wanted
    if values.get("amp_dtype") and "amp" not in when and values.get("model") != "gpt":
        values["amp"] = True
    if "model" not in when and any(BY_NAME[n].models == ("gpt",) for n in values):
        values["model"] = "gpt"
    return values


def _holds(when: dict, values: dict) -> bool:
    """A condition, read the way the schema says: true is on (not the default), false
    is off, anything else a value to equal."""
    for name, wanted in when.items():
        value = values.get(name, BY_NAME[name].default)
        if isinstance(wanted, bool):
            if (value != BY_NAME[name].default) != wanted:
                return False
        elif value != wanted:
            return False
    return True


@pytest.mark.parametrize(
    "conflict",
    options_schema()["conflicts"],
    ids=lambda c: c["message"].split(":")[0][:60],
)
def test_every_conflict_is_refused(conflict):
    """Each conflict of the schema, read as the browser reads it, is refused by `validate`
    with its own message (no earlier conflict holds for the values that make it hold)."""
    values = _satisfying(conflict["when"])
    with pytest.raises(ContradictoryOptions) as refused:
        validate(ComposeOptions(**values))
    first = next(c for c in options_schema()["conflicts"] if _holds(c["when"], values))
    assert first == conflict and str(refused.value) == conflict["message"]


def _every_error() -> list[ComposeError]:
    """One error of each message the composer writes: every conflict (model conflicts
    included), each number option out of range, a value outside its choices, flags that do
    not parse."""
    out: list[ComposeError] = []
    for conflict in options_schema()["conflicts"]:
        with pytest.raises(ContradictoryOptions) as refused:
            validate(ComposeOptions(**_satisfying(conflict["when"])))
        out.append(refused.value)
    for option in OPTIONS:
        wrong = next((v for v in (-1, 0, 1.5, 10**9) if option.range_error(v)), None)
        if wrong is not None:
            with pytest.raises(ContradictoryOptions) as refused:
                validate(ComposeOptions(**{option.name: wrong}))
            out.append(refused.value)
    choice = next(o for o in OPTIONS if o.kind == "choice" and o.name != "model")
    with pytest.raises(ContradictoryOptions) as refused:
        validate(ComposeOptions(**{choice.name: "no-such-value"}))
    out.append(refused.value)
    with pytest.raises(ComposeError) as refused:
        parse_flags(["--no-such-flag"])
    out.append(refused.value)
    return out


def test_every_message_has_its_chinese_naming_the_same_flags():
    """The Chinese composer page shows each message in Chinese (`ComposeError.in_lang`),
    and marks the flags it names: the same as the English names, which the command prints."""
    errors = _every_error()
    assert len(errors) >= len(options_schema()["conflicts"]) + 4
    flag = re.compile(r"--[a-z][a-z0-9-]*")
    for err in errors:
        en, zh = str(err), err.in_lang("zh")
        assert err.in_lang("en") == en and zh != en, en
        assert re.search(r"[\u4e00-\u9fff]", zh), zh
        assert sorted(flag.findall(zh)) == sorted(flag.findall(en)), (en, zh)
        assert not re.search(r"[\u4e00-\u9fff][,:;!?]", zh), f"half-width punctuation: {zh}"


def test_model_conflicts_follow_the_models_field():
    for option in OPTIONS:
        for model in MODELS:
            refused = any(c.when == {"model": model, option.name: True} for c in model_conflicts())
            assert refused == (model not in option.models), (option.name, model)


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_flag_tables_are_generated_from_the_options(model, lang):
    table = flags_table(model, lang)
    rows = table.splitlines()[2:]
    expected = [o for o in OPTIONS if model in o.models]
    assert len(rows) == len(expected)
    for row, option in zip(rows, expected, strict=True):
        assert row.startswith(f"| `{option.usage()}` | ")
    assert "\\|" not in table  # a pipe in a code span would show as a literal \|
    if lang == "zh":
        assert find_variants(table) == []  # the glossary's terms


@pytest.mark.parametrize("page", ["composer.md", "composer.zh.md"])
def test_composer_page_has_the_gpt_section(page):
    """Commands for one GPU, one node, several nodes and SLURM; the generated flag table;
    the full script in a collapsed block; the benchmark's line."""
    text = (paths.DOCS / page).read_text(encoding="utf-8")
    gpt = text[text.index("## GPT { #gpt }") :]
    for command in (
        "python -m generator compose --model gpt",
        "torchrun --standalone --nproc_per_node=8 train.py",
        "torchrun --nnodes=2",
        "#SBATCH --signal=TERM@120",
        "srun torchrun",
        "--export-weights",
        'python benchmarks/compose_gpt.py --device cuda --flags "--compile --fused-optimizer"',
    ):
        assert command in gpt, command
    lang = " zh" if page.endswith(".zh.md") else ""
    assert [m["model"] for m in FLAGS_PLACEHOLDER.finditer(text)] == ["convnet", "gpt"]
    assert f"<!-- compose-gpt-results: cpu{lang} -->" in gpt
    expanded = expand_placeholders(gpt, read_tips_by_feature())
    assert "<!--" not in expanded and "| `--fsdp` |" in expanded
    collapsed = expanded[expanded.index("??? example") :]
    script = collapsed.split("\n", 2)[2]  # the block is indented under the admonition
    assert script.startswith("    ``` python\n") and "Train a GPT" in script.split("\n")[1]
    assert all(not line or line.startswith("    ") for line in script.splitlines())


def test_composer_imports_only_what_pyodide_has():
    """Composing (options, flags, templates, the tips' features) needs the standard library,
    Jinja2 and PyYAML only: the browser composer runs it in Pyodide, without pydantic."""
    code = (
        "import sys\n"
        "from generator.compose.flags import parse_flags\n"
        "from generator.compose.options import options_schema\n"
        "from generator.compose.script import compose, read_tips_by_feature\n"
        "options_schema()\n"
        "for flags in (['--model', 'gpt', '--fsdp', '--ema', '0.9'], ['--amp', '--ddp']):\n"
        "    compose(parse_flags(flags), read_tips_by_feature())\n"
        "top = {m.split('.')[0] for m in sys.modules}\n"
        "print(sorted(top & {'torch', 'numpy', 'pydantic', 'pydantic_core', 'mkdocs'}))\n"
        "print(sorted(m for m in top if m in {'jinja2', 'yaml'}))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    heavy, light = proc.stdout.splitlines()
    assert heavy == "[]" and light == "['jinja2', 'yaml']"
