"""`lsmsim compare`: a grid of policies x devices, run in a process pool, as one table, a
CSV and a figure set; with several seeds, each cell's mean and whether each device's best
policy leads on every seed.

Each cell is an independent, seeded simulation, so results do not depend on which worker
runs it or when; cells come back in grid order. A cell that fails is a row with its
error, not the end of the sweep (desmod's "a failure is data"). Workers are forked
(`lsmsim.sweeps.worker_pool`), so a policy registered at run time (`lsmsim.policies.register`) is known
to them too. Ctrl-C or SIGTERM stops the workers at once; the cells that finished are
printed and written, the others are rows with the error `worker_pool.NOT_RUN`.
"""

from __future__ import annotations

import csv
import dataclasses
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from lsmsim.output_path import file_stem
from lsmsim.units import format_seconds

if TYPE_CHECKING:
    from lsmsim.sweeps.executor import Execution

# What each bar chart shows, in words with its unit (the CSV column names are terse).
FIGURE_TITLES = {
    "throughput_ops_per_s": "put throughput (ops/s)",
    "tail_throughput_p99_ops_per_s": "tail throughput: 1st-percentile second (ops/s)",
    "stall_time_s": "time writes were stalled (s)",
    "latency_p99_us": "99th-percentile write latency (us)",
    "write_amplification": "write amplification (bytes written / user bytes)",
    "peak_memtable_MiB": "peak memtable memory (MiB)",
    "stall_s_MT": "stall time from memtable stalls (s)",
    "stall_s_L0": "stall time from L0 stalls (s)",
    "stall_s_PS": "stall time from pending-compaction-bytes stalls (s)",
}
STALL_FAMILIES = {  # the ADOC paper's MT / L0 / PS stalls, from RocksDB's cause names
    "MT": ("memtable_compaction", "memtable_slowdown"),
    "L0": ("level0_numfiles", "level0_slowdown"),
    "PS": ("stop for pending_compaction_bytes", "slowdown for pending_compaction_bytes"),
}
# (CSV column, table header, format, summary key) of the headline metrics.
METRICS = [
    ("throughput_ops_per_s", "ops/s", "{:,.0f}", "throughput_ops_per_s"),
    ("tail_throughput_p99_ops_per_s", "tail p99 ops/s", "{:,.0f}",
     "tail_throughput_p99_ops_per_s"),
    ("stall_time_s", "stall s", "{:.0f}", "stall_time_s"),
    ("latency_p99_us", "p99 us", "{:,.1f}", "latency_p99_us"),
    ("write_amplification", "WA", "{:.2f}", "write_amplification"),
    ("peak_memtable_MiB", "peak mem MiB", "{:,.0f}", None),
]


@dataclass
class Cell:
    """One run of the grid: its metrics (or error), CPU time and its policy's timeseries."""

    policy: str
    device: str
    metrics: dict[str, float] = field(default_factory=dict)
    error: str = ""
    cpu_s: float = 0.0
    policy_series: dict[str, list[float]] = field(default_factory=dict)


def run_cell(policy: str, device: str, workload: str, duration_s: float,
             simulate_kwargs: dict[str, Any], series: tuple[str, ...] = ()) -> Cell:
    """Simulate one cell; any exception becomes the cell's error. Besides the headline
    metrics, the cell keeps every scalar of the summary and the timeseries columns named in
    `series` (with the policy's own)."""
    from lsmsim.simulation import simulate

    cell = Cell(policy, device)
    started = time.process_time()
    try:
        result = simulate(workload, device=device, policy=policy, duration_s=duration_s,
                          **simulate_kwargs)
    except Exception as exc:  # noqa: BLE001 - a failed run is reported as data
        cell.error = f"{type(exc).__name__}: {exc}"
    else:
        summary = result.summary
        cell.metrics = {key: float(value) for key, value in summary.items()
                        if isinstance(value, (int, float))}
        cell.metrics.update({column: float(summary[key]) for column, _, _, key in METRICS if key})
        cell.metrics["peak_memtable_MiB"] = summary["peak_memtable_bytes"] / (1 << 20)
        for phase, ops_per_s in summary.get("phase_ops_per_s", {}).items():
            cell.metrics[f"ops_per_s_{phase}"] = float(ops_per_s)
        for family, causes in STALL_FAMILIES.items():
            cell.metrics[f"stall_s_{family}"] = sum(
                summary["stall_duration_s_by_cause"].get(c, 0.0) for c in causes)
            cell.metrics[f"stall_count_{family}"] = sum(
                summary["stall_count_by_cause"].get(c, 0) for c in causes)
        cell.policy_series = {name: np.asarray(values, dtype=float).tolist()
                              for name, values in result.timeseries.items()
                              if (name.startswith("policy_") or name == "time_s"
                                  or name in series)
                              and np.asarray(values).dtype.kind in "biuf"}
    cell.cpu_s = time.process_time() - started
    return cell


