"""The store as a dataflow graph: where the data is, where it flows and how fast, and
which component overflowed (the ADOC paper's "data overflow", Yu et al., FAST '23).

`Dataflow(trace)` reads a `Trace`'s rows and events once into step functions of each
component's fill and cumulative counts of each flow; `graph(start_s, end_s)` then returns
a `networkx.DiGraph` of that window. Component nodes, left to right: `client` ->
`memtable` (the active one) -> `immutable` (memtables waiting for flush) -> `L0` -> `L1`
... `Ln`, plus `pending` (the compaction debt, pending compaction bytes). Resource nodes:
`cpu`, `device`, `rate_limiter`, `flush_slots`, `compaction_slots`. Data edges
(`kind="data"`) carry `rate_bps` and `bytes` written into their target over the window and
`drain_bps` taken out of their source (a compaction also rewrites the overlapping files of
the level below); resource edges
(`kind="serves"`) point at the components whose outflow the resource carries. Everything
comes from the trace, so a simulated run and an imported RocksDB LOG give the same graph
(where a real LOG lacks a figure, e.g. CPU use, the attribute is NaN).

The overflowing component is found as RocksDB finds its stall cause: the fills at the
moment are checked against the options then in force (`options_changed` events applied)
by `lsmsim.write_stall.get_write_stall_condition_and_cause` (RocksDB's
GetWriteStallConditionAndCause, db/column_family.cc), the first matching rule winning.
ADOC's names: MMO, memtable overflow (immutables reach max_write_buffer_number); L0O, L0
overflow (L0 files reach the slowdown/stop triggers); RDO, redundancy data overflow
(pending compaction bytes reach the soft/hard limits).
"""

from __future__ import annotations

import math
from bisect import bisect_right
from dataclasses import dataclass
from typing import Any, Callable

import networkx as nx
import numpy as np

from lsmsim.options import LsmOptions
from lsmsim.stall_tracker import cause_name
from lsmsim.trace import Job, Trace
from lsmsim.write_stall import StallInputs, WriteStallCause, get_write_stall_condition_and_cause

# RocksDB's stall cause -> (the component that overflowed, ADOC's name for the overflow).
OVERFLOWS = {
    WriteStallCause.MEMTABLE_LIMIT: ("immutable", "MMO"),
    WriteStallCause.L0_FILE_COUNT_LIMIT: ("L0", "L0O"),
    WriteStallCause.PENDING_COMPACTION_BYTES: ("pending", "RDO"),
}
OVERFLOW_WORDS = {"MMO": "memtable overflow", "L0O": "L0 overflow",
                  "RDO": "redundancy data overflow"}
RESOURCES = ("cpu", "device", "rate_limiter", "flush_slots", "compaction_slots")
# A state recorded this close after a moment still describes it (event times are whole us).
SAME_MOMENT_S = 1e-6


@dataclass(frozen=True)
class StepSeries:
    """A value that holds from each recorded time on (a *level*, in salabim's terms)."""

    times_s: np.ndarray
    values: np.ndarray

    @classmethod
    def from_points(cls, points: list[tuple[float, float]]) -> "StepSeries":
        """From (time, value) pairs in any order; pairs at one time keep their order."""
        points = sorted(points, key=lambda point: point[0])
        return cls(np.array([p[0] for p in points], dtype=float),
                   np.array([p[1] for p in points], dtype=float))

    def at(self, at_s: float) -> float:
        """The value last recorded at or before `at_s` (NaN before the first)."""
        index = int(np.searchsorted(self.times_s, at_s + SAME_MOMENT_S, side="right")) - 1
        return float(self.values[index]) if index >= 0 else math.nan

    def peak(self, start_s: float, end_s: float) -> float:
        """The highest value held at any time in [start_s, end_s]."""
        first = int(np.searchsorted(self.times_s, start_s, side="right"))
        last = int(np.searchsorted(self.times_s, end_s + SAME_MOMENT_S, side="right"))
        held = [self.at(start_s), *self.values[first:last].tolist()]
        finite = [v for v in held if not math.isnan(v)]
        return max(finite) if finite else math.nan


