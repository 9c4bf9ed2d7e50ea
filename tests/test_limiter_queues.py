"""GenericRateLimiter's per-priority queues: a priority's share of the limiter is its queue's,
split among the jobs waiting in it, not one share per job (`lsmsim.rate_limiter.queue_shares`,
mechanism `limiter_queues`)."""

from __future__ import annotations

import numpy as np
import pytest

import lsmsim
from lsmsim.rate_limiter import queue_shares


def test_the_jobs_of_one_priority_split_its_weight():
    assert queue_shares([9.0, 1.0, 1.0, 1.0, 1.0], [True] * 5) == [9.0, 0.25, 0.25, 0.25, 0.25]
    assert queue_shares([9.0, 9.0, 1.0], [True] * 3) == [4.5, 4.5, 1.0]
    # A job that writes nothing through the limiter waits in no queue.
    assert queue_shares([1.0, 1.0], [True, False]) == [1.0, 1.0]
    assert queue_shares([], []) == []


def mean_flush_s(without: tuple[str, ...]) -> tuple[float, int]:
    """Mean flush time and most compactions at once, 8 jobs under a 20 MiB/s limit, flushes
    kept at IO_HIGH through the stalls (so the priorities stay apart)."""
    result = lsmsim.simulate("fillrandom", device="nvme", machine="local-2core", duration_s=60,
                             options={"max_background_jobs": 8, "write_buffer_size": 16 << 20,
                                      "rate_limiter_bytes_per_sec": 20 << 20},
                             without=("stall_io_priority", *without))
    started = {e["job"]: e["time_micros"] for e in result.events
               if e["event"] == "flush_started"}
    flushes = [e["time_micros"] - started[e["job"]] for e in result.events
               if e["event"] == "flush_finished"]
    return float(np.mean(flushes)) / 1e6, int(max(result.timeseries["running_compactions"]))


def test_a_flush_keeps_its_priority_however_many_compactions_queue():
    queued, most = mean_flush_s(())
    per_job, _ = mean_flush_s(("limiter_queues",))
    assert most >= 4  # several compactions wait in IO_LOW's queue at once
    # IO_HIGH's queue gets 9 parts to IO_LOW's 1; counted per job, the compactions took more.
    assert queued < per_job * 0.9
    assert queued == pytest.approx(mean_flush_s(())[0])  # deterministic
