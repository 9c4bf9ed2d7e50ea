"""`lsmsim reproduce`: the seed papers' experiments, re-run in the simulator, and a table of
their claims checked against the simulated figures.

An experiment (one Python file in `scenarios/experiments/`, defining `EXPERIMENT`) names
the runs it needs and the claims it checks. Runs go through `compare.run_cells` (a process
pool, a failed run is a row with its error); every claim's figure and verdict is computed
from those runs' summaries: nothing here knows a simulated number in advance.
"""

from __future__ import annotations

import csv
import dataclasses
import importlib.util
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Mapping, Sequence

import numpy as np

from lsmsim.sweeps.compare import Cell, mean_of_seeds, run_cells
from lsmsim.data_file import DataFileError
from lsmsim.mechanisms import absent_in_version
from lsmsim.options import release_option_values
from lsmsim.named_data import NamedData
from lsmsim.sweeps.paper_scale import PaperScale, Scale
from lsmsim.scenarios import experiments as experiments_package

if TYPE_CHECKING:
    from lsmsim.sweeps.executor import Execution

EXPERIMENTS_DIR = Path(experiments_package.__file__).parent  # in the checkout or installed


class ExperimentError(ValueError):
    """An unknown experiment name or a malformed experiment file."""


@dataclass(frozen=True)
class Run:
    """One simulation an experiment needs, named by `label` within the experiment."""

    label: str
    workload: str
    device: str = "nvme"        # the device as the paper names it (a preset's name)
    # The device file simulated instead of the preset `device` names, e.g. one fitted to the
    # authors' own runs on it; None: the preset.
    device_file: str | None = None
    policy: str = "rocksdb"
    duration_s: float = 900.0
    options: Mapping[str, Any] = field(default_factory=dict)
    workload_fields: Mapping[str, Any] = field(default_factory=dict)
    machine: str = "server"
    seed: int = 0
    series: tuple[str, ...] = ()
    page_cache_GiB: float | None = None  # the machine's page cache; None: its profile's
    # The RocksDB release the paper's authors ran this scheme on: mechanisms it did not have
    # yet are off (`lsmsim.mechanisms.absent_in_version`); None: the release modelled.
    rocksdb_version: str | None = None

    def spec(self, duration_scale: float, seed: int | None = None) -> tuple[Any, ...]:
        """The `compare.run_cell` arguments of this run (with `seed` instead of its own)."""
        machine: Any = self.machine
        if self.page_cache_GiB is not None:  # a machine with the paper's memory
            from lsmsim.machine import load_machine, with_costs
            profile = with_costs(load_machine(machine), {"page_cache_GiB": self.page_cache_GiB})
            machine = dataclasses.replace(
                profile, name=f"{profile.name}:page_cache_GiB={self.page_cache_GiB:g}")
        kwargs = {"options": {**self.options, **release_option_values(self.rocksdb_version)},
                  "machine": machine,
                  "seed": self.seed if seed is None else seed,
                  **self.workload_fields}
        absent = absent_in_version(self.rocksdb_version)
        if absent:
            kwargs["without"] = absent
        device: Any = self.device
        if self.device_file is not None:  # the model itself: a Dask worker may not have the file
            from lsmsim.device_models import load_device
            device = load_device(self.device_file)
        return (self.policy, device, self.workload, self.duration_s * duration_scale, kwargs,
                self.series)


@dataclass(frozen=True)
class Finding:
    """What the simulator says about a claim: its figure, whether the paper's direction
    holds, and how far the magnitude is from the paper's."""

    simulated: str
    holds: bool
    magnitude: str


Results = Mapping[str, Cell]


MODEL_GAP = "model gap"          # the simulator lacks or simplifies what decides it
SETUP_DIFFERS = "setup differs"  # the runs differ from the paper's (length, size, machine)
NOT_CHECKABLE = "not checkable"  # the paper's text gives nothing the runs can be held to
GAP_CLASSES = (MODEL_GAP, SETUP_DIFFERS, NOT_CHECKABLE)


