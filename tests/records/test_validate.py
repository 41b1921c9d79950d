"""The validator: every bad input gives `file:line: field.path: reason`, exit 1, no traceback."""

from __future__ import annotations

import contextlib
import io
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from generator.cli import main
from generator.records.load import validate
from tests.helpers import example_record, run_cli, write_record

PROBLEM_LINE = re.compile(r"^(?P<file>[^:]+):(?P<line>\d+): (?P<field>[^:]+): (?P<reason>.+)$")


def _problems(stderr: str) -> list[re.Match[str]]:
    lines = [ln for ln in stderr.splitlines() if ln and not ln.endswith("in the tip records")]
    matches = [PROBLEM_LINE.match(ln) for ln in lines]
    assert all(matches), f"not in file:line: field: reason form:\n{stderr}"
    return matches  # type: ignore[return-value]


def _validate_bad(path: Path, *, isolated: bool = False) -> list[re.Match[str]]:
    """``validate PATH`` (in this process, or ``isolated`` in a subprocess, for files that
    must not be able to harm the test run): exit 1, one problem line or more, no traceback."""
    if isolated:
        proc = run_cli("validate", str(path))
        code, stderr = proc.returncode, proc.stderr
    else:
        with contextlib.redirect_stderr(io.StringIO()) as err:
            code = main(["validate", str(path)])  # an exception would fail the test
        stderr = err.getvalue()
    assert code == 1, stderr
    assert "Traceback" not in stderr
    found = _problems(stderr)
    assert found, "a bad file must produce at least one problem line"
    assert all(m["file"].endswith(path.name) for m in found)
    return found


BAD_FILES: dict[str, tuple[bytes, int, str]] = {
    # name: (content, expected line, expected reason fragment)
    "malformed": (b"category: memory\ntitle: [unclosed\nsummary: x\n", 3, "invalid YAML"),
    "tab-indented": (b"title:\n\ten: Tabs\n", 2, "tabs are not allowed"),
    "non-utf8": (b"category: memory\ntitle: caf\xe9\n", 2, "not valid UTF-8"),
    "empty": (b"   \n\n", 1, "file is empty"),
    "list-top-level": (b"- category: memory\n- title: x\n", 1, "expected a mapping"),
    "duplicate-keys": (b"category: memory\ntags: [oom]\ncategory: models\n", 3, "duplicate key"),
}


@pytest.mark.parametrize("name", BAD_FILES)
def test_unreadable_files_fail_cleanly(tmp_path: Path, name: str) -> None:
    content, line, reason = BAD_FILES[name]
    path = tmp_path / f"{name}.yaml"
    path.write_bytes(content)
    (problem,) = _validate_bad(path)
    assert int(problem["line"]) == line
    assert reason in problem["reason"]