@dataclass(frozen=True)
class CumulativeFlow:
    """An amount (bytes, or job-seconds) moved by spans that each move theirs at a steady
    rate (a span shorter than a microsecond moves its amount at once); the mean rate over
    any window is the difference of the cumulative amount at its ends over its length,
    found by interpolation in O(log n)."""

    times_s: np.ndarray
    cumulative: np.ndarray
    step_times_s: np.ndarray  # spans of no length, and the running sum of their amounts
    step_cumulative: np.ndarray

    @classmethod
    def from_spans(cls, starts_s: np.ndarray, ends_s: np.ndarray,
                   amounts: np.ndarray) -> "CumulativeFlow":
        starts = np.asarray(starts_s, dtype=float)
        ends = np.maximum(np.asarray(ends_s, dtype=float), starts)
        amounts = np.asarray(amounts, dtype=float)
        at_once = ends - starts < SAME_MOMENT_S  # shorter than the events' resolution
        order = np.argsort(starts[at_once], kind="stable")
        step_times, step_sums = starts[at_once][order], np.cumsum(amounts[at_once][order])
        starts, ends, amounts = starts[~at_once], ends[~at_once], amounts[~at_once]
        if starts.size == 0:
            return cls(np.zeros(1), np.zeros(1), step_times, step_sums)
        times = np.unique(np.concatenate((starts, ends)))
        rate = amounts / (ends - starts)
        change = np.zeros(times.size)
        np.add.at(change, np.searchsorted(times, starts), rate)
        np.add.at(change, np.searchsorted(times, ends), -rate)
        rate_after = np.cumsum(change)
        cumulative = np.concatenate(([0.0], np.cumsum(rate_after[:-1] * np.diff(times))))
        return cls(times, cumulative, step_times, step_sums)

    def total(self, at_s: float) -> float:
        """The amount moved by `at_s`."""
        steps = int(np.searchsorted(self.step_times_s, at_s, side="right"))
        return (float(np.interp(at_s, self.times_s, self.cumulative))
                + (float(self.step_cumulative[steps - 1]) if steps else 0.0))

    def rate(self, start_s: float, end_s: float) -> float:
        """Mean amount per second over [start_s, end_s]."""
        if end_s <= start_s:
            return math.nan
        return (self.total(end_s) - self.total(start_s)) / (end_s - start_s)


@dataclass(frozen=True)
class Overflow:
    """What RocksDB's stall rules make of the fills at one moment."""

    condition: str  # "normal", "delayed" or "stopped"
    cause: str      # RocksDB's stall-counter name ("level0_slowdown", ...) or "none"
    overflow: str | None  # "MMO", "L0O", "RDO" or None
    component: str | None  # the overflowing node ("immutable", "L0", "pending") or None


