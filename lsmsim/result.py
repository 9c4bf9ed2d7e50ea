"""What a run returns and writes: `summary`, per-interval `timeseries` columns, `events`
(EVENT_LOG_v1 names), stall episodes, and the resolved configuration that reproduces it."""

from __future__ import annotations

import csv
import json
import math
from json.encoder import c_make_encoder, encode_basestring_ascii  # type: ignore[attr-defined]
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from lsmsim.plot_process import TimelinePlotter


@dataclass
class SimulationResult:
    """One run. `timeseries` loads straight into a DataFrame: `pd.DataFrame(r.timeseries)`."""

    config: dict[str, Any]
    summary: dict[str, Any]
    timeseries: dict[str, np.ndarray]
    events: list[dict[str, Any]]
    stall_episodes: list[dict[str, Any]]
    wall_s: float

    @property
    def sim_seconds_per_wall_second(self) -> float:
        return self.summary["duration_s"] / self.wall_s if self.wall_s > 0 else math.inf

    def write(self, out_dir: str | Path, plot: bool = True,
              plotter: "TimelinePlotter | None" = None) -> Path:
        """timeseries.csv, events.jsonl, stalls.jsonl, summary.json (+ config), timeline.png;
        a `plotter` process draws the figure while the other files are written."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        if plot and plotter is not None:
            plotter.draw(self, out / "timeline.png")
        names = list(self.timeseries)
        with open(out / "timeseries.csv", "w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(names)
            writer.writerows(zip(*(_column_cells(self.timeseries[n]) for n in names)))
        _write_jsonl(out / "events.jsonl", self.events)
        _write_jsonl(out / "stalls.jsonl", self.stall_episodes)
        document = {"summary": self.summary, "config": self.config,
                    "wall_s": self.wall_s,
                    "sim_seconds_per_wall_second": self.sim_seconds_per_wall_second}
        (out / "summary.json").write_text(json.dumps(document, indent=2, default=_json_default))
        if plot and plotter is not None:
            plotter.wait()
        elif plot:
            from lsmsim.plot import save_timeline
            save_timeline(self, out / "timeline.png")
        return out

    def plot(self, path: str | Path | None = None):  # type: ignore[no-untyped-def]
        """The timeline figure (matplotlib); saved to `path` when given."""
        from lsmsim.plot import timeline_figure
        figure = timeline_figure(self)
        if path is not None:
            figure.savefig(path, dpi=110)
        return figure


def _column_cells(column: np.ndarray) -> list[Any]:
    """A timeseries column as csv cells: floats by repr (shortest round-trip), the rest as is."""
    values = np.asarray(column).tolist()  # Python scalars: repr(float) == repr(float(np.float64))
    if np.asarray(column).dtype.kind == "f":
        return [repr(v) for v in values]
    return [_cell(v) for v in values]


def _write_jsonl(path: Path, records: list[dict[str, Any]]) -> None:
    """One JSON object per line, as json.dumps(record, default=_json_default) writes it; the
    C encoder is made once instead of once per record (a third of the time for events)."""
    try:
        encode = c_make_encoder(None, _json_default, encode_basestring_ascii, None, ": ", ", ",
                                False, False, True)
        lines = ["".join(encode(record, 0)) for record in records]
    except TypeError:  # no C encoder (None) or another signature: the plain way
        lines = [json.dumps(record, default=_json_default) for record in records]
    with open(path, "w") as handle:
        handle.writelines(line + "\n" for line in lines)


def _cell(value: Any) -> Any:
    if isinstance(value, (float, np.floating)):
        return repr(float(value))
    return value


def _json_default(value: Any) -> Any:
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"cannot serialise {type(value).__name__}")