@dataclass(frozen=True)
class Claim:
    """A claim as the paper states it, and how to measure it on an experiment's runs.
    `reason` is the likely reason it may not reproduce and `gap` its class, one of
    `GAP_CLASSES` (both printed, and written to the claims CSV and JSON, when it does not);
    `rule` is the verdict rule when it is not obvious (printed once under the claims
    table)."""

    paper: str
    source: str
    statement: str
    paper_value: str
    measure: Callable[[Results], Finding]
    reason: str = ""
    rule: str = ""
    gap: str = ""

    def __post_init__(self) -> None:
        if self.gap and self.gap not in GAP_CLASSES:
            raise ExperimentError(f"claim {self.statement!r}: gap {self.gap!r} is not one of "
                                  f"{', '.join(GAP_CLASSES)}")


@dataclass(frozen=True)
class Experiment:
    """A seed figure's analogue: its runs, the metrics drawn (a bar per run), the claims
    checked, and `series`: timeseries columns kept by the runs (a `Run.series` name or a
    policy's `policy_*` column) drawn over time, a line per run that has them. `scales`
    declares its default and paper scales (`lsmsim.sweeps.paper_scale`), `scale` the one its runs
    are at (an experiment file builds them in `build(scale)`)."""

    name: str
    title: str
    runs: tuple[Run, ...]
    claims: tuple[Claim, ...]
    metrics: tuple[str, ...]
    note: str = ""
    series: tuple[str, ...] = ()
    scales: PaperScale | None = None
    scale: Scale | None = None


# -- claim helpers --------------------------------------------------------------------------
def cell_of(results: Results, label: str) -> Cell:
    """The run `label`; a failed run raises, which leaves the claim NOT RUN."""
    cell = results[label]
    if cell.error:
        raise RuntimeError(f"run {label} failed: {cell.error}")
    return cell


def metric_of(results: Results, label: str, metric: str) -> float:
    """One summary metric of the run `label`."""
    return cell_of(results, label).metrics[metric]


def _fmt(value: float) -> str:
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"


def times(a: float, b: float) -> float:
    """How many times `b` is `a`: infinite over a zero `b` (1 when both are zero), so a
    store whose tail throughput is 0 compares as far below any other."""
    return a / b if b else float("inf") if a else 1.0


def ratio_claim(paper: str, source: str, statement: str, metric: str, higher: str, lower: str,
                paper_ratio: float | None = None, paper_value: str = "",
                reason: str = "", gap: str = "") -> Claim:
    """`metric` of run `higher` exceeds that of run `lower` (by `paper_ratio` in the paper)."""

    def measure(results: Results) -> Finding:
        a, b = metric_of(results, higher, metric), metric_of(results, lower, metric)
        ratio = times(a, b)
        simulated = f"{metric} {higher} {_fmt(a)} vs {lower} {_fmt(b)} (x{ratio:.2f})"
        magnitude = (f"x{ratio:.2f} vs paper x{paper_ratio:.2f}" if paper_ratio
                     else "direction only")
        return Finding(simulated, a > b, magnitude)

    value = paper_value or (f"x{paper_ratio:.2f}" if paper_ratio else "higher")
    return Claim(paper, source, statement, value, measure, reason, gap=gap)


TREND_TOLERANCE = 0.05   # of the series' largest |value|
TREND_RULE = ("trend: 'falls' ('rises') holds when the last value is below (above) the first "
              "by more than 5% of the series' largest |value|, at most a quarter of the steps "
              "(rounded down; none for a 'monotonic' claim) go the other way by more than "
              "that 5%, and no such step is larger than half the first-to-last change (so a "
              "rise-then-fall does not count as a fall); the rank correlation is printed, not "
              "judged")


def trend_direction_holds(values: Sequence[float], falls: bool,
                          monotonic: bool = False) -> tuple[bool, int]:
    """Whether `values` (two or more) fall (or rise) by `TREND_RULE`, and how many steps go
    the other way beyond the tolerance. Up to four points allow no reversing step, five to
    eight allow one; `monotonic` (the paper says "monotonically") allows none."""
    sign = -1.0 if falls else 1.0
    series = sign * np.asarray(values, dtype=float)   # the claimed direction is "up" here
    tolerance = TREND_TOLERANCE * float(np.max(np.abs(series)))
    change = float(series[-1] - series[0])
    steps = np.diff(series)
    reversals = steps[steps < -tolerance]
    allowed = 0 if monotonic else len(steps) // 4
    holds = (change > tolerance and len(reversals) <= allowed
             and bool(np.all(-reversals < change / 2)))
    return holds, len(reversals)


