"""Fluid processor sharing of CPU cores, device time and the background-write rate limiter.

Every running activity (the foreground writer, each flush, each compaction) needs, per unit
of progress, some amount of each resource it uses, and cannot go faster than its own cap
(one core per thread). A job that needs CPU and I/O at once is pipelined, so it advances
at the rate its scarcest resource allows. Shares are weighted max-min fair on every
resource (water-filling), iterated so that capacity one activity cannot use on account of
another bottleneck goes to the others.
"""

from __future__ import annotations

from dataclasses import dataclass

INFINITE = float("inf")
MAX_ROUNDS = 6
RESOURCES = ("cpu", "device", "rate_limiter")
CPU, DEVICE, RATE_LIMITER = range(3)


@dataclass(slots=True)  # one per activity at every event: slots make it cheaper to build
class Demand:
    """One activity: per-unit-of-progress amounts of each resource (indexed like RESOURCES),
    a cap on its progress rate, and its weight on each resource."""

    per_unit: list[float]
    cap: float = INFINITE
    weights: tuple[float, float, float] = (1.0, 1.0, 1.0)


def water_fill(capacity: float, wants: list[float], weights: list[float]) -> list[float]:
    """Weighted max-min fair shares of `capacity` among requests `wants`."""
    if sum(wants) <= capacity:
        return wants
    return _water_fill_over(capacity, wants, weights)


def _water_fill_over(capacity: float, wants: list[float], weights: list[float]) -> list[float]:
    """`water_fill` when the wants exceed the capacity: requests are met in order of want
    per weight, each up to its weighted part of what is left."""
    shares = [0.0] * len(wants)
    order = sorted(range(len(wants)), key=[w / v for w, v in zip(wants, weights)].__getitem__)
    remaining = capacity
    weight_left = sum(weights)
    for i in order:
        want = wants[i]
        part = remaining * weights[i] / weight_left
        share = part if part < want else want  # min(want, part), without the call
        shares[i] = share
        remaining -= share
        weight_left -= weights[i]
    return shares


def runnable_fractions(cores: float, foreground: float, work: list[tuple[float, float]],
                       threads: list[float]) -> list[float]:
    """Fraction of the time each job's threads are runnable under CPU contention, to weight
    their CPU share: `work` holds each job's (CPU
    seconds, seconds blocked on its own I/O) per unit of progress, `threads` how many
    threads work on it at once (a compaction's subcompactions); `foreground` is the client
    threads' runnable count (their CPU demand in cores: a stopped writer is not runnable).

    A flush or compaction thread computes, then blocks on its reads and each output file's
    Sync (see `BackgroundJob.thread_cap`); while blocked it is not runnable, and Linux's
    CFS shares the cores equally among the threads that are (a runnable thread gets
    `share = min(1, cores / runnable threads)`). A job therefore takes `cpu / share + wait`
    per unit, runnable a fraction `u = cpu / (cpu + share * wait)` of the time, and uses
    `share * u` cores, less than an always-runnable writer's `share`: the writer takes the
    CPU a job leaves while it waits. Max-min with CPU weights `u` gives exactly these
    shares. Mean-field: the runnable-thread count is the sum of the fractions, found by
    fixed-point iteration (it converges in a few rounds; three are enough for 2 cores).
    With a core for every thread the weights are all 1 (they cannot matter).
    Simplified: a client activity keeps weight 1 however many threads it stands for."""
    runnable = foreground + sum(threads)
    if runnable <= cores:  # a core for every thread: no one waits for CPU
        return [1.0] * len(work)
    share = cores / runnable
    fractions: list[float] = []
    for _ in range(3):
        fractions = [cpu / (cpu + share * wait) if cpu > 0.0 else 1.0 for cpu, wait in work]
        share = min(1.0, cores / (foreground + sum([f * t for f, t in zip(fractions, threads)])))
    return fractions


def io_streams(work: list[tuple[float, float]], threads: list[float],
               io_s: list[float] | None = None, flusher_s: list[float] | None = None) -> float:
    """Threads issuing I/O at a moment, on average: each job's threads times the fraction of
    their time with I/O of their own in flight, `(io - flusher) / (cpu + wait)` (`work` as
    for `runnable_fractions`; `io_s` each job's seconds of I/O per unit, by default its
    `wait`: every write waited for), plus the kernel's flusher thread while it writes back
    their pages. A thread computing while its range syncs' pages are written still has I/O
    in flight; one computing with none is not a stream to the device.

    `flusher_s` (each job's seconds per unit of one stream's writes the flusher issues,
    `lsmsim.page_cache_writeback.flusher_write_s`): the flusher is one thread per device
    (`wb_workfn`, fs/fs-writeback.c) writing back every job's expired and over-threshold
    pages in turn, so together they are the fraction of time it is busy, at most one
    stream. None: each job's flusher writeback counts as its own threads' I/O (the rule
    without `flusher_stream`). Simplified: the fractions are a thread's uncontended ones;
    on an oversubscribed CPU a thread also waits for a core, so somewhat fewer are in I/O
    at once than counted."""
    if io_s is None:
        io_s = [wait for _, wait in work]
    if not flusher_s or not any(flusher_s):
        return sum([t * io / (cpu + wait) if io > 0.0 else 0.0
                    for (cpu, wait), io, t in zip(work, io_s, threads)])
    own = sum([t * (io - flushed) / (cpu + wait) if io > flushed else 0.0
               for (cpu, wait), io, flushed, t in zip(work, io_s, flusher_s, threads)])
    flusher = sum([t * flushed / (cpu + wait) if flushed > 0.0 else 0.0
                   for (cpu, wait), flushed, t in zip(work, flusher_s, threads)])
    return own + min(1.0, flusher)


