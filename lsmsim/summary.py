"""The numbers a run is judged by, computed the same way for real and simulated traces.

`summarize_trace` reads only a trace's rows, events and stall episodes, so a RocksDB LOG
and a simulation are measured by one code path. Definitions: tail throughput is
CruiseDB's, the 99th (99.9th) percentile *lowest* per-interval throughput, i.e. the 1st
(0.1th) percentile (and the 95th, the 5th percentile: on a run of 90 one-second rows the
1st is about its lowest second); write amplification is bytes of new SST files (flush + compaction,
`table_file_creation` events) over user bytes (key + value); stall time is the time
writes spent stopped or delayed. `summarize` adds what only the simulator knows (latency
percentiles, space amplification, utilisations).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

import numpy as np

from lsmsim.metrics import db_write_percentiles
from lsmsim.put_time_spread import with_own_puts
from lsmsim.stall_tracker import CAUSE_NAMES

if TYPE_CHECKING:
    from lsmsim.db import DB

STALL_CAUSES = tuple(sorted(set(CAUSE_NAMES.values())))


def summarize_trace(timeseries: Mapping[str, Sequence[Any]], events: Iterable[dict[str, Any]],
                    episodes: list[dict[str, Any]], duration_s: float,
                    user_bytes_per_op: float) -> dict[str, Any]:
    """Throughput, tail throughput, stall time and count by cause, write amplification,
    flush and compaction counts and bytes, from a trace's three parts."""
    ops_per_s = np.asarray(timeseries.get("ops_per_s", [0.0]), dtype=float)
    if ops_per_s.size == 0:
        ops_per_s = np.zeros(1)
    total_ops = float(np.sum(np.asarray(timeseries.get("ops", [0.0]), dtype=float)))
    user_bytes = total_ops * user_bytes_per_op
    stall_s = {c: sum(e["duration_s"] for e in episodes if e["cause"] == c) for c in STALL_CAUSES}
    stall_n = {c: sum(1 for e in episodes if e["cause"] == c) for c in STALL_CAUSES}
    stopped_s = float(np.sum(np.asarray(timeseries.get("stopped_s", [0.0]), dtype=float)))
    delayed_s = float(np.sum(np.asarray(timeseries.get("delayed_s", [0.0]), dtype=float)))
    counts = _event_totals(events)
    written = counts["flush_bytes_written"] + counts["compaction_bytes_written"]
    l0_files = np.asarray(timeseries.get("l0_files", [0]), dtype=float)
    return {
        "duration_s": duration_s,
        "ops": total_ops,
        "user_bytes": user_bytes,
        "throughput_ops_per_s": total_ops / duration_s if duration_s else float("nan"),
        "throughput_MBps": user_bytes / duration_s / 1e6 if duration_s else float("nan"),
        "tail_throughput_p99_ops_per_s": float(np.percentile(ops_per_s, 1)),
        "tail_throughput_p999_ops_per_s": float(np.percentile(ops_per_s, 0.1)),
        "tail_throughput_p95_ops_per_s": float(np.percentile(ops_per_s, 5)),
        "stall_time_s": stopped_s + delayed_s,
        "stall_fraction": (stopped_s + delayed_s) / duration_s if duration_s else float("nan"),
        "stopped_time_s": stopped_s,
        "delayed_time_s": delayed_s,
        "stall_duration_s_by_cause": stall_s,
        "stall_count_by_cause": stall_n,
        "stall_episodes": len(episodes),
        "write_amplification": written / user_bytes if user_bytes else float("nan"),
        **counts,
        "max_l0_files": int(np.nanmax(l0_files)) if l0_files.size else 0,
    }


