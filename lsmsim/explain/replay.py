"""`lsmsim replay`: the dataflow graph over time beside the run's timeline, with a cursor.

The HTML page is self-contained: every frame is a PNG inlined as base64 and the player is
a few lines of inline JavaScript (no server, no network, no external script or font), so
it opens from a file in any browser. A `.gif` is the same frames drawn with the timeline
under the graph (matplotlib's PillowWriter).
"""

from __future__ import annotations

import base64
import html
import io
import json
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from lsmsim.explain.dataflow import Dataflow  # noqa: E402
from lsmsim.explain.dataflow_plot import dataflow_figure, draw_dataflow  # noqa: E402
from lsmsim.plot.timeline import draw_throughput  # noqa: E402
from lsmsim.trace import Trace  # noqa: E402

FRAME_DPI = 70
# Each frame is a figure drawn and inlined in the page: the README's 3,600 s run's 60 frames
# took 26 s and 4.8 MB (2 cores, 2026-11-28), so 1,000 take about 7 minutes and 80 MB, more
# than a browser's player needs; `--frames` is refused above.
MAX_FRAMES = 1000
GIF_FRAMES_PER_S = 4


def frame_windows(flow: Dataflow, frames: int) -> list[tuple[float, float]]:
    """`frames` windows tiling the run: each frame shows the mean flows over its window
    and the fills at its end."""
    edges = np.linspace(0.0, flow.end_s, frames + 1)
    return [(float(a), float(b)) for a, b in zip(edges[:-1], edges[1:])]


def draw_timeline(ax: Any, trace: Trace) -> None:
    """The timeline's throughput panel (`plot.draw_throughput`), its legend inside."""
    ts = trace.timeseries
    t = np.asarray(ts["time_s"], dtype=float)
    draw_throughput(ax, t, ts["ops_per_s"], np.asarray(ts["stall_cause"]),
                    legend={"loc": "upper right", "fontsize": 7, "ncol": 2})
    ax.set_xlim(0, t[-1] if t.size else 1)
    ax.set_xlabel("time since start (s)", fontsize=8)


def write_replay(trace: Trace, out: str | Path, frames: int = 60, title: str = "") -> Path:
    """The replay of `trace` to `out` (.html or .gif)."""
    out = Path(out)
    flow = Dataflow(trace)
    windows = frame_windows(flow, frames)
    if out.suffix == ".gif":
        _write_gif(trace, flow, windows, out, title)
    else:
        out.write_text(_page(trace, flow, windows, title))
    return out


def _png_base64(figure: Any) -> str:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=FRAME_DPI)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def _page(trace: Trace, flow: Dataflow, windows: list[tuple[float, float]], title: str) -> str:
    """The HTML page: frames, the timeline once, and a cursor the player moves over it."""
    figure = dataflow_figure(flow.graph(*windows[0]), title)
    pipe_ax, resource_ax = figure.axes
    frames = []
    for start_s, end_s in windows:
        draw_dataflow(flow.graph(start_s, end_s), pipe_ax, resource_ax, title)
        frames.append(_png_base64(figure))
    plt.close(figure)
    timeline, ax = plt.subplots(figsize=(12, 2.4))
    draw_timeline(ax, trace)
    timeline.subplots_adjust(left=0.1, right=0.98, top=0.95, bottom=0.25)
    box = ax.get_position()
    left, right = box.x0, box.x1
    span = ax.get_xlim()
    timeline_png = _png_base64(timeline)
    plt.close(timeline)
    cursor = [100 * (left + (end - span[0]) / (span[1] - span[0]) * (right - left))
              for _, end in windows]
    data = json.dumps({"frames": frames, "cursor": cursor, "ends": [e for _, e in windows],
                       "top": 100 * (1 - box.y1), "bottom": 100 * box.y0})
    return PAGE.replace("TITLE", html.escape(title)).replace("TIMELINE", timeline_png) \
        .replace("DATA", data)


def _write_gif(trace: Trace, flow: Dataflow, windows: list[tuple[float, float]], out: Path,
               title: str) -> None:
    from matplotlib.animation import FuncAnimation, PillowWriter

    figure = plt.figure(figsize=(12, 7.5))
    grid = figure.add_gridspec(3, 1, height_ratios=(3.2, 1, 1.1), hspace=0.45)
    pipe_ax, resource_ax, timeline_ax = (figure.add_subplot(grid[i]) for i in range(3))
    draw_timeline(timeline_ax, trace)
    cursor = timeline_ax.axvline(0.0, color="black", lw=2.5)
    figure.subplots_adjust(left=0.1, right=0.98, top=0.92, bottom=0.07)

    def frame(index: int) -> list[Any]:
        start_s, end_s = windows[index]
        draw_dataflow(flow.graph(start_s, end_s), pipe_ax, resource_ax, title)
        cursor.set_xdata([end_s, end_s])
        return []

    animation = FuncAnimation(figure, frame, frames=len(windows))
    animation.save(out, writer=PillowWriter(fps=GIF_FRAMES_PER_S), dpi=FRAME_DPI)
    plt.close(figure)


PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>lsmsim replay: TITLE</title>
<style>
body { font-family: sans-serif; margin: 1em; background: #fff; color: #222; }
#player img { width: 100%; max-width: 1100px; display: block; }
#timeline { position: relative; max-width: 1100px; }
#cursor { position: absolute; top: 0; bottom: 0; width: 3px; background: black; }
#controls { margin: 0.5em 0; }
</style></head>
<body>
<h2>lsmsim replay: TITLE</h2>
<p>Where the data is and where it flows, moment by moment. Each frame shows mean flows
(MB/s) over a slice of the run and each component's fill at its end against its stall
thresholds; a red outline marks the component that overflowed (ADOC's MMO, L0O or RDO).
The black line on the timeline below marks the frame's time.</p>
<div id="controls"><button id="play">Play</button>
<input id="slider" type="range" min="0" value="0" style="width: 60%">
<span id="time"></span></div>
<div id="player"><img id="frame" alt="dataflow graph"></div>
<div id="timeline"><img src="data:image/png;base64,TIMELINE" alt="timeline"
 style="width: 100%; display: block"><div id="cursor"></div></div>
<script>
const replay = DATA;
const slider = document.getElementById("slider");
const frame = document.getElementById("frame");
const cursor = document.getElementById("cursor");
const label = document.getElementById("time");
const play = document.getElementById("play");
slider.max = replay.frames.length - 1;
let timer = null;
function show(i) {
  slider.value = i;
  frame.src = "data:image/png;base64," + replay.frames[i];
  cursor.style.left = replay.cursor[i] + "%";
  cursor.style.top = replay.top + "%";
  cursor.style.bottom = replay.bottom + "%";
  label.textContent = replay.ends[i].toFixed(1) + " s";
}
slider.addEventListener("input", () => show(Number(slider.value)));
play.addEventListener("click", () => {
  if (timer) { clearInterval(timer); timer = null; play.textContent = "Play"; return; }
  play.textContent = "Pause";
  timer = setInterval(() => show((Number(slider.value) + 1) % replay.frames.length), 250);
});
show(0);
</script></body></html>
"""