def allocate(capacities: list[float | None], demands: list[Demand]) -> list[float]:
    """Progress rate (units/s) of every activity; `capacities[r]` None means resource r is
    not modelled (no rate limiter). A resource whose users all fit sets no limit."""
    caps = [d.cap for d in demands]
    misfit = _first_misfit(capacities, demands, caps)
    if misfit is None:
        return caps
    count = len(demands)
    active = [r for r, c in enumerate(capacities) if c is not None]
    # Per resource index: each activity's limit, and whether any is finite (else all inf).
    limits = [[INFINITE] * count if c is not None else [] for c in capacities]
    limiting = [False] * len(capacities)
    # Per resource: its users, their amounts and weights, and the other resources' limits.
    plans = []
    for r in active:
        members: list[int] = []
        amounts: list[float] = []
        weights: list[float] = []
        bounds: list[float] = []
        for i, (demand, cap) in enumerate(zip(demands, caps)):  # one loop: four lists
            amount = demand.per_unit[r]
            if amount > 0.0:
                members.append(i)
                amounts.append(amount)
                weights.append(demand.weights[r])
                bounds.append(cap)
        if members:
            plans.append((r, members, amounts, weights, capacities[r], limits[r],
                          [s for s in active if s != r], bounds))
    # A resource's shares depend only on the other resources' limits: while none of those
    # changed since its last water-filling, filling it again would change nothing. Before
    # the first round none limits anyone, so a resource found to fit at the caps would set
    # no limit: it is filled only once another's limits change.
    stale = [plan[0] >= misfit for plan in plans]
    for _ in range(MAX_ROUNDS):
        changed = False
        for k, (r, members, amounts, weights, capacity, own, others, bounds) in enumerate(plans):
            if not stale[k]:
                continue
            stale[k] = False
            own_changed = False
            for s in others:  # each member's bound: its cap and the others' limits
                if limiting[s]:  # an all-infinite limit leaves every bound as it is
                    other = limits[s]
                    bounds = [limit if limit < bound else bound
                              for limit, bound in zip([other[i] for i in members], bounds)]
            if INFINITE in bounds:
                raise ValueError(f"an activity uses {RESOURCES[r]!r} without any bound")
            wants = [bound * amount for bound, amount in zip(bounds, amounts)]
            if sum(wants) <= capacity:
                if limiting[r]:  # else its limits are all infinite already
                    for i in members:
                        if own[i] != INFINITE:
                            own[i] = INFINITE
                            own_changed = True
                    limiting[r] = False
            else:
                limiting[r] = True
                shares = _water_fill_over(capacity, wants, weights)
                for i, share, amount in zip(members, shares, amounts):
                    limit = share / amount
                    if limit != own[i]:
                        own[i] = limit
                        own_changed = True
            if own_changed:
                changed = True
                stale = [True] * len(plans)
                stale[k] = False
        if not changed:
            break
    rates = caps
    for r in active:
        if limiting[r]:
            rates = [limit if limit < rate else rate for rate, limit in zip(rates, limits[r])]
    return rates


def _first_misfit(capacities: list[float | None], demands: list[Demand],
                  caps: list[float]) -> int | None:
    """The first resource that does not fit all its users at their caps, or None. One that
    fits limits no one while no other does, as `allocate`'s first round finds (same sums,
    same order); when all fit, the rates are the caps, found without building the rounds'
    plans (the usual case: a write-only run on a fast device). A user without a cap makes
    its resource not fit: the rounds report it (its want, inf, is found even where the
    sum of wants could not tell, on a capacity of inf)."""
    for r, capacity in enumerate(capacities):
        if capacity is None:  # not modelled
            continue
        total = 0.0  # the wants added in order, as sum() adds them
        for demand, cap in zip(demands, caps):
            amount = demand.per_unit[r]
            if amount > 0.0:
                want = cap * amount
                if want == INFINITE:
                    return r
                total += want
        if total > capacity:
            return r
    return None