def trend_claim(paper: str, source: str, statement: str, metric: str, labels: Sequence[str],
                falls: bool, paper_change: float | None = None, paper_value: str = "",
                reason: str = "", monotonic: bool = False, gap: str = "") -> Claim:
    """`metric` falls (or rises) over `labels` in order, by `TREND_RULE`
    (`trend_direction_holds`; with `monotonic`, no step may reverse beyond the tolerance);
    `paper_change` is the paper's relative change first -> last (e.g. -0.199)."""

    def measure(results: Results) -> Finding:
        values = np.array([metric_of(results, label, metric) for label in labels])
        ranks = np.argsort(np.argsort(values))
        rho = float(np.corrcoef(ranks, np.arange(len(values)))[0, 1]) if np.ptp(values) else 0.0
        holds, reversals = trend_direction_holds(values, falls, monotonic)
        simulated = f"{metric}: " + " -> ".join(_fmt(v) for v in values)
        change = (f"{(values[-1] - values[0]) / values[0]:+.1%}" if values[0]  # no % of 0
                  else f"{_fmt(values[0])} -> {_fmt(values[-1])}")
        magnitude = (f"{change} (rank corr {rho:+.2f}, {reversals} of {len(values) - 1} "
                     "steps reverse)")
        if paper_change is not None:
            magnitude += f" vs paper {paper_change:+.1%}"
        return Finding(simulated, holds, magnitude)

    value = paper_value or (f"{paper_change:+.1%}" if paper_change is not None
                            else ("falls" if falls else "rises"))
    return Claim(paper, source, statement, value, measure, reason, TREND_RULE, gap)


def pairs_claim(paper: str, source: str, statement: str, metric: str,
                pairs: Sequence[tuple[str, str]], paper_value: str, mixed: bool = False,
                reason: str = "", gap: str = "") -> Claim:
    """`metric` of the first run of each (higher, lower) pair exceeds the second's in every
    pair; with `mixed`, the winner differs between pairs (the paper's "depends on the
    device": at least one pair each way)."""

    def measure(results: Results) -> Finding:
        ratios = [metric_of(results, a, metric) / metric_of(results, b, metric)
                  for a, b in pairs]
        above = sum(r > 1 for r in ratios)
        holds = 0 < above < len(ratios) if mixed else above == len(ratios)
        simulated = f"{metric} " + ", ".join(f"{a}/{b} x{r:.2f}"
                                              for (a, b), r in zip(pairs, ratios))
        return Finding(simulated, holds, f"x{min(ratios):.2f} to x{max(ratios):.2f}; "
                                         f"{above} of {len(ratios)} above 1")

    return Claim(paper, source, statement, paper_value, measure, reason, gap=gap)


def peak_claim(paper: str, source: str, statement: str, metric: str, labels: Sequence[str],
               paper_value: str, reason: str = "", gap: str = "") -> Claim:
    """`metric` rises then falls over `labels`: its maximum is neither the first nor the last."""

    def measure(results: Results) -> Finding:
        values = [metric_of(results, label, metric) for label in labels]
        top = int(np.argmax(values))
        simulated = f"{metric}: " + " -> ".join(_fmt(v) for v in values)
        return Finding(simulated, 0 < top < len(values) - 1, f"peak at {labels[top]}")

    return Claim(paper, source, statement, paper_value, measure, reason, gap=gap)


def with_variants(claim: Claim, variants: Mapping[str, Mapping[str, str]]) -> Claim:
    """`claim` with its verdict as measured, and its measure repeated on each variant: a
    name and the runs standing in for some of the claim's runs (`{label: other label}`, the
    same run with one setting changed). Each variant's verdict and magnitude is appended to
    the magnitude, so the table shows how the verdict depends on that setting."""

    def measure(results: Results) -> Finding:
        finding = claim.measure(results)
        parts = []
        for name, stand_ins in variants.items():
            swapped = {**results, **{label: results[other] for label, other in stand_ins.items()}}
            try:
                variant = claim.measure(swapped)
            except RuntimeError as exc:  # a failed stand-in run
                parts.append(f"{name}: NOT RUN ({exc})")
                continue
            parts.append(f"{name}: {'holds' if variant.holds else 'does not hold'} "
                         f"({variant.magnitude})")
        return Finding(finding.simulated, finding.holds, "; ".join([finding.magnitude, *parts]))

    return dataclasses.replace(claim, measure=measure)


