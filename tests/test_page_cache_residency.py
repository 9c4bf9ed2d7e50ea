"""Which SST files are read from the page cache (lsmsim.page_cache_residency): a deleted
file's pages are freed at once, so only live files age out, oldest written first."""

from __future__ import annotations

import dataclasses

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from conftest import run_small
from lsmsim.machine import load_machine
from lsmsim.page_cache_residency import PageCacheResidency
from lsmsim.sst_file import SstFile

MIB = 1 << 20


def sst(number: int, size_bytes: float) -> SstFile:
    """A file of `size_bytes` (one bucket, one-byte entries)."""
    return SstFile(number, 0, 1, np.array([float(size_bytes)]), 1)


def test_the_oldest_written_file_leaves_a_full_cache_first():
    cache = PageCacheResidency(100.0)
    a, b, c = sst(1, 40), sst(2, 40), sst(3, 40)
    cache.written([a, b])
    cache.written([c])
    assert not cache.is_cached(a) and cache.is_cached(b) and cache.is_cached(c)
    assert cache.cached_bytes == 80.0


def test_a_deleted_file_frees_its_pages_so_older_live_files_stay_cached():
    """Without the free (the write-position rule) `a` would age out behind `c`: 40 + 40 + 40
    bytes written after it reach the 100-byte cache."""
    cache = PageCacheResidency(100.0)
    a, b, c = sst(1, 40), sst(2, 40), sst(3, 40)
    cache.written([a, b])
    cache.deleted(b)
    cache.written([c])
    assert cache.is_cached(a) and cache.is_cached(c) and not cache.is_cached(b)
    assert cache.cached_bytes == 80.0
    cache.deleted(sst(9, 10))  # never cached (or already evicted): nothing changes
    assert cache.cached_bytes == 80.0


def test_a_partly_compacted_file_keeps_its_place_with_its_remaining_bytes():
    cache = PageCacheResidency(100.0)
    a, b = sst(1, 40), sst(2, 40)
    cache.written([a, b])
    cache.resized(sst(1, 10))
    assert cache.cached_bytes == 50.0
    cache.written([sst(3, 45)])
    assert cache.is_cached(a)
    cache.written([sst(4, 5)])  # 10 + 40 + 45 + 5 = 100: full, the oldest goes
    assert not cache.is_cached(a) and cache.cached_bytes == 90.0


@given(st.lists(st.tuples(st.booleans(), st.integers(1, 50)), max_size=60),
       st.integers(1, 200))
def test_cached_files_are_the_newest_live_files_and_stay_below_the_cache(steps, capacity):
    """After any writes and deletions the cached files are the newest live ones (a file
    evicted stays evicted), their bytes `cached_bytes`, below the cache; with no deletions
    they are exactly the newest files whose bytes stay below it."""
    cache = PageCacheResidency(float(capacity))
    live: list[SstFile] = []
    deleted_any = False
    for number, (delete, size) in enumerate(steps, start=1):
        if delete and live:
            cache.deleted(live.pop(size % len(live)))
            deleted_any = True
        else:
            live.append(sst(number, size))
            cache.written([live[-1]])
    cached = [cache.is_cached(f) for f in live]
    assert cached == sorted(cached)  # never an evicted file newer than a cached one
    assert cache.cached_bytes == sum(f.size_bytes for f, c in zip(live, cached) if c)
    assert cache.cached_bytes < capacity
    if not deleted_any:
        sizes_from_newest = np.cumsum([f.size_bytes for f in reversed(live)])
        assert sum(cached) == int(np.sum(sizes_from_newest < capacity))


def _device_read_bytes(page_cache_mib: int, without: list[str]) -> float:
    machine = dataclasses.replace(load_machine("server"), page_cache_bytes=page_cache_mib * MIB)
    run = run_small(duration_s=30, machine=machine, without=without)
    assert run.config["mechanisms_off"] == without
    assert max(run.timeseries["sst_bytes"]) < page_cache_mib * MIB
    return float(sum(run.timeseries["device_read_bps"]))


def test_live_files_that_fit_in_the_page_cache_are_never_read_from_the_device():
    """30 s of fillrandom keeps < 1.9 GB of SSTs live but writes ~13 GB of them: with a
    2 GiB page cache compactions read nothing from the device, while the write-position rule
    (`without unlink_frees_page_cache`) ages live files out behind deleted ones (~1 GB)."""
    assert _device_read_bytes(2048, []) == 0.0
    assert _device_read_bytes(2048, ["unlink_frees_page_cache"]) > 0.5e9