def run_grid(workload: str, policies: list[str], devices: list[str], duration_s: float,
             workers: int = 2, progress: str = "", execution: "Execution | None" = None,
             seeds: int = 1, **simulate_kwargs: Any) -> list[Cell]:
    """Every (policy, device) cell, in grid order (device-major), on `workers` processes
    (or as `execution` says); with `seeds` > 1 each cell that many times, with seeds
    counted up from `simulate_kwargs`' seed (0 if none), one after another in the list."""
    if seeds == 1:
        return run_cells([(p, d, workload, duration_s, simulate_kwargs)
                          for d in devices for p in policies], workers, progress, execution)
    first = simulate_kwargs.get("seed", 0)
    return run_cells([(p, d, workload, duration_s, {**simulate_kwargs, "seed": first + k})
                      for d in devices for p in policies for k in range(seeds)],
                     workers, progress, execution)


def mean_of_seeds(cells: Sequence[Cell]) -> Cell:
    """One run's cells under several seeds as one: each metric's mean over the seeds (those
    every seed has), the first seed's series, the CPU of all; where some failed, the first
    error and on how many seeds. One cell is itself."""
    if len(cells) == 1:
        return cells[0]
    first = cells[0]
    failed = [c.error for c in cells if c.error]
    if failed:
        return Cell(first.policy, first.device,
                    error=f"on {len(failed)} of {len(cells)} seeds: {failed[0]}",
                    cpu_s=sum(c.cpu_s for c in cells))
    names = [m for m in first.metrics if all(m in c.metrics for c in cells)]
    return Cell(first.policy, first.device,
                {m: float(np.mean([c.metrics[m] for c in cells])) for m in names},
                cpu_s=sum(c.cpu_s for c in cells), policy_series=first.policy_series)


def run_seed(index: int, seeds: int, first_seed: int) -> int:
    """The seed of `run_grid`'s `index`-th run (`seeds` a cell, from `first_seed`)."""
    return first_seed + index % seeds


def seed_groups(cells: Sequence[Cell], seeds: int) -> list[list[Cell]]:
    """`run_grid`'s cells as one list per (policy, device), its seeds in order."""
    return [list(cells[i:i + seeds]) for i in range(0, len(cells), seeds)]


# The headline metrics a verdict is given on, and whether more is better.
VERDICT_METRICS = (("throughput_ops_per_s", "ops/s", True),
                   ("tail_throughput_p99_ops_per_s", "tail p99 ops/s", True),
                   ("stall_time_s", "stall s", False),
                   ("latency_p99_us", "p99 us", False))


def seed_verdicts(groups: Sequence[Sequence[Cell]]) -> str:
    """Per device and headline metric: the policy best on the seeds' mean, and on how many
    seeds it leads each other policy (the same seed, so the same workload draws), with the
    range of its lead; the verdict of one seed is not to be trusted where they disagree.
    Devices where fewer than two policies ran on every seed are named as such."""
    by_device: dict[str, list[Sequence[Cell]]] = {}
    for group in groups:
        by_device.setdefault(group[0].device, [])
        if not any(c.error for c in group):
            by_device[group[0].device].append(group)
    lines = []
    for device, policies in by_device.items():
        if len(policies) < 2:
            lines.append(f"{device:>10s}  nothing to rank: fewer than two policies ran on "
                         "every seed")
            continue
        for metric, label, more_is_better in VERDICT_METRICS:
            values = {g[0].policy: np.array([c.metrics.get(metric, np.nan) for c in g])
                      for g in policies}
            if any(np.isnan(v).any() for v in values.values()):
                continue
            lines.append(f"{device:>10s}  {label:<15s} "
                         + _metric_verdict(values, more_is_better))
    return "\n".join(lines)


def _metric_verdict(values: dict[str, np.ndarray], more_is_better: bool) -> str:
    """One metric's verdict over the policies' per-seed values."""
    sign = 1.0 if more_is_better else -1.0
    best = max(values, key=lambda p: sign * values[p].mean())
    if all(np.array_equal(v, values[best]) for v in values.values()):
        return "a tie: every policy the same on every seed"
    parts, behind_somewhere, tied_somewhere = [], False, False
    for other, theirs in values.items():
        if other == best:
            continue
        gain = sign * (values[best] - theirs)
        ahead, tied = int(np.sum(gain > 0)), int(np.sum(gain == 0))
        behind_somewhere = behind_somewhere or ahead + tied < len(theirs)
        tied_somewhere = tied_somewhere or tied > 0
        order = np.argsort(gain / np.maximum(np.abs(theirs), 1e-300))
        low, high = (_lead(values[best][k], theirs[k]) for k in (order[0], order[-1]))
        lead = low if low == high else f"from {low} to {high}"
        parts.append(f"{other} on {ahead} of {len(theirs)}"
                     + (f", tied on {tied}" if tied else "") + f" ({lead})")
    verdict = ("SEEDS DISAGREE" if behind_somewhere
               else "never behind, tied on some seeds" if tied_somewhere
               else "holds on every seed")
    return f"best {best}: ahead of " + "; ".join(parts) + f"  [{verdict}]"


