"""Shared helpers: small, fast simulations that still exercise flush, compaction and stalls."""

from __future__ import annotations

import importlib.util
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Callable

import pytest

import lsmsim

SMALL = {"write_buffer_size": "4MB", "max_bytes_for_level_base": "16MB",
         "target_file_size_base": "4MB"}


def validation_script(name: str) -> ModuleType:
    """`validation/<name>.py` loaded as a module (the folder is not a package)."""
    path = Path(__file__).resolve().parents[1] / "validation" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # where dataclasses look a class's module up
    spec.loader.exec_module(module)
    return module


def run_small(duration_s: float = 20.0, device: str = "nvme", options: dict | None = None,
              **kwargs):
    """A short fillrandom on small memtables and levels (seconds of wall time at most)."""
    return lsmsim.simulate("fillrandom", device=device, duration_s=duration_s,
                           options={**SMALL, **(options or {})}, num_keys=2_000_000,
                           key_buckets=512, **kwargs)


@pytest.fixture(scope="session")
def small_run():
    return run_small()


@dataclass
class FakeDevice:
    """A `lsmsim.storage_device.StorageDevice` of plain figures: reads get a flat `read_bps`,
    writes `write_curve(streams)` in total, times `mixed_write_factor` while reads and writes
    are both in flight."""

    name: str = "fake"
    read_latency_s: float = 1e-4
    write_latency_s: float = 1e-5
    random_read_iops: float = 0.0
    program_latency_s: float = 0.0
    gc_write_amplification: float = 0.0
    gc_unit_bytes: float = 0.0
    gc_base_write_amplification: float = 1.0
    rated_write_bps: float = 0.0
    job_time_spread: tuple[float, ...] = ()
    read_bps: float = 1e9
    write_curve: Callable[[float], float] = lambda streams: 5e8
    mixed_write_factor: float = 1.0

    def bandwidth_bps(self, streams: float, mixed: bool) -> tuple[float, float]:
        return (self.read_bps,
                self.write_curve(streams) * (self.mixed_write_factor if mixed else 1.0))


def open_db(options: dict | None = None, device: "str | FakeDevice" = "nvme",
            machine: str = "server", workload: str = "fillrandom", policy: str = "rocksdb",
            start_s: float = 0.0, without: tuple[str, ...] = (), **workload_fields):
    """A DB on a fresh SimPy environment whose clock starts at `start_s`, for tests that
    inspect state while it runs; `device` a preset's name or a device object; `without` the
    mechanisms switched off."""
    import simpy

    from lsmsim.device_models import load_device
    from lsmsim.db import DB
    from lsmsim.machine import load_machine
    from lsmsim.mechanisms import Mechanisms
    from lsmsim.options import LsmOptions
    from lsmsim.workload import make_workload
    from lsmsim.policies import make_policy

    env = simpy.Environment(initial_time=start_s)
    fields = {"num_keys": 2_000_000, **workload_fields}
    db = DB(env, LsmOptions.from_mapping({**SMALL, **(options or {})}), load_machine(machine),
            load_device(device) if isinstance(device, str) else device,
            make_workload(workload, **fields), make_policy(policy), key_buckets=512,
            mechanisms=Mechanisms.without(without))
    return env, db


@pytest.fixture(autouse=True)
def own_result_cache(tmp_path_factory, monkeypatch):
    """Each test's commands cache their results in a folder of their own (XDG_CACHE_HOME,
    inherited by the commands a test starts), never in the user's cache."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))


def interrupt_after_first_progress(argv: list[str], first: str, total: str, within_s: float
                                   ) -> tuple[str, str, int]:
    """Run `python -m lsmsim.cli.main argv` in a process group of its own, wait for its first
    progress line (which must contain `first`), then press Ctrl-C twice as a terminal does
    (SIGINT to the whole group). It must exit with 130 within `within_s` and say last how
    many of `total` ("16 runs") finished: (stdout, stderr, its process group id)."""
    import os
    import signal
    import subprocess
    import sys
    import time

    process = subprocess.Popen([sys.executable, "-m", "lsmsim", *argv],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               start_new_session=True)
    line = process.stderr.readline()
    assert first in line, line + (process.stderr.read() if process.poll() is not None else "")
    os.killpg(process.pid, signal.SIGINT)
    signalled = time.monotonic()
    os.killpg(process.pid, signal.SIGINT)
    try:
        stdout, stderr = process.communicate(timeout=within_s * 5)
    finally:
        process.kill()
    assert time.monotonic() - signalled < within_s
    assert process.returncode == 130, stderr
    last = stderr.strip().splitlines()[-1]
    assert last.startswith("lsmsim: interrupted by SIGINT: ") and last.endswith(
        f" of {total} finished"), stderr
    return stdout, stderr, process.pid


def assert_spread_round_trips(tmp_path: Path, profile, field: str,
                              bad: tuple[tuple[str, str], ...]) -> None:
    """A machine profile's table of multipliers (`field`: job_cpu_spread, put_time_spread)
    reads back as written, and each bad table (TOML text, error it must raise) is refused
    with a one-line DataFileError."""
    from lsmsim.data_file import DataFileError
    from lsmsim.machine import load_machine, machine_toml

    path = tmp_path / "m.toml"
    path.write_text(machine_toml(profile))
    assert getattr(load_machine(str(path)), field) == getattr(profile, field)
    lines = [line for line in path.read_text().splitlines() if not line.startswith(field)]
    for table, message in bad:
        path.write_text("\n".join([f"{field} = {table}", *lines]) + "\n")
        with pytest.raises(DataFileError, match=message):
            load_machine(str(path))


def cli_error_line(argv: list[str], capsys) -> str:
    """Run `lsmsim argv`, which must fail with status 2 and exactly one line on stderr (an
    argparse refusal included)."""
    from lsmsim.cli.main import main
    try:
        status = main(argv)
    except SystemExit as exc:  # argparse refused a flag
        status = exc.code
    assert status == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


@pytest.fixture(scope="module")
def written_run(tmp_path_factory) -> Path:
    """A short run's folder as `lsmsim run --out` writes it."""
    from lsmsim.cli.main import main
    out = tmp_path_factory.mktemp("run") / "good"
    assert main(["run", "fillrandom", "--duration", "20", "--no-plot", "--out", str(out)]) == 0
    return out
