"""`lsmsim calibrate`: fit a machine profile's CPU costs to real runs.

Physics first, few parameters. What a RocksDB LOG measures directly is measured, not fitted:

- compaction CPU per byte, per entry and per entry per log2 of the sorted runs merged
  (`MachineProfile.compaction_cpu_s`): each compaction's `compaction_time_cpu_micros`
  (thread CPU time, EVENT_LOG_v1 compaction_finished) against its `input_data_size`,
  `num_input_records` and input files, by non-negative least squares over all the runs'
  compactions;
- flush CPU per byte and per entry: `CompMergeCPU(sec)` against `Write(GB)` of the L0 row
  of each run's last DUMPING STATS (FlushJob records its CPU time in L0's compaction
  stats), entries from the workload's entry size;
- the CPU of deleting an obsolete file per byte of it (`unlink_ns_per_byte`,
  `lsmsim.obsolete_file_purge`): the LOG's "Deleted file ... immediately" lines
  (`lsmsim.fidelity.unlink_cost_fit`), where the LOG has them (RocksDB 7.x; 6.x logs none).

Per-entry costs are told apart from per-byte costs only by runs of different entry sizes;
with one entry size they are zero and the per-byte cost carries them.

With `device_out`, each device the runs ran on is then fitted to their flush and compaction
jobs (`lsmsim.fidelity.device_calibration`: one-stream write bandwidth and two-stream scaling, from the
time each job was blocked beyond its CPU), written to `device_out/<preset>.toml` when
identified, and the runs on it are simulated on that file from then on.

Where the run folders hold `threads.csv` (per-thread schedstat, `lsmsim trace capture`),
the wake-up figures of `lsmsim.wakeup_wait` are measured from it too.

The rest (by default `write_ns_per_op`, the foreground put's CPU cost; `--fit` names
others) is fitted in log space within [1/10, 10] times the start value: a coarse scan of
each cost alone, then Nelder-Mead,
each evaluation simulating every distinct command once (a process pool over runs).
`cores` is a fact of the machine and comes with the base profile, as do the held costs.
A run whose capture recorded other work on its host (`lsmsim.traces.host_load`) is simulated
with that much less CPU, as `lsmsim validate` simulates it by default: the fitted costs
are the machine's, not the busy host's.

The loss, summed over the runs (each run its own command line, for its real duration):

    L = sum( ln(thr_sim / thr_real)^2 + W_STALL (stall_sim - stall_real)^2
             + W_WA ln(wa_sim / wa_real)^2 )

with mean throughput in ops/s, the stall-time fraction (0..1) and write amplification;
W_STALL = 1 (10 points of stall weigh as a 10% throughput error), W_WA = 0.25 (write
amplification depends on the CPU costs only weakly; it is mostly the LSM's shape). The
sensitivity of each cost is the relative change of L when that cost alone is 10% lower
or higher than fitted.
"""

from __future__ import annotations

import dataclasses
import math
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, NamedTuple, Sequence

import numpy as np

from lsmsim.traces.db_bench import DbBenchSetup
from lsmsim.fidelity.device_calibration import DeviceFit, fit_device, write_fitted
from lsmsim.fidelity.job_cost_spread_fit import measure_spread
from lsmsim.fidelity.put_time_spread_fit import measure_put_spread
from lsmsim.machine import (COST_FIELDS, FITTED_BY_DEFAULT, READ_COSTS, MachineProfile,
                            cost_values, with_costs)
from lsmsim.fidelity.job_cpu import (HostSpeed, compaction_cpu_jobs, flush_cpu_row,
                                     sharing_factors)
from lsmsim.fidelity.write_group_fit import TurnFit, fit_turn, run_client_cpu
from lsmsim.fidelity.writer_cpu import measure_writer_cpu
from lsmsim.traces.thread_schedstat import group_totals
from lsmsim.trace import Trace
from lsmsim.fidelity.trace_validation import (check_run_folders, less_other_work,
                                              run_devices, run_setup)
from lsmsim.traces.host_load import HostLoad, counted_other_cores, read_host_load
from lsmsim.page_cache_writeback import synced_fraction
from lsmsim.fidelity.run_queue_idle_fit import estimate_idle_share
from lsmsim.fidelity.unlink_cost_fit import estimate_unlink_ns_per_byte
from lsmsim.traces.run_files import find_run_files
from lsmsim.fidelity.wakeup_wait_fit import estimate_wakeup_counts, estimate_wakeup_wait
from lsmsim.sweeps.progress import Progress
from lsmsim.sweeps.worker_pool import Interrupted, JobFailed, run_jobs

