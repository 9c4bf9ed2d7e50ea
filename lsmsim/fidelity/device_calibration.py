"""Fit a storage device's effective write bandwidth and two-stream scaling to the flush and
compaction jobs of real runs (`lsmsim calibrate --device-out DIR`).

What a RocksDB LOG measures of the device: each job's wall time (its *_started to
*_finished EVENT_LOG_v1 events), its CPU time and the bytes it wrote (its
table_file_creation events). A compaction's CPU is its `compaction_time_cpu_micros`
(thread CPU time, user and system, so the copies into the page cache are in it); a flush's
is not logged by 6.x or 7.x per job, so it comes from the machine profile's flush costs
(measured from DUMPING STATS' CompMergeCPU, `lsmsim.fidelity.calibration.measured_costs`). The rest of
a job's wall time is time its thread was blocked: with buffered I/O and bytes_per_sync=0
mostly the Sync of each output file (BuildTable and FinishCompactionOutputFile call
WritableFileWriter::Sync; the kernel writes the file back only then) and the MANIFEST
write of the result. Compaction inputs were page-cache hits on the runs this was built
for (buffered I/O, 128 GB of RAM), so read bandwidth is not identified and stays the
preset's. Assumes that a job never waited for a core (true when cores outnumber threads,
as on the ADOC server's 40).

The model is the simulator's own (`BackgroundJob.thread_cap`, `lsmsim.fluid_share`): a job
thread's CPU time and its own device time add up, the device gives `write_bps * scaling(n)`
bytes per second in total to `n` concurrent streams, shared max-min fair, where `n` counts
the threads in I/O (`fluid_share.io_streams`: each job's share of time blocked on its own
writes) and `scaling` is linear between its points, as the device model reads it. The jobs are
replayed with it: each starts at its real start (or when the previous job of its kind ended
in the replay: one flush and one compaction slot), and the fit minimises

    L = mean over jobs of ln(duration_replayed / duration_real)^2

over the one-stream bandwidth `write_bps` and the two-stream fraction `scaling(2)` (total
bandwidth of two streams over one's), Nelder-Mead in log space. Jobs that ran alone fix the
first, overlapping ones the second. A figure is kept from the preset, not fitted, when the
device is not what the jobs wait for (blocked time under MIN_DEVICE_SHARE of their wall
time: PM), when its ±10% moves L by less than FLAT_TOLERANCE, or (the two-stream fraction)
when fewer than MIN_OVERLAPPED jobs overlapped another.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from lsmsim.device_models import MB, DeviceModel, load_device
from lsmsim.data_file import toml_text
from lsmsim.fidelity.job_cost_spread_fit import MIN_GROUP_JOBS, MIN_SPREAD_JOBS, spread_table
from lsmsim.fluid_share import Demand, allocate, io_streams
from lsmsim.machine import MachineProfile
from lsmsim.storage_device import rated_write_bps
from lsmsim.trace import Trace

MIN_DEVICE_SHARE = 0.2      # blocked share of job wall time below which the device is not fitted
FLAT_TOLERANCE = 0.01       # a figure whose ±10% changes L less than this is not identified
MIN_OVERLAPPED = 10         # jobs that overlapped another, at least, to fit scaling(2)
OVERLAPPED_FRACTION = 0.5   # a job counts as overlapped when another ran this share of its time
ALONE_FRACTION = 0.05       # ... and as alone when another ran under this share of its time
MIN_JOB_BYTES = 1 << 20     # smaller jobs (their fixed costs dominate) are left out
SCALING_BOUNDS = (0.25, 2.0)
RUNS_DISAGREE = 1.3         # runs whose alone-job bandwidths differ by more are noted
SCALING_GRID = 15           # log-spaced scaling(2) values tried before Nelder-Mead
BANDWIDTH_FACTOR = 10.0     # write_bps is searched within this factor of its first estimate
SENSITIVITY_STEP = 0.10


class DeviceCalibrationError(ValueError):
    """Runs whose jobs cannot be measured (no jobs, a job without its CPU time)."""


@dataclass(frozen=True)
class MeasuredJob:
    """A flush or compaction as the LOG measured it."""

    kind: str
    start_s: float
    wall_s: float
    cpu_s: float
    write_bytes: float


def measured_jobs(trace: Trace, machine: MachineProfile, label: str) -> list[MeasuredJob]:
    """The trace's finished flushes and compactions that wrote at least MIN_JOB_BYTES, with
    their CPU time (module docstring); `label` names the run in errors."""
    cpu_us: dict[Any, float] = {}
    entries: dict[Any, float] = {}
    for event in trace.events:
        name = event.get("event")
        if name == "compaction_finished" and "compaction_time_cpu_micros" in event:
            cpu_us[event.get("job")] = float(event["compaction_time_cpu_micros"])
        elif name == "flush_started":
            entries[event.get("job")] = float(event.get("num_entries", 0))
    jobs = []
    for job in trace.jobs():
        if job.output_bytes < MIN_JOB_BYTES or job.duration_s <= 0:
            continue
        if job.kind == "compaction":
            if job.job not in cpu_us:
                raise DeviceCalibrationError(
                    f"{label}: compaction_finished of job {job.job} has no "
                    "compaction_time_cpu_micros: the device time cannot be measured")
            cpu_s = cpu_us[job.job] * 1e-6
        else:
            cpu_s = machine.flush_cpu_s(job.input_bytes, entries.get(job.job, 0.0))
        jobs.append(MeasuredJob(job.kind, job.start_s, job.duration_s, cpu_s, job.output_bytes))
    return jobs


def overlapped_fractions(jobs: Sequence[MeasuredJob]) -> np.ndarray:
    """Share of each job's wall time during which another job of the list ran."""
    starts = np.asarray([j.start_s for j in jobs])
    ends = starts + np.asarray([j.wall_s for j in jobs])
    fractions = np.zeros(len(jobs))
    for i, job in enumerate(jobs):
        overlap = np.clip(np.minimum(ends, ends[i]) - np.maximum(starts, starts[i]), 0.0, None)
        overlap[i] = 0.0
        fractions[i] = min(1.0, overlap.sum() / job.wall_s)
    return fractions


