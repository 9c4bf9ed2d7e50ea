"""Fluid processor sharing of CPU cores, device time and the background-write rate limiter.

Every running activity (the foreground writer, each flush, each compaction) needs, per unit
of progress, some amount of each resource it uses, and cannot go faster than its own cap
(one core per thread). A job that needs CPU and I/O at once is pipelined, so it advances
at the rate its scarcest resource allows. Shares are weighted max-min fair on every
resource (water-filling), iterated so that capacity one activity cannot use on account of
another bottleneck goes to the others.
"""

from __future__ import annotations

from dataclasses import dataclass, field

INFINITE = float("inf")
ALLOCATION_ROUNDS = 4


@dataclass
class Demand:
    """What one activity needs: resource -> amount per unit progress, with weights and a cap."""

    per_unit: dict[str, float]
    cap: float = INFINITE
    weights: dict[str, float] = field(default_factory=dict)


def water_fill(capacity: float, wants: list[float], weights: list[float]) -> list[float]:
    """Weighted max-min fair shares of `capacity` among requests `wants`."""
    if sum(wants) <= capacity:
        return list(wants)
    shares = [0.0] * len(wants)
    order = sorted(range(len(wants)), key=lambda i: wants[i] / weights[i])
    remaining = capacity
    weight_left = sum(weights)
    for i in order:
        fair = remaining * weights[i] / weight_left
        share = min(wants[i], fair)
        shares[i] = share
        remaining -= share
        weight_left -= weights[i]
    return shares


def allocate(capacities: dict[str, float], demands: list[Demand]) -> list[float]:
    """Progress rate (units/s) of every activity under the shared capacities."""
    limits = [dict.fromkeys(d.per_unit, INFINITE) for d in demands]
    for _ in range(ALLOCATION_ROUNDS):
        for resource, capacity in capacities.items():
            users = [i for i, d in enumerate(demands) if d.per_unit.get(resource, 0.0) > 0.0]
            if not users:
                continue
            wants = []
            for i in users:
                others = min((v for r, v in limits[i].items() if r != resource), default=INFINITE)
                wants.append(min(demands[i].cap, others) * demands[i].per_unit[resource])
            weights = [demands[i].weights.get(resource, 1.0) for i in users]
            if any(w == INFINITE for w in wants):
                raise ValueError(f"an activity with no cap uses {resource!r} without bound")
            shares = water_fill(capacity, wants, weights)
            for i, share in zip(users, shares):
                limits[i][resource] = share / demands[i].per_unit[resource]
    return [min([d.cap, *limit.values()]) for d, limit in zip(demands, limits)]