# -- loading --------------------------------------------------------------------------------
def _experiments(directory: Path | None) -> NamedData:
    """The experiments: `directory`'s, or the package's and the user's
    ($LSMSIM_PATH/experiments/, `lsmsim.named_data`)."""
    return NamedData("experiment", directory or EXPERIMENTS_DIR, ".py",
                     "experiments" if directory is None else None)


def experiment_names(directory: Path | None = None) -> list[str]:
    """The experiments in `directory` (default: `scenarios/experiments/` and the user's)."""
    return _experiments(directory).names()


def load_experiment(name: str, directory: Path | None = None,
                    paper_scale: bool = False) -> Experiment:
    """The `EXPERIMENT` of the experiment file `name` names, or with `paper_scale` the
    file's `build(scale)` at its paper scale (`PaperScale.run`); an unknown name says what
    was meant and lists the valid ones."""
    try:
        path = _experiments(directory).find(name)
    except DataFileError as exc:
        raise ExperimentError(str(exc)) from None
    if not path.is_file() or path.suffix != ".py":
        raise ExperimentError(f"{path}: not an experiment file (a Python file defining "
                              "EXPERIMENT = Experiment(...))")
    spec = importlib.util.spec_from_file_location(
        f"lsmsim_experiment_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    try:
        spec.loader.exec_module(module)  # type: ignore[union-attr]
    except Exception as exc:  # the user's file: its error is reported as theirs, in one line
        line = getattr(exc, "lineno", None)
        where = f"{path}, line {line}" if line else str(path)
        raise ExperimentError(f"{where}: {type(exc).__name__}: {exc}") from None
    experiment = getattr(module, "EXPERIMENT", None)
    if not isinstance(experiment, Experiment):
        raise ExperimentError(f"{path}: defines no EXPERIMENT = Experiment(...)")
    if paper_scale:
        build = getattr(module, "build", None)
        if experiment.scales is None or not callable(build):
            raise ExperimentError(f"{path}: declares no paper scale (Experiment(scales="
                                  "PaperScale(...)) and a build(scale) function)")
        experiment = build(experiment.scales.run)
    labels = [run.label for run in experiment.runs]
    if len(set(labels)) != len(labels):
        raise ExperimentError(f"{path}: run labels repeat: {labels}")
    return experiment


# -- running --------------------------------------------------------------------------------
@dataclass
class ClaimRow:
    experiment: str
    claim: Claim
    finding: Finding | None
    error: str = ""

    FIELDS: ClassVar[tuple[str, ...]] = ("paper", "source", "statement", "paper_value",
                                         "simulated", "verdict", "magnitude", "gap", "reason")

    @property
    def verdict(self) -> str:
        if self.finding is None:
            return "NOT RUN"
        return "holds" if self.finding.holds else "DOES NOT HOLD"

    @property
    def gap(self) -> tuple[str, str]:
        """(class, one-line reason) of a claim that does not hold; empty otherwise."""
        if self.finding is None or self.finding.holds:
            return "", ""
        return (self.claim.gap or "unclassified",
                self.claim.reason or "no reason given")

    def record(self) -> dict[str, str]:
        """The row as the claims CSV and JSON hold it."""
        finding = self.finding
        gap, reason = self.gap
        return {"paper": self.claim.paper, "source": self.claim.source,
                "statement": self.claim.statement, "paper_value": self.claim.paper_value,
                "simulated": finding.simulated if finding else self.error,
                "verdict": self.verdict, "magnitude": finding.magnitude if finding else "",
                "gap": gap, "reason": reason}


def run_experiments(experiments: Sequence[Experiment], duration_scale: float = 1.0,
                    workers: int = 2, progress: str = "", seed: int | None = None,
                    execution: Execution | None = None, seeds: int = 1
                    ) -> tuple[dict[str, dict[str, Cell]], list[ClaimRow]]:
    """Every experiment's runs in one pool or as `execution` says (`lsmsim.sweeps.executor`;
    identical runs are simulated once), then every claim measured on them; `seed` replaces
    every run's own. With `seeds` > 1 each run is simulated with that many seeds from its
    own (or `seed`) and its cell is their mean (`mean_of_seeds`), as the papers report the
    mean of repeated runs. On Ctrl-C or SIGTERM, raises `worker_pool.Interrupted` carrying
    this pair, the runs not run failed with `worker_pool.NOT_RUN` (their claims NOT RUN)."""
    from lsmsim.sweeps.worker_pool import Interrupted  # here: `lsmsim run` does not need it

    def specs_of(run: Run) -> list[tuple[Any, ...]]:
        first = run.seed if seed is None else seed
        return [run.spec(duration_scale, first + k) for k in range(seeds)]

    unique: dict[tuple[Any, ...], tuple[Any, ...]] = {}
    run_keys: dict[tuple[str, str], tuple[tuple[Any, ...], ...]] = {}  # its seeds' keys
    for experiment in experiments:
        for run in experiment.runs:
            specs = specs_of(run)
            run_keys[experiment.name, run.label] = tuple(_key(spec) for spec in specs)
            for key, spec in zip(run_keys[experiment.name, run.label], specs):
                unique.setdefault(key, spec)
    stopped: Interrupted | None = None
    try:
        cells = run_cells(list(unique.values()), workers, progress, execution=execution)
    except Interrupted as stop:
        cells, stopped = stop.results, stop
    by_key = dict(zip(unique, cells))
    merged: dict[tuple[tuple[Any, ...], ...], Cell] = {}  # one Cell per run, however shared
    for keys in run_keys.values():
        if keys not in merged:
            merged[keys] = mean_of_seeds([by_key[k] for k in keys])
    results = {experiment.name: {run.label: merged[run_keys[experiment.name, run.label]]
                                 for run in experiment.runs} for experiment in experiments}
    rows = []
    for experiment in experiments:
        for claim in experiment.claims:
            try:
                rows.append(ClaimRow(experiment.name, claim,
                                     claim.measure(results[experiment.name])))
            except Exception as exc:  # noqa: BLE001 - one claim's failure is its row
                rows.append(ClaimRow(experiment.name, claim, None,
                                     str(exc) if isinstance(exc, RuntimeError)
                                     else f"claim failed: {type(exc).__name__}: {exc}"))
    if stopped is not None:
        raise stopped.carrying((results, rows))
    return results, rows


def _key(spec: tuple[Any, ...]) -> tuple[Any, ...]:
    """A hashable identity of a run's arguments (its keyword dict as sorted items)."""
    return (*spec[:4], repr(sorted(spec[4].items())), spec[5])


def format_claims(rows: Sequence[ClaimRow]) -> str:
    """The claims table: one block per claim (paper's statement and number, the simulated
    figure, the verdict and the magnitude; the likely reason when it does not hold)."""
    lines = []
    for i, row in enumerate(rows, 1):
        claim = row.claim
        lines.append(f"[{i}] {claim.paper} {claim.source}: {claim.statement}")
        lines.append(f"     paper: {claim.paper_value}")
        if row.finding is None:
            lines.append(f"     NOT RUN: {row.error}")
        else:
            lines.append(f"     simulated ({row.experiment}): {row.finding.simulated}")
            lines.append(f"     direction {row.verdict}; magnitude {row.finding.magnitude}")
            if not row.finding.holds:
                gap, reason = row.gap
                lines.append(f"     does not reproduce ({gap}); likely reason: {reason}")
    held = sum(1 for r in rows if r.finding is not None and r.finding.holds)
    classes = [r.gap[0] for r in rows if r.verdict == "DOES NOT HOLD"]
    by_class = ", ".join(f"{classes.count(c)} {c}" for c in dict.fromkeys(
        (*GAP_CLASSES, *classes)) if classes.count(c))
    lines.append(f"\n{held} of {len(rows)} claims hold in direction "
                 f"({sum(1 for r in rows if r.finding is None)} not run"
                 + (f"; not holding: {by_class}" if by_class else "") + ")")
    for rule in dict.fromkeys(r.claim.rule for r in rows if r.claim.rule):
        lines.append(f"rule: {rule}")
    return "\n".join(lines)


def write_outputs(experiment: Experiment, cells: Mapping[str, Cell], rows: Sequence[ClaimRow],
                  out: Path, figures: bool = True, duration_scale: float = 1.0) -> None:
    """`<name>.csv` (one row per run: its settings, `requested_duration_s` its length times
    `duration_scale`, the device file and RocksDB release it ran as when not the preset's and
    the modelled one's, and its metrics, `duration_s` the simulated length), `<name>.png`
    (one panel per metric of the experiment, a bar per run that has it or failed),
    `<name>_claims.csv` and `<name>_claims.json` (a claim per row, with the gap class and
    reason of one that does not hold); without `figures`, the CSV and JSON files only."""

    columns = sorted({m for c in cells.values() for m in c.metrics})
    with open(out / f"{experiment.name}.csv", "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["label", "policy", "device", "device_file", "rocksdb_version",
                         "workload", "requested_duration_s", "options", *columns, "cpu_s",
                         "error"])
        for run in experiment.runs:
            cell = cells[run.label]
            writer.writerow([run.label, run.policy, run.device, run.device_file or "",
                             run.rocksdb_version or "", run.workload,
                             run.duration_s * duration_scale,
                             dict(run.options),
                             *(repr(cell.metrics[c]) if c in cell.metrics else "" for c in columns),
                             f"{cell.cpu_s:.3f}", cell.error])
    records = [row.record() for row in rows]
    with open(out / f"{experiment.name}_claims.csv", "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(ClaimRow.FIELDS))
        writer.writeheader()
        writer.writerows(records)
    (out / f"{experiment.name}_claims.json").write_text(json.dumps(records, indent=1) + "\n")
    if experiment.series:
        write_series(experiment, cells, out, figures)
    if not figures:
        return
    from lsmsim.plot.timeline import plt, save_figure

    # A panel draws the runs that have its metric (a chained stage's throughput is only its
    # chain run's), so no panel is mostly empty slots.
    panels = [(metric, [run.label for run in experiment.runs
                        if metric in cells[run.label].metrics or cells[run.label].error])
              for metric in experiment.metrics]
    widest = max(len(labels) for _, labels in panels)
    figure, axes = plt.subplots(len(experiment.metrics), 1, squeeze=False,
                                figsize=(max(5.0, 0.55 * widest + 2),
                                         2.4 * len(experiment.metrics)))
    for axis, (metric, labels) in zip(axes[:, 0], panels):
        values = [cells[label].metrics.get(metric, np.nan) for label in labels]
        axis.bar(range(len(labels)), values)
        axis.set_xticks(range(len(labels)), labels, rotation=45, ha="right", fontsize=7)
        axis.set_ylabel(metric, fontsize=8)
    axes[0, 0].set_title(experiment.title, fontsize=9)
    figure.tight_layout()
    save_figure(figure, out / f"{experiment.name}.png")


def write_series(experiment: Experiment, cells: Mapping[str, Cell], out: Path,
                 figure: bool = True) -> None:
    """`<name>_series.csv` (label, time_s and each of the experiment's series columns, a row
    per run and interval) and, with `figure`, `<name>_series.png` (a panel per column, a
    line per run)."""

    kept = [(run.label, cells[run.label].policy_series) for run in experiment.runs
            if not cells[run.label].error and "time_s" in cells[run.label].policy_series]
    with open(out / f"{experiment.name}_series.csv", "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["label", "time_s", *experiment.series])
        for label, series in kept:
            columns = [series.get(name, [np.nan] * len(series["time_s"]))
                       for name in experiment.series]
            for row in zip(series["time_s"], *columns):
                writer.writerow([label, *(repr(v) for v in row)])
    if not figure:
        return
    from lsmsim.plot.timeline import plt, save_figure

    drawing, axes = plt.subplots(len(experiment.series), 1, squeeze=False, sharex=True,
                                 figsize=(8.0, 2.4 * len(experiment.series)))
    for axis, name in zip(axes[:, 0], experiment.series):
        for label, series in kept:
            if name in series:
                axis.plot(series["time_s"], series[name], label=label, linewidth=0.8)
        axis.set_ylabel(name, fontsize=8)
    axes[0, 0].legend(fontsize=6, ncol=3)
    axes[0, 0].set_title(experiment.title, fontsize=9)
    axes[-1, 0].set_xlabel("simulated time (s)", fontsize=8)
    drawing.tight_layout()
    save_figure(drawing, out / f"{experiment.name}_series.png")