@pytest.mark.parametrize("name", ["tip.yml", "tip.txt", "tip.json"])
def test_a_file_that_is_not_yaml_is_rejected(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_text("category: memory\n", encoding="utf-8")
    (problem,) = _validate_bad(path)
    assert (problem["line"], problem["reason"]) == (
        "1",
        "not a .yaml file: records are tips/<id>.yaml",
    )


def test_a_misnamed_record_in_a_folder_is_not_silently_skipped(tmp_path: Path) -> None:
    write_record(tmp_path, "good-one.yaml", example_record())
    (tmp_path / "forgotten.yml").write_text("category: memory\n", encoding="utf-8")
    _, problems = validate([tmp_path])
    assert [p.file.endswith("forgotten.yml") for p in problems] == [True]


def test_a_list_where_a_mapping_belongs(tmp_path: Path) -> None:
    data = example_record()
    data["title"] = ["Zero gradients", "清零梯度"]
    path = write_record(tmp_path, "list-title.yaml", data)
    (problem,) = _validate_bad(path)
    assert problem["field"] == "title"
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[int(problem["line"]) - 1].startswith("title:")


def test_all_problems_are_reported_in_one_run(tmp_path: Path) -> None:
    data = example_record()
    data["category"] = "speed"  # not in the list
    data["tags"] = ["gradients", "not-a-tag"]
    data["summary"]["zh"] = "only English here"
    data["title"]["en"] = ""
    data["caveats"][1]["en"] = "   "
    data["colour"] = "blue"
    path = write_record(tmp_path, "many.yaml", data)
    found = {m["field"]: m["reason"] for m in _validate_bad(path)}
    assert set(found) == {
        "category",
        "tags[1]",
        "summary.zh",
        "title.en",
        "caveats[1].en",
        "colour",
    }
    assert "no Chinese characters" in found["summary.zh"]
    assert "must not be empty" in found["title.en"]
    assert "unknown key" in found["colour"]


def test_unknown_key_suggests_the_right_one(tmp_path: Path) -> None:
    data = example_record()
    data["caveat"] = data.pop("caveats")
    path = write_record(tmp_path, "typo.yaml", data)
    found = {m["field"]: m["reason"] for m in _validate_bad(path)}
    assert "did you mean 'caveats'?" in found["caveat"]


def test_syntax_error_in_code_points_at_the_file_line(tmp_path: Path) -> None:
    data = example_record()
    data["after"]["code"] = "import torch\n\nfor i in range(3)\n    pass\n"
    path = write_record(tmp_path, "bad-code.yaml", data)
    (problem,) = _validate_bad(path)
    text = path.read_text(encoding="utf-8").splitlines()
    assert problem["field"] == "after.code"
    assert text[int(problem["line"]) - 1].strip() == "for i in range(3)"


def test_id_must_match_file_name_and_related_must_exist(tmp_path: Path) -> None:
    data = example_record()
    data["id"] = "something-else"
    data["related"] = ["no-such-tip", "zero-grad-set-to-none"]
    path = write_record(tmp_path, "mismatch.yaml", data)
    found = {m["field"]: m["reason"] for m in _validate_bad(path)}
    assert "must equal the file name" in found["id"]
    assert found["related[0]"] == "no tip with id 'no-such-tip'"
    assert "related[1]" not in found
    data["id"], data["related"] = "mismatch", ["zero-grad-set-to-nne"]
    path = write_record(tmp_path, "mismatch.yaml", data)
    _, problems = validate([path])
    assert [p.reason for p in problems] == [
        "no tip with id 'zero-grad-set-to-nne'; did you mean 'zero-grad-set-to-none'?"
    ]


def test_a_tip_cannot_relate_to_itself(tmp_path: Path) -> None:
    data = example_record()
    data["id"] = "self-related"
    data["related"] = ["zero-grad-set-to-none", "self-related"]
    path = write_record(tmp_path, "self-related.yaml", data)
    _, problems = validate([path])
    assert [(p.field, p.reason) for p in problems] == [
        ("related[1]", "a tip cannot relate to itself")
    ]
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[problems[0].line - 1].strip() == "- self-related"


def test_a_file_name_that_is_no_id_is_refused(tmp_path: Path) -> None:
    path = write_record(tmp_path, "Zero_Grad.yaml", example_record())
    _, problems = validate([path])
    assert [(p.line, p.field, p.reason) for p in problems] == [
        (1, "(file)", "file name must be lowercase-hyphenated: <id>.yaml")
    ]


def test_duplicate_ids_across_folders(tmp_path: Path) -> None:
    for sub in ("a", "b"):
        (tmp_path / sub).mkdir()
        write_record(tmp_path / sub, "same-id.yaml", example_record())
    _, problems = validate([tmp_path])
    assert [(Path(p.file).parent.name, p.line, p.field, p.reason) for p in problems] == [
        ("b", 1, "id", f"duplicate id, also {tmp_path / 'a' / 'same-id.yaml'}")
    ]


def test_code_shape_rules(tmp_path: Path) -> None:
    data = example_record()
    del data["after"]
    path = write_record(tmp_path, "no-after.yaml", data)
    found = _validate_bad(path)
    assert any("`after` code, or `no_code`" in m["reason"] for m in found)


@pytest.mark.parametrize("how", ["no-checks", "launch-without-checks"])
def test_an_after_needs_checks_or_the_reason_it_has_none(tmp_path: Path, how: str) -> None:
    data = example_record()
    del data["after"]["checks"]
    if how == "launch-without-checks":  # a launch whose ranks assert nothing is no check
        data["after"]["launch"] = {"nproc": 2}
    path = write_record(tmp_path, "unchecked.yaml", data)
    tips, problems = validate([path])
    assert tips == []
    assert [(p.field, p.reason) for p in problems] == [
        ("(record)", "after needs `checks` (asserting the claim) or `no_checks` (why not)")
    ]
    data["after"]["no_checks"] = {"en": "Only a GPU shows it.", "zh": "只有 GPU 上才看得出。"}
    path = write_record(tmp_path, "unchecked.yaml", data)
    tips, problems = validate([path])
    assert problems == [] and [t.id for t in tips] == ["unchecked"]
    data["after"]["checks"] = "assert True\n"  # checks and a reason for none contradict
    path = write_record(tmp_path, "unchecked.yaml", data)
    assert "not both" in " ".join(p.reason for p in validate([path])[1])


def _edit(path: str, value: object) -> Callable[[dict], None]:
    """An edit of a record: set the field at the dotted ``path`` to ``value``."""

    def apply(data: dict) -> None:
        *parents, last = path.split(".")
        for key in parents:
            data = data[key]
        data[last] = value

    return apply


#: One record refused by each of the schema's own rules: (edit, field, reason).
SCHEMA_RULES = {
    "duplicate-device": (
        _edit("hardware.devices", ["cpu", "cpu"]),
        "hardware.devices",
        "has duplicate entries",
    ),
    "duplicate-tag": (_edit("tags", ["gradients", "gradients"]), "tags", "has duplicate entries"),
    "gpu-only-without-notes": (
        _edit("hardware", {"devices": ["cuda"], "helps_on": ["cuda"]}),
        "hardware",
        "notes are required when devices lacks cpu (they are the skip reason)",
    ),
    "probe-without-checks": (
        _edit(
            "after",
            {"code": "x = 1\n", "probe": "y = 2\n", "no_checks": {"en": "No.", "zh": "无。"}},
        ),
        "after",
        "a probe needs checks that read it",
    ),
    "no-code-and-after": (
        _edit("no_code", {"en": "Advice only.", "zh": "只是建议。"}),
        "(record)",
        "no_code excludes before and after",
    ),
}


@pytest.mark.parametrize("rule", SCHEMA_RULES)
def test_each_rule_of_the_schema_refuses_its_case(tmp_path: Path, rule: str) -> None:
    edit, field, reason = SCHEMA_RULES[rule]
    data = example_record()
    edit(data)
    _, problems = validate([write_record(tmp_path, "refused.yaml", data)])
    assert [(p.field, p.reason) for p in problems] == [(field, reason)]


def test_no_code_alone_and_launch_env_load_as_written(tmp_path: Path) -> None:
    data = example_record()
    data["no_code"] = {"en": "Advice only.", "zh": "只是建议。"}
    del data["before"], data["after"]
    data["impact"] = ["correctness"]  # a speed tip would need a bench
    del data["bench"]
    (tip,), problems = validate([write_record(tmp_path, "advice.yaml", data)])
    assert problems == [] and tip.variants() == {}
    data = example_record()
    data["after"]["launch"] = {"nproc": 2, "env": {"GLOO_SOCKET_IFNAME": "lo"}}
    (tip,), problems = validate([write_record(tmp_path, "with-env.yaml", data)])
    assert problems == [] and tip.after is not None and tip.after.launch is not None
    assert tip.after.launch.env == {"GLOO_SOCKET_IFNAME": "lo"}


def test_launch_fields_are_checked_at_their_line(tmp_path: Path) -> None:
    data = example_record()
    data["after"]["launch"] = {"nproc": 1, "env": {"bad-name": "1"}, "expect": "hang"}
    path = write_record(tmp_path, "bad-launch.yaml", data)
    found = _validate_bad(path)
    text = path.read_text(encoding="utf-8").splitlines()
    fields = {m["field"]: m for m in found}
    assert "greater than or equal to 2" in fields["after.launch.nproc"]["reason"]
    assert text[int(fields["after.launch.nproc"]["line"]) - 1].strip().startswith("nproc:")
    assert "not an environment variable name" in fields["after.launch.env"]["reason"]
    # expect: hang needs hang_s; reported once the field types are right
    data["after"]["launch"] = {"nproc": 2, "expect": "hang", "checks": "assert (\n"}
    path = write_record(tmp_path, "bad-launch.yaml", data)
    reasons = {m["field"]: m["reason"] for m in _validate_bad(path)}
    assert "hang_s" in reasons["after.launch"]


def test_launch_checks_syntax_points_at_the_file_line(tmp_path: Path) -> None:
    data = example_record()
    data["after"]["launch"] = {"nproc": 2, "checks": "x = 1\nassert (\n"}
    path = write_record(tmp_path, "bad-launch-checks.yaml", data)
    (problem,) = _validate_bad(path)
    assert problem["field"] == "after.launch.checks"
    assert "not valid Python" in problem["reason"]


def test_check_only_code_in_a_snippet_is_reported_at_its_line(tmp_path: Path) -> None:
    data = example_record()
    data["after"]["code"] = (
        "import torch\n\nx = torch.ones(2)\nsnapshot = x.clone()  # for the checks\n"
        'torch.save(x, f"expected-{1}.pt")\n'
    )
    path = write_record(tmp_path, "scaffolding.yaml", data)
    found = _validate_bad(path)
    text = path.read_text(encoding="utf-8").splitlines()
    assert [m["field"] for m in found] == ["after.code", "after.code"]
    assert "snapshot = x.clone()" in text[int(found[0]["line"]) - 1]
    assert "expected-" in text[int(found[1]["line"]) - 1]
    assert all("check-only code" in m["reason"] for m in found)


def test_the_real_records_are_valid() -> None:
    from generator.lint.tips import rule_code_problems

    tips, problems = validate(cross_checks=[rule_code_problems])
    assert problems == []
    assert len(tips) >= 10


def test_validate_succeeds_on_the_real_records_from_the_cli() -> None:
    proc = run_cli("validate")
    assert proc.returncode == 0, proc.stderr
    assert re.search(r"^\d+ record\(s\) valid\.$", proc.stdout.strip())


def _billion_laughs() -> bytes:
    rows = ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True):
        rows.append(f"{name}: &{name} [{', '.join([f'*{prev}'] * 9)}]")
    return ("\n".join(rows) + "\n").encode()