class Dataflow:
    """One run's fills, flows and options over time, from which graphs are cut."""

    def __init__(self, trace: Trace) -> None:
        self.trace = trace
        ts = trace.timeseries
        # The run's end: its last row's (an imported run's summary leaves out the intervals of
        # report.csv rows it could not read), the summary's duration without rows.
        self.end_s = max(float(trace.summary.get("duration_s") or 0.0),
                         _last(ts.get("time_s"), 0.0))
        self._options = _OptionsTimeline(trace)
        self.fills = _fill_series(trace)
        jobs = trace.jobs()
        self.levels = _deepest_level(trace, jobs)
        # Bytes written into each edge's target, and bytes taken out of its source.
        self.flows: dict[tuple[str, str], CumulativeFlow] = {}
        self.drains: dict[tuple[str, str], CumulativeFlow] = {}
        self._labels: dict[tuple[str, str], str] = {}
        row_end = np.asarray(ts.get("time_s", []), dtype=float)
        row_start = np.concatenate(([0.0], row_end[:-1]))
        self._row_spans = (row_start, row_end)
        puts = _put_flow(row_start, row_end,
                         np.asarray(ts.get("user_bytes_per_s", np.zeros(row_end.size)), float),
                         trace.stall_episodes, self.end_s)
        self._add_flow(("client", "memtable"), "puts", puts, puts)
        # Every put byte is sealed into an immutable memtable once its memtable fills: over
        # a window longer than one memtable's fill time the two rates are the same.
        self._add_flow(("memtable", "immutable"), "memtable switches", puts, puts)
        flushes = [j for j in jobs if j.kind == "flush"]
        self._add_flow(("immutable", "L0"), "flushes",
                       _job_flow(flushes, lambda j: j.output_bytes),
                       _job_flow(flushes, lambda j: j.input_bytes))
        compactions = [j for j in jobs if j.kind == "compaction" and j.input_levels]
        taken = _source_level_input_bytes(trace.events)
        for source, target in sorted({(min(j.input_levels), j.output_level)
                                      for j in compactions}):
            picked = [j for j in compactions
                      if min(j.input_levels) == source and j.output_level == target]
            self._add_flow((f"L{source}", f"L{target}"), f"compaction L{source}→L{target}",
                           _job_flow(picked, lambda j: j.output_bytes),
                           _job_flow(picked, lambda j: taken.get(j.job, 0.0)))
        # The flush pool's threads run flushes and the compactions a policy put there
        # (SILK's, `thread_pool` "high"); the compaction pool's the other compactions.
        high_pool = _high_pool_jobs(trace.events)
        unfinished = _unfinished_starts(trace.events, high_pool)
        pools = (("flush", flushes + [j for j in compactions if j.job in high_pool]),
                 ("compaction", [j for j in compactions if j.job not in high_pool]))
        self.running = {f"{kind}_slots": CumulativeFlow.from_spans(
            np.array([j.start_s for j in done] + unfinished[kind]),
            np.array([j.end_s for j in done] + [self.end_s] * len(unfinished[kind])),
            np.array([j.duration_s for j in done]
                     + [self.end_s - s for s in unfinished[kind]]))
            for kind, done in pools}

    # -- the moment's stall --------------------------------------------------------------------
    def options_at(self, at_s: float) -> LsmOptions:
        """The options in force at `at_s` (the run's, then every `options_changed`)."""
        return self._options.at(at_s)

    def overflow_at(self, at_s: float) -> Overflow:
        """RocksDB's stall condition and cause for the fills recorded at `at_s`."""
        def fill(name: str) -> float:
            value = self.fills[name].at(at_s)
            return 0.0 if math.isnan(value) else value

        inputs = StallInputs(int(fill("immutable")), int(fill("L0")), fill("pending"))
        condition, cause = get_write_stall_condition_and_cause(inputs, self.options_at(at_s))
        component, overflow = OVERFLOWS.get(cause, (None, None))
        return Overflow(condition.value, cause_name(condition, cause), overflow, component)

    # -- the graph ---------------------------------------------------------------------------
    def graph(self, start_s: float, end_s: float, at_s: float | None = None) -> nx.DiGraph:
        """The store over [start_s, end_s]: flows are that window's mean rates; fills are
        those recorded at `at_s` (the window's end when None) with their peak in the
        window; the overflow is RocksDB's verdict on the fills at `at_s`."""
        at_s = end_s if at_s is None else at_s
        options = self.options_at(at_s)
        verdict = self.overflow_at(at_s)
        graph = nx.DiGraph(start_s=start_s, end_s=end_s, at_s=at_s, condition=verdict.condition,
                           cause=verdict.cause, overflow=verdict.overflow,
                           overflowing=verdict.component,
                           delayed_write_rate_bps=self._delayed_rate_bps(at_s))
        for node, attributes in self._components(options, start_s, end_s, at_s).items():
            graph.add_node(node, **attributes)
        for (source, target), flow in self.flows.items():
            rate = flow.rate(start_s, end_s)
            graph.add_edge(source, target, kind="data", label=self._labels[(source, target)],
                           rate_bps=rate, bytes=rate * (end_s - start_s),
                           drain_bps=self.drains[(source, target)].rate(start_s, end_s))
        for node, attributes in self._resources(graph, options, start_s, end_s).items():
            graph.add_node(node, kind="resource", **attributes)
            for target in attributes.pop("serves"):
                graph.add_edge(node, target, kind="serves")
        if verdict.component is not None:
            graph.nodes[verdict.component]["overflowing"] = True
        used = {n: d["utilisation"] for n, d in graph.nodes(data=True)
                if d["kind"] == "resource" and not math.isnan(d["utilisation"])}
        graph.graph["scarce"] = max(used, key=used.__getitem__) if used else None
        return graph

    def _components(self, options: LsmOptions, start_s: float, end_s: float,
                    at_s: float) -> dict[str, dict[str, Any]]:
        auto = not options.disable_auto_compactions
        mwbn = options.max_write_buffer_number
        slowdown_imm = (max(mwbn - 1, options.effective_min_write_buffer_number_to_merge + 1)
                        if mwbn > 3 else None)
        soft = options.soft_pending_compaction_bytes_limit
        hard = options.hard_pending_compaction_bytes_limit
        nodes: dict[str, dict[str, Any]] = {
            "client": {"kind": "client", "label": "client puts", "unit": "bytes"},
            "memtable": {"kind": "memtable", "label": "active memtable", "unit": "bytes",
                         "capacity": float(options.write_buffer_size)},
            "immutable": {"kind": "memtable", "label": "immutable memtables",
                          "unit": "memtables", "overflow": "MMO", "slowdown_at": slowdown_imm,
                          "stop_at": mwbn},
            "L0": {"kind": "level", "label": "L0", "unit": "files", "overflow": "L0O",
                   "slowdown_at": options.level0_slowdown_writes_trigger if auto else None,
                   "stop_at": options.level0_stop_writes_trigger if auto else None},
            "pending": {"kind": "debt", "label": "pending compaction bytes", "unit": "bytes",
                        "overflow": "RDO", "slowdown_at": soft if auto and soft > 0 else None,
                        "stop_at": hard if auto and hard > 0 else None},
        }
        dynamic = options.level_compaction_dynamic_level_bytes
        for level in range(1, self.levels + 1):
            target = (options.max_bytes_for_level_base
                      * options.max_bytes_for_level_multiplier ** (level - 1))
            nodes[f"L{level}"] = {"kind": "level", "label": f"L{level}",
                                  "unit": getattr(self.fills.get(f"L{level}"), "unit", "bytes"),
                                  "capacity": None if dynamic else float(target)}
        for name, attributes in nodes.items():
            series = self.fills.get(name)
            attributes["fill"] = series.at(at_s) if series is not None else math.nan
            attributes["peak"] = series.peak(start_s, end_s) if series is not None else math.nan
            attributes.setdefault("overflowing", False)
        return nodes

    def _resources(self, graph: nx.DiGraph, options: LsmOptions, start_s: float,
                   end_s: float) -> dict[str, dict[str, Any]]:
        """Each resource's utilisation (0..1, NaN where the trace does not say) over the
        window, what it holds and the components whose outflow it carries."""
        machine = self.trace.config.get("machine") or {}
        background_bps = sum(d["rate_bps"] for s, t, d in graph.edges(data=True)
                             if d["kind"] == "data" and s not in ("client", "memtable"))
        limit = float(options.rate_limiter_bytes_per_sec)
        draining = [n for n in graph if n == "immutable" or graph.nodes[n]["kind"] == "level"]
        resources: dict[str, dict[str, Any]] = {
            "cpu": {"label": "CPU", "utilisation": self._row_mean("cpu_util", start_s, end_s),
                    "capacity": machine.get("cores"), "capacity_unit": "cores",
                    "serves": draining},
            "device": {"label": "device",
                       "utilisation": self._row_mean("device_util", start_s, end_s),
                       "rate_bps": background_bps, "serves": draining},
            "rate_limiter": {"label": "rate limiter",
                             "utilisation": background_bps / limit if limit else math.nan,
                             "capacity": limit or None, "capacity_unit": "bytes/s",
                             "serves": draining if limit else []},
        }
        for (name, label, serves), slots in zip(
                (("flush_slots", "flush slots", ["immutable"]),
                 ("compaction_slots", "compaction slots",
                  [n for n in draining if n != "immutable"])),
                self._options.most_slots(start_s, end_s)):
            busy = self.running[name].rate(start_s, end_s)
            resources[name] = {"label": label, "capacity": slots, "capacity_unit": "jobs",
                               "busy": busy, "utilisation": busy / slots, "serves": serves}
        return resources

    # -- helpers -------------------------------------------------------------------------------
    def _row_mean(self, column: str, start_s: float, end_s: float) -> float:
        """A per-interval column's time-weighted mean over the window (NaN if absent)."""
        if column not in self.trace.timeseries:
            return math.nan
        return self._row_flow(column).rate(start_s, end_s)

    def _row_flow(self, column: str) -> CumulativeFlow:
        """A per-interval rate column as a cumulative amount (rate x interval length)."""
        start, end = self._row_spans
        values = np.nan_to_num(np.asarray(self.trace.timeseries.get(column, np.zeros(end.size)),
                                          dtype=float))
        return CumulativeFlow.from_spans(start, end, values * (end - start))

    def _add_flow(self, edge: tuple[str, str], label: str, flow: CumulativeFlow,
                  drain: CumulativeFlow) -> None:
        self.flows[edge] = flow
        self.drains[edge] = drain
        self._labels[edge] = label

    def _delayed_rate_bps(self, at_s: float) -> float:
        series = self.fills.get("delayed_write_rate")
        return series.at(at_s) if series is not None else math.nan