W_STALL = 1.0
W_WA = 0.25
SENSITIVITY_STEP = 0.10
BOUND_FACTOR = 10.0
SCAN_POINTS = 9  # per fitted cost, ln-spaced over [1/BOUND_FACTOR, BOUND_FACTOR] x start
# A fitted cost whose +10% changes the loss by less than this is not identified.
FLAT_TOLERANCE = 0.01
FLAT_STEP = 1.25
# Least figures a LOG must hold for a cost measured from it to count.
MIN_MEASURED_BYTES = 256 << 20
MIN_MEASURED_DELETIONS = 20


class CalibrationError(ValueError):
    """A calibration that cannot run (a parameter name that is not a cost, no runs)."""


@dataclass(frozen=True)
class Run:
    """A real run reduced to what the loss needs, and the simulation of its command."""

    label: str
    setup: DbBenchSetup
    device: str
    throughput_ops_per_s: float
    stall_fraction: float
    write_amplification: float
    load: HostLoad | None = None  # other work on its host, as its capture recorded it

    def machine(self, profile: MachineProfile) -> MachineProfile:
        """`profile` as this run had it: less the cores its host's other work took."""
        return less_other_work(profile, self.load)


@dataclass
class Calibration:
    """The fitted profile and how it was found."""

    profile: MachineProfile
    loss: float
    start_loss: float
    fitted: dict[str, float]
    measured: dict[str, float]
    held: dict[str, float]
    sensitivity: dict[str, dict[str, float]]
    runs: list[str]
    evaluations: int
    cpu_s: float  # this process and its (finished) worker processes
    wall_s: float
    notes: list[str] = field(default_factory=list)
    device_fits: list[DeviceFit] = field(default_factory=list)
    device_files: dict[str, str] = field(default_factory=dict)  # preset -> fitted file

    def record(self) -> dict[str, Any]:
        """The [calibration] table of the fitted profile's TOML file."""
        return {
            "loss": self.loss,
            "start_loss": self.start_loss,
            "loss_definition": "sum over runs of ln(thr_sim/thr_real)^2 + "
                               f"{W_STALL} (stall_sim - stall_real)^2 + "
                               f"{W_WA} ln(wa_sim/wa_real)^2",
            "runs": self.runs,
            "evaluations": self.evaluations,
            "cpu_s": round(self.cpu_s, 1),
            "wall_s": round(self.wall_s, 1),
            "fitted": self.fitted,
            "measured_from_runs": self.measured,  # LOGs and threads.csv
            "held_from_base_profile": self.held,
            "notes": self.notes,
            **({"device_files": self.device_files} if self.device_fits else {}),
            "sensitivity": {"relative_loss_change_at_minus_10pct":
                            {k: v["minus"] for k, v in self.sensitivity.items()},
                            "relative_loss_change_at_plus_10pct":
                            {k: v["plus"] for k, v in self.sensitivity.items()}},
        }


class JobRows(NamedTuple):
    """A job kind's measured CPU beside what each of its costs is per (one row a
    compaction, or a run's flushes together): what `per_unit_costs` fits."""

    columns: dict[str, np.ndarray]  # cost name -> its units (bytes, entries, ...) a row
    cpu_ns: np.ndarray  # the rows' CPU, net of codec and I/O requests, over core sharing
    size: np.ndarray    # the rows' bytes (the fit's weights)


def job_rows(traces: Sequence[Trace], base: MachineProfile
             ) -> tuple[JobRows | None, JobRows | None]:
    """The runs' compactions (`compaction_cpu_jobs`, a row each) and flushes
    (`flush_cpu_row`, a row per run) as rows of their costs, each None when the runs hold
    under MIN_MEASURED_BYTES of it; each run's core-sharing factors found once for both."""
    factors = [sharing_factors(trace, base) for trace in traces]
    return (_compaction_rows(traces, factors, base), _flush_rows(traces, factors, base))


def _compaction_rows(traces: Sequence[Trace], factors: Sequence[Mapping[int, float]],
                     base: MachineProfile) -> JobRows | None:
    jobs = [job for trace, found in zip(traces, factors)
            for job in compaction_cpu_jobs(trace, found)]
    if sum(job.input_bytes for job in jobs) < MIN_MEASURED_BYTES:
        return None
    size, entries, runs, cpu_ns, requests, sharing = np.asarray(
        [(job.input_bytes, job.entries, job.sorted_runs,
          job.cpu_ns - base.codec_cpu_s(job.codec, job.output_bytes, job.input_bytes) * 1e9,
          job.requests, job.core_sharing) for job in jobs], dtype=float).T
    return JobRows({"compaction_ns_per_byte": size, "compaction_ns_per_entry": entries,
                    "compaction_merge_ns_per_entry_per_log2_run": entries * np.log2(runs)},
                   cpu_ns / sharing - base.io_request_cpu_s * 1e9 * requests, size)