HOSTILE_FILES: dict[str, tuple[bytes, int, str]] = {
    # 9 levels of 9 aliases: 387 million strings once expanded.
    "billion-laughs": (_billion_laughs(), 1, "anchor &a is not allowed"),
    "alias-only-later": (b"category: memory\ntags: &t [oom]\nimpact: *t\n", 2, "anchor &t"),
    "deep-nesting": (b"x: " + b"[" * 5000 + b"]" * 5000 + b"\n", 1, "nesting deeper than"),
    "deep-block-nesting": (
        b"".join(b"  " * i + b"k:\n" for i in range(40)) + b"  " * 40 + b"v\n",
        25,
        "nesting deeper than",
    ),
    "python-tag": (
        b'category: memory\ntitle: !!python/object/apply:os.system ["touch {marker}"]\n',
        2,
        "tag tag:yaml.org,2002:python/object/apply:os.system is not allowed",
    ),
    "custom-tag": (b"category: !memory memory\n", 1, "tag !memory is not allowed"),
    "too-large": (  # the size is the file's, not how much of it was read
        b"x: " + b"a" * (600 * 1024) + b"\n",
        1,
        "file is 614404 bytes; a record may hold at most 524288",
    ),
}


@pytest.mark.timeout(30)  # the billion-laughs file hung validate for minutes before
@pytest.mark.parametrize("name", HOSTILE_FILES)
def test_hostile_records_are_refused_fast_without_running_anything(
    tmp_path: Path, name: str
) -> None:
    content, line, reason = HOSTILE_FILES[name]
    marker = tmp_path / "pwned"
    path = tmp_path / f"{name}.yaml"
    path.write_bytes(content.replace(b"{marker}", str(marker).encode()))
    (problem,) = _validate_bad(path, isolated=True)
    assert int(problem["line"]) == line, problem.group(0)
    assert reason in problem["reason"], problem.group(0)
    assert not marker.exists(), "a YAML tag ran code"


