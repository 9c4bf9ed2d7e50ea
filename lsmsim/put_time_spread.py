"""Put-to-put spread of an undelayed put's time (mechanism `put_time_spread`).

The simulator gives a put its mean time: the machine's CPU per put (`write_cpu_s`,
averaged over the memtable's fill) shared by the client threads. Real puts spread around
that mean: in the ADOC authors' unthrottled 1-hour PM run (RocksDB 6.11, 1 CPU) DB::Write
took P50 2.1, P95 5.0, P99 8.8 us (rocksdb.db.write.micros) against a mean of 2.9 us.
Causes RocksDB and Linux have: the skiplist's random tower height and search depth
(InlineSkipList::Insert, memtable/inlineskiplist.h), the WAL write() that takes a new
page-cache page every 4 KiB (log::Writer::AddRecord, PosixWritableFile::Append), the
memtable switch that opens a new WAL file (DBImpl::SwitchMemtable), and the put thread's
preemption by the flush and compaction threads sharing its core. db_bench's statistics give
four numbers of the histogram (P50, P95, P99 and the mean from SUM / COUNT), which cannot
tell these apart, so this is *not* a model of any of them: it stands in for them all with
the spread the runs measure (`lsmsim.fidelity.put_time_spread_fit`).

The machine profile holds it as `put_time_spread`: equally likely multipliers of the
mean put time (mean 1). It shapes the latency histograms only: a put whose latency is its
own time (no delayed-write sleep, no client queue or rate-limiter wait, `LatencySplit`'s
`own` flag) is recorded as the mean, and the spread is laid over those puts when the
percentiles are read (`spread_histogram`), so the mean put time, throughput and every
timeseries are as without it. Off (`--without put_time_spread`) or with no table, every
undelayed put takes the mean, as before.

The runs that measure it ran stock puts. Memtable work a put does beyond them (the Seek of
`inplace_update_support`, a fork's per-put bookkeeping: `MachineProfile.write_cpu_s`'s
extra searches) adds its mean time to every put and is not spread again
(`beyond_stock_puts`): in the ADOC authors' one-hour PM runs (validation/data/
adoc_section6_fillrandom.csv) SILK-O's fork, whose puts took ~2.7 us more on average
(~6.8 against ~4.1 us a put between stops), had a P99 of 11.5 us against ADOC's 9.4: 2.1 us
higher, where spreading the whole put would put it ~2.7 x 2.3 = 6 us higher. On this
project's 2-core machine kind (validation/traces/local-2core-put-spread) the Seek of
`inplace_update_support` moved DB::Write's P50 and P95 by its mean as this predicts; its P99
stretched further, between the two. Larger values, stock work, stretch the whole tail.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lsmsim.metrics import LATENCY_BINS_PER_DECADE, LATENCY_MIN_S, LatencyHistogram


@dataclass(frozen=True)
class PutTimeSpread:
    """Equally likely multipliers of the mean undelayed put time (mean 1)."""

    multipliers: tuple[float, ...]

    def beyond_stock_puts(self, extra_share: float) -> PutTimeSpread:
        """The spread of a put of which `extra_share` of the mean time is work stock puts do
        not do (module docstring): that part stays at its mean, the rest spreads as
        measured, so each multiplier m becomes 1 + (1 - extra_share)(m - 1), mean 1."""
        stock_share = 1.0 - extra_share
        return PutTimeSpread(tuple(1.0 + stock_share * (m - 1.0) for m in self.multipliers))

    def spread_histogram(self, own: LatencyHistogram) -> LatencyHistogram:
        """`own` (puts recorded at their mean time) with each bin's puts shared equally
        among the multipliers: a bin's geometric centre times each, rebinned."""
        spread = LatencyHistogram()
        bins = np.nonzero(own.counts)[0]
        centre_s = LATENCY_MIN_S * 10 ** ((bins + 0.5) / LATENCY_BINS_PER_DECADE)
        multipliers = np.asarray(self.multipliers)
        latency_s = np.outer(centre_s, multipliers).ravel()
        ops = np.repeat(own.counts[bins] / multipliers.size, multipliers.size)
        spread.add_many(latency_s, ops)
        return spread


def with_own_puts(histogram: LatencyHistogram, own: LatencyHistogram,
                  spread: PutTimeSpread | None) -> LatencyHistogram:
    """One histogram of every put: `histogram`'s, and `own`'s spread by `spread` (as
    recorded when None)."""
    merged = LatencyHistogram()
    merged.counts = histogram.counts + (own.counts if spread is None
                                        else spread.spread_histogram(own).counts)
    return merged