def _flush_rows(traces: Sequence[Trace], factors: Sequence[Mapping[int, float]],
                base: MachineProfile) -> JobRows | None:
    flushes = [row for trace, found in zip(traces, factors)
               for row in [flush_cpu_row(trace, found)] if row is not None]
    if sum(row.output_bytes for row in flushes) < MIN_MEASURED_BYTES:
        return None
    size, entries, cpu_ns, requests, sharing = np.asarray(
        [(row.output_bytes, row.entries,
          row.cpu_ns - base.codec_cpu_s(row.codec, row.output_bytes, 0.0) * 1e9,
          row.requests, row.core_sharing) for row in flushes], dtype=float).T
    return JobRows({"flush_ns_per_byte": size, "flush_ns_per_entry": entries},
                   cpu_ns / sharing - base.io_request_cpu_s * 1e9 * requests, size)


def measured_costs(traces: Sequence[Trace], base: MachineProfile
                   ) -> tuple[dict[str, float], list[str]]:
    """Costs read straight from the LOGs (see the module docstring): each job's CPU, less
    `base`'s block-compression CPU for it (`lsmsim.block_compression`), over its
    core-sharing factor on `base`'s cores (`lsmsim.core_sharing`), less `base`'s
    `io_request_ns` per read and write request (`lsmsim.io_request_cost`); with a note
    for each cost the LOGs do not hold enough of."""
    measured: dict[str, float] = {}
    notes = []
    compactions, flushes = job_rows(traces, base)
    if compactions is not None:
        measured.update(per_unit_costs(*compactions))
    else:
        notes.append("compaction CPU not measured: the LOGs hold too few compactions with "
                     "compaction_time_cpu_micros")
    if flushes is not None:
        measured.update(per_unit_costs(*flushes))
    else:
        notes.append("flush CPU not measured: no DUMPING STATS with L0 CompMergeCPU(sec) "
                     "over enough flushed bytes")
    held = cost_values(base)
    notes += [f"{name} came out 0 ({held[name]:g} in the base profile): these runs do not tell "
              "it apart from the other terms of its job's cost, which took it (one value size, "
              "few sorted-run counts); runs of other value sizes or L0 triggers would"
              for name, value in measured.items() if value == 0.0 and held.get(name, 0.0) > 0.0]
    return measured, notes


def measured_unlink(folders: Sequence[Path], runs: Sequence[Run], cores: int
                    ) -> tuple[dict[str, float], list[str]]:
    """`unlink_ns_per_byte` from the LOGs (`lsmsim.fidelity.unlink_cost_fit`) of the runs
    whose background jobs and client threads fit the `cores`: a deletion's wall time is its
    CPU only when its thread has a core (with more threads the model adds the wait for one
    itself). With a note; none when those LOGs log fewer than MIN_MEASURED_DELETIONS SST
    deletions."""
    alone = [folder for folder, run in zip(folders, runs)
             if run.setup.options.max_background_jobs + run.setup.workload.threads <= cores]
    logs = [files.log for files in map(find_run_files, alone) if files.log is not None]
    ns_per_byte, deletions = estimate_unlink_ns_per_byte(logs)
    if deletions < MIN_MEASURED_DELETIONS:
        return {}, [f"unlink_ns_per_byte not measured: the LOGs of the {len(alone)} runs "
                    f"whose background jobs and client threads together fit the {cores} cores "
                    f"log {deletions} SST deletions (at least {MIN_MEASURED_DELETIONS} needed)"]
    return ({"unlink_ns_per_byte": round(ns_per_byte, 4)},
            [f"unlink_ns_per_byte measured from {deletions} SST deletions in the LOGs of the "
             f"{len(alone)} runs whose background jobs and client threads together fit the "
             f"{cores} cores"])