def _event_totals(events: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Counts and bytes of flushes and compactions from EVENT_LOG_v1 events. A file's level
    is its job's: flush outputs go to L0, compaction outputs to the job's output_level."""
    file_bytes_by_job: dict[int, float] = {}
    flush_jobs: set[int] = set()
    started_at_s: dict[int, float] = {}   # job -> time of its *_started event
    start_level: dict[int, int] = {}      # compaction job -> its input level
    job_s: dict[int, float] = {}          # job -> started..finished seconds
    output_level: dict[int, int] = {}
    read = 0.0
    started_input: dict[int, float] = {}
    flushes = compactions = moves = intra_l0 = 0
    final_lsm_state: list[int] = []
    for event in events:
        name = event.get("event")
        job = event.get("job")
        if name == "table_file_creation":
            file_bytes_by_job[job] = file_bytes_by_job.get(job, 0.0) + float(event["file_size"])
        elif name == "flush_started":
            started_at_s[job] = event["time_micros"] / 1e6
        elif name == "flush_finished":
            flushes += 1
            flush_jobs.add(job)
            _record_job_seconds(job_s, started_at_s, event)
            final_lsm_state = event.get("lsm_state", final_lsm_state)
        elif name == "compaction_started":
            started_input[job] = float(event.get("input_data_size", 0))
            started_at_s[job] = event["time_micros"] / 1e6
            levels_in = [int(k[len("files_L"):]) for k in event if k.startswith("files_L")]
            start_level[job] = min(levels_in) if levels_in else 0  # faster than default=
        elif name == "compaction_finished":
            compactions += 1
            level = int(event.get("output_level", 0))
            output_level[job] = level
            intra_l0 += level == 0
            read += started_input.pop(job, 0.0)
            _record_job_seconds(job_s, started_at_s, event)
            final_lsm_state = event.get("lsm_state", final_lsm_state)
        elif name == "trivial_move":
            moves += 1
    levels = max([len(final_lsm_state), 1, *(lv + 1 for lv in output_level.values())])
    per_level = [0.0] * levels
    per_level_count = [0] * levels
    flush_bytes = compaction_bytes = 0.0
    for job, size in file_bytes_by_job.items():
        if job in flush_jobs:
            flush_bytes += size
            per_level[0] += size
        elif job in output_level:
            compaction_bytes += size
            per_level[output_level[job]] += size
    for level in output_level.values():
        per_level_count[level] += 1
    kinds: dict[str, list[int]] = {"flush": sorted(flush_jobs), "l0_compaction": [],
                                   "deep_compaction": []}
    for job, level in output_level.items():
        if level > 0:
            kind = "l0_compaction" if start_level.get(job, 0) == 0 else "deep_compaction"
            kinds[kind].append(job)
    kinds["background"] = [job for jobs in kinds.values() for job in jobs]
    rates = {f"{kind}_rate_MBps": _mean_rate_MBps(jobs, file_bytes_by_job, job_s)
             for kind, jobs in kinds.items()}
    return {
        "l0_compaction_jobs": len(kinds["l0_compaction"]),
        "deep_compaction_jobs": len(kinds["deep_compaction"]),
        # A kind with no timed job has no rate (left out rather than NaN, which equals nothing).
        **{name: rate for name, rate in rates.items() if rate is not None},
        "flush_count": flushes,
        "compaction_count": compactions,
        "trivial_move_count": moves,
        "intra_l0_compaction_count": intra_l0,
        "flush_bytes_written": flush_bytes,
        "compaction_bytes_read": read,
        "compaction_bytes_written": compaction_bytes,
        "bytes_written_per_level": per_level,
        "compactions_per_output_level": per_level_count,
        "final_lsm_state": list(final_lsm_state),  # the last event's, copied once
    }


def _record_job_seconds(job_s: dict[int, float], started_at_s: dict[int, float],
                        event: dict[str, Any]) -> None:
    """A finished job's wall seconds, from its *_started event to this *_finished one."""
    job = event.get("job")
    if job in started_at_s:
        job_s[job] = event["time_micros"] / 1e6 - started_at_s.pop(job)


def _mean_rate_MBps(jobs: Sequence[int], file_bytes_by_job: Mapping[int, float],
                    job_s: Mapping[int, float]) -> float | None:
    """The mean over `jobs` of bytes written / job seconds (ADOC Fig. 7(b)'s "average
    processing rate" of a job kind), MB = 1e6 bytes; None without timed jobs."""
    rates = [file_bytes_by_job.get(j, 0.0) / job_s[j] / 1e6 for j in jobs if job_s.get(j, 0) > 0]
    return float(np.mean(rates)) if rates else None


def summarize(db: "DB", duration_s: float) -> dict[str, Any]:
    """The shared summary of a simulated run plus what only the simulator knows."""
    columns = db.recorder.columns
    episodes = [e.as_dict() for e in db.stalls.episodes]
    summary = summarize_trace(columns, db.events.events.scalar_fields(), episodes, duration_s,
                              db.entry.user_bytes)
    live_bytes = db.live_keys() * db.entries[db.full_compaction_codec()].sst_bytes
    recorder = db.recorder
    latency = with_own_puts(recorder.latency, recorder.latency_own, db.put_spread)
    interval_s = db.recorder.interval_s
    summary.update({
        "latency_p50_us": latency.percentile_s(50) * 1e6,
        "latency_p99_us": latency.percentile_s(99) * 1e6,
        "latency_p999_us": latency.percentile_s(99.9) * 1e6,
        # A mixed workload's puts are in its clients' figures (`ForegroundClients.summary`).
        **(db_write_percentiles(with_own_puts(recorder.db_write_latency, recorder.db_write_own,
                                              db.put_spread)) if db.clients is None else {}),
        "rocksdb_stall_counters": dict(db.stall_state.counters),
        "space_amplification": db.version.total_bytes() / live_bytes if live_bytes
        else float("nan"),
        "final_lsm_state": db.version.file_counts(),
        "peak_memtable_bytes": float(max(columns.get("memtable_bytes", [0.0]))),
        "mean_cpu_util": _time_mean(columns, "cpu_util", interval_s),
        "mean_cpu_cores_busy": _time_mean(columns, "cpu_util", interval_s) * db.machine.cores,
        "mean_device_util": _time_mean(columns, "device_util", interval_s),
        "mean_io_streams": _time_mean(columns, "io_streams", interval_s),
        **_device_bandwidth(columns, db, interval_s),
    })
    summary.update(db.writer.backlog_summary())
    if db.clients is not None:
        summary.update(db.clients.summary(duration_s))
    return summary


def _device_bandwidth(columns: Mapping[str, Sequence[float]], db: "DB",
                      interval_s: float) -> dict[str, float]:
    """Device bytes per second (reads + writes) at the busiest interval and on average, and
    the device's limit: its rated write bandwidth, what fio flooding the device measures
    (ADOC Fig. 5's "theoretical bandwidth limit"); and the process's writes as Linux counts
    them (`_process_write_bps`)."""
    from lsmsim.storage_device import rated_write_bps

    used_bps = (np.asarray(columns.get("device_read_bps", [0.0]), dtype=float)
                + np.asarray(columns.get("device_write_bps", [0.0]), dtype=float))
    process_bps = _process_write_bps(columns, db)
    return {"peak_device_MBps": float(used_bps.max()) / 1e6 if used_bps.size else 0.0,
            "mean_device_MBps": _time_mean({**columns, "used": used_bps}, "used",
                                           interval_s) / 1e6,
            "device_limit_MBps": rated_write_bps(db.device) / 1e6,
            "peak_process_write_MBps": float(process_bps.max()) / 1e6 if process_bps.size
            else 0.0,
            "mean_process_write_MBps": _time_mean({**columns, "written": process_bps},
                                                  "written", interval_s) / 1e6}


def _process_write_bps(columns: Mapping[str, Sequence[float]], db: "DB") -> np.ndarray:
    """Per interval, the bytes the process wrote as Linux's per-task I/O accounting counts
    them (`/proc/PID/io` write_bytes, psutil's `io_counters().write_bytes`, what the ADOC
    authors' runner logged each second): `folio_account_dirtied` charges a page to the task
    that dirties it, so SST files and the WAL alike count when written into the page cache,
    not when the device takes them, and a WAL whose files are deleted before writeback counts
    too. The WAL carries one record a put (`EntryFormat.batch_bytes`); a synced WAL is in
    the device's writes already. Files on a memory path (tmpfs) are not counted, as there."""
    written = np.asarray(columns.get("device_write_bps", []), dtype=float)
    if db.options.disable_wal or db.writer.wal_synced:
        return written
    puts_per_s = np.asarray(columns.get("ops_per_s", []), dtype=float)
    return written + puts_per_s * db.entry.batch_bytes


def _time_mean(columns: Mapping[str, Sequence[float]], name: str, interval_s: float) -> float:
    """The mean over the run of a per-interval rate or fraction, each row weighted by its
    length: `interval_s`, but a run's last row may be partial, and a plain mean of rows
    would let `--interval` change the figure. 0.0 without rows."""
    values = np.asarray(columns.get(name, []), dtype=float)
    times = np.asarray(columns.get("time_s", []), dtype=float)
    if values.size == 0 or values.size != times.size:
        return float(values.mean()) if values.size else 0.0
    lengths = np.diff(times, prepend=times[0] - interval_s)
    return float(np.dot(values, lengths) / lengths.sum())
