"""Drawing a dataflow graph (`lsmsim.explain.dataflow`): the LSM pipeline left to right, each
component with its fill against its stall thresholds, arrows as wide as their MB/s, the
overflowing component outlined in red, and the shared resources' utilisation below.

A fixed layout rather than a networkx one: the pipeline always reads client -> memtables
-> L0 -> L1 ... so that frames of a replay line up and a student reads it like the
diagrams of RocksDB's wiki.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import networkx as nx  # noqa: E402
from matplotlib.patches import FancyArrowPatch, Rectangle  # noqa: E402

from lsmsim.explain.dataflow import OVERFLOW_WORDS  # noqa: E402
from lsmsim.units import format_bytes  # noqa: E402

BOX_W = 0.62
OVERFLOW_RED = "#d62728"
SLOWDOWN_ORANGE = "#ff7f0e"
FILL_BLUE = "#6baed6"
RESOURCE_ORDER = ("cpu", "device", "rate_limiter", "flush_slots", "compaction_slots")


def pipeline(graph: nx.DiGraph) -> list[str]:
    """The component nodes in pipeline order: client, memtables, L0, L1 ... Ln."""
    levels = sorted((n for n, d in graph.nodes(data=True) if d["kind"] == "level"),
                    key=lambda n: int(n[1:]))
    return ["client", "memtable", "immutable", *levels]


def dataflow_figure(graph: nx.DiGraph, title: str = ""):  # type: ignore[no-untyped-def]
    """A new figure with the graph drawn on it."""
    figure = plt.figure(figsize=(12, 5.6))
    grid = figure.add_gridspec(2, 1, height_ratios=(3.2, 1), hspace=0.4)
    draw_dataflow(graph, figure.add_subplot(grid[0]), figure.add_subplot(grid[1]), title)
    figure.subplots_adjust(left=0.1, right=0.98, top=0.9, bottom=0.09)
    return figure


def save_dataflow(graph: nx.DiGraph, path: str | Path, title: str = "") -> None:
    """Draw `graph` to `path` (PNG or SVG, by its suffix)."""
    figure = dataflow_figure(graph, title)
    figure.savefig(path, dpi=100)
    plt.close(figure)


def draw_dataflow(graph: nx.DiGraph, pipe_ax: Any, resource_ax: Any, title: str = "") -> None:
    """The pipeline on `pipe_ax`, the resources on `resource_ax` (both cleared first)."""
    pipe_ax.clear()
    resource_ax.clear()
    nodes = pipeline(graph)
    x = {node: float(i) for i, node in enumerate(nodes)}
    for node in nodes:
        _draw_component(pipe_ax, x[node], graph.nodes[node])
    _draw_edges(pipe_ax, graph, x)
    _draw_pending(pipe_ax, graph.nodes["pending"], x["L1"] - BOX_W / 2, x[nodes[-1]] + BOX_W / 2)
    pipe_ax.set_xlim(-0.5, len(nodes) - 0.5)
    pipe_ax.set_ylim(-1.0, 1.75)
    pipe_ax.text(-0.5, -0.98, "bars: fill; dashed orange line: slowdown threshold; red line: "
                 "stop threshold; arrows: MB/s written into the next box, wider = faster\n"
                 "\"took\": MB/s taken out of the box an arrow leaves, as `lsmsim explain` "
                 "counts them; a compaction also rewrites the next level's overlapping files, "
                 "so it writes more than it takes", fontsize=8, color="#555555", va="top")
    pipe_ax.axis("off")
    window = graph.graph
    verdict = ("writes not held back" if window["condition"] == "normal" else
               f"writes {window['condition']}: {OVERFLOW_WORDS[window['overflow']]} "
               f"({window['overflow']}), RocksDB's stall cause \"{window['cause']}\"")
    pipe_ax.set_title(f"{title}\nflows: mean over {window['start_s']:.1f}-{window['end_s']:.1f} s;"
                      f" fills at {window['at_s']:.1f} s\n{verdict}", fontsize=10)
    _draw_resources(resource_ax, graph)


def _draw_component(ax: Any, x: float, data: dict[str, Any]) -> None:
    red = data.get("overflowing", False)
    ax.add_patch(Rectangle((x - BOX_W / 2, 0), BOX_W, 1, fill=False,
                           lw=3 if red else 1.2, ec=OVERFLOW_RED if red else "black"))
    scale = data.get("stop_at") or data.get("capacity")
    fill = data.get("fill", math.nan)
    if scale and not math.isnan(fill) and (data.get("stop_at") or data["unit"] == "bytes"):
        ax.add_patch(Rectangle((x - BOX_W / 2 + 0.06, 0), BOX_W - 0.12, min(fill / scale, 1.0),
                               color=OVERFLOW_RED if red else FILL_BLUE, alpha=0.8, lw=0))
        if fill > scale and not data.get("stop_at"):  # a level over its target size
            ax.text(x, 0.92, f"{fill / scale:.1f}×\ntarget", ha="center", va="top", fontsize=8,
                    color="white", weight="bold")
        for key, colour in (("slowdown_at", SLOWDOWN_ORANGE), ("stop_at", OVERFLOW_RED)):
            if data.get(key):
                level = data[key] / scale
                ax.plot([x - BOX_W / 2, x + BOX_W / 2], [level, level], color=colour, lw=1.5,
                        ls="--" if key == "slowdown_at" else "-")
    ax.text(x, 1.04, data["label"].replace(" ", "\n", 1) if data["kind"] == "memtable"
            else data["label"], ha="center", va="bottom", fontsize=10, weight="bold")
    ax.text(x, -0.06, _fill_words(data), ha="center", va="top", fontsize=8)
    if red:
        ax.text(x, 1.4, f"{OVERFLOW_WORDS[data['overflow']]}\n({data['overflow']})", ha="center",
                va="bottom", fontsize=9, color=OVERFLOW_RED, weight="bold")


def _fill_words(data: dict[str, Any]) -> str:
    """'20 files\nslowdown 20, stop 36' under a box."""
    fill = data.get("fill", math.nan)
    if data["kind"] == "client":
        return ""
    lines = [_amount(fill, data["unit"])]
    if data.get("capacity") and data["unit"] == "bytes":
        lines.append(("target " if data["kind"] == "level" else "of ")
                     + format_bytes(data["capacity"]))
    limits = [f"{word} {_amount(data[key], data['unit'], bare=True)}"
              for word, key in (("slowdown", "slowdown_at"), ("stop", "stop_at"))
              if data.get(key)]
    if limits:
        lines.append(", ".join(limits))
    return "\n".join(lines)


def _amount(value: float, unit: str, bare: bool = False) -> str:
    if value is None or math.isnan(value):
        return "not in trace"
    if unit == "bytes":
        return format_bytes(value)
    return f"{value:.0f}" if bare else f"{value:.0f} {unit}"


def _draw_edges(ax: Any, graph: nx.DiGraph, x: dict[str, float]) -> None:
    """Data flows: straight arrows between neighbours, arcs over skipped levels; width
    grows with the log of MB/s so that 1 and 1000 MB/s both show."""
    for source, target, data in graph.edges(data=True):
        if data["kind"] != "data" or source == target or source not in x or target not in x:
            continue
        rate_MBps = data["rate_bps"] / 1e6 if not math.isnan(data["rate_bps"]) else 0.0
        width = 0.6 + 2.2 * math.log10(1 + rate_MBps)
        neighbours = x[target] - x[source] == 1
        start = (x[source] + BOX_W / 2, 0.5)
        end = (x[target] - BOX_W / 2, 0.5)
        style = "arc3,rad=0" if neighbours else "arc3,rad=-0.35"
        if not neighbours:
            start, end = (x[source], 1.0), (x[target], 1.0)
        ax.add_patch(FancyArrowPatch(start, end, connectionstyle=style, arrowstyle="-|>",
                                     mutation_scale=12 + 2 * width, lw=width, color="#555555"))
        label_y = 0.62 if neighbours else 1.3
        taken = _taken_words(data, rate_MBps)
        ax.text((start[0] + end[0]) / 2, label_y,
                f"{rate_MBps:,.1f}\nMB/s" + (f"\n{taken}" if taken and not neighbours else ""),
                ha="center", va="bottom", fontsize=8, color="#333333")
        if taken and neighbours:
            ax.text((start[0] + end[0]) / 2, 0.38, taken, ha="center", va="top", fontsize=7.5,
                    color="#666666", style="italic")


def _taken_words(data: dict[str, Any], written_MBps: float) -> str:
    """'took 142.9' (MB/s) when the bytes taken out of the arrow's source differ from those
    written (a compaction rewrites the next level's files too); '' when they read the same."""
    drain = data.get("drain_bps", math.nan)
    if drain is None or math.isnan(drain) or f"{drain / 1e6:,.1f}" == f"{written_MBps:,.1f}":
        return ""
    return f"took {drain / 1e6:,.1f}"


def _draw_pending(ax: Any, data: dict[str, Any], left: float, right: float) -> None:
    """The compaction debt as a bar under the levels, against the soft and hard limits."""
    red = data.get("overflowing", False)
    y, height = -0.78, 0.14
    ax.add_patch(Rectangle((left, y), right - left, height, fill=False,
                           ec=OVERFLOW_RED if red else "black", lw=3 if red else 1))
    scale = data.get("stop_at") or data.get("slowdown_at")
    fill = data.get("fill", math.nan)
    if scale and not math.isnan(fill):
        ax.add_patch(Rectangle((left, y), (right - left) * min(fill / scale, 1.0), height,
                               color=OVERFLOW_RED if red else FILL_BLUE, alpha=0.8, lw=0))
        if data.get("slowdown_at") and data.get("stop_at"):
            at = left + (right - left) * data["slowdown_at"] / scale
            ax.plot([at, at], [y, y + height], color=SLOWDOWN_ORANGE, lw=1.5, ls="--")
    ax.text(left - 0.08, y + height / 2, f"{data['label']}: {_fill_words(data)}"
            + (f"\n{OVERFLOW_WORDS['RDO']} (RDO)" if red else ""), fontsize=8, va="center",
            ha="right", color=OVERFLOW_RED if red else "black")


def _draw_resources(ax: Any, graph: nx.DiGraph) -> None:
    """Utilisation of each shared resource over the window, the busiest in red."""
    scarce = graph.graph.get("scarce")
    names = [n for n in RESOURCE_ORDER if n in graph]
    values = [graph.nodes[n]["utilisation"] for n in names]
    shown = [0.0 if math.isnan(v) else min(v, 1.0) * 100 for v in values]
    colours = [OVERFLOW_RED if n == scarce else "#9ecae1" for n in names]
    ax.barh(range(len(names)), shown, color=colours)
    for i, (name, value) in enumerate(zip(names, values)):
        data = graph.nodes[name]
        if math.isnan(value):
            words = "not in trace" if name != "rate_limiter" else "none configured"
        elif data.get("capacity_unit") == "jobs":
            words = f"{data['busy']:.2f} of {data['capacity']} busy"
        elif name == "cpu" and data.get("capacity"):
            words = f"{100 * value:.0f}% of {data['capacity']} cores"
        else:
            words = f"{100 * value:.0f}%"
        ax.text(min(shown[i], 100) + 1, i, words, va="center", fontsize=8)
    ax.set_yticks(range(len(names)), [graph.nodes[n]["label"] for n in names], fontsize=8)
    ax.set_xlim(0, 115)
    ax.set_xticks([0, 25, 50, 75, 100])
    ax.invert_yaxis()
    ax.set_xlabel("busy over the window (%)", fontsize=8)
    ax.tick_params(axis="x", labelsize=8)
    ax.set_title("shared resources (busiest in red)", fontsize=9, loc="left")
