"""`lsmsim validate`: re-simulate real runs' own command lines and measure the model's error.

Each run folder is imported (`lsmsim.traces.trace_import`), its own db_bench command is simulated
for the real run's duration (`lsmsim.traces.run_setup.setup_from_trace_dir`) on the given machine
profile and device, and the two traces are compared (`lsmsim.fidelity.trace_comparison`). Runs of
one command repeated (`<name>_r1`, `<name>_r2`) give the noise floor: the same comparison
between the two real runs. Unless asked not to (`host_speed="profile"`, `--host-speed profile`),
the runs are simulated on the machine profile scaled to their host's speed that day,
measured from the CPU their own flushes and compactions took, pooled over the runs of one
folder (`lsmsim.fidelity.job_cpu`): hosts of one machine kind differ by tens of percent from day to
day, and the errors should be the model's, not the host's. The scale is reported per run, and
a run whose capture recorded other work on its host (`lsmsim.traces.host_load`) is simulated
with that much less CPU (`MachineProfile.other_work_cores`); `host_speed="profile"` leaves
the machine as it is, load included. The ranking of configurations by mean throughput, real against
simulated, is scored with Spearman's rho and Kendall's tau over the configurations given.
A run whose import or simulation fails is named with its error in the report, beside the
others (`lsmsim.sweeps.worker_pool`: a failure is data); Ctrl-C leaves a report of the runs done.
"""

from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np

from lsmsim.traces.db_bench import DbBenchSetup
from lsmsim.traces.run_setup import setup_from_trace_dir
from lsmsim.fidelity.job_cpu import HostSpeed, measure_host_speed, pooled
from lsmsim.fidelity.writer_cpu import measure_writer_cpu
from lsmsim.machine import MachineProfile, with_cpu_scale
from lsmsim.metrics import DB_WRITE_PERCENTILES, db_write_key
from lsmsim.mechanisms import Mechanisms
from lsmsim.trace import Trace
from lsmsim.fidelity.trace_comparison import (as_plain, compare, error_labels, error_names,
                                     format_difference, median_abs, window)
from lsmsim.traces.host_load import (BUSY_OTHER_CORES, HostLoad, counted_other_cores,
                                     read_host_load)
from lsmsim.traces.run_files import TraceError, find_run_files
from lsmsim.traces.trace_import import import_trace
from lsmsim.sweeps.worker_pool import NOT_RUN, Interrupted, JobFailed, run_jobs

# The ADOC runs name their device in a folder `StorageMaterial.<name>`.
DEVICE_BY_MATERIAL = {"PM": "pm", "NVMeSSD": "nvme", "SATASSD": "sata-ssd", "SATAHDD": "hdd"}
# Without such a folder (local-2core's fast virtual disk) runs use this preset.
DEFAULT_DEVICE = "nvme"
DEVICE_WIDTH = 11  # the report's device column
HOST_WIDTH = 11
HOST_COLUMN = ("host = the profile's CPU costs scaled to the job CPU measured in the LOGs of the "
               "runs of this run's host session (its folder's runs; '-': too little to tell; "
               "--host-speed profile: unscaled), and after a '/' its writer's costs to the "
               "writer thread's CPU per put in their threads.csv")
HOST_COLUMN_OFF = "host: every run on the profile as it is (--host-speed profile)"
_REPEAT = re.compile(r"_r\d+$")
# --host-speed: log = job costs at the jobs' CPU in the LOGs, the writer's at its thread's
# CPU per put in threads.csv (else the jobs' scale); jobs = every cost at the jobs' scale
# (lsmsim before 2026-11-29); profile = the profile as it is.
HOST_SPEEDS = ("log", "jobs", "profile")


def infer_device(folder: Path) -> str | None:
    """The device preset a run folder's path names (StorageMaterial.<name>), if any."""
    for part in reversed(Path(folder).resolve().parts):
        if part.startswith("StorageMaterial."):
            material = part.split(".", 1)[1]
            if material not in DEVICE_BY_MATERIAL:
                raise TraceError(f"{folder}: unknown StorageMaterial.{material}; known: "
                                 f"{', '.join(DEVICE_BY_MATERIAL)} (or pass --device)")
            return DEVICE_BY_MATERIAL[material]
    return None


