"""What a simulated run returns and writes: a `Trace` plus the wall time it took."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from lsmsim.trace import Trace


@dataclass
class SimulationResult(Trace):
    """One simulated run; `config` is the resolved configuration that reproduces it."""

    wall_s: float

    @property
    def sim_seconds_per_wall_second(self) -> float:
        return self.summary["duration_s"] / self.wall_s if self.wall_s > 0 else math.inf

    def summary_document(self) -> dict[str, Any]:
        return {**super().summary_document(), "wall_s": self.wall_s,
                "sim_seconds_per_wall_second": self.sim_seconds_per_wall_second}