def replay_durations(runs: Sequence[Sequence[MeasuredJob]], write_bps: float,
                     two_stream_scaling: float, cores: int) -> np.ndarray:
    """Each job's duration when the runs' jobs are replayed on a device of one-stream write
    bandwidth `write_bps` whose two concurrent streams get `two_stream_scaling` times it in
    total (module docstring), in the order of the runs and their jobs."""
    durations = []
    for jobs in runs:
        durations.append(_replay_run(jobs, write_bps, two_stream_scaling, float(cores)))
    return np.concatenate(durations) if durations else np.zeros(0)


def _replay_run(jobs: Sequence[MeasuredJob], write_bps: float, two_stream_scaling: float,
                cores: float) -> np.ndarray:
    order = sorted(range(len(jobs)), key=lambda i: jobs[i].start_s)
    waiting = {kind: [i for i in order if jobs[i].kind == kind] for kind in ("flush", "compaction")}
    free_at = {"flush": -math.inf, "compaction": -math.inf}
    started = [0.0] * len(jobs)
    durations = np.zeros(len(jobs))
    running: dict[int, float] = {}  # job index -> work remaining (1 -> 0)
    now = min((j.start_s for j in jobs), default=0.0)
    while running or any(waiting.values()):
        for kind, queue in waiting.items():  # a slot takes its next job once both are ready
            if queue and not any(jobs[i].kind == kind for i in running):
                first = queue[0]
                begin = max(jobs[first].start_s, free_at[kind])
                if begin <= now:
                    queue.pop(0)
                    started[first] = now
                    running[first] = 1.0
        members = list(running)
        streams = io_streams([(jobs[i].cpu_s, jobs[i].write_bytes / write_bps) for i in members],
                             [1.0] * len(members))
        # scaling(n) between its points (1, 1) and (2, two_stream_scaling), flat outside.
        scaling = 1.0 + (two_stream_scaling - 1.0) * min(max(streams - 1.0, 0.0), 1.0)
        demands = [Demand([jobs[i].cpu_s, jobs[i].write_bytes / (write_bps * scaling), 0.0],
                          1.0 / (jobs[i].cpu_s + jobs[i].write_bytes / write_bps))
                   for i in members]
        rates = allocate([cores, 1.0, None], demands) if demands else []
        next_start = min((max(jobs[q[0]].start_s, free_at[k]) for k, q in waiting.items()
                          if q and not any(jobs[i].kind == k for i in running)), default=math.inf)
        to_end = min((running[i] / rate for i, rate in zip(members, rates)), default=math.inf)
        step = min(to_end, next_start - now)
        now += step
        for i, rate in zip(members, rates):
            if running[i] / rate <= step * (1 + 1e-12):
                del running[i]
                durations[i] = now - started[i]
                free_at[jobs[i].kind] = now
            else:
                running[i] -= rate * step
    return durations