@dataclass(frozen=True)
class FillSeries(StepSeries):
    """A component's fill over time and its unit ("files", "bytes", "memtables")."""

    unit: str = ""


class _OptionsTimeline:
    """The run's options, then each `options_changed` event's (a policy's SetOptions)."""

    def __init__(self, trace: Trace) -> None:
        known = set(LsmOptions.names())
        base = LsmOptions().updated({k: v for k, v in trace.config.get("options", {}).items()
                                     if k in known}, source="run options")
        self._times: list[float] = [-math.inf]
        self._options: list[LsmOptions] = [base]
        for event in trace.events:
            if event.get("event") == "options_changed":
                changed = {k: v for k, v in event.items() if k in known}
                self._times.append(event["time_micros"] / 1e6)
                self._options.append(self._options[-1].updated(changed, source="options_changed"))

    def at(self, at_s: float) -> LsmOptions:
        return self._options[bisect_right(self._times, at_s + SAME_MOMENT_S) - 1]

    def most_slots(self, start_s: float, end_s: float) -> tuple[int, int]:
        """The most flush and compaction slots any options in force in the window allow
        (a policy may add threads during it)."""
        first = bisect_right(self._times, start_s + SAME_MOMENT_S) - 1
        last = bisect_right(self._times, end_s + SAME_MOMENT_S)
        slots = [o.background_job_slots() for o in self._options[first:last]]
        return max(f for f, _ in slots), max(c for _, c in slots)


