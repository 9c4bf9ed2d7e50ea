"""The numbers a run is judged by, computed from the DB's counters, episodes and rows.

Definitions: tail throughput is CruiseDB's, the 99th (99.9th) percentile *lowest*
per-interval throughput, i.e. the 1st (0.1th) percentile; write amplification is bytes of
new SST files (flush + compaction, `table_file_creation`) over user bytes (key + value);
space amplification is SST bytes over the bytes the live keys would take.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from lsmsim.stall_tracker import CAUSE_NAMES

if TYPE_CHECKING:
    from lsmsim.db import DB


def summarize(db: "DB", duration_s: float) -> dict[str, Any]:
    columns = db.recorder.columns
    ops_per_s = np.asarray(columns.get("ops_per_s", [0.0]), dtype=float)
    total_ops = float(sum(columns.get("ops", [0.0])))
    user_bytes = total_ops * db.entry.user_bytes
    counters = db.counters
    written = counters.flush_bytes_written + counters.compaction_bytes_written
    live_bytes = db.live_keys() * db.entry.sst_bytes
    latency = db.recorder.latency
    episodes = [e.as_dict() for e in db.stalls.episodes]
    causes = sorted(set(CAUSE_NAMES.values()))
    stall_s = {c: sum(e["duration_s"] for e in episodes if e["cause"] == c) for c in causes}
    stall_n = {c: sum(1 for e in episodes if e["cause"] == c) for c in causes}
    stopped_s = float(sum(columns.get("stopped_s", [0.0])))
    delayed_s = float(sum(columns.get("delayed_s", [0.0])))
    reads = db.clients.summary(duration_s) if db.clients is not None else {}
    return {
        "duration_s": duration_s,
        "ops": total_ops,
        "user_bytes": user_bytes,
        "throughput_ops_per_s": total_ops / duration_s,
        "throughput_MBps": user_bytes / duration_s / 1e6,
        "tail_throughput_p99_ops_per_s": float(np.percentile(ops_per_s, 1)),
        "tail_throughput_p999_ops_per_s": float(np.percentile(ops_per_s, 0.1)),
        "latency_p50_us": latency.percentile_s(50) * 1e6,
        "latency_p99_us": latency.percentile_s(99) * 1e6,
        "latency_p999_us": latency.percentile_s(99.9) * 1e6,
        "stall_time_s": stopped_s + delayed_s,
        "stall_fraction": (stopped_s + delayed_s) / duration_s,
        "stopped_time_s": stopped_s,
        "delayed_time_s": delayed_s,
        "stall_duration_s_by_cause": stall_s,
        "stall_count_by_cause": stall_n,
        "rocksdb_stall_counters": dict(db.stall_state.counters),
        "write_amplification": written / user_bytes if user_bytes else float("nan"),
        "space_amplification": db.version.total_bytes() / live_bytes if live_bytes else float("nan"),
        "bytes_written_per_level": list(counters.bytes_written_per_level),
        "compactions_per_output_level": list(counters.compactions_per_output_level),
        "flush_count": counters.flushes,
        "compaction_count": counters.compactions,
        "trivial_move_count": counters.trivial_moves,
        "intra_l0_compaction_count": counters.intra_l0_compactions,
        "flush_bytes_written": counters.flush_bytes_written,
        "compaction_bytes_read": counters.compaction_bytes_read,
        "compaction_bytes_written": counters.compaction_bytes_written,
        "max_l0_files": int(max(columns.get("l0_files", [0]))),
        "peak_memtable_bytes": float(max(columns.get("memtable_bytes", [0.0]))),
        "mean_cpu_util": float(np.mean(columns.get("cpu_util", [0.0]))),
        "mean_device_util": float(np.mean(columns.get("device_util", [0.0]))),
        "final_lsm_state": db.version.file_counts(),
        "stall_episodes": len(episodes),
        **reads,
    }
