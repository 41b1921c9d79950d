"""Loading the folder of records: a second load is near free and never stale, and a hostile
tree (a FIFO, a symlink loop, an absurd integer) is refused in one line per file, without a
traceback or a hang."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from generator import paths
from generator.cli import main
from generator.errors import InvalidRecords
from generator.records.load import load_tips
from tests.helpers import example_record, write_record

PROBLEM = "{file}:{line}: {field}: {reason}"


@pytest.fixture
def tips_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of tips/ that the commands read in place of the real one."""
    folder = tmp_path / "tips"
    shutil.copytree(paths.TIPS, folder)
    monkeypatch.setattr(paths, "TIPS", folder)
    return folder


def test_a_second_load_is_near_free_and_an_edit_is_seen(tips_copy: Path) -> None:
    first = load_tips()
    second = load_tips()
    # Served from the cache: the very same (frozen) tips, in a list of the caller's own.
    assert second == first and all(a is b for a, b in zip(first, second, strict=True))
    assert second is not first

    # An edit of the same size within the same second, its mtime put back, and a record
    # renamed without a byte changed in it (its id is the new file name): both seen.
    record = tips_copy / "zero-grad-set-to-none.yaml"
    stat = record.stat()
    text = record.read_text(encoding="utf-8")
    old = "Zero gradients by setting them to None"
    record.write_text(text.replace(old, old.replace("Zero", "Drop")), encoding="utf-8")
    os.utime(record, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert record.stat().st_size == stat.st_size
    (tips_copy / "legacy-tensor-types.yaml").rename(tips_copy / "legacy-tensor-types-renamed.yaml")
    edited = {t.id: t for t in load_tips()}
    assert edited["zero-grad-set-to-none"].title.en == "Drop gradients by setting them to None"
    assert "legacy-tensor-types-renamed" in edited and "legacy-tensor-types" not in edited
    (tips_copy / "legacy-tensor-types-renamed.yaml").rename(tips_copy / "legacy-tensor-types.yaml")

    # A record made invalid is refused, not served from the cache; valid again, loaded again.
    record.write_text(text.replace("category: training-loop", "category: nonsense"), "utf-8")
    with pytest.raises(InvalidRecords) as err:
        load_tips()
    assert ("zero-grad-set-to-none.yaml", "category") in {
        (Path(p.file).name, p.field) for p in err.value.problems
    }
    # Valid again, and a new record beside the others: both seen.
    record.write_text(text, encoding="utf-8")
    data = example_record()
    data["related"] = []
    write_record(tips_copy, "a-new-tip.yaml", data)
    again = {t.id: t for t in load_tips()}
    assert again.pop("a-new-tip") and list(again.values()) == first


def _validate(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[str]]:
    code = main(["validate", *args])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return code, captured.err.splitlines()[:-1]  # the last line counts the problems


def _hostile_tree(folder: Path) -> dict[str, str]:
    """Add a symlink loop, an absurd integer and (where the system has them) a FIFO to
    ``folder``: the problem line each must give, by file name."""
    (folder / "loop1.yaml").symlink_to("loop2.yaml")
    (folder / "loop2.yaml").symlink_to("loop1.yaml")
    (folder / "bigint.yaml").write_text(
        "category: memory\nbench:\n  sizes:\n    cpu: " + "9" * 4301 + "\n", encoding="utf-8"
    )
    lines = {
        "loop1.yaml": "1: (file): cannot read: Too many levels of symbolic links",
        "loop2.yaml": "1: (file): cannot read: Too many levels of symbolic links",
        "bigint.yaml": "4: bench.sizes.cpu: an integer of 4301 digits: a record's integers "
        "have at most 100",
    }
    if hasattr(os, "mkfifo"):
        os.mkfifo(folder / "fifo.yaml")
        lines["fifo.yaml"] = "1: (file): not a regular file (a FIFO): a record is a plain text file"
    return lines


@pytest.mark.timeout(60)  # a FIFO made validate wait for a writer for ever
@pytest.mark.skipif(sys.platform == "win32", reason="symlinks need privileges on Windows")
def test_a_hostile_tips_folder_is_refused_in_one_line_per_file(
    tips_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    expected = _hostile_tree(tips_copy)
    code, lines = _validate(capsys)
    assert code == 1
    assert sorted(lines) == sorted(
        f"{_shown(tips_copy / name)}:{ln}" for name, ln in expected.items()
    )
    assert main(["list"]) == 1  # the commands that load every record refuse them alike
    assert sorted(capsys.readouterr().err.splitlines()[:-1]) == sorted(lines)


def _shown(path: Path) -> str:
    """A file as problems name it: relative to the checkout, else as given."""
    return str(path.relative_to(paths.ROOT)) if path.is_relative_to(paths.ROOT) else str(path)


@pytest.mark.timeout(60)
@pytest.mark.skipif(sys.platform == "win32", reason="symlinks need privileges on Windows")
def test_hostile_files_named_on_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    expected = _hostile_tree(tmp_path)
    (tmp_path / "gone.yaml").symlink_to("nowhere.yaml")
    expected["gone.yaml"] = "1: (file): cannot read: No such file or directory"
    for name, line in expected.items():
        code, lines = _validate(capsys, str(tmp_path / name))
        assert (code, lines) == (1, [f"{tmp_path / name}:{line}"]), name


@pytest.mark.parametrize(("digits", "refused"), [(100, False), (101, True)])
@pytest.mark.parametrize("where", ["value", "key"])
def test_the_integer_limit(digits: int, refused: bool, where: str) -> None:
    from generator.records.yamlio import MAX_INT_DIGITS, YamlProblem, parse_document

    assert MAX_INT_DIGITS == 100
    number = "1" * digits
    item = f"  - {number}" if where == "value" else f"  - {number}: x"
    raw = f"title: x\nsizes:\n{item}\n".encode()
    if not refused:
        value = int(number) if where == "value" else {int(number): "x"}
        assert parse_document(raw).data["sizes"] == [value]
        return
    with pytest.raises(YamlProblem) as err:
        parse_document(raw)
    assert (err.value.line, err.value.field) == (3, "sizes[0]")
    assert err.value.reason.startswith(f"an integer of {digits} digits")


def test_an_empty_folder_or_a_missing_tips_folder_is_a_problem_not_a_success(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, lines = _validate(capsys, str(tmp_path / "nowhere.yaml"))
    assert (code, lines) == (1, [f"{tmp_path / 'nowhere.yaml'}:0: (file): no such file or folder"])
    (tmp_path / "empty").mkdir()
    code, lines = _validate(capsys, str(tmp_path / "empty"))
    assert (code, lines) == (
        1,
        [f"{tmp_path / 'empty'}:0: (file): no record files (<id>.yaml) in this folder"],
    )
    monkeypatch.setattr(paths, "TIPS", tmp_path / "tips")
    code, lines = _validate(capsys)
    assert (code, lines) == (
        1,
        [f"{tmp_path / 'tips'}:0: (file): no such folder: the records live in tips/"],
    )
    (tmp_path / "tips").write_text("not a folder\n", encoding="utf-8")
    code, lines = _validate(capsys)
    assert (code, lines) == (
        1,
        [f"{tmp_path / 'tips'}:0: (file): not a folder: the records live in tips/"],
    )


def test_records_edited_while_they_load_are_not_cached(
    tips_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A record saved while `load_tips` validates the folder: what it loaded is not kept for the
    folder's earlier content (an editor's undo would then be served the edit)."""
    from generator.records import load

    record = tips_copy / "zero-grad-set-to-none.yaml"
    text = record.read_text(encoding="utf-8")
    old = "Zero gradients by setting them to None"
    real_validate = load.validate

    def validate_during_an_edit(*args: object, **kwargs: object) -> object:
        record.write_text(text.replace(old, "Edited meanwhile"), encoding="utf-8")
        return real_validate(*args, **kwargs)

    monkeypatch.setattr(load, "validate", validate_during_an_edit)
    edited = {t.id: t for t in load_tips()}["zero-grad-set-to-none"]
    assert edited.title.en == "Edited meanwhile"
    monkeypatch.setattr(load, "validate", real_validate)
    record.write_text(text, encoding="utf-8")  # undone
    again = {t.id: t for t in load_tips()}["zero-grad-set-to-none"]
    assert again.title.en == old


def test_show_refuses_a_broken_record_and_shows_the_others(
    tips_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record = tips_copy / "zero-grad-set-to-none.yaml"
    text = record.read_text(encoding="utf-8")
    record.write_text(text.replace("category: training-loop", "category: nonsense"), "utf-8")
    assert main(["show", "zero-grad-set-to-none"]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith(f"{_shown(record)}:2: category: ") and len(err) == 2, err
    assert main(["show", "gradient-accumulation"]) == 0  # one broken record stops no other
    assert "Gradient accumulation" in capsys.readouterr().out