def _lead(best: float, other: float) -> str:
    """The best policy's value against another's on one seed, in words: 12.5% more, 3.0%
    less (of the metric itself: fewer stall seconds are less), x2.4 (times as much), the
    same, or against a 0."""
    if best == other:
        return "the same"
    if other == 0.0:
        return (f"{best:,.0f}" if abs(best) >= 100 else f"{best:.3g}") + " vs 0"
    relative = best / other - 1.0
    if relative > 1.0:
        return f"x{best / other:.1f}"
    return f"{abs(relative):.1%} {'more' if relative > 0 else 'less'}"


def run_cells(specs: list[tuple[Any, ...]], workers: int = 2, progress: str = "",
              execution: "Execution | None" = None) -> list[Cell]:
    """Cells given as `run_cell` argument tuples, in order, on `workers` processes with a
    progress line if `progress` names the cells ("runs"), or as `execution` says (executor,
    result cache, progress: `lsmsim.sweeps.executor`). On Ctrl-C or SIGTERM, raises
    `worker_pool.Interrupted` carrying every cell: those not run have the error NOT_RUN."""
    from lsmsim.sweeps.run_identity import run_identity  # not for `run`
    from lsmsim.sweeps.result_cache import cache_key
    from lsmsim.sweeps.executor import Execution, run_jobs
    from lsmsim.sweeps.worker_pool import NOT_RUN, Interrupted, JobFailed

    if execution is None:
        execution = Execution(workers=workers, progress=bool(progress))

    def cells(results: list[Any]) -> list[Cell]:
        return [Cell(spec[0], spec[1], error=NOT_RUN) if result is None
                else Cell(spec[0], spec[1], error=result.error) if isinstance(result, JobFailed)
                else result for spec, result in zip(specs, results)]

    keys = ([cache_key(run_identity(*spec)) for spec in specs]
            if execution.cache is not None else None)
    try:
        return cells(run_jobs(_run_spec, specs, execution, progress or "runs", keys,
                              encode=dataclasses.asdict, decode=lambda d: Cell(**d)))
    except Interrupted as stop:
        raise stop.carrying(cells(stop.results)) from None


def _run_spec(spec: tuple[Any, ...]) -> Cell:
    return run_cell(*spec)


def format_table(cells: list[Cell]) -> str:
    """One row per cell: headline metrics, stall seconds and counts by family, status."""
    headers = ["device", "policy", *(h for _, h, _, _ in METRICS),
               *(f"{f} stall s/n" for f in STALL_FAMILIES), "status"]
    rows = []
    for cell in cells:
        if cell.error:
            rows.append([cell.device, cell.policy, *["-"] * (len(METRICS) + len(STALL_FAMILIES)),
                         f"FAILED {cell.error}"])
            continue
        m = cell.metrics
        rows.append([cell.device, cell.policy,
                     *(fmt.format(m[column]) if m[column] == m[column] else "-"  # NaN: none
                       for column, _, fmt, _ in METRICS),
                     *(f"{m[f'stall_s_{f}']:.0f}/{m[f'stall_count_{f}']:.0f}"
                       for f in STALL_FAMILIES), "ok"])
    widths = [max(len(str(r[i])) for r in [headers, *rows]) for i in range(len(headers))]
    lines = ["  ".join(str(v).rjust(w) if i > 1 else str(v).ljust(w)
                       for i, (v, w) in enumerate(zip(row, widths))) for row in [headers, *rows]]
    lines.insert(1, "-" * len(lines[0]))
    return "\n".join(lines)


def write_csv(cells: list[Cell], path: Path, seeds: int = 1, first_seed: int = 0) -> None:
    """One row per run, its seed among them (`run_grid`'s order: `seeds` a cell, counted up
    from `first_seed`)."""
    columns = sorted({name for cell in cells for name in cell.metrics})
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["policy", "device", "seed", *columns, "cpu_s", "error"])
        for index, cell in enumerate(cells):
            writer.writerow([cell.policy, cell.device, run_seed(index, seeds, first_seed),
                             *(repr(cell.metrics[c]) if c in cell.metrics else "" for c in columns),
                             f"{cell.cpu_s:.3f}", cell.error])