def measured_from_threads(folders: Sequence[Path], runs: Sequence[Run], traces: Sequence[Trace],
                          profile: MachineProfile) -> tuple[dict[str, float], list[str]]:
    """The wake-up figures of `lsmsim.wakeup_wait` (`wakeup_wait_us`,
    `wakeups_per_output_file`, `wakeups_per_dirty_mib`) and the idle share of
    `lsmsim.run_queue_idle` (`run_queue_idle_share`, where some seconds had a runnable
    thread more than the cores) from the runs' `threads.csv`
    (trace capture's per-thread schedstat) beside their LOGs' jobs, and a write-group
    mate's turn and spin limit (`write_group_ns_per_writer`, `write_group_spin_ns`:
    `lsmsim.fidelity.write_group_fit`) where
    write-only runs with one client thread and with more are among them. Runs without the file
    (captured before lsmsim recorded it) measure none. The writer thread's CPU per put is
    not taken for `write_ns_per_op`: the model's put cost is the writer's time per put while
    it has a core, and real writers also block in the WAL's write() (about a quarter of
    their time in the 2-core runs without stalls), so it stays fitted; its ratio to the
    fitted cost is recorded (`measured_writer_ratio`)."""
    with_threads = [(folder / "threads.csv", run, trace)
                    for folder, run, trace in zip(folders, runs, traces)
                    if (folder / "threads.csv").is_file()]
    if not with_threads:
        return {}, []
    wakeup_rows = []
    expire_s = profile.kernel_writeback().expire_s
    for path, run, trace in with_threads:
        _, totals = group_totals(path)
        jobs = trace.jobs()
        files = sum(max(job.output_files, 1) for job in jobs)
        synced_bytes = sum(job.output_bytes * synced_fraction(
            run.setup.options.bytes_per_sync, job.output_bytes / max(job.output_files, 1),
            0.0, expire_s) for job in jobs)
        switches = sum(totals[group]["voluntary"] for group in ("flush", "compaction")
                       if group in totals)
        wakeup_rows.append((files, synced_bytes / float(1 << 20), switches))
    measured: dict[str, float] = {}
    notes = []
    counts = estimate_wakeup_counts(wakeup_rows)
    if counts is None:
        notes.append("wake-ups per output file and per dirty MiB not measured: the runs "
                     "cannot tell them apart (one file size, one bytes_per_sync)")
    else:
        measured["wakeups_per_output_file"] = round(counts[0], 2)
        measured["wakeups_per_dirty_mib"] = round(counts[1], 3)
    wait_s, basis = estimate_wakeup_wait([path for path, _, _ in with_threads], profile.cores)
    measured["wakeup_wait_us"] = round(wait_s * 1e6, 1)
    notes.append(f"wakeup_wait_us measured from {basis['runs']} threads.csv: "
                 f"{basis['wakeups_per_cpu_s']} wake-ups and "
                 f"{basis['excess_wait_per_cpu_s']} s of wait beyond the fair share per "
                 "CPU second of the job threads")
    share, idle_basis = estimate_idle_share([path for path, _, _ in with_threads], profile.cores)
    if idle_basis["oversubscribed_seconds"]:
        measured["run_queue_idle_share"] = round(share, 3)
        notes.append(f"run_queue_idle_share measured from {idle_basis['oversubscribed_seconds']} "
                     f"seconds of {idle_basis['runs']} threads.csv with a runnable thread more "
                     f"than the cores, {idle_basis['busy_cores']} cores busy")
    else:
        notes.append("run_queue_idle_share not measured: no second had a runnable thread "
                     "more than the cores")
    clients = [c for c in (run_client_cpu(path.parent, trace, run.setup, profile)
                           for path, run, trace in with_threads) if c is not None]
    turn = fit_turn(clients)
    if isinstance(turn, TurnFit):
        measured["write_group_ns_per_writer"] = round(turn.turn_s * 1e9, 1)
        spin = "its spin limit not reached"
        if np.isfinite(turn.spin_s):
            measured["write_group_spin_ns"] = round(turn.spin_s * 1e9, 1)
            spin = f"write_group_spin_ns {turn.spin_s * 1e9:.0f}"
        notes.append(f"write_group_ns_per_writer measured from the client threads' CPU per put "
                     f"in {len(clients)} threads.csv of runs with 1 to "
                     f"{max(c.threads for c in clients)} client threads "
                     f"({len(turn.sessions)} capture folder(s)): {turn.turn_s * 1e9:.0f} ns a "
                     f"turn, {spin}")
    elif any(c.threads > 1 for c in clients):
        notes.append(f"write_group_ns_per_writer not measured: {turn}")
    return measured, notes


