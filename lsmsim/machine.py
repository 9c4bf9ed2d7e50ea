"""The machine a simulated RocksDB runs on: CPU cores, per-byte CPU costs and page cache.

Foreground writes and background jobs share the cores (one core at most per thread).
The costs are parameters, not constants: `machine_profiles/*.toml` hold presets, and a
user's own file (for instance one fitted by calibration) is read the same way.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from lsmsim import data_file
from lsmsim.data_file import Number, read_fields, require

PROFILE_DIR = Path(__file__).parent / "machine_profiles"
NS = 1e-9


@dataclass(frozen=True)
class MachineProfile:
    """CPU model of one machine. Costs are CPU-seconds of one core."""

    name: str
    description: str
    cores: int
    write_cpu_s_per_op: float
    write_cpu_s_per_byte: float
    memtable_insert_cpu_s_per_level: float
    flush_cpu_s_per_byte: float
    compaction_cpu_s_per_byte: float
    page_cache_bytes: float
    # The read path (DBImpl::GetImpl, Version::Get, BlockBasedTable::Get). First estimates,
    # not yet fitted: a Get's fixed cost (SuperVersion reference, LookupKey), each SST file
    # probed (FindFile, table-cache lookup, filter probe, in-memory index search), each
    # data block searched (block-cache lookup, restart-point binary search), copying a
    # block out of the OS page cache, and each iterator Next of a scan.
    get_cpu_s_per_op: float = 1000 * 1e-9
    get_cpu_s_per_file: float = 400 * 1e-9
    get_cpu_s_per_block: float = 1500 * 1e-9
    page_cache_cpu_s_per_byte: float = 0.5 * 1e-9
    scan_cpu_s_per_entry: float = 150 * 1e-9

    def write_cpu_s(self, batch_bytes: int, memtable_entries: float) -> float:
        """CPU of one put: fixed cost, bytes through WAL and memtable, and the skiplist
        search, which grows with log2 of the entries already in the memtable."""
        depth = math.log2(memtable_entries + 2.0)
        return (self.write_cpu_s_per_op + self.write_cpu_s_per_byte * batch_bytes
                + self.memtable_insert_cpu_s_per_level * depth)


_FIELDS = {"description": str, "cores": int, "write_ns_per_op": Number,
           "write_ns_per_byte": Number, "memtable_insert_ns_per_level": Number,
           "flush_ns_per_byte": Number, "compaction_ns_per_byte": Number,
           "page_cache_GiB": Number}
_READ_FIELDS = {"get_ns_per_op": "get_cpu_s_per_op", "get_ns_per_file": "get_cpu_s_per_file",
                "get_ns_per_block": "get_cpu_s_per_block",
                "page_cache_ns_per_byte": "page_cache_cpu_s_per_byte",
                "scan_ns_per_entry": "scan_cpu_s_per_entry"}


def profile_names() -> list[str]:
    return data_file.preset_names(PROFILE_DIR)


def load_machine(name_or_path: str) -> MachineProfile:
    """A preset by name (see `profile_names()`) or a machine TOML file by path."""
    path = data_file.resolve_preset(name_or_path, PROFILE_DIR, "machine profile")
    data = read_fields(path, _FIELDS, {"name": str, **{key: Number for key in _READ_FIELDS}})
    require(path, "cores", data["cores"], data["cores"] >= 1, "at least 1")
    for key in [*_FIELDS, *_READ_FIELDS]:
        if key not in ("description", "cores") and key in data:
            require(path, key, data[key], data[key] >= 0, "zero or positive")
    return MachineProfile(
        name=data.get("name", path.stem), description=data["description"],
        cores=data["cores"], write_cpu_s_per_op=data["write_ns_per_op"] * NS,
        write_cpu_s_per_byte=data["write_ns_per_byte"] * NS,
        memtable_insert_cpu_s_per_level=data["memtable_insert_ns_per_level"] * NS,
        flush_cpu_s_per_byte=data["flush_ns_per_byte"] * NS,
        compaction_cpu_s_per_byte=data["compaction_ns_per_byte"] * NS,
        page_cache_bytes=data["page_cache_GiB"] * (1 << 30),
        **{field: data[key] * NS for key, field in _READ_FIELDS.items() if key in data})
