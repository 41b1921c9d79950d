"""Start the ranks of a distributed snippet as ``torchrun --standalone`` does, at a third of
its cost: ``python -m generator.records.ranks NPROC SCRIPT``.

torchrun starts one agent and NPROC fresh interpreters, each of which imports torch (about
1.3 s of CPU apiece), and its agent takes about a second more to notice that they ended. This
launcher imports torch once and forks each rank from it, as the harness's zygote forks the
single-process snippets: every rank is still a process of its own, in a session of its own,
with the environment torchrun gives a worker (`rank_env`: ``RANK``, ``LOCAL_RANK``,
``WORLD_SIZE``, ``LOCAL_WORLD_SIZE``, ``GROUP_RANK``, ``ROLE_*``, ``MASTER_ADDR``/``PORT``,
``TORCHELASTIC_*``, ``OMP_NUM_THREADS``) and the store torchrun's agent hosts
(``TORCHELASTIC_USE_AGENT_STORE``: the ranks join it as clients). As torchrun, it stops every
rank when one fails (SIGTERM to its process group, SIGKILL 5 s later) and exits 1, passes
SIGTERM and SIGINT on to the ranks, and exits 0 when every rank did. It runs in a session of
its own, so it also stops the ranks when the process that started it dies (a SIGTERM to that
process's group, or kill -9), rather than leave them running.

A record whose subject is torchrun itself (signals to the launcher, restarts) sets
``launch.torchrun`` and runs under the real one; ``PYTORCH_TIPS_TORCHRUN=1`` runs every job
under it. tests/records/test_launch.py holds the two environments side by side.
"""

from __future__ import annotations

import os
import signal
import socket
import sys
import time
import traceback
import uuid
from contextlib import suppress

#: Seconds between SIGTERM and SIGKILL when the ranks are stopped (torchrun waits 30).
STOP_GRACE_S = 5.0


def rank_env(rank: int, nproc: int, port: int, run_id: str, error_dir: str) -> dict[str, str]:
    """The variables torchrun (``--standalone``, one node) sets for worker ``rank``."""
    env = {
        "RANK": str(rank),
        "LOCAL_RANK": str(rank),
        "WORLD_SIZE": str(nproc),
        "LOCAL_WORLD_SIZE": str(nproc),
        "GROUP_RANK": "0",
        "GROUP_WORLD_SIZE": "1",
        "ROLE_NAME": "default",
        "ROLE_RANK": str(rank),
        "ROLE_WORLD_SIZE": str(nproc),
        "MASTER_ADDR": "localhost",
        "MASTER_PORT": str(port),
        "TORCHELASTIC_RUN_ID": run_id,
        "TORCHELASTIC_RESTART_COUNT": "0",
        "TORCHELASTIC_MAX_RESTARTS": "0",
        "TORCHELASTIC_USE_AGENT_STORE": "True",
        "TORCHELASTIC_SIGNALS_TO_HANDLE": "SIGTERM,SIGINT,SIGHUP,SIGQUIT",
        "TORCHELASTIC_ERROR_FILE": os.path.join(error_dir, str(rank), "error.json"),
        "TORCH_NCCL_ASYNC_ERROR_HANDLING": "1",
    }
    if nproc > 1 and "OMP_NUM_THREADS" not in os.environ:
        env["OMP_NUM_THREADS"] = "1"  # as torchrun: one thread per rank unless told otherwise
    return env


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("localhost", 0))
        return int(sock.getsockname()[1])


def _run_rank(script: str, env: dict[str, str]) -> None:
    """In the forked child: become a rank (own session, torchrun's environment) and run
    ``script`` as ``__main__``; never return into the launcher."""
    code = 1
    try:
        os.setsid()
        os.environ.update(env)
        os.makedirs(os.path.dirname(env["TORCHELASTIC_ERROR_FILE"]), exist_ok=True)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        sys.argv = [script]
        with open(script, encoding="utf-8") as f:
            source = f.read()
        exec(compile(source, script, "exec"), {"__name__": "__main__", "__file__": script})
        code = 0
    except SystemExit as err:
        code = err.code if isinstance(err.code, int) else (0 if err.code is None else 1)
    except BaseException:
        traceback.print_exc()
    finally:
        with suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)


def _signal_all(pids: set[int], sig: int) -> None:
    for pid in pids:
        with suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, sig)


def _stop(pids: set[int]) -> None:
    """SIGTERM to each running rank's process group, SIGKILL after `STOP_GRACE_S`."""
    _signal_all(pids, signal.SIGTERM)
    deadline = time.monotonic() + STOP_GRACE_S
    while pids and time.monotonic() < deadline:
        pid, _ = os.waitpid(-1, os.WNOHANG)
        if pid:
            pids.discard(pid)
        else:
            time.sleep(0.02)
    _signal_all(pids, signal.SIGKILL)
    for pid in list(pids):
        with suppress(ChildProcessError):
            os.waitpid(pid, 0)


def launch(nproc: int, script: str) -> int:
    """Run ``script`` in ``nproc`` forked ranks; 0 when every rank exited 0, else 1."""
    import torch  # noqa: F401 - the point: each rank starts with torch imported
    from torch.distributed import TCPStore

    port, run_id = _free_port(), str(uuid.uuid4())
    error_dir = os.path.join(os.path.dirname(os.path.abspath(script)), "torchelastic")
    received: list[int] = []

    def forward(signum: int, _frame: object) -> None:
        received.append(signum)

    running: set[int] = set()
    for rank in range(nproc):
        pid = os.fork()
        if pid == 0:
            _run_rank(script, rank_env(rank, nproc, port, run_id, error_dir))
        running.add(pid)
    # The agent's store: the ranks join it as clients (TORCHELASTIC_USE_AGENT_STORE), and it
    # is made after the forks, so no rank inherits its server thread.
    store = TCPStore("localhost", port, nproc, is_master=True, wait_for_workers=False)
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, forward)
    failed = False
    parent = os.getppid()
    while running:
        if received:
            _signal_all(running, received.pop())
        if os.getppid() != parent:  # the harness died (kill -9): no rank may outlive it
            _stop(running)
            return 1
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if not pid:
            time.sleep(0.02)
            continue
        running.discard(pid)
        if os.waitstatus_to_exitcode(status) != 0:
            failed = True
            _stop(running)
    del store
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(launch(int(sys.argv[1]), sys.argv[2]))