def save_figures(cells: list[Cell], out: Path, workload: str, duration_s: float,
                 groups: Sequence[Sequence[Cell]] | None = None) -> list[Path]:
    """Grouped bars per metric (devices on x, one bar per policy) and, per policy, its own
    state over time (its `policy_*` columns, one line per device), titled in words with
    the workload and the length of each run. With `groups` (each cell's runs under several
    seeds, `cells` their means) each bar has whiskers from the least seed to the most."""
    import matplotlib.pyplot as plt

    from lsmsim.plot.timeline import save_figure  # also selects the Agg backend
    from lsmsim.plot.policy_panels import draw_policy_column, sample_codes

    policies = list(dict.fromkeys(c.policy for c in cells))
    devices = list(dict.fromkeys(c.device for c in cells))
    by_key = {(c.policy, c.device): c for c in cells}
    seeded = {(g[0].policy, g[0].device): g for g in groups or ()}
    written = []
    columns = [c for c, _, _, _ in METRICS] + [f"stall_s_{f}" for f in STALL_FAMILIES]
    run_words = f"{workload}, {format_seconds(duration_s)} s simulated per run"
    formats = {column: fmt for column, _, fmt, _ in METRICS}
    # Wide enough for the titles and the legend beside few devices.
    size = (max(5.0, 1.6 + len(devices) * (0.6 + 0.45 * len(policies))), 3.9)
    for column in columns:
        figure, axis = plt.subplots(figsize=size)
        width = 0.8 / len(policies)
        for i, policy in enumerate(policies):
            values = [by_key[(policy, d)].metrics.get(column, np.nan) for d in devices]
            whiskers = None
            if seeded:
                runs = [[c.metrics.get(column, np.nan) for c in seeded[(policy, d)]]
                        for d in devices]
                # max(0, ...): the mean of equal values can differ from them in the last bit
                whiskers = [[max(0.0, v - min(r)) for v, r in zip(values, runs)],
                            [max(0.0, max(r) - v) for v, r in zip(values, runs)]]
            bars = axis.bar(np.arange(len(devices)) + i * width, values, width, label=policy,
                            yerr=whiskers, capsize=2 if whiskers else 0)
            labels = [formats.get(column, "{:.0f}").format(v) for v in values]
            if whiskers is None:
                axis.bar_label(bars, labels=labels, fontsize=7)
            else:  # above the whisker, not on it
                for bar, value, up, label in zip(bars, values, whiskers[1], labels):
                    axis.annotate(label, (bar.get_x() + bar.get_width() / 2, value + up),
                                  xytext=(0, 2), textcoords="offset points", ha="center",
                                  va="bottom", fontsize=7)
        axis.set_xticks(np.arange(len(devices)) + width * (len(policies) - 1) / 2, devices)
        axis.set_ylim(bottom=0)
        axis.margins(y=0.12)
        axis.set_xlabel("device")
        axis.set_ylabel(FIGURE_TITLES[column].rsplit(" (", 1)[-1].rstrip(")"))
        title = f"{FIGURE_TITLES[column]}\n{run_words}"
        if seeded:
            seeds = len(next(iter(seeded.values())))
            title += f"\nmean of {seeds} seeds; whiskers: the least and the most"
        figure.suptitle(title, fontsize=9)  # over the legend too: the axis alone is narrow
        axis.legend(title="policy", fontsize=7, title_fontsize=7, loc="upper left",
                    bbox_to_anchor=(1.01, 1.0))
        figure.tight_layout()
        path = out / f"bars_{column}.png"
        save_figure(figure, path)
        written.append(path)
    for policy in policies:
        names = sorted({n for d in devices for n in by_key[(policy, d)].policy_series
                        if n.startswith("policy_")})
        if not names:
            continue
        figure, axes = plt.subplots(len(names), 1, figsize=(9, 2.2 * len(names)), sharex=True,
                                    squeeze=False)
        codes = sample_codes({"policy": {"name": policy.split(":")[0]}})
        for axis, name in zip(axes[:, 0], names):
            for device in devices:
                series = by_key[(policy, device)].policy_series
                if name in series:
                    draw_policy_column(axis, series["time_s"], series[name], name, codes,
                                       label=device)
            axis.legend(title="device", fontsize=7, title_fontsize=7)
        axes[-1, 0].set_xlabel("time since start (s)")
        seed_words = ""
        if seeded:
            seed_words = "; the first seed's run"
        axes[0, 0].set_title(f"{policy}: its own state over time ({run_words}{seed_words})")
        figure.tight_layout()
        path = out / f"policy_{file_stem(policy)}.png"
        save_figure(figure, path)
        written.append(path)
    return written


