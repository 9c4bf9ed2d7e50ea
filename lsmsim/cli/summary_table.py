"""A run's summary as the aligned two-column table `lsmsim run` and `lsmsim trace import`
print."""

from __future__ import annotations

from typing import Any

from lsmsim.metrics import DB_WRITE_PERCENTILES, db_write_key
from lsmsim.units import format_bytes, format_figure


def format_summary(summary: dict[str, Any], config: dict[str, Any]) -> str:
    """The summary as an aligned two-column table; rows whose figures a trace lacks (a real
    run has no latency histogram or utilisations) are left out."""
    def has(*keys: str) -> bool:
        return _present(summary, *keys)

    rows = [
        ("workload / device / policy",
         f"{config['workload']['name']} / {config['device']} / {config['policy']['name']}"),
        ("put throughput", f"{format_figure(summary['throughput_ops_per_s'])} ops/s "
                           f"({format_figure(summary['throughput_MBps'], 1)} MB/s)"),
        ("tail throughput p99 / p99.9",
         f"{format_figure(summary['tail_throughput_p99_ops_per_s'])} / "
         f"{format_figure(summary['tail_throughput_p999_ops_per_s'])} ops/s"),
    ]
    if has("latency_p50_us", "latency_p99_us", "latency_p999_us"):
        rows.append(("write latency p50 / p99 / p99.9", f"{summary['latency_p50_us']:,.1f} / "
                                                        f"{summary['latency_p99_us']:,.1f} / "
                                                        f"{summary['latency_p999_us']:,.1f} us"))
    db_write = [db_write_key(p) for p in DB_WRITE_PERCENTILES]
    if has(*db_write):
        rows.append(("DB::Write " + " / ".join(f"p{p}" for p in DB_WRITE_PERCENTILES),
                     " / ".join(f"{summary[k]:,.1f}" for k in db_write) + " us"))
    if summary.get("open_loop_backlog_ops"):
        rows.append(("open-loop ops queued at the end", f"{summary['open_loop_backlog_ops']:,.0f}, "
                     f"oldest waiting {summary['open_loop_oldest_queued_wait_s']:,.1f} s "
                     "(not in the latencies)"))
    rows += _read_rows(summary)
    rows.append(("stalled", f"{summary['stall_time_s']:.1f} s "
                            f"({100 * summary['stall_fraction']:.1f}%): "
                            f"stopped {summary['stopped_time_s']:.1f} s, "
                            f"delayed {summary['delayed_time_s']:.1f} s"))
    for cause, seconds in summary["stall_duration_s_by_cause"].items():
        count = summary["stall_count_by_cause"][cause]
        if count:
            rows.append((f"  {cause}", f"{seconds:.1f} s in {count} "
                                       f"episode{'' if count == 1 else 's'}"))
    rows.append(("write amplification", f"{summary['write_amplification']:.2f}"
                 if has("write_amplification") else "- (no puts written)"))
    if has("space_amplification"):
        rows.append(("space amplification", f"{summary['space_amplification']:.2f}"))
    rows += [
        ("flushes / compactions / moves", f"{summary['flush_count']} / "
                                          f"{summary['compaction_count']} / "
                                          f"{summary['trivial_move_count']}"),
        ("bytes written per level", ", ".join(
            f"L{i} {format_bytes(b)}" for i, b in enumerate(summary["bytes_written_per_level"])
            if b)),
        ("final files per level", str(summary["final_lsm_state"])),
        ("max L0 files", str(summary["max_l0_files"])),
    ]
    if has("mean_cpu_util", "mean_device_util"):
        rows.append(("mean CPU / device utilisation", f"{100 * summary['mean_cpu_util']:.0f}% / "
                                                      f"{100 * summary['mean_device_util']:.0f}%"))
    width = max(len(label) for label, _ in rows)
    return "\n".join(f"{label:<{width}}  {value}" for label, value in rows)


def _present(summary: dict[str, Any], *keys: str) -> bool:
    """Every one of `keys` has a figure in `summary` (not None, not NaN)."""
    return all(summary.get(k) is not None and summary.get(k) == summary.get(k) for k in keys)


def _read_rows(summary: dict[str, Any]) -> list[tuple[str, str]]:
    """Summary rows of a workload with reads (none for a write-only one)."""
    if "read_throughput_ops_per_s" not in summary:
        return []
    rows = [("reads (gets + scans)",
             f"{format_figure(summary['read_throughput_ops_per_s'])} ops/s; all client ops "
             f"{format_figure(summary['client_ops_per_s'])} ops/s")]
    if _present(summary, "read_latency_p50_us", "read_latency_p99_us", "read_latency_p999_us"):
        # (none while the run has not reached its reads, e.g. still in its load)
        rows.append(("read latency p50 / p99 / p99.9",
                     f"{summary['read_latency_p50_us']:,.1f} / "
                     f"{summary['read_latency_p99_us']:,.1f} / "
                     f"{summary['read_latency_p999_us']:,.1f} us"))
    if _present(summary, "final_phase_ops_per_s"):
        # The run stage without its load, as YCSB reports a run's throughput.
        rows.append((f"last phase ({summary['final_phase']})",
                     f"{summary['final_phase_ops_per_s']:,.0f} client ops/s"))
    return rows