def measured_writer_ratio(folders: Sequence[Path], setups: Sequence[DbBenchSetup],
                          traces: Sequence[Trace], profile: MachineProfile
                          ) -> tuple[float | None, str]:
    """The writer thread's CPU per put over `profile`'s put cost, pooled over the runs whose
    threads.csv records it (`lsmsim.fidelity.writer_cpu`, as `HostSpeed.writer_scale`
    pools it): the profile's `writer_cpu_ratio`, against which `lsmsim validate` measures
    another host's writer. None without such runs."""
    own = with_costs(profile, {"writer_cpu_ratio": 1.0})
    writers = [w for w in (measure_writer_cpu(Path(folder), trace, setup, own)
                           for folder, setup, trace in zip(folders, setups, traces))
               if w is not None]
    pooled = HostSpeed(0.0, 0.0, 0, sum(w.cpu_s for w in writers),
                       sum(w.profile_cpu_s for w in writers))
    if pooled.writer_scale is None:
        return None, ("writer_cpu_ratio not measured: no run's threads.csv records enough "
                      "writer CPU (left at 1)")
    ratio = round(pooled.writer_scale, 3)
    return ratio, (f"writer_cpu_ratio {ratio} measured from {len(writers)} threads.csv: the "
                   f"writer thread's {pooled.writer_cpu_s:.1f} s of CPU over the fitted put "
                   "cost of its puts")


def per_unit_costs(columns: dict[str, np.ndarray], cpu_ns: np.ndarray,
                   size: np.ndarray) -> dict[str, float]:
    """Non-negative costs per unit of each column (bytes, entries, ...) whose sum explains
    the CPU time, least squares weighted by 1/bytes (rows are jobs or runs of very different
    size). A column that is a fixed multiple of the first (one entry size only) cannot be
    told apart from it: it gets zero and the first column takes its share."""
    first = next(iter(columns.values()))
    usable = [name for i, (name, column) in enumerate(columns.items())
              if i == 0 or np.ptp(column / np.maximum(first, 1e-300)) > 0.1 * np.mean(
                  column / np.maximum(first, 1e-300))]
    weight = 1.0 / np.sqrt(np.maximum(size, 1.0))
    design = np.column_stack([columns[name] * weight for name in usable])
    from scipy.optimize import nnls  # scipy.optimize is slow to import: only here

    solution, _ = nnls(design, cpu_ns * weight)
    return {name: round(float(solution[usable.index(name)]) if name in usable else 0.0, 4)
            for name in columns}


def load_runs(folders: Sequence[Path], device: str | None, max_seconds: float | None,
              workers: int, seed: int | None = None) -> tuple[list[Run], list[Trace]]:
    """The runs of the folders (imported in a process pool) and their real traces; each
    simulated with `seed`, or its own db_bench --seed when None."""
    folders = check_run_folders(folders)
    devices = run_devices(folders, device)
    pairs = every_result(run_jobs(_load_run, [(f, max_seconds) for f in folders], workers),
                         [f"reading {f}" for f in folders])
    runs = []
    for folder, run_device, (real, setup) in zip(folders, devices, pairs):
        summary = real.summary
        if seed is not None:
            setup = dataclasses.replace(setup, seed=seed)
        runs.append(Run(folder.name if folder.name else str(folder), setup, run_device,
                        float(summary["throughput_ops_per_s"]), float(summary["stall_fraction"]),
                        float(summary["write_amplification"]), read_host_load(folder)))
    return runs, [real for real, _ in pairs]


def every_result(results: list[Any], doing: Sequence[str]) -> list[Any]:
    """The jobs' results, or a CalibrationError naming the first that failed (a fit needs
    every run)."""
    for result, what in zip(results, doing):
        if isinstance(result, JobFailed):
            raise CalibrationError(f"{what} failed: {result.error}")
    return results


def _load_run(job: tuple[Path, float | None]) -> tuple[Trace, DbBenchSetup]:
    return run_setup(*job)


def _simulate_figures(job: tuple[DbBenchSetup, str, MachineProfile]) -> tuple[float, float, float]:
    setup, device, machine = job
    summary = setup.simulate(device=device, machine=machine).summary
    return (float(summary["throughput_ops_per_s"]), float(summary["stall_fraction"]),
            float(summary["write_amplification"]))


def run_loss(run: Run, figures: tuple[float, float, float]) -> float:
    """One run's term of the loss (module docstring)."""
    throughput, stall, amplification = figures
    thr_term = math.log(max(throughput, 1e-9) / run.throughput_ops_per_s) ** 2
    wa_term = 0.0
    if run.write_amplification > 0 and amplification > 0:
        wa_term = math.log(amplification / run.write_amplification) ** 2
    return thr_term + W_STALL * (stall - run.stall_fraction) ** 2 + W_WA * wa_term


