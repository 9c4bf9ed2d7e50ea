"""RocksDB's GenericRateLimiter on flush and compaction writes, with its auto-tuner.

Follows util/rate_limiter.cc (RocksDB 7.7; docs/background/rocksdb-mechanisms.md §1.13). The
token bucket refilled every `refill_period_us` is replaced by its average (fluid): the
limiter is a capacity of `rate_bps` bytes/s shared by the jobs' writes (fluid_share.py).

The jobs share it as its queues do (`queue_shares`): a priority's weight is its queue's,
split among the jobs waiting in it.

Drains are counted per refill period, as `GenericRateLimiter::Request` counts them: a
request that finds `available_bytes_ < bytes` is queued, and the first queued request to
reach the wait for the next refill while no other is waiting for it
(`!wait_until_refill_pending_`) does `++num_drains_` before its `TimedWait`; the refill
(`RefillBytesAndGrantRequests`) clears the flag. So a refill period counts one drain if
any request had to wait in it, however briefly, and never more than one. In the fluid
model a request waits while the jobs' demand saturates the limiter, so each refill period
(on a 100 ms grid from the limiter's creation) that holds any saturated time is one
drain. `tune` is TuneLocked, exact: constants 50 % / 90 % / 5 % / 20, run on the first
request at least 100 refill periods after the previous tune; drained_pct is
num_drains * 100 / elapsed periods (rounded up), and the count restarts after a tune.

When the tune runs: `Request` tunes before it looks at the bucket, and a job writing
requests tokens for every chunk it writes (at most one refill's bytes, `RequestToken`), so
while any job writes the tune runs when the 100 periods are up, not at the simulator's
next event: the DB wakes at `next_tune_s` while a job writes (`DB._time_to_next_event`).
With no job writing there is no request, and the tune waits for the next write.
"""

from __future__ import annotations

import math

REFILL_PERIOD_S = 0.1              # refill_period_us = 100 000
TUNE_EVERY_PERIODS = 100           # kRefillsPerTune
LOW_WATERMARK_PCT = 50             # kLowWatermarkPct
HIGH_WATERMARK_PCT = 90            # kHighWatermarkPct
ADJUST_PCT = 5                     # kAdjustFactorPct
ALLOWED_RANGE_FACTOR = 20          # kAllowedRangeFactor
PERIOD_TOLERANCE = 1e-9            # in periods: a stretch ending on a boundary
DUE_TOLERANCE_S = 1e-9             # a wake-up for the tune landing a rounding short of it


def queue_shares(weights: list[float], writing: list[bool]) -> list[float]:
    """The jobs' weights on the limiter as its per-priority queues give them: the jobs of one
    weight (one priority) split it, as the requests of one `queue_[pri]` wait in turn for the
    bytes the refill leaves that queue (RefillBytesAndGrantRequestsLocked serves the queues
    in priority order, IO_HIGH last one refill in `fairness`; a queue's requests in order).
    A job that writes nothing through the limiter (`writing` False) is in no queue."""
    counts: dict[float, int] = {}
    for weight, writes in zip(weights, writing):
        if writes:
            counts[weight] = counts.get(weight, 0) + 1
    return [weight / counts[weight] if writes else weight
            for weight, writes in zip(weights, writing)]


class GenericRateLimiter:
    """The limiter's rate, its auto-tuning maximum, and the drain count since the last tune."""

    def __init__(self, rate_bps: float, auto_tuned: bool = False, now_s: float = 0.0) -> None:
        # NewGenericRateLimiter: an auto-tuned limiter starts at half the given rate.
        self.max_bytes_per_sec = int(rate_bps)
        self.rate_bps = int(rate_bps // 2) if auto_tuned else int(rate_bps)
        self.auto_tuned = auto_tuned
        self.origin_s = now_s               # next_refill_us_ starts at construction
        self.num_drains = 0.0
        self._last_drained_period = -1      # a period counts once (wait_until_refill_pending_)
        self.last_tune_s = now_s

    @property
    def enabled(self) -> bool:
        return self.rate_bps > 0

    def set_bytes_per_second(self, rate_bps: float) -> None:
        """SetBytesPerSecond: the current rate (not the auto-tuner's maximum); must be > 0."""
        if not rate_bps > 0:
            raise ValueError(f"SetBytesPerSecond: rate must be positive, got {rate_bps}")
        self.rate_bps = int(rate_bps)

    def add_saturated(self, dt: float, end_s: float) -> None:
        """The jobs' writes wanted more than the limiter gave during the dt before `end_s`:
        one drain for each refill period it touches that has not drained yet."""
        if dt <= 0:
            return
        first = math.floor((end_s - dt - self.origin_s) / REFILL_PERIOD_S + PERIOD_TOLERANCE)
        last = math.ceil((end_s - self.origin_s) / REFILL_PERIOD_S - PERIOD_TOLERANCE) - 1
        first = max(first, self._last_drained_period + 1)
        if last >= first:
            self.num_drains += last - first + 1
            self._last_drained_period = last

    @property
    def next_tune_s(self) -> float:
        """When Request's check `now - tuned_time_ >= kRefillsPerTune * refill_period_us_`
        first holds: 100 refill periods after the last tune (infinite when not auto-tuned)."""
        if not self.auto_tuned:
            return math.inf
        return self.last_tune_s + TUNE_EVERY_PERIODS * REFILL_PERIOD_S

    def maybe_tune(self, now_s: float) -> bool:
        """Request's check: tune once 100 refill periods have passed. True if it tuned."""
        if not self.auto_tuned or now_s < self.next_tune_s - DUE_TOLERANCE_S:
            return False
        intervals = math.ceil((now_s - self.last_tune_s) / REFILL_PERIOD_S - 1e-9)
        num_drains = int(self.num_drains + 1e-9)
        self.rate_bps = tuned_rate(self.rate_bps, self.max_bytes_per_sec,
                                   num_drains * 100 // intervals)
        self.num_drains = 0.0
        self.last_tune_s = now_s
        return True


def tuned_rate(prev_bps: int, max_bps: int, drained_pct: int) -> int:
    """TuneLocked's new rate from the percentage of drained refill periods (exact)."""
    floor = max_bps // ALLOWED_RANGE_FACTOR
    if drained_pct == 0:
        return floor
    if drained_pct < LOW_WATERMARK_PCT:
        return max(floor, prev_bps * 100 // (100 + ADJUST_PCT))
    if drained_pct > HIGH_WATERMARK_PCT:
        return min(max_bps, prev_bps * (100 + ADJUST_PCT) // 100)
    return prev_bps
