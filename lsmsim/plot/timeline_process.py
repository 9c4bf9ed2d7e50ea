"""Drawing timeline.png (and policy.png) in a second process while the simulation runs.

Importing matplotlib and drawing the figure take about as long as simulating an hour, and
the machine usually has a second core: `lsmsim run` forks a plotter before it simulates,
the child imports matplotlib, makes the empty figure and warms matplotlib's caches
(`plot.warm_up`) meanwhile, and draws once it is sent the timeseries (by `simulate`'s
`on_timeseries`, before the summary is computed), while the parent summarises and writes
the other files; the parent never imports matplotlib. Without fork the figures are drawn
in-process.
"""

from __future__ import annotations

import multiprocessing
import signal
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import numpy as np

from lsmsim.trace import Trace


class PlotError(RuntimeError):
    """The plotting process could not write the timeline (its file is a folder, the disk is
    full): the run's other results are written; this is reported in one line."""


class TimelinePlotter:
    """A child process that draws one run's figures into folder `out`; `draw` sends it the
    run's rows and `wait` returns when the files are written (or raises with the child's
    error). `duration_s`, the run's simulated length when known, lets the child warm up on
    the same time axis."""

    def __init__(self, out: Path, duration_s: float | None = None) -> None:
        self.out = out
        self._drawing = False
        self._replied = False
        self._conn: Connection | None = None
        self._process: multiprocessing.process.BaseProcess | None = None
        if "fork" in multiprocessing.get_all_start_methods():
            context = multiprocessing.get_context("fork")
            self._conn, child_conn = context.Pipe()
            self._process = context.Process(target=_serve, args=(child_conn, duration_s),
                                            daemon=True)
            self._process.start()
            child_conn.close()

    def draw(self, config: dict[str, Any], timeseries: dict[str, np.ndarray]) -> None:
        """Start drawing the run's figures (`plot.save_figures`, which reads only the
        configuration and the rows); `simulate(..., on_timeseries=plotter.draw)` calls it."""
        trace = Trace(config, {}, timeseries, [], [])
        self.out.mkdir(parents=True, exist_ok=True)
        self._drawing = True
        if self._conn is None:
            from lsmsim.plot.run_figures import save_figures
            save_figures(trace, self.out)
        else:
            try:
                self._conn.send((trace, self.out))
            except OSError:  # the child already failed: `wait` reports its error
                pass

    def wait(self) -> None:
        """Block until the figures are written; a failure in the child is raised here."""
        if not self._drawing:
            raise RuntimeError("TimelinePlotter.wait before draw: nothing is being drawn")
        if self._conn is None:
            return
        try:
            error = self._conn.recv()
        except EOFError:
            error = "the plotting process ended without a reply"
        self._replied = True
        self.close()
        if error:
            raise PlotError(f"timeline plot failed: {error}")

    def close(self) -> None:
        """Stop the child: once it has replied, let it end; otherwise (the run failed or
        was interrupted before its figures were written) at once."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        if self._process is not None:
            if not self._replied:
                self._process.kill()
            self._process.join(timeout=5)
            self._process = None


def _serve(conn: Connection, duration_s: float | None) -> None:
    """Child: import the plotting code, make the empty figure and warm matplotlib's caches
    at once, then draw what the parent sends. Ctrl-C (sent to the whole process group) is
    the parent's to handle: it kills this process if the figures are no longer wanted."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        from lsmsim.plot.run_figures import save_figures
        from lsmsim.plot.timeline import timeline_axes, warm_up
        prepared = timeline_axes()
        warm_up(prepared, duration_s)
        result, out = conn.recv()
        save_figures(result, out, prepared)
        conn.send("")
    except EOFError:  # the parent closed the pipe: nothing to draw
        pass
    except Exception as exc:  # reported to the parent, which raises it
        conn.send(f"{type(exc).__name__}: {exc}")
