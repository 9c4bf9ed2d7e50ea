"""`two-stage`: two-stage throttling and dynamic Level-0 management from "From Flash to
3D XPoint" (Jia and Chen, ISPASS 2020), §V-A and §V-B.

- Two-stage throttling (§V-A): from the L0 slowdown trigger up to the second threshold,
  (slowdown + stop) / 2, writes are only slightly throttled: the delayed write rate stays
  at the maximum `delayed_write_rate` instead of falling by RocksDB's x0.8 / x0.6 steps
  (stage 1). From the second threshold on, RocksDB's own throttling (its Algorithm 1,
  SetupDelay) applies (stage 2), starting from that maximum. Delays for memtables or
  pending bytes are RocksDB's.
- Dynamic L0 management (§V-B): a write-intensive workload (writes above 25 % of
  operations) gets more, smaller L0 files before throttling (slowdown trigger 24), a
  read-intensive one fewer, larger files (6, each 24/6 times the memtable size, so L0's
  volume is the same). The write-intensive shape is chosen at open, whatever the workload
  (simplified: the paper measures the ratio online; `xpoint_insert_ratio` gives each of its
  mixes its shape through the options instead). `dynamic_l0=false` is two-stage throttling
  alone, as §V-A evaluates it.
"""

from __future__ import annotations

from typing import Any

from lsmsim.db_view import DBView
from lsmsim.options import LsmOptions
from lsmsim.policy import Param, Policy
from lsmsim.value_range import INT32_MAX
from lsmsim.storage_device import StorageDevice
from lsmsim.write_stall import WriteStallCause

WRITE_FRACTION = 1.0   # the shape chosen at open: write-intensive (see the module docstring)


class TwoStageThrottling(Policy):
    """Slight throttling below the midpoint of the L0 triggers, RocksDB's above it."""

    name = "two-stage"
    parameters = {
        "stage2_l0_files": Param(0, "L0 files where aggressive throttling starts; 0 = "
                                    "(slowdown + stop) / 2", "int", high=INT32_MAX),
        "dynamic_l0": Param(True, "shape L0 by the read/write ratio (§V-B)", "bool"),
        "write_intensive_l0_files": Param(24, "slowdown trigger for write-heavy work", "int",
                                          low=1, high=INT32_MAX),
        "read_intensive_l0_files": Param(6, "slowdown trigger for read-heavy work", "int",
                                         low=1, high=INT32_MAX),
        "write_intensive_above": Param(0.25, "write fraction that makes work write-heavy",
                                       high=1.0),
    }

    def open_options(self, options: LsmOptions, device: StorageDevice) -> dict[str, Any]:
        if not self.params["dynamic_l0"]:
            return {}
        files, batch = self.level0_shape(WRITE_FRACTION, options.write_buffer_size)
        return {"level0_slowdown_writes_trigger": files, "write_buffer_size": batch}

    def level0_shape(self, write_fraction: float, write_buffer_size: int) -> tuple[int, int]:
        """(L0 slowdown trigger, memtable size) for a workload with this write fraction."""
        many = self.params["write_intensive_l0_files"]
        if write_fraction > self.params["write_intensive_above"]:
            return many, write_buffer_size
        few = self.params["read_intensive_l0_files"]
        return few, write_buffer_size * many // few

    def stage2_threshold(self, options: LsmOptions) -> int:
        return self.params["stage2_l0_files"] or (options.level0_slowdown_writes_trigger
                                                  + options.level0_stop_writes_trigger) // 2

    def delayed_write_rate_bps(self, view: DBView, rate_bps: float) -> float:
        if (view.stall_cause is WriteStallCause.L0_FILE_COUNT_LIMIT
                and view.l0_files < self.stage2_threshold(view.options)):
            return view.max_delayed_write_rate_bps
        return rate_bps

    SAMPLE_CODES = {"throttle_stage": {0: "none", 1: "stage 1", 2: "stage 2"}}

    def interval_samples(self, view: DBView) -> dict[str, float]:
        l0_files = view.l0_files
        stage = 0
        if l0_files >= view.options.level0_slowdown_writes_trigger:
            stage = 2 if l0_files >= self.stage2_threshold(view.options) else 1
        return {"throttle_stage": float(stage)}
