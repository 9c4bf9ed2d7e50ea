"""Which write groups sleep, and how long, while RocksDB delays writes.

The writer's rate while delayed is the average of `WriteController::GetDelay`'s token
bucket (db/write_controller.cc), so per-second throughput needs nothing finer. Latency
does: the bucket is not a queue that slows every write a little, it lets most write groups
through at once and makes a few sleep for a millisecond or more.

RocksDB 7.x (`WriteController::GetDelay` since PR #8064, "Revamp WriteController", 2021):
a credit of bytes is refilled every kMicrosPerRefill = 1000 us at `delayed_write_rate`;
a group whose bytes the credit covers pays nothing; the first it cannot cover is charged
the shortfall and told to sleep max(time to the refill that covers it, kMicrosPerRefill).
`DBImpl::DelayWrite` (db/db_impl/db_impl_write.cc) then sleeps in kDelayInterval = 1001 us
steps (`SleepForMicroseconds`) until the delay has passed, and the write group formed after
the sleep carries every client thread that queued behind the sleeping leader, so all its
puts (one per db_bench thread) wait out the sleep. RocksDB 6.x before PR #8064 (the ADOC
server's 6.11) differs in its constants: a group the credit misses sleeps
kRefillInterval = 1024 us, in kDelayInterval = 1000 us steps; with the Linux timer slack
(below) past 24 us, that is one step as well.

Each `SleepForMicroseconds` (nanosleep, an hrtimer) lasts its interval plus the thread's
timer slack: Linux lets an hrtimer sleep expire up to `timer_slack_ns` late
(kernel/time/hrtimer.c, `hrtimer_nanosleep`; 50 us by default, init_task.timer_slack_ns),
and an idle system wakes it at the end of that window. So a sleep is a whole number of
quanta of (kDelayInterval + slack).

Which groups sleep, and for how many quanta, follows from the bucket's state, so it is
replayed (`replay_sleeps`): 7.x's GetDelay and DelayWrite's loop, for a leader that writes
a group in its own service time and is followed at once by the next (closed loop, every
client thread in each group). The groups the credit covers are skipped over in one step,
so a replay costs a few hundred sleeps, and its result is kept for the segment's rate,
group and service time (rounded to 0.01 us). Both versions credit the time a group slept
beyond its own shortfall to the next refill (7.x: `elapsed` counts from
`next_refill_time_`; 6.x: `time_since_last_refill`), so the sleeps add up to what the rate
requires and no more: a group needs bytes / rate of time, it takes its own service time,
and the difference is the mean sleep. The replayed shares are scaled to that mean exactly,
so the mean latency stays Little's law's, threads / rate, and per-second throughput is
untouched. Left out: GetDelay's integer microseconds and bytes, and 6.x's partial refills.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import NamedTuple

K_DELAY_INTERVAL_US = 1001.0   # DBImpl::DelayWrite's sleep step (RocksDB 7.x)
K_MICROS_PER_REFILL_US = 1000.0  # GetDelay's refill period and least delay (RocksDB 7.x)
TIMER_SLACK_S = 50e-6  # Linux's default timer slack (init_task.timer_slack_ns = 50000)
WARMUP_SLEEPS = 16     # replayed sleeps left out while the bucket settles from empty
COUNTED_SLEEPS = 512   # replayed sleeps counted
MAX_STEPS = 20_000     # replay steps at most (groups a credit covers pass in one step)
KEY_DIGITS = 2         # rounding of the replay's inputs in microseconds (its cache key)


def delay_sleeps(group_s: float, service_s: float,
                 timer_slack_s: float) -> tuple[tuple[float, float], ...]:
    """(sleep_s, fraction of groups) pairs, fractions adding to 1, mean sleep
    `group_s - service_s`: a group needing `group_s` of the delayed rate (its bytes /
    delayed_write_rate) and written in `service_s` (module docstring)."""
    mean_us = (group_s - service_s) * 1e6
    if mean_us <= 0.0:
        return ((0.0, 1.0),)
    profile = _sleep_profile(round(group_s * 1e6, KEY_DIGITS), round(service_s * 1e6, KEY_DIGITS),
                             timer_slack_s)
    scale = mean_us / profile.replayed_us / profile.groups
    shares = [n * scale for n in profile.counts]
    slept = sum(shares)
    if slept > 1.0:  # cannot happen unless every group sleeps: keep the mean in the longest
        return tuple(_every_group_sleeps(mean_us, profile.quantum_us))
    pairs = zip(profile.sleeps_s, shares)
    return ((0.0, 1.0 - slept), *pairs) if slept < 1.0 else tuple(pairs)


class SleepProfile(NamedTuple):
    """What `delay_sleeps` takes from one replay: the sleeps in seconds, how many groups
    slept each, the groups that went by, the mean sleep per group in microseconds, and
    the sleep quantum (kDelayInterval plus the timer slack)."""

    sleeps_s: tuple[float, ...]
    counts: tuple[int, ...]
    groups: int
    replayed_us: float
    quantum_us: float


@lru_cache(maxsize=4096)
def _sleep_profile(group_us: float, service_us: float, timer_slack_s: float) -> SleepProfile:
    """The replay of a (rounded) group and service time, and what follows from it alone:
    kept, as a delayed writer asks for the same few at every event."""
    slack_us = round(timer_slack_s * 1e6, KEY_DIGITS)
    counts, groups = replay_sleeps(group_us, service_us, slack_us)
    quantum_us = K_DELAY_INTERVAL_US + slack_us
    if not counts:  # sleeps so rare the replay met none: each is a single step
        counts, groups = ((quantum_us, 1),), 1
    replayed_us = sum(sleep_us * n for sleep_us, n in counts) / groups
    return SleepProfile(tuple(sleep_us * 1e-6 for sleep_us, _ in counts),
                        tuple(n for _, n in counts), groups, replayed_us, quantum_us)


def _every_group_sleeps(mean_us: float, quantum_us: float) -> list[tuple[float, float]]:
    """Every group sleeps: the whole quanta on either side of the mean, mixed to keep it."""
    whole = max(1, math.floor(mean_us / quantum_us))
    longer = min(max(mean_us / quantum_us - whole, 0.0), 1.0)
    return [(whole * quantum_us * 1e-6, 1.0 - longer), ((whole + 1) * quantum_us * 1e-6, longer)]


def replay_sleeps(group_us: float, service_us: float,
                  slack_us: float) -> tuple[tuple[tuple[float, int], ...], int]:
    """Replay the bucket (RocksDB 7.x WriteController::GetDelay, DBImpl::DelayWrite) from
    empty: ((sleep_us, groups that slept it), ...) over COUNTED_SLEEPS sleeps after
    WARMUP_SLEEPS (fewer, or none, where a put takes nearly its group's share of the rate
    and sleeps are too rare for MAX_STEPS), and how many groups went by meanwhile, sleeping
    or not. Credit is kept in microseconds of the delayed rate (bytes / rate)."""
    quantum_us = K_DELAY_INTERVAL_US + slack_us
    now_us, next_refill_us, credit_us = 0.0, 0.0, 0.0
    counts: dict[float, int] = {}
    groups = sleeps = 0
    for _ in range(MAX_STEPS):
        if sleeps >= WARMUP_SLEEPS + COUNTED_SLEEPS:
            break
        counting = sleeps >= WARMUP_SLEEPS
        if credit_us >= group_us:  # covered: these groups pass without reading the clock
            passing = max(1, math.floor(credit_us / group_us))  # 1 where the division rounds down
            credit_us -= passing * group_us
            now_us += passing * service_us
            groups += passing if counting else 0
            continue
        if next_refill_us <= now_us:  # refill what the time since it was due is worth
            credit_us += now_us - next_refill_us + K_MICROS_PER_REFILL_US
            next_refill_us = now_us + K_MICROS_PER_REFILL_US
            if credit_us >= group_us:
                continue
        next_refill_us += group_us - credit_us  # the shortfall, charged ahead
        credit_us = 0.0
        delay_us = max(next_refill_us - now_us, K_MICROS_PER_REFILL_US)
        slept_us = math.ceil(delay_us / quantum_us) * quantum_us  # whole DelayWrite steps
        if counting:
            counts[slept_us] = counts.get(slept_us, 0) + 1
            groups += 1
        sleeps += 1
        now_us += slept_us + service_us
    return tuple(sorted(counts.items())), groups
