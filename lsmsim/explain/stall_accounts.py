"""Plain-language accounts of a run's write stalls, computed from its dataflow graph.

For a stall episode: when and how writes were held back, which component overflowed and
why (the fills at the stall's start against the thresholds in force, `Dataflow.overflow_at`),
the flows into and out of that component in the build-up before the stall and during it,
the busiest shared resource, and what ended it. A summary gives stall time per overflow
type (ADOC's MMO / L0O / RDO), the flow imbalance behind most of it, and how often the
verdict agrees with the cause the run itself recorded.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

from lsmsim.explain.dataflow import OVERFLOW_WORDS, Dataflow, Overflow
from lsmsim.units import format_bytes

MB = 1e6
# The build-up before an episode: since the previous episode ended, at most this long.
MAX_BUILD_UP_S = 30.0
MIN_BUILD_UP_S = 0.1
# The edges (source, target) that feed each overflowing component and those that drain it.
EDGES: dict[str, tuple[Callable[[str, str], bool], Callable[[str, str], bool]]] = {
    "MMO": (lambda s, t: s == "client", lambda s, t: s == "immutable"),
    "L0O": (lambda s, t: t == "L0" and s == "immutable", lambda s, t: s == "L0" and t != "L0"),
    "RDO": (lambda s, t: s == "L0" and t != "L0",
            lambda s, t: s.startswith("L") and s != "L0" and t != s),
}
COMPONENT_WORDS = {"immutable": "immutable memtables", "L0": "L0",
                   "pending": "pending compaction bytes"}
# Who moves the bytes into and out of each overflowing component, and where: the inflow
# counts the bytes written into it (a compaction's output includes the next level's files
# it rewrote, as the dataflow figure's arrows do), the outflow the component's own bytes
# taken out of it (a flush's memtable bytes, a compaction's input from its source level).
IN_OUT_WORDS = {
    "MMO": (("puts", "memtables"), ("flushes", "memtables")),
    "L0O": (("flushes", "L0"), ("compactions", "L0")),
    "RDO": (("compactions", "L1"), ("compactions", "L1 and below")),
}
RATE_NOTE = ("(wrote: bytes written into the component; took: its own bytes taken out of it.\n"
             " A compaction also writes again the next level's files it overlaps, so the "
             "dataflow figure's\n arrows, which count bytes written, show more than it took.)")


def flow_words(overflow: str, in_bps: float, out_bps: float) -> str:
    """'flushes wrote 13.6 MB/s into L0, compactions took 142.9 MB/s out of L0'."""
    (feeder, target), (drainer, source) = IN_OUT_WORDS[overflow]
    return (f"{feeder} wrote {in_bps / MB:.1f} MB/s into {target}, "
            f"{drainer} took {out_bps / MB:.1f} MB/s out of {source}")


@dataclass(frozen=True)
class Imbalance:
    """Bytes/s into and out of the overflowing component over a window."""

    in_bps: float
    out_bps: float


@dataclass(frozen=True)
class EpisodeAccount:
    """One episode explained: the verdict at its start and the sentences about it."""

    number: int  # 1-based, in stalls.jsonl order
    episode: dict[str, Any]
    verdict: Overflow
    build_up: Imbalance | None
    during: Imbalance | None
    text: str


def imbalance(flow: Dataflow, overflow: str | None, start_s: float,
              end_s: float) -> Imbalance | None:
    """The flows into and out of the component behind `overflow` over a window (None for
    no overflow or an empty window): bytes written into it, bytes taken out of it."""
    if overflow is None or end_s <= start_s:
        return None
    feeds, drains = EDGES[overflow]
    return Imbalance(
        sum(f.rate(start_s, end_s) for edge, f in flow.flows.items() if feeds(*edge)),
        sum(f.rate(start_s, end_s) for edge, f in flow.drains.items() if drains(*edge)))


def build_up_window(episodes: list[dict[str, Any]], index: int) -> tuple[float, float]:
    """The time before episode `index` (0-based) since the previous one ended, clamped."""
    start = episodes[index]["start_s"]
    previous_end = episodes[index - 1]["end_s"] if index > 0 else 0.0
    length = min(MAX_BUILD_UP_S, max(MIN_BUILD_UP_S, start - (previous_end or 0.0)))
    return max(0.0, start - length), start


def account(flow: Dataflow, episodes: list[dict[str, Any]], index: int) -> EpisodeAccount:
    """Episode `index` (0-based) of `episodes` in words."""
    episode = episodes[index]
    start, end = episode["start_s"], _end_s(flow, episode)
    verdict = flow.overflow_at(start)
    graph = flow.graph(start, end, at_s=start)
    lines = [f"Episode {index + 1} of {len(episodes)}, {start:.1f}-{end:.1f} s "
             f"({end - start:.1f} s): {_held_back(episode)}."]
    if verdict.overflow is None:
        lines.append(f"  The fills recorded at its start cross no stall threshold "
                     f"(recorded cause: {episode['cause']}).")
        return EpisodeAccount(index + 1, episode, verdict, None, None, "\n".join(lines))
    node = graph.nodes[verdict.component]
    lines.append(f"  Why: {_crossing(node)}: {OVERFLOW_WORDS[verdict.overflow]} "
                 f"({verdict.overflow}), RocksDB's stall cause {verdict.cause}"
                 + ("" if verdict.cause == episode["cause"]
                    else f" (the run recorded {episode['cause']})") + ".")
    lead_start, _ = build_up_window(episodes, index)
    build_up = imbalance(flow, verdict.overflow, lead_start, start)
    during = imbalance(flow, verdict.overflow, start, end)
    if build_up is not None:
        series = flow.fills[verdict.component]
        lines.append(f"  Before it ({start - lead_start:.1f} s): "
                     f"{COMPONENT_WORDS[verdict.component]} went from "
                     f"{_amount(series.at(lead_start), series.unit)} to "
                     f"{_amount(series.at(start), series.unit)}; "
                     f"{flow_words(verdict.overflow, build_up.in_bps, build_up.out_bps)}.")
    if during is not None:
        lines.append(f"  During it: "
                     f"{flow_words(verdict.overflow, during.in_bps, during.out_bps)}.")
    lines.append(f"  Resources: {_resources(graph)}.")
    lines.append(f"  {_ending(flow, episode, verdict, end)}")
    return EpisodeAccount(index + 1, episode, verdict, build_up, during, "\n".join(lines))


def cause_agreement(flow: Dataflow) -> tuple[float, float]:
    """Stall seconds whose episode's verdict (`overflow_at` its start) names the cause the
    run recorded, and all stall seconds."""
    episodes = flow.trace.stall_episodes
    total = sum(e["duration_s"] for e in episodes)
    agreed = sum(e["duration_s"] for e in episodes
                 if flow.overflow_at(e["start_s"]).cause == e["cause"])
    return agreed, total


def summary(flow: Dataflow) -> str:
    """Stall time per overflow type, the imbalance behind most of it, and the agreement."""
    episodes = flow.trace.stall_episodes
    if not episodes:
        return "No write stalls in this run."
    seconds: dict[str, float] = {}
    counts: dict[str, int] = {}
    weighted: dict[str, list[float]] = {}
    causes: dict[str, set[str]] = {}
    for index, episode in enumerate(episodes):
        verdict = flow.overflow_at(episode["start_s"])
        kind = verdict.overflow or "none"
        causes.setdefault(kind, set()).add(verdict.cause)
        seconds[kind] = seconds.get(kind, 0.0) + episode["duration_s"]
        counts[kind] = counts.get(kind, 0) + 1
        found = imbalance(flow, None if kind == "none" else kind,
                          *build_up_window(episodes, index))
        if found is not None:
            sums = weighted.setdefault(kind, [0.0, 0.0])
            sums[0] += found.in_bps * episode["duration_s"]
            sums[1] += found.out_bps * episode["duration_s"]
    total = sum(seconds.values())
    lines = ["Stall time by overflow (the verdict at each episode's start):"]
    for kind in sorted(seconds, key=seconds.__getitem__, reverse=True):
        name = (f"{OVERFLOW_WORDS[kind]} ({kind}; RocksDB's {', '.join(sorted(causes[kind]))})"
                if kind != "none" else "no threshold crossed")
        episodes = "episode" if counts[kind] == 1 else "episodes"
        lines.append(f"  {name}: {seconds[kind]:.1f} s in {counts[kind]} {episodes} "
                     f"({100 * seconds[kind] / total if total else 0:.0f}% of stall time)")
        if kind in weighted and seconds[kind] > 0:
            mean_in, mean_out = (v / seconds[kind] for v in weighted[kind])
            lines.append(f"    in the build-up before them: {flow_words(kind, mean_in, mean_out)}"
                         " (stall-time-weighted means)")
    top = max(seconds, key=seconds.__getitem__)
    if top in weighted:
        (feeder, target), (drainer, source) = IN_OUT_WORDS[top]
        mean_in, mean_out = weighted[top]
        lines.append(f"Most stall time: {OVERFLOW_WORDS[top]}; "
                     + (f"{feeder} wrote into {target} faster than {drainer} took bytes out "
                        f"of {source}." if mean_in > mean_out else
                        f"{drainer} took bytes out of {source} at least as fast as {feeder} wrote into "
                        f"{target} on average, so the overflow came from bursts or from data "
                        "already waiting, not from a steady imbalance."))
    agreed, stalled = cause_agreement(flow)
    lines.append(f"The verdict matches the run's recorded stall cause for "
                 f"{100 * agreed / stalled if stalled else 100:.1f}% of stall time "
                 f"({agreed:.1f} of {stalled:.1f} s).")
    if weighted:
        lines.append(RATE_NOTE)
    return "\n".join(lines)


def _end_s(flow: Dataflow, episode: dict[str, Any]) -> float:
    return episode["end_s"] if episode.get("end_s") is not None else flow.end_s


def _held_back(episode: dict[str, Any]) -> str:
    if episode["condition"] == "stopped":
        return "writes stopped"
    start, low = episode.get("rate_bps_start"), episode.get("rate_bps_min")
    if start is None:
        return "writes delayed"
    text = f"writes delayed to {format_bytes(start)}/s"
    return text + (f", down to {format_bytes(low)}/s" if low is not None and low < start else "")


def _amount(value: float, unit: str) -> str:
    if math.isnan(value):
        return "unknown"
    if unit == "bytes":
        return format_bytes(value)
    return f"{value:.0f} {unit[:-1] if round(value) == 1 and unit.endswith('s') else unit}"


def _crossing(node: dict[str, Any]) -> str:
    """'L0 reached 20 files (slowdown at 20, stop at 36)'."""
    limits = [f"{word} at {_amount(node[key], node['unit'])}"
              for word, key in (("slowdown", "slowdown_at"), ("stop", "stop_at"))
              if node.get(key) is not None]
    return (f"{node['label']} reached {_amount(node['fill'], node['unit'])}"
            + (f" ({', '.join(limits)})" if limits else ""))


def _resources(graph: Any) -> str:
    """The busiest resource first, then the others the trace measured."""
    parts = []
    scarce = graph.graph.get("scarce")
    names = sorted((n for n, d in graph.nodes(data=True) if d["kind"] == "resource"),
                   key=lambda n: n != scarce)
    for name in names:
        data = graph.nodes[name]
        if math.isnan(data["utilisation"]):
            continue
        text = f"{data['label']} {100 * data['utilisation']:.0f}% busy"
        if data.get("capacity_unit") == "jobs":
            text = f"{data['label']} {data['busy']:.2f} of {data['capacity']} busy"
        elif data.get("capacity_unit") == "cores" and data.get("capacity"):
            text += f" (of {data['capacity']} cores)"
        parts.append(("busiest: " if name == scarce else "") + text)
    return "; ".join(parts) or "not measured in this trace"


def _ending(flow: Dataflow, episode: dict[str, Any], verdict: Overflow, end_s: float) -> str:
    if episode.get("end_s") is None or end_s >= flow.end_s - 1e-9:
        return "The run ended during this stall."
    after = flow.overflow_at(end_s)
    series = flow.fills[verdict.component]
    component = COMPONENT_WORDS[verdict.component]
    fill = _amount(series.at(end_s), series.unit)
    if after.overflow is None:
        return f"Ended at {end_s:.1f} s, {component} back at {fill}, below the thresholds."
    if after.cause == verdict.cause:  # a real LOG gives the fill only on its stall lines
        return (f"Ended at {end_s:.1f} s; the trace records no {component} after {fill}, "
                "so not the fall that ended it.")
    return (f"Ended at {end_s:.1f} s, {component} at {fill}; writes were then held by "
            f"{after.cause}.")