def test_the_record_limits_leave_room_for_real_records() -> None:
    from generator import paths
    from generator.records.yamlio import MAX_BYTES, read_document

    for path in sorted(paths.TIPS.glob("*.yaml")):
        assert path.stat().st_size < MAX_BYTES / 4, path
        read_document(path)  # no anchors, aliases, tags or deep nesting in any record


def test_lint_codes_must_name_a_rule_of_this_tip(tmp_path: Path) -> None:
    data = example_record()
    data["lint"] = ["PTT999", "PTT011"]  # no such rule; a rule of save-load-state-dict
    path = write_record(tmp_path, "lint-codes.yaml", data)
    found = {m["field"]: m["reason"] for m in _validate_bad(path)}
    assert "no lint rule has the code PTT999" in found["lint[0]"]
    assert "enforces the tip 'save-load-state-dict'" in found["lint[1]"]


def test_every_rule_is_listed_by_its_tip() -> None:
    from generator.lint import RULES, rules_by_tip
    from generator.records.load import load_tips

    tips = {t.id: t for t in load_tips()}
    assert len(RULES) >= 30
    for tip_id, codes in rules_by_tip().items():
        assert tip_id in tips, tip_id
        assert sorted(tips[tip_id].lint) == sorted(codes), tip_id


def test_deep_nesting_is_refused_in_our_words_whatever_the_parser_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PyYAML 6.0.4's libyaml refuses deep flow nesting itself, in its own words, before the
    event walk sees it; older parsers do not. Either way the message is ours: here a parser that
    gives up at once stands in for any such limit."""
    import yaml

    from generator.records import yamlio

    def refuse(*args: object, **kwargs: object) -> object:
        raise yaml.YAMLError("some parser limit")
        yield  # a generator, like yaml.parse

    monkeypatch.setattr(yamlio.yaml, "parse", refuse)
    path = tmp_path / "deep.yaml"
    path.write_text("title: ok\nx: " + "[" * 30 + "]" * 30 + "\n", encoding="utf-8")
    with pytest.raises(yamlio.YamlProblem) as err:
        yamlio.read_document(path)
    assert err.value.line == 2
    assert f"nesting deeper than {yamlio.MAX_DEPTH} levels" in err.value.reason
    # Brackets inside quoted strings, comments and block scalars are text, not nesting.
    path.write_text(
        "a: '" + "[" * 30 + "'\nb: 1 # " + "{" * 30 + "\nc: |\n  " + "[" * 30 + "\n",
        encoding="utf-8",
    )
    assert yamlio._deep_flow_line(path.read_text(encoding="utf-8")) is None
