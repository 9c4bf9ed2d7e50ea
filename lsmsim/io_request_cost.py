"""The CPU each read and write request of a flush or compaction costs (mechanism
`io_request_cost`).

A compaction reads its input files through RocksDB's RandomAccessFileReader: with
`compaction_readahead_size` 0 (the 7.x default) every data block is one `pread` of about
`block_size` bytes (BlockPrefetcher::PrefetchIfNeeded makes no FilePrefetchBuffer for a
compaction then), and with a readahead size one `pread` fills a buffer of that many bytes
that the following blocks are copied from. It writes through WritableFileWriter, one
`write` per `writable_file_max_buffer_size` bytes. Each request costs the syscall, the
page-cache lookup and RocksDB's own accounting around it (IOStats, perf context) whether
the bytes come from memory or the device: CPU per request, not per byte, so it depends on
the request size the options set. Reads from the page cache are the common case (buffered
I/O, a recent SST), so the readahead size moves the compaction's CPU, not only its I/O.

Measured on this project's 2-core machine kind (`validation/io_request_cost.py` on
validation/traces/local-2core-readahead: RocksDB 7.8.3 compactions with
`compaction_readahead_size` 0 and 2 MiB, two quiet runs each): `IO_REQUEST_NS` of CPU per
request, 0.25 ns per input byte at 4 KiB blocks, about 20% of a compaction's CPU there;
the runs' throughput rises 6.5% with 2 MiB reads. A machine
profile may give its own (`io_request_ns`); the profile's per-byte compaction cost is then
what is left (`lsmsim calibrate` measures it net of requests). Off (`--without
io_request_cost`): the per-byte costs alone, as measured at the profile's own runs' request
sizes.
"""

from __future__ import annotations

from lsmsim.options import LsmOptions

# CPU per read or write request of a background job, ns (fitted by
# validation/io_request_cost.py; see the module docstring).
IO_REQUEST_NS = 1024.7


def read_request_bytes(options: LsmOptions) -> int:
    """Bytes one read request of a compaction brings in: the readahead buffer, or a block."""
    return options.effective_compaction_readahead_size or options.block_size


def job_requests(read_bytes: float, write_bytes: float, options: LsmOptions) -> float:
    """Read and write requests of a job that reads `read_bytes` of SST input (from memory or
    the device alike) and writes `write_bytes` of SST output."""
    return (read_bytes / read_request_bytes(options)
            + write_bytes / options.writable_file_max_buffer_size)
