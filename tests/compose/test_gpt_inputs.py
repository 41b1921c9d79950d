"""What the composed scripts read: every bad input is one line and exit status 2, before
training (the GPT's and the conv net's); the data formats people have (uint16 and uint32
token files, meta.json, train.bin and val.bin, llm.c's headers, text) are read right;
--sample generates what it is asked for, the same from exported weights as from the
checkpoint; --config sets options, and the flags win; --tensorboard writes the metrics.

The error cases run in one process (a driver calls each script's main() in turn), so
that forty of them cost about one run."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import sys
from argparse import Namespace
from pathlib import Path

import pytest

from tests.compose.compose_cases import write_script
from tests.compose.gpt_cases import SIZES, checkpoint, metrics, write_gpt

#: Calls each (module, argv) of its argument's main() in turn, in this process, and
#: prints, as JSON, each one's exit status and standard error (a traceback, if any).
ERRORS_DRIVER = r"""
import contextlib
import importlib
import io
import json
import sys
import traceback

import torch.distributed as dist

results = []
for module, argv in json.loads(sys.argv[1]):
    script = importlib.import_module(module)
    sys.argv = [module + ".py", *argv]
    err, code = io.StringIO(), 0
    with contextlib.redirect_stderr(err):
        try:
            script.main()
        except SystemExit as stop:
            code = stop.code
        except BaseException:
            traceback.print_exc()
            code = "traceback"
    if dist.is_initialized():  # a failure after the process group started
        dist.destroy_process_group()
    results.append({"code": code, "stderr": err.getvalue()})
