"""Measuring `put_time_spread` from real runs' DB::Write histograms, as the profile's
`put_time_spread` table (`lsmsim.put_time_spread` holds the mechanism).

db_bench --statistics prints, per histogram, P50, P95, P99, P100, COUNT and SUM.
rocksdb.db.write.micros (DB_WRITE, DBImpl::WriteImpl's whole time) holds every put;
rocksdb.db.write.stall (WRITE_STALL, recorded by DBImpl::DelayWrite with the time it
delayed) the sleeps of delayed puts. So an undelayed put's mean time is
(write SUM - stall SUM) / write COUNT, and a run whose puts spent under
MAX_STALL_SHARE of their time delayed has percentiles of undelayed puts. Over its mean,
they give the quantile function of the multiplier at 50, 95 and 99 %. Between them it is
taken linear; above 99 % its 95-99 % slope goes on to 100 %; below 50 % it is linear from
a value at 0 % chosen so the multipliers' mean is 1 (SUM / COUNT is the mean). That is an
assumption on the tails the four numbers do not measure; what they do measure (P50, P95,
P99 over the mean) the table reproduces. A run whose numbers admit no such line (its 0 %
value outside 0..P50) is left out and named. Tables of several runs are averaged point by
point (quantile averaging) and scaled to mean 1.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from lsmsim.traces.run_files import DB_WRITE_HISTOGRAM, find_run_files, read_histogram

WRITE_STALL_HISTOGRAM = "rocksdb.db.write.stall"
# A run's DB::Write percentiles are undelayed puts' when under this share of their time
# was DelayWrite's sleeps.
MAX_STALL_SHARE = 0.05
# Multipliers a profile holds: the P99 of the table is its point at 99 % to 1/SPREAD_POINTS.
SPREAD_POINTS = 200
KNOTS = (0.5, 0.95, 0.99)  # the percentiles db_bench prints below P100


@dataclass(frozen=True)
class PutTimes:
    """A run's undelayed DB::Write figures: its mean (us) and P50, P95, P99 over it."""

    folder: Path
    mean_us: float
    quantiles: tuple[float, float, float]  # P50, P95, P99 over the mean


def run_put_times(folder: Path) -> tuple[PutTimes | None, str]:
    """The run's undelayed put times (None, with the reason, when its stdout has no
    DB_WRITE histogram or its puts slept MAX_STALL_SHARE of their time or more)."""
    stdout = find_run_files(folder).stdout
    write = read_histogram(stdout, DB_WRITE_HISTOGRAM) if stdout is not None else {}
    if not write.get("COUNT") or not write.get("SUM"):
        return None, f"{folder}: no {DB_WRITE_HISTOGRAM} histogram with COUNT and SUM"
    stall_us = read_histogram(stdout, WRITE_STALL_HISTOGRAM).get("SUM", 0.0)
    share = stall_us / write["SUM"]
    if share >= MAX_STALL_SHARE:
        return None, f"{folder}: puts {share:.0%} of their time delayed"
    mean_us = (write["SUM"] - stall_us) / write["COUNT"]
    return PutTimes(folder, mean_us, tuple(write[f"P{round(k * 100)}"] / mean_us
                                           for k in KNOTS)), ""


def quantile_table(quantiles: Sequence[float], points: int = SPREAD_POINTS) -> list[float] | None:
    """Equally likely multipliers (the quantile function at (i + 0.5) / points) through
    P50, P95, P99 over the mean `quantiles`, with the tails of the module docstring; None
    when no value at 0 % in [0, P50] gives mean 1."""
    q50, q95, q99 = quantiles
    q100 = q99 + (q99 - q95) * (1.0 - KNOTS[2]) / (KNOTS[2] - KNOTS[1])
    upper = ((q50 + q95) * (KNOTS[1] - KNOTS[0]) + (q95 + q99) * (KNOTS[2] - KNOTS[1])
             + (q99 + q100) * (1.0 - KNOTS[2])) / 2.0
    q0 = 2.0 * (1.0 - upper) / KNOTS[0] - q50
    if not 0.0 <= q0 <= q50:
        return None
    at = (np.arange(points) + 0.5) / points
    return list(np.interp(at, (0.0, *KNOTS, 1.0), (q0, q50, q95, q99, q100)))


def measure_put_spread(folders: Sequence[Path]) -> tuple[list[float] | None, str]:
    """The `put_time_spread` table the runs' DB::Write histograms measure (None when no
    run gives one) and a note saying from which runs."""
    tables, used, skipped = [], [], []
    for folder in folders:
        times, reason = run_put_times(folder)
        table = quantile_table(times.quantiles) if times is not None else None
        if times is not None and table is None:
            reason = f"{folder}: P50/P95/P99 over the mean {times.quantiles} fit no table"
        if table is None:
            skipped.append(reason)
            continue
        tables.append(table)
        used.append(str(folder))
    if not tables:
        return None, "put_time_spread not measured: " + ("; ".join(skipped) or "no runs")
    mean = np.mean(tables, axis=0)
    spread = [round(float(m), 4) for m in mean / mean.mean()]
    return spread, (f"put_time_spread measured from the DB::Write histograms of {len(used)} "
                    f"runs ({', '.join(used)}): P50/P95/P99 over the mean "
                    f"{np.quantile(spread, 0.5):.2f}/{np.quantile(spread, 0.95):.2f}/"
                    f"{np.quantile(spread, 0.99):.2f}"
                    + (f"; left out: {'; '.join(skipped)}" if skipped else ""))