class Objective:
    """The loss of a profile over the runs; repeats of one command are simulated once. It
    keeps the first loss and the best (loss, profile) seen; Ctrl-C or SIGTERM during an
    evaluation raises `worker_pool.Interrupted` carrying this objective."""

    def __init__(self, runs: list[Run], workers: int, progress: Progress | None = None) -> None:
        self.runs = runs
        self.workers = workers
        self.progress = progress
        self.keys = [repr((r.setup.workload, r.setup.options, r.setup.duration_s, r.setup.seed,
                           counted_other_cores(r.load),
                           r.device)) for r in runs]
        self.distinct = list(dict.fromkeys(self.keys))
        self.evaluations = 0
        self.first_loss = math.nan
        self.best: tuple[float, MachineProfile] | None = None

    def __call__(self, profile: MachineProfile) -> float:
        first = {key: self.runs[self.keys.index(key)] for key in self.distinct}
        jobs = [(first[k].setup, first[k].device, first[k].machine(profile))
                for k in self.distinct]
        labels = [f"simulating {first[k].label}" for k in self.distinct]
        try:
            results = run_jobs(_simulate_figures, jobs, self.workers)
        except Interrupted as stop:
            raise stop.carrying(self) from None
        figures = dict(zip(self.distinct, every_result(results, labels)))
        loss = float(sum(run_loss(run, figures[key]) for run, key in zip(self.runs, self.keys)))
        self.evaluations += 1
        if self.best is None:
            self.first_loss = loss
        if self.best is None or loss < self.best[0]:
            self.best = (loss, profile)
        if self.progress is not None:
            self.progress.advance()
        return loss

    def best_so_far(self, fit: Sequence[str], wall_s: float) -> Calibration:
        """The best profile of a fit cut short (an evaluation done at least), with a note
        saying so; no sensitivity (it would take 2 evaluations per cost)."""
        assert self.best is not None
        loss, profile = self.best
        profile = with_costs(profile, {k: float(cost_values(profile)[k]) for k in fit})
        costs = cost_values(profile)
        note = (f"interrupted after {self.evaluations} evaluations: the best profile seen, "
                "not a finished fit; sensitivity not computed")
        return Calibration(profile, loss, self.first_loss, {k: costs[k] for k in fit}, {},
                           {k: v for k, v in costs.items() if k not in fit and k not in READ_COSTS},
                           {}, [r.label for r in self.runs], self.evaluations, 0.0, wall_s,
                           [note])


def calibrate(folders: Sequence[Path], base: MachineProfile, fit: Sequence[str] = FITTED_BY_DEFAULT,
              device: str | None = None, max_seconds: float | None = None,
              max_evaluations: int = 40, workers: int = 2, name: str | None = None,
              measure: bool = True, device_out: Path | None = None,
              seed: int | None = None,
              progress: Progress | None = None) -> Calibration:
    """Fit `fit` (cost names of the profile TOML) to the runs in `folders`, after measuring
    what the LOGs measure (and, with `device_out`, fitting the devices); everything else
    comes from `base`. The runs are simulated with `seed` (default: each its own db_bench
    --seed), so the jobs' CPU cost spread (`lsmsim.job_cost_spread`) draws alike at every
    evaluation. Ctrl-C or SIGTERM raises `worker_pool.Interrupted` carrying the best
    profile seen as a Calibration (its notes say so), or None before the first evaluation."""
    check_fit_names(fit)
    started_cpu_s = _cpu_s()
    started_wall_s = time.perf_counter()
    runs, traces = load_runs(folders, device, max_seconds, workers, seed)
    measured, notes = measured_costs(traces, base) if measure else ({}, [])
    checked = check_run_folders(folders)  # Paths, in the runs' order
    if measure:
        from_threads, thread_notes = measured_from_threads(
            checked, runs, traces, with_costs(base, measured))
        measured.update(from_threads)
        notes += thread_notes
        unlink, unlink_notes = measured_unlink(checked, runs, base.cores)
        measured.update(unlink)
        notes += unlink_notes
    measured = {k: v for k, v in measured.items() if k not in fit}
    start = with_costs(base, measured)
    if measure:
        spread, note = measure_spread(traces, cost_values(start), start)
        notes.append(note)
        if spread is not None:
            start = dataclasses.replace(start, job_cpu_spread=tuple(spread))
        put_spread, note = measure_put_spread(checked)
        notes.append(note)
        if put_spread is not None:
            start = dataclasses.replace(start, put_time_spread=tuple(put_spread))
    device_fits: list[DeviceFit] = []
    device_files: dict[str, str] = {}
    if device_out is not None:
        runs, device_fits, device_files = fit_run_devices(
            runs, traces, [str(Path(f)) for f in folders], start, device_out)
    stopped: Interrupted | None = None
    try:
        result = fit_costs(runs, start, fit, max_evaluations, workers, progress)
    except Interrupted as stop:
        if not isinstance(stop.results, Objective) or stop.results.best is None:
            raise stop.carrying(None) from None
        result = stop.results.best_so_far(fit, time.perf_counter() - started_wall_s)
        stopped = stop
    if measure:
        ratio, note = measured_writer_ratio(checked, [run.setup for run in runs], traces,
                                            result.profile)
        notes.append(note)
        if ratio is not None:
            result.profile = with_costs(result.profile, {"writer_cpu_ratio": ratio})
            measured["writer_cpu_ratio"] = ratio
    result.device_fits, result.device_files = device_fits, device_files
    result.measured = measured
    result.held = {k: v for k, v in result.held.items() if k not in measured}
    result.notes = notes + result.notes
    if name is not None:
        result.profile = _renamed(result.profile, name, runs)
    result.runs = [str(Path(f)) for f in folders]
    result.cpu_s = _cpu_s() - started_cpu_s
    result.wall_s = time.perf_counter() - started_wall_s
    if stopped is not None:
        raise stopped.carrying(result)
    return result