def host_session(folder: Path) -> Path:
    """The folder that holds one host session's runs: the run folder's parent, or, in the
    ADOC authors' layout (`<set>/StorageMaterial.<device>/1CPU/64MB`), the folder above the
    devices, whose runs share one host."""
    path = Path(folder).resolve()
    for ancestor in path.parents:
        if ancestor.name.startswith("StorageMaterial."):
            return ancestor.parent
    return path.parent


def run_devices(folders: Sequence[Path], device: str | None,
                device_dir: Path | None = None) -> list[str]:
    """Each run's device: `device` if given, else the one its path names, else
    DEFAULT_DEVICE; a preset name becomes `device_dir/<name>.toml` where that file exists
    (devices fitted by `lsmsim calibrate --device-out`). Every name is checked here (a bad
    one is an error naming the valid)."""
    from lsmsim.device_models import load_device
    if device_dir is not None and not Path(device_dir).is_dir():
        kind = "not a folder" if Path(device_dir).exists() else "no such folder"
        raise TraceError(f"{device_dir}: {kind} of fitted device files (--device-dir)")
    devices = [fitted_device(device or infer_device(f) or DEFAULT_DEVICE, device_dir)
               for f in folders]
    for name in sorted(set(devices)):
        load_device(name)
    return devices


def fitted_device(name: str, device_dir: Path | None) -> str:
    """`device_dir/<name>.toml` if it exists, else `name` (a preset kept unfitted); a
    device file's name is its file name without `.toml`, as calibrate writes it."""
    if device_dir is None:
        return name
    path = Path(device_dir) / f"{Path(name).stem if name.endswith('.toml') else name}.toml"
    return str(path) if path.is_file() else name


def configuration_key(folder: Path) -> str:
    """Runs of one command share this key: the folder's path without its `_rN` suffix."""
    folder = Path(folder).resolve()
    return str(folder.parent / _REPEAT.sub("", folder.name))


def short_labels(folders: Sequence[Path]) -> list[str]:
    """Names for the folders: their paths without the parts all of them share at the
    start and at the end (the folder name alone for a single run)."""
    parts = [Path(f).resolve().parts for f in folders]
    if len(parts) == 1:
        return [parts[0][-1]]
    head = 0
    while all(len(p) > head + 1 and p[head] == parts[0][head] for p in parts):
        head += 1
    tail = 0
    while all(len(p) > head + tail + 1 and p[-1 - tail] == parts[0][-1 - tail] for p in parts):
        tail += 1
    return ["/".join(p[head:len(p) - tail]) for p in parts]


def check_run_folders(folders: Iterable[Path]) -> list[Path]:
    """The folders, each checked to be a run folder with report.csv (else a TraceError)."""
    checked = []
    for folder in folders:
        files = find_run_files(Path(folder))
        if files.report is None or not Path(folder).is_dir():
            raise TraceError(f"{folder}: no report.csv or report.csv_0_*: validation needs a "
                             "run folder with db_bench's per-second throughput")
        checked.append(Path(folder))
    return checked


def run_setup(folder: Path, max_seconds: float | None) -> tuple[Trace, DbBenchSetup]:
    """A run's trace (its first `max_seconds` when given) and its command, set to simulate
    exactly the trace's duration."""
    real = import_trace(folder)
    # The run's whole span: its summary leaves out the intervals of unreadable report rows.
    duration_s = float(real.config.get("duration_s", real.summary["duration_s"]))
    if max_seconds is not None and max_seconds < duration_s:
        real = window(real, max_seconds)
        duration_s = float(real.summary["duration_s"])
    setup = dataclasses.replace(setup_from_trace_dir(folder), duration_s=duration_s)
    return real, setup


def run_seeds(setup: DbBenchSetup, seed: int | None, seeds: int) -> list[int]:
    """The seeds a run is simulated with: `seeds` of them from `seed`, or from the run's own
    db_bench --seed when `seed` is None."""
    first = setup.seed if seed is None else seed
    return [first + k for k in range(seeds)]


def _simulate_folder(job: tuple[Path, str, MachineProfile, float | None, tuple[str, ...],
                                int | None, int]) -> tuple[Trace, list[Trace]]:
    folder, device, machine, max_seconds, without, seed, seeds = job
    real, setup = run_setup(folder, max_seconds)
    sims = [dataclasses.replace(setup, seed=s).simulate(device=device, machine=machine,
                                                        without=without)
            for s in run_seeds(setup, seed, seeds)]
    return real, sims