def _fill_series(trace: Trace) -> dict[str, FillSeries]:
    """Each component's fill from the rows (sampled at each interval's end) and, finer,
    from events: write_stall events carry the state that RocksDB's rule read; flush and
    compaction completions carry `lsm_state` and the immutable count."""
    ts = trace.timeseries
    times = np.asarray(ts.get("time_s", []), dtype=float).tolist()
    points: dict[str, list[tuple[float, float]]] = {}

    def rows(name: str, column: str) -> None:
        if column in ts:
            points.setdefault(name, []).extend(zip(times, np.asarray(ts[column], float).tolist()))

    for name, column in (("immutable", "immutable_memtables"), ("L0", "l0_files"),
                         ("pending", "pending_compaction_bytes"),
                         ("memtable", "active_memtable_bytes"),
                         ("delayed_write_rate", "delayed_write_rate_bps")):
        rows(name, column)
    units = {"immutable": "memtables", "L0": "files", "pending": "bytes", "memtable": "bytes",
             "delayed_write_rate": "bytes/s"}
    level = 1
    while f"level{level}_bytes" in ts or f"level{level}_files" in ts:
        by_bytes = f"level{level}_bytes" in ts
        rows(f"L{level}", f"level{level}_{'bytes' if by_bytes else 'files'}")
        units[f"L{level}"] = "bytes" if by_bytes else "files"
        level += 1
    for event in trace.events:
        name = event.get("event")
        at_s = event.get("time_micros", 0) / 1e6
        if name == "write_stall":
            for node, key in (("immutable", "immutable_memtables"), ("L0", "l0_files"),
                              ("pending", "pending_compaction_bytes")):
                if event.get(key) is not None:
                    points.setdefault(node, []).append((at_s, float(event[key])))
            if event.get("rate_bps") is not None:
                points.setdefault("delayed_write_rate", []).append((at_s, event["rate_bps"]))
        elif name in ("flush_finished", "compaction_finished"):
            if event.get("lsm_state"):
                points.setdefault("L0", []).append((at_s, float(event["lsm_state"][0])))
            if event.get("immutable_memtables") is not None:
                points.setdefault("immutable", []).append(
                    (at_s, float(event["immutable_memtables"])))
    result = {}
    for name, pairs in points.items():
        series = StepSeries.from_points(pairs)
        result[name] = FillSeries(series.times_s, series.values, units.get(name, ""))
    for lone in range(1, level):  # a level column the trace lacks: no figure
        result.setdefault(f"L{lone}", FillSeries(np.zeros(0), np.zeros(0), units[f"L{lone}"]))
    return result