print(json.dumps(results))
"""

TINY = [*SIZES, "--batch-size", "2", "--max-steps", "1"]

#: (id, script, argv, what the one line says). Scripts: train (GPT), fsdp (GPT, --fsdp),
#: conv (the conv net). Files are made by `inputs` below.
ERRORS: list[tuple[str, str, list[str], str]] = [
    ("data-missing", "train", ["--data", "nope.bin"], "--data nope.bin: No such file"),
    ("data-folder-without-train-bin", "train", ["--data", "empty"], "train.bin: No such file"),
    ("data-fifo", "train", ["--data", "fifo.bin"], "--data fifo.bin: not a regular file"),
    ("data-empty-bin", "train", ["--data", "empty.bin"], "training split has 0 tokens"),
    ("data-short-text", "train", ["--data", "short.txt"], "training split has 1 tokens"),
    ("data-odd-bytes", "train", ["--data", "odd.bin"], "1001 bytes, not whole uint16 ids"),
    ("data-id-too-large", "train", ["--data", "big-id.bin"], "token 60000 at 1000 of the"),
    ("data-bytes-over-vocab", "train", ["--data", "text.txt", "--vocab-size", "16"], "token"),
    (
        "data-uint32-no-vocab",
        "train",
        ["--data", "u32/x.bin", "--token-dtype", "uint32"],
        "uint32 ids need --vocab-size",
    ),
    ("meta-not-json", "train", ["--data", "badmeta"], "meta.json: not a JSON object"),
    ("meta-bad-dtype", "train", ["--data", "int8meta"], "uint16 or uint32, not int8"),
    ("seq-len-0", "train", ["--seq-len", "0"], "argument --seq-len: must be at least 1"),
    ("batch-size-0", "train", ["--batch-size", "0"], "argument --batch-size: must be at"),
    ("n-head-0", "train", ["--n-head", "0"], "argument --n-head: must be at least 1"),
    ("heads-not-dividing", "train", ["--n-embd", "65"], "65 is not a multiple of --n-head"),
    ("log-every-0", "train", ["--log-every", "0"], "argument --log-every: must be"),
    ("lr-nan", "train", ["--lr", "nan"], "argument --lr: must be at least 0, got nan"),
    ("max-steps-negative", "train", ["--max-steps", "-1"], "--max-steps: must be at least"),
    ("not-an-int", "train", ["--keep", "two"], "argument --keep: invalid int value"),
    ("unknown-flag", "train", ["--bogus"], "unrecognized arguments: --bogus"),
    ("no-cuda", "train", ["--device", "cuda"], "--device cuda: no CUDA GPU here"),
    ("not-a-device", "train", ["--device", "tpu9"], "--device tpu9: not a device"),
    ("out-is-a-file", "train", ["--out", "afile"], "--out afile: File exists"),
    ("out-under-a-file", "train", ["--out", "afile/sub"], "--out afile/sub: Not a dir"),
    ("fresh-and-resume", "train", ["--fresh", "--resume"], "contradict each other"),
    ("checkpoint-garbage", "train", ["--out", "garbage"], "garbage/step-3.pt: not a check"),
    ("checkpoint-truncated", "train", ["--out", "torn"], "torn/step-3.pt: not a checkpoint"),
    ("checkpoint-foreign", "train", ["--out", "foreign"], "no options saved in it"),
    ("checkpoint-of-fsdp", "train", ["--out", "fsdp-out"], "written with --fsdp"),
    (
        "size-mismatch",
        "train",
        ["--out", "good", "--n-embd", "64"],
        "--n-embd 64 is not the checkpoint's 32",
    ),
    ("config-missing", "train", ["--config", "nope.toml"], "--config nope.toml: [Errno 2]"),
    ("config-syntax", "train", ["--config", "syntax.toml"], "--config syntax.toml: "),
    ("config-unknown", "train", ["--config", "unknown.toml"], "unrecognized arguments"),
    ("config-type", "train", ["--config", "type.toml"], "invalid int value: 'many'"),
    ("config-list", "train", ["--config", "list.toml"], "max_steps must be a number"),
    ("export-nothing", "train", ["--export-weights", "w.pt", "--out", "empty"], "no checkp"),
    ("weights-missing", "train", ["--weights", "nope.pt", "--sample", "4"], "of this script"),
    ("tensorboard-missing", "train", ["--tensorboard", "tb"], "pip install tensorboard"),
    ("fsdp-no-metadata", "fsdp", ["--out", "no-metadata"], "cannot load it"),
    ("fsdp-torn-shard", "fsdp", ["--out", "torn-shard"], "cannot load it"),
    ("fsdp-bad-config", "fsdp", ["--out", "bad-config"], "not a checkpoint of this script"),
    ("fsdp-of-pt", "fsdp", ["--out", "good"], "written without --fsdp"),
    ("fsdp-hsdp-3", "fsdp", ["--hsdp", "3"], "--hsdp 3 does not divide the 1 processes"),
    ("conv-width-0", "conv", ["--width", "0"], "argument --width: must be at least 1"),
    ("conv-log-every-0", "conv", ["--log-every", "0"], "argument --log-every: must be"),
    ("conv-batch-size-0", "conv", ["--batch-size", "0"], "argument --batch-size: must be"),
    ("conv-out-is-a-file", "conv", ["--out", "afile"], "--out afile: File exists"),
    ("conv-overwrite", "conv", ["--out", "conv-out"], "last.pt exists: --resume continues"),
    ("conv-garbage", "conv", ["--out", "conv-garbage", "--resume"], "not a checkpoint"),
    ("conv-too-few-samples", "conv", ["--samples", "4"], "smaller than one global batch"),
]


@pytest.fixture(scope="module")
def inputs(tmp_path_factory, runner):
    """The scripts, the bad files and checkpoints, and the driver's answer for ERRORS."""
    import numpy as np
    import torch

    folder = tmp_path_factory.mktemp("inputs")
    write_gpt(folder, ["--model", "gpt"])
    write_gpt(folder, ["--model", "gpt", "--fsdp"], "fsdp.py")
    write_script(folder, [], "conv.py")
    for script, out in (("train.py", "good"), ("fsdp.py", "fsdp-out")):
        run = runner.run(folder / script, [*TINY, "--out", out, "--max-steps", "3"])
        assert run.rc == 0, run.output
    conv = ["--width", "4", "--image-size", "8", "--samples", "64", "--max-steps", "1"]
    assert runner.run(folder / "conv.py", [*conv, "--out", "conv-out"]).rc == 0

    (folder / "empty").mkdir()
    os.mkfifo(folder / "fifo.bin")
    (folder / "empty.bin").write_bytes(b"")
    (folder / "short.txt").write_text("ab")
    (folder / "odd.bin").write_bytes(b"\0" * 1001)
    ids = np.zeros(5000, np.uint16)
    ids[1000] = 60000
    ids.tofile(folder / "big-id.bin")
    (folder / "text.txt").write_text("the quick brown fox\n" * 200)
    (folder / "u32").mkdir()
    np.zeros(5000, np.uint32).tofile(folder / "u32" / "x.bin")
    for name, meta in (("badmeta", "{"), ("int8meta", '{"dtype": "int8"}')):
        (folder / name).mkdir()
        (folder / name / "meta.json").write_text(meta)
        for split in ("train", "val"):
            np.zeros(500, np.uint16).tofile(folder / name / f"{split}.bin")
    (folder / "afile").write_text("")
    good = folder / "good" / "step-3.pt"
    for name, content in (("garbage", b"not a checkpoint" * 10), ("torn", good.read_bytes()[:400])):
        (folder / name).mkdir()
        (folder / name / "step-3.pt").write_bytes(content)
    (folder / "foreign").mkdir()
    torch.save({"model": {}}, folder / "foreign" / "step-3.pt")
    for name in ("no-metadata", "torn-shard", "bad-config"):
        shutil.copytree(folder / "fsdp-out" / "step-3", folder / name / "step-3")
    (folder / "no-metadata" / "step-3" / ".metadata").unlink()
    (shard,) = (folder / "torn-shard" / "step-3").glob("*.distcp")
    shard.write_bytes(shard.read_bytes()[:100])
    (folder / "bad-config" / "step-3" / "config.json").write_text("[1, 2")
    (folder / "conv-garbage").mkdir()
    (folder / "conv-garbage" / "last.pt").write_bytes(b"\0" * 64)
    (folder / "syntax.toml").write_text("max_steps 12\n")
    (folder / "unknown.toml").write_text("bogus = 1\n")
    (folder / "type.toml").write_text('max_steps = "many"\n')
    (folder / "list.toml").write_text("max_steps = [1, 2]\n")

    cases = [(script, argv) for _, script, argv, _ in ERRORS]
    (folder / "driver.py").write_text(ERRORS_DRIVER, encoding="utf-8")
    run = runner.run(folder / "driver.py", [json.dumps(cases)])
    assert run.rc == 0, run.output
    answers = json.loads(run.output.strip().splitlines()[-1])
    return folder, dict(zip([name for name, *_ in ERRORS], answers, strict=True))


