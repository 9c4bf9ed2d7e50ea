"""The scales an experiment of `lsmsim reproduce` runs at: its short default, for quick
checks, and its paper's own, for `lsmsim reproduce --paper-scale`.

A scale is the experiment's data size (pairs loaded or the key space, and operations per
measured mix where the paper counts them), its duration, and its memory: the page cache a
machine with the paper's RAM gives the store (buffered reads are served from it, and
Linux's writeback thresholds are ratios of it). Each experiment declares both scales in one
`PaperScale`, citing where its paper states its setup. When the paper's scale cannot run
within `BUDGET_S` (every experiment, 2 cores), the experiment declares the smallest cut that
fits and why; the cut is printed with every paper-scale run, so a reader never takes a cut
run for the paper's.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Mapping, Protocol, Sequence

from lsmsim.workload import make_workload

BUDGET_S = 20 * 60.0   # the whole paper-scale run, wall time on 2 cores
BUDGET_CORES = 2


@dataclass(frozen=True)
class Scale:
    """How large an experiment's runs are. `duration_s`: simulated seconds of each run (a
    cap, where the measured mix ends by itself after `mix_s` or `mix_ops`); `load_pairs`:
    pairs loaded (or filled) before the measured mix, or the key space a fill overwrites
    (0: the experiment has no such knob); `mix_s` / `mix_ops`: how long the measured mix
    lasts after the load, in seconds or client operations (0: until `duration_s`);
    `page_cache_GiB`: the machine's page cache (None: the profile's, 96 GiB on `server`,
    the ADOC authors' 128 GB machine); `paper`: whether this is the paper's scale (or its
    cut)."""

    duration_s: float
    load_pairs: int = 0
    mix_s: float = 0.0
    mix_ops: int = 0
    page_cache_GiB: float | None = None
    paper: bool = False

    def __post_init__(self) -> None:
        if self.duration_s <= 0 or self.load_pairs < 0 or self.mix_s < 0 or self.mix_ops < 0:
            raise ValueError(f"{self}: sizes must be positive (duration) or >= 0")
        if self.mix_s and self.mix_ops:
            raise ValueError(f"{self}: give mix_s or mix_ops, not both")
        if self.page_cache_GiB is not None and self.page_cache_GiB < 0:
            raise ValueError(f"{self}: page_cache_GiB must be >= 0")

    def describe(self) -> str:
        """The scale in words: "load 100 M pairs, mix 300 M ops, 8 GiB page cache"."""
        parts = []
        if self.load_pairs:
            parts.append(f"load {_count(self.load_pairs)} pairs")
        if self.mix_ops:
            parts.append(f"mix {_count(self.mix_ops)} ops")
        elif self.mix_s:
            parts.append(f"mix {self.mix_s:,.0f} s")
        parts.append(f"{'at most ' if self.mix_ops or self.mix_s else ''}"
                     f"{self.duration_s:,.0f} s per run")
        parts.append("the machine profile's page cache" if self.page_cache_GiB is None
                     else f"{self.page_cache_GiB:g} GiB page cache")
        return ", ".join(parts)


@dataclass(frozen=True)
class PaperScale:
    """An experiment's two scales. `source` cites the paper's setup (section and its words);
    `default` is what `lsmsim reproduce` runs, `paper` the paper's setup, and `cut`, when
    the paper's does not fit `BUDGET_S`, what `--paper-scale` runs instead, `cut_reason`
    saying why (both printed)."""

    source: str
    default: Scale
    paper: Scale
    cut: Scale | None = None
    cut_reason: str = ""

    def __post_init__(self) -> None:
        if self.default.paper or not self.paper.paper or (self.cut and not self.cut.paper):
            raise ValueError(f"{self.source}: default must be paper=False, paper (and cut) "
                             "paper=True")
        if not self.source.strip() or bool(self.cut) != bool(self.cut_reason.strip()):
            raise ValueError(f"{self.source!r}: a source, and a cut_reason exactly when cut")

    @property
    def run(self) -> Scale:
        """What `--paper-scale` runs: the paper's scale, or its cut."""
        return self.cut or self.paper

    def cuts(self) -> list[str]:
        """Each field the cut lowers, "load: 100 M pairs -> 40 M (reason)"; none uncut."""
        if self.cut is None:
            return []
        lines = []
        for field in ("load_pairs", "mix_ops", "mix_s", "duration_s", "page_cache_GiB"):
            paper, cut = getattr(self.paper, field), getattr(self.cut, field)
            if paper != cut:
                lines.append(f"{field}: {_value(paper)} -> {_value(cut)} ({self.cut_reason})")
        return lines