def alone_write_MBps(runs: Sequence[Sequence[MeasuredJob]],
                     labels: Sequence[str]) -> dict[str, float]:
    """Per run, bytes written over time blocked of the jobs that ran alone: the one-stream
    figure each run gives by itself (how far the runs agree)."""
    figures = {}
    for label, jobs in zip(labels, runs):
        alone = [j for j, f in zip(jobs, overlapped_fractions(jobs)) if f < ALONE_FRACTION]
        blocked = sum(max(j.wall_s - j.cpu_s, 0.0) for j in alone)
        if alone and blocked > 0:
            figures[label] = round(sum(j.write_bytes for j in alone) / blocked / MB, 1)
    return figures


def job_time_spread(runs: Sequence[Sequence[MeasuredJob]]) -> tuple[list[float] | None, str]:
    """The device's `job_time_spread` table (`lsmsim.device_time_spread`) the runs'
    compactions that ran alone measure: each one's time blocked per byte written over the
    geometric mean of its run's (runs with fewer than MIN_GROUP_JOBS such compactions left
    out), as equally likely multipliers; None when fewer than MIN_SPREAD_JOBS in all. With a
    note saying from what."""
    ratios = []
    for jobs in runs:
        logs = [math.log((j.wall_s - j.cpu_s) / j.write_bytes)
                for j, f in zip(jobs, overlapped_fractions(jobs))
                if j.kind == "compaction" and f < ALONE_FRACTION and j.wall_s > j.cpu_s]
        if len(logs) >= MIN_GROUP_JOBS:
            ratios.append(np.exp(np.asarray(logs) - np.mean(logs)))
    measured = np.concatenate(ratios) if ratios else np.zeros(0)
    if measured.size < MIN_SPREAD_JOBS:
        return None, (f"job_time_spread not measured: {measured.size} compactions ran alone "
                      f"in runs with {MIN_GROUP_JOBS} or more such, {MIN_SPREAD_JOBS} needed")
    return spread_table(measured), (
        f"job_time_spread measured from {measured.size} compactions that ran alone: time "
        f"blocked per byte written, relative to their run's mean; sd of its log "
        f"{np.log(measured).std():.3f}, 5th-95th percentile "
        f"{np.quantile(measured, 0.05):.2f}-{np.quantile(measured, 0.95):.2f}")


def replay_loss(runs: Sequence[Sequence[MeasuredJob]], write_bps: float,
                two_stream_scaling: float, cores: int) -> float:
    """L of the module docstring."""
    real = np.asarray([j.wall_s for jobs in runs for j in jobs])
    replayed = replay_durations(runs, write_bps, two_stream_scaling, cores)
    return float(np.mean(np.log(np.maximum(replayed, 1e-9) / real) ** 2))