def _measure_host(job: tuple[Path, MachineProfile, float | None, bool]) -> HostSpeed:
    folder, machine, max_seconds, with_writer = job
    real, setup = run_setup(folder, max_seconds)
    speed = measure_host_speed(real, machine)
    writer = (measure_writer_cpu(folder, real, setup, machine)
              if with_writer and max_seconds is None else None)
    if writer is None:  # (threads.csv covers the whole run, not a window of it)
        return speed
    return dataclasses.replace(speed, writer_cpu_s=writer.cpu_s,
                               writer_profile_cpu_s=writer.profile_cpu_s)


def session_hosts(folders: Sequence[Path], machine: MachineProfile, max_seconds: float | None,
                  workers: int, writer: bool = True) -> list[HostSpeed | JobFailed]:
    """Each run's host speed, pooled over the runs of its host session (`host_session`:
    runs captured together land in one folder), with its writer's where `writer` and the
    runs' threads.csv tell it; the error of a run whose files could not be read for it.
    Ctrl-C raises `worker_pool.Interrupted`."""
    speeds = run_jobs(_measure_host, [(f, machine, max_seconds, writer) for f in folders],
                      workers)
    sessions: dict[Path, list[HostSpeed]] = {}
    for folder, speed in zip(folders, speeds):
        if isinstance(speed, HostSpeed):
            sessions.setdefault(host_session(folder), []).append(speed)
    session = {parent: pooled(members) for parent, members in sessions.items()}
    return [session[host_session(f)] if isinstance(s, HostSpeed) else s
            for f, s in zip(folders, speeds)]


def host_loads(folders: Sequence[Path]) -> list[HostLoad | JobFailed | None]:
    """Each run's recorded host load (None where its capture recorded none); the error of
    a run whose record is damaged."""
    loads: list[HostLoad | JobFailed | None] = []
    for folder in folders:
        try:
            loads.append(read_host_load(folder))
        except TraceError as exc:
            loads.append(JobFailed(str(exc)))
    return loads


@dataclass
class TraceResult:
    """One run: its real and simulated traces and the errors of the simulation. Simulated
    with several seeds, `sim` is the first seed's, `errors` each figure's median over the
    seeds and `seed_spread` the seeds' own spread (`seed_spread`)."""

    label: str
    path: Path
    device: str
    real: Trace
    sim: Trace
    errors: dict[str, float]
    noise: dict[str, float] | None = None  # this run against its repeat
    host: HostSpeed | None = None  # the profile's CPU costs were scaled to this run's host
    other_cores: float = 0.0  # and this much CPU taken from its cores (other work, measured)
    sims: list[Trace] = field(default_factory=list)  # one per seed, `sim` first
    seed_spread: dict[str, float] | None = None  # simulations of other seeds vs the first


def seed_errors(real: Trace, sims: Sequence[Trace]) -> dict[str, float]:
    """Each figure's error (`compare`), the median over the simulations of several seeds
    (signed; the error itself with one)."""
    rows = [compare(real, sim) for sim in sims]
    return {name: float(np.nanmedian([row[name] for row in rows]))
            if any(row[name] == row[name] for row in rows) else math.nan for name in rows[0]}


def seed_spread(sims: Sequence[Trace]) -> dict[str, float] | None:
    """How far simulations of other seeds are from the first: each figure's median absolute
    difference (`compare`, as the noise floor compares a repeat with a run); None with one."""
    if len(sims) < 2:
        return None
    rows = [compare(sims[0], other) for other in sims[1:]]
    return {name: median_abs([row[name] for row in rows]) for name in rows[0]}


