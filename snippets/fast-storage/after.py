# Keep the training data on fast local storage (after)
# Generated from tips/fast-storage.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/fast-storage/after.py
import os
import shutil
import tempfile
from pathlib import Path

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset


def local_scratch() -> Path:
    """Node-local fast disk: the scheduler's scratch directory if there is one."""
    return Path(os.environ.get("SLURM_TMPDIR") or tempfile.gettempdir())


def stage(src: Path, scratch: Path) -> tuple[Path, int]:
    """Copy the data set `src` under `scratch` once; later calls reuse the copy.

    Returns the local root and the number of files copied by this call.
    """
    dst = scratch / src.name
    copied = 0
    for path in sorted(src.rglob("*")):
        if not path.is_file():
            continue
        target = dst / path.relative_to(src)
        st = path.stat()
        if target.exists():
            tst = target.stat()
            if (tst.st_size, tst.st_mtime_ns) == (st.st_size, st.st_mtime_ns):
                continue  # staged by an earlier call
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(target.name + ".partial")
        shutil.copy2(path, partial)  # copy2 keeps the mtime compared above
        os.replace(partial, target)  # atomic: an interrupted copy never looks complete
        copied += 1
    return dst, copied


class NpyFolder(Dataset):
    """One sample per .npy file under `root`."""

    def __init__(self, root: Path):
        self.files = sorted(root.glob("*.npy"))

    def __len__(self):
        return len(self.files)

    def __getitem__(self, index):
        return torch.from_numpy(np.load(self.files[index]))


rng = np.random.default_rng(0)
arrays = [rng.standard_normal(16).astype(np.float32) for _ in range(8)]
with (
    tempfile.TemporaryDirectory() as remote_dir,  # stands in for /mnt/nfs/...
    tempfile.TemporaryDirectory(dir=local_scratch()) as scratch_dir,
):
    remote = Path(remote_dir) / "shards"
    remote.mkdir()
    for i, array in enumerate(arrays):
        np.save(remote / f"{i:03d}.npy", array)

    local, copied = stage(remote, Path(scratch_dir))  # once per job and node
    _, copied_again = stage(remote, Path(scratch_dir))  # a restart reuses the copy
    dataset = NpyFolder(local)  # train from the local copy
    batches = list(DataLoader(dataset, batch_size=4))