class Scaled(Protocol):
    """An experiment as far as its scales go (`lsmsim.sweeps.reproduce.Experiment`)."""

    scales: PaperScale | None
    scale: Scale | None


def scale_lines(experiment: Scaled, duration_scale: float | None = None) -> list[str]:
    """The scale `experiment`'s runs are at, in words (with `duration_scale`, the factor its
    durations were multiplied by), the paper's and where the paper states it, and each cut
    below the paper's with its reason."""
    scales, scale = experiment.scales, experiment.scale
    if scales is None or scale is None:
        return ["its own scale (it declares no paper scale)"]
    stretched = f", durations x{duration_scale:g}" if duration_scale else ""
    if not scale.paper:
        return [f"default scale: {scale.describe()}{stretched}",
                f"paper scale (--paper-scale): {scales.paper.describe()}"]
    lines = [f"paper scale: {scales.paper.describe()}", f"from {scales.source}"]
    if scale == scales.cut:
        lines += [f"ran below it: {scale.describe()}", *scales.cuts()]
    return lines


def mix_ending(workload: str, fields: Mapping[str, Any], scale: Scale) -> dict[str, Any]:
    """`fields` with the workload's phases given, the last (the measured mix) ending after
    `scale.mix_s` or `scale.mix_ops` (as they are when the scale sets neither): the paper
    measures its mix for a time or an operation count after the load, however long the
    load takes. A workload that is its load alone (a YCSB Load) is left as it is; one whose
    mix is a repeating cycle of timed phases (write bursts) has the cycle unrolled until it
    has lasted `scale.mix_s`."""
    made = make_workload(workload, **fields)
    phases, repeat = made.phases, made.repeat_from_phase
    if not (scale.mix_s or scale.mix_ops) or len(phases) < 2:
        return dict(fields)
    if repeat < 0:
        last = dataclasses.replace(phases[-1], duration_s=scale.mix_s, ops=scale.mix_ops)
        return {**fields, "phases": (*phases[:-1], last)}
    cycle = phases[repeat:]
    if not scale.mix_s or not all(phase.duration_s for phase in cycle):
        raise ValueError(f"{workload}: a repeating mix ends after mix_s, its phases timed")
    unrolled, left_s = [], scale.mix_s
    while left_s > 0:
        for phase in cycle:
            if left_s > 0:
                unrolled.append(dataclasses.replace(phase, duration_s=min(phase.duration_s,
                                                                          left_s)))
                left_s -= phase.duration_s
    return {**fields, "phases": (*phases[:repeat], *unrolled), "repeat_from_phase": -1}


def estimated_wall_s(cpu_s: Sequence[float], workers: int = BUDGET_CORES) -> float:
    """Wall time of runs taking `cpu_s` each, in this order, on a pool of `workers`
    processes (each takes the next run when it finishes one): the time of the busiest."""
    finish = [0.0] * workers
    for cost in cpu_s:
        finish[finish.index(min(finish))] += cost
    return max(finish)


def budget_note(estimated_s: float) -> str:
    """What a paper-scale run's estimated wall time says against `BUDGET_S`: nothing within
    it, else a clause naming the budget (printed after the estimate)."""
    if estimated_s <= BUDGET_S:
        return ""
    return f", over the paper-scale budget of {BUDGET_S / 60:.0f} min on {BUDGET_CORES} cores"


def _count(n: int) -> str:
    return f"{n / 1e6:.4g} M" if n >= 1_000_000 else f"{n:,}"


def _value(value: float | int | None) -> str:
    if value is None:
        return "profile's"
    return _count(int(value)) if isinstance(value, int) else f"{value:g}"