def fit_run_devices(runs: list[Run], traces: Sequence[Trace], labels: Sequence[str],
                    machine: MachineProfile, out_dir: Path
                    ) -> tuple[list[Run], list[DeviceFit], dict[str, str]]:
    """Fit each device the runs ran on to their jobs (runs named by `labels`), write the
    identified ones to `out_dir/<preset>.toml`, and move the runs on them onto those files."""
    fits, files = [], {}
    for device in dict.fromkeys(run.device for run in runs):
        on_it = [(label, trace) for run, trace, label in zip(runs, traces, labels)
                 if run.device == device]
        fit = fit_device(device, on_it, machine)
        fits.append(fit)
        path = write_fitted(fit, out_dir)
        if path is not None:
            files[device] = str(path)
    moved = [dataclasses.replace(run, device=files.get(run.device, run.device)) for run in runs]
    return moved, fits, files


def expected_evaluations(max_evaluations: int, fitted: int) -> int:
    """About how many loss evaluations a fit of `fitted` costs takes (the start, the coarse
    scan of each fitted cost, the optimizer's bound, then the fitted profile's loss and each
    cost's sensitivity at -10% and +10%): a progress bar's total."""
    return (1 + SCAN_POINTS * fitted + max_evaluations + 1
            + 2 * len([k for k in COST_FIELDS if k not in READ_COSTS]))


def check_fit_names(fit: Sequence[str]) -> None:
    unknown = sorted(set(fit) - set(COST_FIELDS))
    if unknown or not fit:
        raise CalibrationError(f"cannot fit {', '.join(unknown) or 'nothing'}: name one or more "
                               f"of {', '.join(COST_FIELDS)}")