@pytest.mark.parametrize(
    ("case", "script", "says"), [(e[0], e[1], e[3]) for e in ERRORS], ids=[e[0] for e in ERRORS]
)
def test_bad_input_is_one_line_and_exit_2(case, script, says, inputs):
    """Each bad input: exit status 2 and one line on standard error, naming the input."""
    _, answers = inputs
    answer = answers[case]
    stderr = answer["stderr"]
    assert answer["code"] == 2, answer
    assert stderr.count("\n") == 1 and says in stderr, stderr
    assert stderr.startswith(f"{script}.py: error: ") and "Traceback" not in stderr


# --- the data people have ---------------------------------------------------------------


def _import(script: Path, name: str):
    """Import a composed script as a module of its own (its functions, not its main())."""
    spec = importlib.util.spec_from_file_location(name, script)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _llmc(path: Path, magic: int, version: int, ids) -> None:
    import numpy as np

    header = np.zeros(256, np.int32)
    header[:3] = magic, version, len(ids)
    path.write_bytes(header.tobytes() + ids.tobytes())


def test_each_data_format_is_read_right(tmp_path, runner):
    """nanoGPT's uint16 .bin, a uint32 .bin with a meta.json, a folder of train.bin and
    val.bin, llm.c's GPT-2 (uint16) and Llama 3 (uint32) files, whose 1 KB header is not
    read as tokens, and UTF-8 text: the ids, the split and the vocabulary; the uint32
    folder then trains, with the vocabulary of its meta.json."""
    import numpy as np

    script = write_gpt(tmp_path, ["--model", "gpt"])
    train = _import(script, "train_formats")
    rng = np.random.default_rng(0)
    ids16, ids32 = rng.integers(50257, size=2000, dtype=np.uint16), rng.integers(5000, size=2000)
    ids32 = ids32.astype(np.uint32)
    ids16.tofile(tmp_path / "gpt2.bin")
    (tmp_path / "u32").mkdir()
    ids32.tofile(tmp_path / "u32" / "tokens.bin")
    (tmp_path / "u32" / "meta.json").write_text('{"dtype": "uint32", "vocab_size": 5000}')
    (tmp_path / "folder").mkdir()
    ids32[:1500].tofile(tmp_path / "folder" / "train.bin")
    ids32[1500:].tofile(tmp_path / "folder" / "val.bin")
    (tmp_path / "folder" / "meta.json").write_text('{"dtype": "uint32", "vocab_size": 5000}')
    _llmc(tmp_path / "llmc-gpt2.bin", 20240520, 1, ids16)
    _llmc(tmp_path / "llmc-llama3.bin", 20240801, 7, ids32)
    (tmp_path / "text.txt").write_text("héhé, the fox\n" * 100, encoding="utf-8")
    text = np.frombuffer(("héhé, the fox\n" * 100).encode(), np.uint8)

    def load(data: str):
        return train.load_data(Namespace(data=str(tmp_path / data), token_dtype=None))

    for data, ids, vocab in (
        ("gpt2.bin", ids16, 50304),
        ("u32/tokens.bin", ids32, 5000),
        ("llmc-gpt2.bin", ids16, 50304),
        ("llmc-llama3.bin", ids32, 128256),
        ("text.txt", text, 256),
    ):
        first, held_out, found = load(data)
        cut = len(ids) * 9 // 10  # the last tenth is held out
        assert found == vocab and first.dtype == ids.dtype, data
        assert np.array_equal(first, ids[:cut]) and np.array_equal(held_out, ids[cut:]), data
    first, held_out, found = load("folder")
    assert np.array_equal(first, ids32[:1500]) and np.array_equal(held_out, ids32[1500:])
    assert found == 5000

    args = [*SIZES[:-2], "--data", "folder", "--batch-size", "2", "--max-steps", "2"]
    run = runner.run(script, [*args, "--eval-every", "2", "--eval-tokens", "64"])
    assert run.rc == 0, run.output
    assert len(checkpoint(tmp_path / "out")["model"]["tok_emb.weight"]) == 5000
    assert metrics(tmp_path / "out")[-1]["eval_loss"] > 0


