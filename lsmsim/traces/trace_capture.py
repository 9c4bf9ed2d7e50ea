"""Capturing a real RocksDB run: db_bench for a bounded time, and the files a trace needs.

The run folder gets `report.csv` (--report_interval_seconds=1), `LOG` and the newest
`OPTIONS-*` from the database directory, `command.txt` (the exact command line, and
"stopped after N s wall time (SIGINT)" when the time bound ended it, as in
validation/traces/local-2core-jobs), `stdout.txt`, `machine.json` (cores, memory, free disk,
kernel, db_bench version, and how busy other work kept the host: `lsmsim.traces.host_load`)
and `threads.csv` (each thread's scheduler statistics every
second, `lsmsim.traces.thread_schedstat`). The database itself is deleted afterwards unless kept.
"""

from __future__ import annotations

import json
import os
import platform
import re
import shlex
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Any, Sequence

from lsmsim.traces.db_bench import parse_flags, setup_from_flags
from lsmsim.traces.host_load import cpu_times, idle_share, measured_load
from lsmsim.traces.thread_schedstat import ThreadSampler

DB_BENCH = "db_bench"
# Flags capture sets itself: where the DB and the per-second report go.
CAPTURE_FLAGS = ("db", "report_interval_seconds", "report_file")
SIGINT_GRACE_S = 20.0
THREAD_SAMPLE_S = 1.0


class CaptureError(RuntimeError):
    """db_bench missing, refused its flags, or failed."""


def find_db_bench(name: str = DB_BENCH) -> str:
    """The db_bench executable, or a CaptureError saying how to install it."""
    found = shutil.which(name) or (name if os.access(name, os.X_OK) else None)
    if found is None:
        raise CaptureError(f"{name} not found on PATH; install RocksDB's tools with "
                           "'apt-get install rocksdb-tools' (Debian/Ubuntu)")
    return found


def capture(out_dir: str | Path, flags: Sequence[str], seconds: float = 30.0,
            db_bench: str = DB_BENCH, keep_db: bool = False) -> Path:
    """Run `db_bench flags` for at most `seconds` (then SIGINT, as the local-2core runs
    were stopped) and keep the trace files in `out_dir`. Returns `out_dir`."""
    if seconds <= 0:
        raise CaptureError(f"--seconds must be positive, got {seconds}")
    parsed = parse_flags(flags, source="trace capture")
    clash = sorted(set(parsed) & set(CAPTURE_FLAGS))
    if clash:
        raise CaptureError(f"trace capture sets {', '.join('--' + c for c in clash)} itself; "
                           f"leave {'it' if len(clash) == 1 else 'them'} out")
    # The values too, as `trace import` will read them: a run it refuses is not captured.
    setup_from_flags(flags, source="trace capture", duration_s=seconds)
    executable = find_db_bench(db_bench)
    out = Path(out_dir).resolve()
    out.mkdir(parents=True, exist_ok=True)
    db_dir = out / "db"
    if db_dir.exists():
        shutil.rmtree(db_dir)
    argv = [executable, *flags, f"--db={db_dir}", "--report_interval_seconds=1",
            f"--report_file={out / 'report.csv'}"]
    idle_before = idle_share()  # how busy the host is: machine.json's host_load
    started, times_before = time.monotonic(), cpu_times()
    with open(out / "stdout.txt", "w") as stdout, open(out / "threads.csv", "w",
                                                         newline="") as threads:
        # A command started in the background by a shell inherits SIGINT ignored; db_bench
        # gets the default back, so the SIGINT below stops it.
        process = subprocess.Popen(argv, stdout=stdout, stderr=subprocess.STDOUT, cwd=out,
                                   preexec_fn=_default_sigint)
        stopped_by = ""
        if not _run_sampling_threads(process, ThreadSampler(process.pid, threads),
                                     started, seconds):
            stopped_by = "SIGINT"
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=SIGINT_GRACE_S)
            except subprocess.TimeoutExpired:  # a db_bench that does not stop on SIGINT
                stopped_by = f"SIGKILL after SIGINT was ignored for {SIGINT_GRACE_S:.0f} s"
                process.kill()
                process.wait()
    wall_s, times_after = time.monotonic() - started, cpu_times()
    output = (out / "stdout.txt").read_text(errors="replace")
    if not stopped_by and process.returncode != 0:
        tail = " | ".join(output.strip().splitlines()[-3:])
        raise CaptureError(f"db_bench exited with status {process.returncode}: {tail}")
    command = shlex.join(["db_bench", *argv[1:]])
    if stopped_by:
        command += f"\nstopped after {wall_s:.0f} s wall time ({stopped_by})"
    (out / "command.txt").write_text(command + "\n")
    _keep_db_files(db_dir, out)
    facts = machine_facts(out, output)
    facts["host_load"] = measured_load(idle_before, times_before, times_after,
                                       out / "threads.csv").as_dict()
    (out / "machine.json").write_text(json.dumps(facts, indent=2) + "\n")
    if not keep_db:
        shutil.rmtree(db_dir, ignore_errors=True)
    return out


def _run_sampling_threads(process: subprocess.Popen, sampler: ThreadSampler,
                          started: float, seconds: float) -> bool:
    """Wait up to `seconds` for `process` to end, sampling its threads' scheduler
    statistics every THREAD_SAMPLE_S; whether it ended by itself."""
    deadline = started + seconds
    while True:
        now = time.monotonic()
        sampler(now - started)
        try:
            process.wait(timeout=min(THREAD_SAMPLE_S, max(deadline - now, 0.0)))
            return True
        except subprocess.TimeoutExpired:
            if time.monotonic() >= deadline:
                return False


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _keep_db_files(db_dir: Path, out: Path) -> None:
    log = db_dir / "LOG"
    if not log.is_file():
        raise CaptureError(f"{db_dir}: db_bench left no LOG (see {out / 'stdout.txt'})")
    shutil.copyfile(log, out / "LOG")
    options = sorted(db_dir.glob("OPTIONS-*"), key=lambda p: int(p.name.split("-")[-1] or 0))
    if options:
        shutil.copyfile(options[-1], out / options[-1].name)


def machine_facts(out: Path, db_bench_stdout: str = "") -> dict[str, Any]:
    """Cores, CPU clock, memory, free disk where the DB lived, kernel and db_bench's RocksDB
    version."""
    memory_bytes = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                memory_bytes = int(line.split()[1]) * 1024
    except OSError:
        pass
    cpu_mhz = None
    try:  # the clock tells hosts of one virtual machine kind apart (their speed differs)
        found = re.search(r"^cpu MHz\s*:\s*([\d.]+)", Path("/proc/cpuinfo").read_text(), re.M)
        cpu_mhz = float(found.group(1)) if found else None
    except OSError:
        pass
    version = re.search(r"RocksDB:\s+version (\S+)", db_bench_stdout)
    cpu = re.search(r"CPU:\s+(.*)", db_bench_stdout)
    return {"cores": os.cpu_count(), "cpu": cpu.group(1).strip() if cpu else platform.processor(),
            "cpu_mhz": cpu_mhz,
            "memory_bytes": memory_bytes, "disk_free_bytes": shutil.disk_usage(out).free,
            "kernel": platform.release(), "machine": platform.machine(),
            "db_bench_rocksdb_version": version.group(1) if version else None}