@dataclass
class ValidationReport:
    machine: str
    results: list[TraceResult]
    ranking: dict[str, Any] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)  # run label -> its error
    mechanisms_off: list[str] = field(default_factory=list)
    host_speed: str = "log"  # HOST_SPEEDS: how the runs' host speed was taken
    seeds: int = 1  # simulations per run, seeds from the run's --seed (or validate's --seed)
    cores: int = 0  # the machine profile's cores, to split the runs by background jobs

    def median_errors(self) -> dict[str, float]:
        """Median absolute error of each figure over the runs (L0 correlation: median)."""
        return _medians([r.errors for r in self.results])

    def median_noise(self) -> dict[str, float]:
        """Median absolute real run-to-run difference (repeats only)."""
        return _medians([r.noise for r in self.results if r.noise is not None])

    def median_seed_spread(self) -> dict[str, float]:
        """Median absolute seed-to-seed difference of the simulations (several seeds only)."""
        return _medians([r.seed_spread for r in self.results if r.seed_spread is not None])

    def by_jobs_against_cores(self) -> list[JobsGroup]:
        """The runs split by whether their `max_background_jobs` exceeds the machine's cores
        (more runnable threads than cores, issue 13): each group's median |throughput
        error| against its own median |noise|, since busier runs vary more between repeats.
        Empty unless both groups have runs."""
        groups = {False: [], True: []}  # type: dict[bool, list[TraceResult]]
        for result in self.results:
            jobs = background_jobs(result.real)
            if jobs is not None:
                groups[jobs > self.cores].append(result)
        if not (groups[False] and groups[True]):
            return []
        return [JobsGroup(more, len(members),
                          median_abs([r.errors["throughput"] for r in members]),
                          median_abs([r.noise["throughput"] for r in members
                                      if r.noise is not None]))
                for more, members in groups.items()]

    def as_dict(self) -> dict[str, Any]:
        def plain(values: dict[str, float] | None) -> dict[str, Any] | None:
            return None if values is None else {k: as_plain(v) for k, v in values.items()}

        figures = ("throughput_ops_per_s", "stall_fraction", "tail_throughput_p99_ops_per_s",
                   "tail_throughput_p95_ops_per_s", "write_amplification", "flush_count", "compaction_count", "max_l0_files",
                   *[db_write_key(p) for p in DB_WRITE_PERCENTILES])
        return {
            "machine": self.machine,
            "mechanisms_off": self.mechanisms_off,
            "host_speed": self.host_speed,
            "seeds": self.seeds,
            "traces": [{"label": r.label, "path": str(r.path), "device": r.device,
                        "host_cpu_scale": (r.host.cpu_scale if r.host and r.host.measured
                                           else None),
                        "host_writer_scale": r.host.writer_scale if r.host else None,
                        "host_other_cores": r.other_cores,
                        "real": {k: as_plain(r.real.summary.get(k, math.nan)) for k in figures},
                        "simulated": {k: as_plain(r.sim.summary.get(k, math.nan))
                                      for k in figures},
                        "simulated_seeds": [int(s.config["seed"]) for s in r.sims],
                        "errors": plain(r.errors), "noise_floor": plain(r.noise),
                        "seed_spread": plain(r.seed_spread)}
                       for r in self.results],
            "median_abs_errors": plain(self.median_errors()),
            "median_abs_noise_floor": plain(self.median_noise()),
            "median_abs_seed_spread": plain(self.median_seed_spread()),
            "ranking": {k: as_plain(v) for k, v in self.ranking.items()},
            "throughput_by_jobs_against_cores": [
                {"more_jobs_than_cores": g.more_jobs_than_cores, "runs": g.runs,
                 "median_abs_error": as_plain(g.median_abs_error),
                 "median_abs_noise_floor": as_plain(g.median_abs_noise)}
                for g in self.by_jobs_against_cores()],
            "failed": self.failed,
        }


@dataclass(frozen=True)
class JobsGroup:
    """The runs with at most (or more) background jobs than cores, and their throughput's
    median |error| and median |noise| (NaN without repeats)."""

    more_jobs_than_cores: bool
    runs: int
    median_abs_error: float
    median_abs_noise: float


def background_jobs(trace: Trace) -> int | None:
    """The run's `max_background_jobs` as its options give it (None if they do not)."""
    jobs = trace.config.get("options", {}).get("max_background_jobs")
    return int(jobs) if isinstance(jobs, (int, float)) else None


def _medians(rows: list[dict[str, float]]) -> dict[str, float]:
    if not rows:
        return {}
    medians = {name: median_abs([row[name] for row in rows]) for name in error_names()}
    correlations = [row["l0_correlation"] for row in rows if row["l0_correlation"] == row["l0_correlation"]]
    medians["l0_correlation"] = float(np.median(correlations)) if correlations else math.nan
    return medians


def _on_host(machine: MachineProfile, host: HostSpeed | None,
             load: HostLoad | None = None) -> MachineProfile:
    """The profile at the host's measured speed (as it is when not measured): its job
    costs at the jobs' scale, its writer's at the writer's where the runs measured it; less
    the cores the run's other work took (`other_cores_taken`)."""
    if host is not None and (host.measured or host.writer_measured):
        machine = with_cpu_scale(machine, host.cpu_scale, host.writer_scale)
    return less_other_work(machine, load)


