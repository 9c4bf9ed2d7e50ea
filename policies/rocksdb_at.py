"""`rocksdb-at`: RocksDB with the auto-tuned GenericRateLimiter on flush and compaction
writes (NewGenericRateLimiter(rate, 100 ms, 10, kWritesOnly, auto_tuned=true); ADOC's
RocksDB-AT, ADOC §6.1). The tuning itself is the engine's (lsmsim/rate_limiter.py,
docs/background/rocksdb-mechanisms.md §1.13, exact constants); this policy only switches it
on with a maximum rate, which the user must know: by default the device's rated write
bandwidth (`rated_write_MBps` of its file, else its model's peak)."""

from __future__ import annotations

from typing import Any

from lsmsim.db_view import DBView
from lsmsim.options import LsmOptions
from lsmsim.policy import Param, Policy
from lsmsim.storage_device import StorageDevice, rated_write_bps
from lsmsim.value_range import INT64_MAX


def delayed_rate_without_limiter(options: LsmOptions) -> dict[str, Any]:
    """Pin delayed_write_rate to what it is without a rate limiter (16 MiB/s when unset):
    db_bench, which ran these policies, always passes its own --delayed_write_rate, so
    the limiter's rate never becomes the delayed write rate (db_impl_open.cc)."""
    return {} if options.delayed_write_rate else {
        "delayed_write_rate": int(options.max_delayed_write_rate_bps)}


class RocksDbAutoTuned(Policy):
    """RocksDB-AT: the limiter starts at half its maximum and moves by +-5 % every 10 s."""

    name = "rocksdb-at"
    parameters = {
        "rate_bytes_per_sec": Param(0, "the limiter's maximum rate; 0 = the device's "
                                       "rated write bandwidth", "size", high=INT64_MAX),
    }

    def open_options(self, options: LsmOptions, device: StorageDevice) -> dict[str, Any]:
        rate = self.params["rate_bytes_per_sec"] or int(rated_write_bps(device))
        return {**delayed_rate_without_limiter(options), "rate_limiter_bytes_per_sec": rate,
                "rate_limiter_auto_tuned": True}

    def interval_samples(self, view: DBView) -> dict[str, float]:
        return {"rate_limiter_MBps": view.rate_limiter_bps / 1e6}