@dataclass
class DeviceFit:
    """A device fitted to runs on it: the values, whether each is identified, and how."""

    preset: DeviceModel
    runs: list[str]
    jobs: int
    overlapped_jobs: int
    blocked_share: float
    write_bps: float | None          # None: not identified, the preset's is kept
    two_stream_scaling: float | None
    loss: float
    preset_loss: float
    alone_MBps_by_run: dict[str, float] = field(default_factory=dict)
    sensitivity: dict[str, dict[str, float]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    job_time_spread: list[float] | None = None  # measured (`job_time_spread`), or not

    @property
    def identified(self) -> bool:
        return self.write_bps is not None

    def device(self) -> DeviceModel:
        """The preset with the fitted figures in place (write_scaling beyond two streams:
        the preset's shape relative to its two-stream point, not observed); it keeps the
        preset's rating (`rated_write_bps`), which fitting does not change."""
        if self.write_bps is None:
            return self.preset
        points = _relative_scaling(self.preset.write_scaling)
        ratio = _preset_two_stream(self.preset)
        scaling2 = self.two_stream_scaling if self.two_stream_scaling is not None else ratio
        scaled = [(n, 1.0 if n == 1 else value * scaling2 / ratio) for n, value in points]
        if 2 not in dict(scaled):
            scaled = sorted(scaled + [(2, scaling2)])
        return dataclasses.replace(self.preset, write_bps=self.write_bps,
                                   write_scaling=tuple(scaled),
                                   rated_write_bps=rated_write_bps(self.preset),
                                   job_time_spread=tuple(self.job_time_spread
                                                         or self.preset.job_time_spread))

    def record(self) -> dict[str, Any]:
        """The [calibration] table of the fitted device's TOML file."""
        preset_one_stream = self.preset.bandwidth_bps(1, False)[1]
        return {
            "preset": self.preset.name,
            "runs": self.runs,
            "jobs": self.jobs,
            "overlapped_jobs": self.overlapped_jobs,
            "blocked_share_of_job_time": round(self.blocked_share, 4),
            "loss_definition": "mean over jobs of ln(replayed/real duration)^2",
            "loss": round(self.loss, 6),
            "preset_loss": round(self.preset_loss, 6),
            "fitted": {k: v for k, v in (
                ("write_MBps_one_stream", _rounded(self.write_bps, MB)),
                ("write_scaling_two_streams", _rounded(self.two_stream_scaling, 1.0)))
                if v is not None},
            "alone_write_MBps_by_run": self.alone_MBps_by_run,
            "preset_values": {"write_MBps_one_stream": round(preset_one_stream / MB, 1),
                              "write_scaling_two_streams": round(_preset_two_stream(self.preset), 4)},
            "sensitivity": {"relative_loss_change_at_minus_10pct":
                            {k: v["minus"] for k, v in self.sensitivity.items()},
                            "relative_loss_change_at_plus_10pct":
                            {k: v["plus"] for k, v in self.sensitivity.items()}},
            "notes": self.notes,
        }

    def toml(self) -> str:
        """A device file `device_models.load_device` reads back to `device()`."""
        device = self.device()
        fields: dict[str, Any] = {
            "name": f"{self.preset.name}-fitted",
            "description": f"{self.preset.description}; write bandwidth fitted by lsmsim "
                           "calibrate to the flush and compaction jobs of real runs",
            "source": "fitted (see [calibration]); the rest from the preset: "
                      + self.preset.source,
            "read_MBps": device.read_bps / MB, "write_MBps": round(device.write_bps / MB, 1),
            "read_latency_us": round(device.read_latency_s * 1e6, 6),
            "write_latency_us": round(device.write_latency_s * 1e6, 6),
            "read_scaling": [list(p) for p in device.read_scaling],
            "write_scaling": [[n, round(v, 4)] for n, v in device.write_scaling],
            "mixed_efficiency": device.mixed_efficiency,
        }
        if device.random_read_iops:
            fields["random_read_kiops"] = device.random_read_iops / 1000.0
        if device.program_latency_s:
            fields["program_latency_us"] = round(device.program_latency_s * 1e6, 6)
        if device.gc_write_amplification and device.gc_unit_bytes:
            fields["gc_write_amplification"] = device.gc_write_amplification
            fields["gc_unit_MB"] = round(device.gc_unit_bytes / MB, 1)
        if device.gc_base_write_amplification > 1.0:
            fields["gc_base_write_amplification"] = device.gc_base_write_amplification
        fields["rated_write_MBps"] = round(device.rated_write_bps / MB, 1)
        if device.job_time_spread:
            fields["job_time_spread"] = list(device.job_time_spread)
        fields["calibration"] = self.record()
        return toml_text(fields)


def _rounded(value: float | None, unit: float) -> float | None:
    return None if value is None else round(value / unit, 4)


def _relative_scaling(points: tuple[tuple[int, float], ...]) -> list[tuple[int, float]]:
    """Scaling points relative to the one-stream value (one stream = 1.0)."""
    first = points[0][1] if points[0][0] == 1 else 1.0
    return [(n, v / first) for n, v in points]


def _preset_two_stream(device: DeviceModel) -> float:
    """Total write bandwidth of two streams over one stream's."""
    return device.bandwidth_bps(2, False)[1] / device.bandwidth_bps(1, False)[1]


def fit_device(preset: str, labelled_traces: Sequence[tuple[str, Trace]],
               machine: MachineProfile, max_evaluations: int = 60) -> DeviceFit:
    """Fit the device `preset` (a preset name or file) to the jobs of the runs on it (module
    docstring), and measure its `job_time_spread`; `machine` gives the cores and the flush
    CPU costs."""
    runs = [measured_jobs(trace, machine, label) for label, trace in labelled_traces]
    fit = fit_jobs(load_device(preset), runs, [label for label, _ in labelled_traces],
                   machine.cores, max_evaluations)
    fit.job_time_spread, note = job_time_spread(runs)
    fit.notes.append(note)
    return fit


def fit_jobs(base: DeviceModel, runs: Sequence[Sequence[MeasuredJob]], labels: Sequence[str],
             cores: int, max_evaluations: int = 60) -> DeviceFit:
    """Fit `base`'s write figures to the measured jobs of the runs named by `labels`."""
    jobs = [j for run in runs for j in run]
    if not jobs:
        raise DeviceCalibrationError(f"{base.name}: the runs {', '.join(labels)} hold no "
                                     "finished flush or compaction to measure the device by")
    wall = np.asarray([j.wall_s for j in jobs])
    cpu = np.asarray([j.cpu_s for j in jobs])
    written = np.asarray([j.write_bytes for j in jobs])
    overlapped = np.concatenate([overlapped_fractions(run) for run in runs if run])
    blocked = np.maximum(wall - cpu, 0.0)
    share = float(blocked.sum() / wall.sum())
    one_stream, preset_scaling = base.bandwidth_bps(1, False)[1], _preset_two_stream(base)
    preset_loss = replay_loss(runs, one_stream, preset_scaling, cores)
    fit = DeviceFit(base, list(labels), len(jobs), int((overlapped >= OVERLAPPED_FRACTION).sum()),
                    share, None, None, preset_loss, preset_loss)
    if share < MIN_DEVICE_SHARE:
        fit.notes.append(f"not fitted: the jobs were blocked {100 * share:.0f}% of their wall "
                         f"time (under {100 * MIN_DEVICE_SHARE:.0f}%): the device is not what "
                         "they wait for, so its bandwidth is not identified; preset kept")
        return fit
    if cores < 3:  # the writer, a flush and a compaction thread
        fit.notes.append(f"{cores} cores: jobs may have waited for a core, which counts here "
                         "as device time (the fitted bandwidth is then too low)")
    alone = overlapped < ALONE_FRACTION
    fit.alone_MBps_by_run = alone_write_MBps(runs, labels)
    spread = list(fit.alone_MBps_by_run.values())
    if spread and max(spread) > RUNS_DISAGREE * min(spread):
        fit.notes.append(f"the runs disagree: their jobs that ran alone wrote at {min(spread):g} "
                         f"to {max(spread):g} MB/s (alone_write_MBps_by_run): one figure "
                         "cannot match them all; the fit is a compromise between them")
    pick = alone if alone.sum() >= 3 else np.ones(len(jobs), dtype=bool)
    start_bps = float(written[pick].sum() / max(blocked[pick].sum(), 1e-9))
    fit_scaling = fit.overlapped_jobs >= MIN_OVERLAPPED
    if not fit_scaling:
        fit.notes.append(f"write_scaling_two_streams kept from the preset: {fit.overlapped_jobs} "
                         f"jobs overlapped another (under {MIN_OVERLAPPED})")

    def loss_at(x: np.ndarray) -> float:
        scaling = math.exp(x[1]) if fit_scaling else preset_scaling
        return replay_loss(runs, math.exp(x[0]), scaling, cores)

    from scipy.optimize import minimize  # slow to import: only when fitting

    start = np.array([math.log(start_bps), math.log(preset_scaling)])
    bounds = [(start[0] - math.log(BANDWIDTH_FACTOR), start[0] + math.log(BANDWIDTH_FACTOR)),
              tuple(math.log(b) for b in SCALING_BOUNDS) if fit_scaling else (start[1], start[1])]
    if fit_scaling:  # L is flat in scaling(2) wherever the device is not saturated: grid first
        grid = np.linspace(*bounds[1], SCALING_GRID)
        start[1] = grid[int(np.argmin([loss_at(np.array([start[0], x])) for x in grid]))]
    simplex = np.vstack([start, start + [math.log(1.3), 0.0], start + [0.0, math.log(1.3)]])
    result = minimize(loss_at, start, method="Nelder-Mead", bounds=bounds,
                      options={"maxfev": max_evaluations, "initial_simplex": simplex,
                               "xatol": 0.005, "fatol": 1e-5})
    fit.loss = float(result.fun)
    write_bps, scaling = math.exp(result.x[0]), math.exp(result.x[1]) if fit_scaling else None
    values = {"write_MBps_one_stream": write_bps}
    if scaling is not None:
        values["write_scaling_two_streams"] = scaling

    def loss_with(key: str, factor: float) -> float:
        moved = {**values, key: values[key] * factor}
        return replay_loss(runs, moved["write_MBps_one_stream"],
                           moved.get("write_scaling_two_streams", preset_scaling), cores)

    fit.sensitivity = {key: {sign: round((loss_with(key, factor) - fit.loss) / max(fit.loss, 1e-12), 4)
                             for sign, factor in (("minus", 1 - SENSITIVITY_STEP),
                                                  ("plus", 1 + SENSITIVITY_STEP))}
                       for key in values}
    flat = [key for key, change in fit.sensitivity.items()
            if max(change.values()) < FLAT_TOLERANCE]
    if "write_MBps_one_stream" in flat:
        fit.notes.append("not fitted: the replay loss changes by under "
                         f"{100 * FLAT_TOLERANCE:.0f}% at ±10% of the write bandwidth; preset kept")
        return fit
    fit.write_bps = write_bps
    if "write_scaling_two_streams" in flat:
        fit.notes.append("write_scaling_two_streams kept from the preset: the loss is flat in it")
    else:
        fit.two_stream_scaling = scaling
    if not result.success:
        fit.notes.append(f"optimizer stopped: {result.message}")
    fit.notes.append("read figures, latencies and mixed_efficiency are the preset's: compaction "
                     "reads were page-cache hits, so the runs do not measure them")
    return fit


def write_fitted(fit: DeviceFit, out_dir: Path) -> Path | None:
    """Write `out_dir/<preset>.toml` for an identified fit (None and nothing written else)."""
    if not fit.identified:
        return None
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{fit.preset.name}.toml"
    path.write_text(fit.toml())
    return path
