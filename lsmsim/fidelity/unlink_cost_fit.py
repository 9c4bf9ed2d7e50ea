"""Measuring `unlink_ns_per_byte` (`lsmsim.obsolete_file_purge`) from RocksDB LOGs: how long
a background thread takes to delete each obsolete SST file, per byte of the file.

PurgeObsoleteFiles logs "Deleted file <path> immediately" (DeleteScheduler::DeleteFile,
file/delete_scheduler.cc) after each unlink, so the time since the deleting thread's
previous LOG line (its previous deletion, or the end of its job) is that unlink's; the
file's size is in its `table_file_creation` event. The estimate is the median of the
deletions' seconds per byte: a thread that shares its core with others takes longer, so
pass runs with few background jobs (the median keeps the slower ones from pulling it up).
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path
from typing import Iterable, Iterator

import numpy as np

from lsmsim.traces.rocksdb_log import TextLines

_LOG_LINE = re.compile(r"(\d{4}/\d\d/\d\d-\d\d:\d\d:\d\d\.\d+) (\d+) ")
_DELETED_SST = re.compile(r"Deleted file \S*?(\d+)\.sst immediately")


def sst_deletion_seconds(log_path: Path) -> Iterator[tuple[float, float]]:
    """(file bytes, seconds) of each SST file the LOG says was deleted (see the module
    docstring); deletions of files whose creation the LOG does not hold are left out."""
    size_bytes: dict[int, float] = {}
    last_s: dict[str, float] = {}
    for _, line in TextLines(Path(log_path)):
        match = _LOG_LINE.match(line)
        if match is None:
            continue
        at_s = datetime.strptime(match.group(1), "%Y/%m/%d-%H:%M:%S.%f").timestamp()
        thread = match.group(2)
        if '"table_file_creation"' in line:
            event = json.loads(line.split("EVENT_LOG_v1", 1)[1])
            size_bytes[int(event["file_number"])] = float(event["file_size"])
        deleted = _DELETED_SST.search(line)
        if deleted and thread in last_s and int(deleted.group(1)) in size_bytes:
            yield size_bytes[int(deleted.group(1))], at_s - last_s[thread]
        # The lines a deletion writes after its own (its DEBUG line, its event) take no time.
        if "[DEBUG]" not in line and '"table_file_deletion"' not in line:
            last_s[thread] = at_s


def estimate_unlink_ns_per_byte(log_paths: Iterable[Path]) -> tuple[float, int]:
    """(median ns per byte of the SST deletions in the LOGs, deletions counted); NaN with
    none."""
    per_byte = [seconds / size * 1e9 for path in log_paths
                for size, seconds in sst_deletion_seconds(path) if size > 0]
    if not per_byte:
        return float("nan"), 0
    return float(np.median(per_byte)), len(per_byte)