#: Calls each (module, argv, fake_tensorboard) of its argument's main() in turn, and
#: prints, as JSON, each one's exit status, standard output (what --sample prints) and
#: the scalars a stand-in SummaryWriter was given (tensorboard is not installed here).
USES_DRIVER = r"""
import contextlib
import importlib
import io
import json
import sys
import types

scalars = []


class SummaryWriter:
    def __init__(self, folder):
        self.folder = folder

    def add_scalar(self, key, value, step):
        scalars.append([self.folder, key, value, step])


fake = types.ModuleType("torch.utils.tensorboard")
fake.SummaryWriter = SummaryWriter
results = []
for module, argv, tensorboard in json.loads(sys.argv[1]):
    if tensorboard:
        sys.modules["torch.utils.tensorboard"] = fake
    script = importlib.import_module(module)
    sys.argv = [module + ".py", *argv]
    out, code = io.StringIO(), 0
    with contextlib.redirect_stdout(out):
        try:
            script.main()
        except SystemExit as stop:
            code = stop.code
    sys.modules.pop("torch.utils.tensorboard", None)
    results.append({"code": code, "stdout": out.getvalue()})
print(json.dumps({"results": results, "scalars": scalars}))
"""


def test_sampling_config_and_tensorboard(tmp_path, runner):
    """--sample N prints N tokens, the same for a seed, whether after training, from
    --weights of the checkpoint (a folder under --fsdp) or of the exported file, and
    others for another seed; bytes print as text. --config sets options, the command
    line wins, and OUT/config.toml runs again. --tensorboard gets the metrics' scalars."""
    import numpy as np

    write_gpt(tmp_path, ["--model", "gpt", "--fsdp"], "fsdp.py")
    write_gpt(tmp_path, ["--model", "gpt"], "train.py")
    (tmp_path / "ids").mkdir()
    np.random.default_rng(0).integers(300, size=4000).astype(np.uint16).tofile(
        tmp_path / "ids" / "tokens.bin"
    )
    (tmp_path / "ids" / "meta.json").write_text('{"vocab_size": 300}')
    (tmp_path / "run.toml").write_text(
        'max_steps = 3\nlr_schedule = "constant"\namp = false\nlog_every = 1\n'
    )
    tiny = [*SIZES[:-2], "--batch-size", "2", "--max-steps", "2"]
    sample = ["--sample", "12", "--prompt", "5,7"]
    fsdp = [*tiny, "--data", "ids/tokens.bin", "--out", "f"]
    config = ["--max-steps", "2", "--tensorboard", "tb"]
    runs = [
        ("fsdp", [*fsdp, *sample], False),
        ("fsdp", ["--weights", "f/step-2", *sample], False),
        ("fsdp", ["--export-weights", "w.pt", "--out", "f", *sample], False),
        ("fsdp", ["--weights", "w.pt", *sample], False),
        ("fsdp", ["--weights", "w.pt", *sample, "--seed", "1"], False),
        ("train", [*tiny, "--out", "b", "--sample", "40", "--prompt", "1+1="], False),
        ("train", [*SIZES, "--batch-size", "2", "--config", "run.toml", *config], True),
        ("train", ["--config", "run.toml", "--max-steps", "3"], False),  # it resumes
        ("train", ["--config", "out/config.toml", "--out", "again"], False),
    ]
    (tmp_path / "driver.py").write_text(USES_DRIVER, encoding="utf-8")
    run = runner.run(tmp_path / "driver.py", [json.dumps(runs)])
    assert run.rc == 0, run.output
    answer = json.loads(run.output.strip().splitlines()[-1])
    results = answer["results"]
    assert all(r["code"] == 0 for r in results), results
    samples = [r["stdout"].strip().splitlines()[-1] for r in results[:5]]
    ids = [int(i) for i in samples[0].split(",")]
    assert len(ids) == 12 and all(0 <= i < 300 for i in ids)
    assert samples[0] == samples[1] == samples[2] == samples[3] != samples[4]
    text = results[5]["stdout"].strip().splitlines()[-1]
    assert text and len(text.encode()) <= 40 * 3  # bytes, decoded (or replaced)

    # --config: the file's options, but the command line's --max-steps; a resumed run's
    # config.toml (the checkpoint's sizes) is an options file too
    records = metrics(tmp_path / "out")
    assert [r["step"] for r in records] == [1, 2, 3]  # log_every 1 from the file
    assert records[0]["lr"] == records[2]["lr"]  # a constant schedule
    saved = (tmp_path / "out" / "config.toml").read_text()
    assert 'lr_schedule = "constant"' in saved and "max_steps = 3" in saved
    assert "n_embd = 32" in saved  # from the checkpoint: not given in the resumed run
    assert [r["step"] for r in metrics(tmp_path / "again")] == [1, 2, 3]

    # --tensorboard: each record's scalars, at its step (the stand-in writer's), for the
    # two steps of the run that had it
    logged = {(key, step): value for _, key, value, step in answer["scalars"]}
    assert {step for _, step in logged} == {1, 2}
    for record in records[:2]:
        for key, value in record.items():
            if key != "step" and value is not None:
                assert logged[key, record["step"]] == value, key