def _deepest_level(trace: Trace, jobs: list[Job]) -> int:
    """The deepest level that ever holds data (at least 1)."""
    deepest = 1
    for job in jobs:
        deepest = max(deepest, job.output_level)
    level = 1
    while True:
        column = next((trace.timeseries[c] for c in (f"level{level}_bytes", f"level{level}_files")
                       if c in trace.timeseries), None)
        if column is None:
            return deepest
        if np.nanmax(np.asarray(column, dtype=float), initial=0.0) > 0:
            deepest = max(deepest, level)
        level += 1


def _source_level_input_bytes(events: list[dict[str, Any]]) -> dict[int, float]:
    """Each compaction job's bytes taken from its shallowest input level (files_L<n> of its
    compaction_started event, sized by their table_file_creation events): what the job
    drains from that level, as opposed to the overlapping files it rewrites below."""
    sizes: dict[Any, float] = {}
    taken: dict[int, float] = {}
    for event in events:
        name = event.get("event")
        if name == "table_file_creation":
            sizes[event.get("file_number")] = float(event.get("file_size", 0))
        elif name == "compaction_started":
            levels = sorted(int(k[len("files_L"):]) for k in event if k.startswith("files_L"))
            if levels:
                taken[int(event["job"])] = sum(sizes.get(f, 0.0)
                                               for f in event[f"files_L{levels[0]}"])
    return taken


def _put_flow(row_start: np.ndarray, row_end: np.ndarray, bytes_per_s: np.ndarray,
              episodes: list[dict[str, Any]], end_s: float) -> CumulativeFlow:
    """Client bytes over time: each row's bytes spread over the part of the row writes were
    not stopped (the stop episodes say where), so a window inside a stop sees no puts and
    the moments before it see the burst that filled the memtables."""
    stops = sorted((e["start_s"], e["end_s"] if e["end_s"] is not None else end_s)
                   for e in episodes if e["condition"] == "stopped")
    starts: list[float] = []
    ends: list[float] = []
    amounts: list[float] = []
    first = 0  # the first stop that may still overlap the current row
    for low, high, rate in zip(row_start.tolist(), row_end.tolist(), bytes_per_s.tolist()):
        while first < len(stops) and stops[first][1] <= low:
            first += 1
        pieces, at = [], low
        for stop_start, stop_end in stops[first:]:
            if stop_start >= high:
                break
            if stop_start > at:
                pieces.append((at, stop_start))
            at = max(at, stop_end)
        if at < high:
            pieces.append((at, high))
        writing = sum(b - a for a, b in pieces)
        if writing <= 0:  # stopped all row long, yet bytes counted: spread them evenly
            pieces, writing = [(low, high)], high - low
        for a, b in pieces:
            starts.append(a)
            ends.append(b)
            amounts.append(rate * (high - low) * (b - a) / writing)
    return CumulativeFlow.from_spans(np.array(starts), np.array(ends), np.array(amounts))


def _high_pool_jobs(events: list[dict[str, Any]]) -> set[Any]:
    """The compactions that ran on a flush-pool thread (`thread_pool` "high")."""
    return {event.get("job") for event in events
            if event.get("event") == "compaction_started" and event.get("thread_pool") == "high"}


def _unfinished_starts(events: list[dict[str, Any]],
                       high_pool: set[Any]) -> dict[str, list[float]]:
    """Start times of the jobs still running when the trace ends, by the pool whose thread
    they hold: flushes and `high_pool` compactions the flush pool's, the rest the
    compaction pool's."""
    open_jobs: dict[tuple[str, Any], float] = {}
    for event in events:
        kind, _, phase = str(event.get("event", "")).partition("_")
        if kind in ("flush", "compaction") and phase == "started":
            open_jobs[(kind, event.get("job"))] = event["time_micros"] / 1e6
        elif kind in ("flush", "compaction") and phase == "finished":
            open_jobs.pop((kind, event.get("job")), None)
    starts: dict[str, list[float]] = {"flush": [], "compaction": []}
    for (kind, job), start_s in open_jobs.items():
        starts["flush" if job in high_pool else kind].append(start_s)
    return starts


def _job_flow(jobs: list[Job], amount: Callable[[Job], float]) -> CumulativeFlow:
    return CumulativeFlow.from_spans(np.array([j.start_s for j in jobs]),
                                     np.array([j.end_s for j in jobs]),
                                     np.array([amount(j) for j in jobs]))


def _last(column: Any, default: float) -> float:
    values = np.asarray(column if column is not None else [], dtype=float)
    return float(values[-1]) if values.size else default