# Other work a run is simulated beside takes at most this share of the cores: a record of
# more (a capture beside a heavy job) is not a machine the model can say much about.
MAX_OTHER_SHARE = 0.9


def other_cores_taken(machine: MachineProfile, load: HostLoad | None) -> float:
    """The cores' worth of CPU a run's recorded other work takes from `machine`."""
    return min(counted_other_cores(load), MAX_OTHER_SHARE * machine.cores)


def less_other_work(machine: MachineProfile, load: HostLoad | None) -> MachineProfile:
    """`machine` as a run had it: less the cores its host's recorded other work took."""
    taken = other_cores_taken(machine, load)
    return dataclasses.replace(machine, other_work_cores=taken) if taken else machine


def validate(folders: Sequence[Path], machine: MachineProfile, device: str | None = None,
             max_seconds: float | None = None, workers: int = 2,
             device_dir: Path | None = None, progress: str = "",
             without: Sequence[str] = (), seed: int | None = None,
             seeds: int = 1, host_speed: str = "log") -> ValidationReport:
    """Re-simulate every run folder and compare (see the module docstring). `device`
    overrides the device named by each folder's path (DEFAULT_DEVICE when none is);
    `device_dir` holds fitted device files that replace presets of the same name; `without`
    names resource-model mechanisms to switch off (`lsmsim.mechanisms`), to see what each
    does to the errors. Each run is simulated `seeds` times, with seeds counted up from
    `seed` (default: the run's own db_bench --seed), so the seeds' spread can be held
    against the real repeats' (the model's run-to-run variability). `host_speed` is one of
    HOST_SPEEDS: each run at its host session's measured speed (`session_hosts`), its
    writer's measured apart (`log`) or not (`jobs`), or on `machine` as it is (`profile`).
    A run that fails is in `failed`; on Ctrl-C or SIGTERM, raises
    `worker_pool.Interrupted` carrying the report of the runs done (the others failed with
    NOT_RUN)."""
    if host_speed not in HOST_SPEEDS:
        raise ValueError(f"host_speed {host_speed!r}: not one of {', '.join(HOST_SPEEDS)}")
    folders = check_run_folders(folders)
    devices = run_devices(folders, device, device_dir)
    off = tuple(Mechanisms.without(without).switched_off())  # an unknown name fails here
    stopped: Interrupted | None = None
    try:
        hosts = (session_hosts(folders, machine, max_seconds, workers,
                               writer=host_speed == "log")
                 if host_speed != "profile" else [None] * len(folders))
    except Interrupted as stop:
        raise stop.carrying(ValidationReport(machine.name, [], ranking_agreement([]),
                                             mechanisms_off=list(off), host_speed=host_speed))
    loads = host_loads(folders) if host_speed != "profile" else [None] * len(folders)
    # A run whose files could not be read for its host's speed or load fails with that error.
    pairs: list[Any] = [h if isinstance(h, JobFailed) else (
        load if isinstance(load, JobFailed) else None) for h, load in zip(hosts, loads)]
    todo = [i for i, pair in enumerate(pairs) if pair is None]
    jobs = [(folders[i], devices[i], _on_host(machine, hosts[i], loads[i]), max_seconds, off,
             seed, seeds) for i in todo]
    try:
        done = run_jobs(_simulate_folder, jobs, workers, progress=progress)
    except Interrupted as stop:
        done, stopped = stop.results, stop
    for i, pair in zip(todo, done):
        pairs[i] = pair
    hosts = [h if isinstance(h, HostSpeed) else None for h in hosts]
    taken = [other_cores_taken(machine, load) if isinstance(load, HostLoad) else 0.0
             for load in loads]
    labels = short_labels(folders)
    results = [TraceResult(label, folder, dev, pair[0], pair[1][0],
                           seed_errors(pair[0], pair[1]), sims=pair[1],
                           seed_spread=seed_spread(pair[1]), host=host, other_cores=other)
               for label, folder, dev, pair, host, other
               in zip(labels, folders, devices, pairs, hosts, taken)
               if isinstance(pair, tuple)]
    failed = {label: NOT_RUN if pair is None else pair.error
              for label, pair in zip(labels, pairs) if not isinstance(pair, tuple)}
    groups: dict[str, list[TraceResult]] = {}
    for result in results:
        groups.setdefault(configuration_key(result.path) + "@" + result.device, []).append(result)
    for members in groups.values():
        if len(members) >= 2:
            for member in members:
                other = members[1] if member is members[0] else members[0]
                member.noise = compare(other.real, member.real)
    report = ValidationReport(machine.name, results, ranking_agreement(list(groups.values())),
                              failed, list(off), seeds=seeds, host_speed=host_speed,
                              cores=machine.cores)
    if stopped is not None:
        raise stopped.carrying(report)
    return report