def fit_costs(runs: list[Run], profile: MachineProfile, fit: Sequence[str],
              max_evaluations: int = 40, workers: int = 2,
              progress: Progress | None = None) -> Calibration:
    """Nelder-Mead over ln(cost) of the `fit` costs, from `profile`'s values, within
    [1/BOUND_FACTOR, BOUND_FACTOR] times them; then each cost's sensitivity."""
    check_fit_names(fit)
    started_cpu_s = _cpu_s()
    started_wall_s = time.perf_counter()
    objective = Objective(runs, workers, progress)
    start = np.log([cost_values(profile)[k] for k in fit])
    if not np.all(np.isfinite(start)):
        raise CalibrationError(f"the base profile's {', '.join(fit)} must be positive to be fitted")

    def loss_at(x: np.ndarray) -> float:
        return objective(with_costs(profile, dict(zip(fit, np.exp(x)))))

    start_loss = loss_at(start)
    bounds = [(x - math.log(BOUND_FACTOR), x + math.log(BOUND_FACTOR)) for x in start]
    # The loss is bumpy, piecewise constant in places (jobs and stalls are discrete), and
    # Nelder-Mead stops in the first dip it finds: scan each cost alone over its range on
    # a coarse log grid first, and start from the best value of each.
    scanned, scan_loss = _scan_start(loss_at, start, bounds, start_loss)
    simplex = np.vstack([scanned] + [scanned + np.log(1.3) * np.eye(len(fit))[i]
                                     for i in range(len(fit))])
    from scipy.optimize import minimize  # slow to import: only when fitting

    result = minimize(loss_at, scanned, method="Nelder-Mead", bounds=bounds,
                      options={"maxfev": max(max_evaluations - objective.evaluations, 1),
                               "initial_simplex": simplex, "xatol": 0.005, "fatol": 1e-4})
    # Keep the best point seen, which Nelder-Mead returns, or the scan's if nothing beat it.
    best = result.x if result.fun <= scan_loss else scanned
    fitted = {k: float(v) for k, v in zip(fit, np.exp(best))}
    profile = with_costs(profile, fitted)
    loss = min(float(result.fun), scan_loss)
    notes = [] if result.success else [f"optimizer stopped: {result.message}"]
    for key, (_, ceiling) in zip(fit, bounds):
        profile, notes_for_key = _upper_end_if_flat(objective, profile, key, loss,
                                                    math.exp(ceiling))
        notes += notes_for_key
    fitted = {k: cost_values(profile)[k] for k in fit}
    loss = objective(profile)
    sensitivity = {}
    for key, value in cost_values(profile).items():
        if key in READ_COSTS:  # write runs say nothing of the read path
            continue
        sensitivity[key] = {
            sign: round((objective(with_costs(profile, {key: value * factor})) - loss)
                        / max(loss, 1e-12), 4)
            for sign, factor in (("minus", 1 - SENSITIVITY_STEP), ("plus", 1 + SENSITIVITY_STEP))}
    held = {k: v for k, v in cost_values(profile).items()
            if k not in fitted and k not in READ_COSTS}
    return Calibration(profile, loss, start_loss, fitted, {}, held, sensitivity,
                       [r.label for r in runs], objective.evaluations,
                       _cpu_s() - started_cpu_s, time.perf_counter() - started_wall_s, notes)


def _scan_start(loss_at: Any, start: np.ndarray, bounds: list[tuple[float, float]],
                start_loss: float) -> tuple[np.ndarray, float]:
    """A start for Nelder-Mead (ln costs) and its loss: each cost set alone to each of
    SCAN_POINTS values evenly spaced in ln between its bounds, the others at `start`; the
    best value of each cost, kept only if the point they make together is no worse."""
    best = start.copy()
    for i, (low, high) in enumerate(bounds):
        losses = {}
        for value in np.linspace(low, high, SCAN_POINTS):
            point = start.copy()
            point[i] = value
            losses[float(value)] = loss_at(point)
        lowest = min(losses, key=losses.__getitem__)
        if losses[lowest] < start_loss:
            best[i] = lowest
    if np.array_equal(best, start):
        return start, start_loss
    combined = loss_at(best)
    return (best, combined) if combined <= start_loss else (start, start_loss)


def _upper_end_if_flat(objective: "Objective", profile: MachineProfile, key: str,
                       loss: float, ceiling: float) -> tuple[MachineProfile, list[str]]:
    """A cost the runs bound only from above (the writer of a client-rate-limited run is not
    CPU-bound, so any cost below some value fits as well) is not identified: the loss is
    flat around the fit. Then take the largest cost whose loss stays within FLAT_TOLERANCE
    of the best, walking up in steps of FLAT_STEP up to `ceiling`, and say so."""
    value = cost_values(profile)[key]
    if objective(with_costs(profile, {key: value * (1 + SENSITIVITY_STEP)})) > loss * (
            1 + FLAT_TOLERANCE) + 1e-12:
        return profile, []
    low, high = value, value
    while high * FLAT_STEP <= ceiling:
        step = objective(with_costs(profile, {key: high * FLAT_STEP}))
        if step > loss * (1 + FLAT_TOLERANCE) + 1e-12:
            break
        high *= FLAT_STEP
    note = (f"{key}: the loss is flat from {low:.4g} up to {high:.4g} (within "
            f"{100 * FLAT_TOLERANCE:.0f}%): the runs bound it only from above; kept {high:.4g}")
    return with_costs(profile, {key: high}), [note]


def _cpu_s() -> float:
    """User CPU seconds of this process and of its finished children (the pool workers)."""
    times = os.times()
    return times.user + times.children_user


def _renamed(profile: MachineProfile, name: str, runs: list[Run]) -> MachineProfile:
    devices = ", ".join(sorted({r.device for r in runs}))
    return dataclasses.replace(
        profile, name=name,
        description=f"{profile.cores} cores; CPU costs fitted by lsmsim calibrate to "
                    f"{len(runs)} real runs ({devices}); see [calibration]")