def ranking_agreement(groups: list[list[TraceResult]]) -> dict[str, Any]:
    """Spearman's rho and Kendall's tau between the real and simulated mean throughput of
    the configurations (repeats averaged), and the pairs the simulation orders the other
    way round (with the real gap, to hold against the noise floor)."""
    names = [g[0].label if len(g) == 1 else _REPEAT.sub("", g[0].label) for g in groups]
    real = [float(np.mean([r.real.summary["throughput_ops_per_s"] for r in g])) for g in groups]
    sim = [float(np.mean([r.sim.summary["throughput_ops_per_s"] for r in g])) for g in groups]
    swapped = []
    for i in range(len(groups)):
        for j in range(i + 1, len(groups)):
            if (real[i] - real[j]) * (sim[i] - sim[j]) < 0:
                gap = abs(real[i] - real[j]) / max(real[i], real[j])
                swapped.append(f"{names[i]} vs {names[j]} (real gap {100 * gap:.1f}%)")
    enough = len(groups) >= 2 and len(set(real)) > 1 and len(set(sim)) > 1
    from scipy.stats import kendalltau, spearmanr  # slow to import: only when validating

    return {
        "configurations": len(groups),
        "spearman": float(spearmanr(real, sim)[0]) if enough else math.nan,
        "kendall": float(kendalltau(real, sim)[0]) if enough else math.nan,
        "swapped_pairs": swapped,
        "preserved": not swapped,
    }


def format_report(report: ValidationReport) -> str:
    """The per-run table, its noise-floor rows, the medians and the ranking."""
    names = error_names()
    short = {"throughput": "thr", "stall_fraction": "stall", "tail_throughput": "tail",
             "tail_throughput_p95": "tail95", "write_amplification": "WA",
             "flush_count": "flushes", "compaction_count": "compactions",
             "throughput_w1": "W1/mean", "throughput_ks": "KS",
             "l0_mean_abs_diff": "L0 |d|", "l0_correlation": "L0 r",
             "db_write_p99": "write p99"}
    width = max((len(r.label) for r in report.results), default=0) + 2
    width = max(width, len("median |error|") + 2)
    head = (f"{'run':<{width}}{'device':<{DEVICE_WIDTH}}{'host':>{HOST_WIDTH}}"
            f"{'real ops/s':>11}{'sim ops/s':>11}"
            + "".join(f"{short[n]:>{_cell_width(n)}}" for n in names))
    off = f"; without {', '.join(report.mechanisms_off)}" if report.mechanisms_off else ""
    seeds = (f"; {report.seeds} seeds per run (error: median over them; seeds = other seeds "
             "vs the first)" if report.seeds > 1 else "")
    lines = [f"machine: {report.machine}{off}; error = simulated vs real "
             f"(noise = this run's repeat vs this run){seeds}", head]

    def row(label: str, device: str, real: str, sim: str, values: dict[str, float],
            signed: bool = True, host: str = "") -> str:
        return (f"{label:<{width}}{device:<{DEVICE_WIDTH}}{host:>{HOST_WIDTH}}{real:>11}{sim:>11}"
                + "".join(format_difference(n, values.get(n, math.nan), signed).rjust(
                    _cell_width(n)) for n in names))

    notes = [f"note: {r.label}: the simulation ended after its --num puts at "
             f"{r.sim.summary['duration_s']:.0f} s, the real run at "
             f"{r.real.summary['duration_s']:.0f} s"
             for r in report.results
             if r.sim.summary["duration_s"] < r.real.summary["duration_s"] - 1.0]
    notes += [f"note: {r.label}: other work took {r.other_cores:.2f} of {report.cores} cores "
              f"during the real run (its capture's host load): simulated with "
              f"{report.cores - r.other_cores:.2f}" for r in report.results
              if r.other_cores >= BUSY_OTHER_CORES]
    ungrouped = [r.label for r in report.results
                 if r.sim.config["workload"].get("threads", 1) > 1
                 and not r.sim.config["machine"].get("write_group_cpu_s_per_writer")
                 and "write_group" not in report.mechanisms_off]
    if ungrouped:
        notes.append(f"note: {', '.join(ungrouped)}: more than one client thread, but "
                     f"{report.machine} has no write_group_ns_per_writer: its client threads "
                     "never wait for each other, and on a machine with fewer cores than "
                     "threads the simulated writer is too fast (lsmsim calibrate measures it "
                     "from runs with one client thread and more; lsmsim/write_group.py)")
    for r in report.results:
        lines.append(row(r.label, device_label(r.device),
                         f"{r.real.summary['throughput_ops_per_s']:,.0f}",
                         f"{r.sim.summary['throughput_ops_per_s']:,.0f}", r.errors,
                         host=_host_label(r.host)))
        if r.noise is not None:
            lines.append(row("  noise (repeat)", "", "", "", r.noise))
        if r.seed_spread is not None:
            lines.append(row("  seeds", "", "", "", r.seed_spread, signed=False))
    lines.append(row("median |error|", "", "", "", report.median_errors(), signed=False))
    if any(r.noise is not None for r in report.results):
        lines.append(row("median |noise|", "", "", "", report.median_noise(), signed=False))
        lines.append(noise_multiples(report.median_errors(), report.median_noise(), short))
    lines += jobs_against_cores_lines(report)
    if report.seeds > 1:
        lines.append(row("median |seeds|", "", "", "", report.median_seed_spread(),
                         signed=False))
    ranking = report.ranking
    if ranking["configurations"] >= 2:
        lines.append(f"ranking of {ranking['configurations']} configurations by mean throughput:"
                     f" Spearman {ranking['spearman']:.2f}, Kendall {ranking['kendall']:.2f}, "
                     + ("preserved" if ranking["preserved"] else
                        "swapped: " + "; ".join(ranking["swapped_pairs"])))
    labels = error_labels()
    lines += notes
    lines.append("columns: " + ", ".join(
        [HOST_COLUMN if report.host_speed != "profile" else HOST_COLUMN_OFF]
        + [f"{short[n]} = {labels[n]}" for n in names]))
    files = sorted({r.device for r in report.results if r.device.endswith(".toml")})
    if files:
        lines.append("device files (name*): " + ", ".join(files))
    lines += [f"FAILED {label}: {error}" for label, error in report.failed.items()]
    return "\n".join(lines)


def jobs_against_cores_lines(report: ValidationReport) -> list[str]:
    """One line per group of `ValidationReport.by_jobs_against_cores`."""
    lines = []
    for group in report.by_jobs_against_cores():
        side = "more than" if group.more_jobs_than_cores else "at most"
        noise = ("" if math.isnan(group.median_abs_noise) else
                 f", median |noise| {100 * group.median_abs_noise:.1f}%")
        lines.append(f"runs with {side} {report.cores} background jobs ({report.cores} cores): "
                     f"{group.runs}, thr median |error| {100 * group.median_abs_error:.1f}%"
                     + noise)
    return lines


def _host_label(host: HostSpeed | None) -> str:
    """`x0.77`: the CPU-cost scale a run was simulated at; `-` where its LOG could not tell;
    `x0.77/0.93`: its writer's scale after the slash, where its threads.csv told it."""
    if host is None:
        return ""
    jobs = f"x{host.cpu_scale:.2f}" if host.measured else "-"
    return jobs if host.writer_scale is None else f"{jobs}/{host.writer_scale:.2f}"


def noise_multiples(errors: dict[str, float], noise: dict[str, float],
                    short: dict[str, str]) -> str:
    """The median errors as multiples of the noise floor, for the figures whose error is a
    distance (the lower the better) and whose noise floor is not zero."""
    cells = [f"{short[n]} {errors[n] / noise[n]:.1f}x" for n in error_names()
             if n != "l0_correlation" and noise.get(n, 0.0) > 0 and errors.get(n) == errors.get(n)]
    return "median |error| / median |noise|: " + ", ".join(cells)


def device_label(device: str) -> str:
    """A preset's name, or a device file's name marked `*` (fitted or user files)."""
    return f"{Path(device).stem}*" if device.endswith(".toml") else device


def _cell_width(name: str) -> int:
    return 13 if name in ("compactions", "compaction_count") else 11 if name == "db_write_p99" else 9
