"""Real runs as traces: the LOG parser, folder import, db_bench flags, live capture.

Unit tests read excerpts in tests/data (see its README); a few read whole real runs kept in
validation/traces (see the README of each folder there).
"""

from __future__ import annotations

import gzip
import csv
import json
import shutil
from datetime import datetime, timezone
from pathlib import Path

import pytest

from lsmsim.cli.main import main
from lsmsim.traces.db_bench import DbBenchError, setup_from_flags
from lsmsim.traces.run_setup import read_command_file, setup_from_trace_dir
from lsmsim.options import DB_BENCH_DEFAULTS, GIB, MIB
from lsmsim.traces.rocksdb_log import LogFormatError, RocksDBLog, parse_log
from lsmsim.stall_tracker import cause_name
from lsmsim.summary import summarize_trace
from lsmsim.trace import Trace
from lsmsim.traces.trace_capture import find_db_bench
from lsmsim.traces.trace_import import import_trace

DATA = Path(__file__).parent / "data"
LOCAL = DATA / "local2core_excerpt"
ADOC = DATA / "adoc_excerpt"
TRACES = Path(__file__).resolve().parents[1] / "validation" / "traces"


def _lines(path: Path) -> list[str]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as handle:  # type: ignore[operator]
        return handle.read().splitlines()


def _line_time(line: str) -> float:
    """Seconds since the epoch of a LOG line's timestamp."""
    stamp = datetime.strptime(line[:26], "%Y/%m/%d-%H:%M:%S.%f")
    return stamp.replace(tzinfo=timezone.utc).timestamp()


def assert_consistent_with_stats(log: RocksDBLog) -> int:
    """Every DUMPING STATS agrees with the events and stall lines logged before it: L0's
    Comp(cnt) counts flushes and intra-L0 compactions, Ln's the compactions into Ln, and
    Stalls(count) the stall lines of each cause. Returns how many dumps were checked."""
    checked = 0
    for dump in log.stats_dumps:
        before = [e for e in log.events if e["time_micros"] / 1e6 <= dump.at_s]
        into = {}
        for e in before:
            if e["event"] == "compaction_finished":
                into[e["output_level"]] = into.get(e["output_level"], 0) + 1
        flushes = sum(e["event"] == "flush_finished" for e in before)
        for name, row in dump.levels.items():
            if name.startswith("L"):
                level = int(name[1:])
                expected = into.get(level, 0) + (flushes if level == 0 else 0)
                assert row["Comp(cnt)"] == expected, (log.path, dump.at_s, name)
        lines: dict[str, int] = {}
        for line in log.stall_lines:
            if line.at_s <= dump.at_s:
                name = cause_name(line.condition, line.cause)
                lines[name] = lines.get(name, 0) + 1
        for name, count in dump.stall_counts.items():
            if not name.endswith("_with_compaction"):
                assert count == lines.get(name, 0), (log.path, dump.at_s, name)
        checked += 1
    return checked


# -- the LOG parser -----------------------------------------------------------------------------
def test_parses_rocksdb_7_8_3_excerpt():
    log = parse_log(LOCAL / "LOG_excerpt.gz")
    text = _lines(LOCAL / "LOG_excerpt.gz")
    assert log.version == "7.8.3"
    assert log.options["write_buffer_size"] == "16777216"
    assert len(log.events) == sum("EVENT_LOG_v1" in t for t in text)
    assert len(log.stall_lines) == sum("Stalling writes" in t or "Stopping writes" in t
                                       for t in text)
    assert {cause_name(s.condition, s.cause) for s in log.stall_lines} == {
        "level0_slowdown", "memtable_compaction"}
    assert all(s.rate_bps for s in log.stall_lines if s.condition.value == "delayed")
    assert log.skipped_lines == 0 and log.stats_dumps
    assert "L0" in log.stats_dumps[0].levels
    assert assert_consistent_with_stats(log) == len(log.stats_dumps)


def test_parses_rocksdb_6_11_gzipped_excerpt():
    log = parse_log(ADOC / "LOG_597.gz")
    assert log.version == "6.11.0"
    assert log.options["max_background_jobs"] == "1"
    assert log.stall_lines and log.events
    assert assert_consistent_with_stats(log) >= 1


@pytest.mark.parametrize("name", ["LOG-rocksdb-5.14-excerpt", "LOG-rocksdb-6.26.0",
                                  "LOG-rocksdb-8.0.0"])
def test_parses_samples_of_other_versions(name):
    log = parse_log(DATA / "samples" / name)
    assert log.version is not None and name.split("-")[2].startswith(log.version[:4])
    assert log.skipped_lines == 0


def test_parses_every_parser_sample():
    for path in sorted((DATA / "samples").iterdir()):
        log = parse_log(path)
        assert log.options or log.events or log.stats_dumps, path


def test_garbled_lines_are_skipped_counted_and_named(tmp_path):
    lines = _lines(LOCAL / "LOG_excerpt.gz")[:1200]
    event_at = next(i for i, t in enumerate(lines) if "EVENT_LOG_v1" in t)
    lines[event_at] = lines[event_at][:-40]                      # truncated JSON
    lines.insert(900, "2026/11/22-11:45")                        # truncated line
    lines.insert(1000, lines[0][:27] + "10554 [WARN] [default] Stalling writes because reasons")
    path = tmp_path / "LOG"
    path.write_text("\n".join(lines) + "\n")
    clean = parse_log(LOCAL / "LOG_excerpt.gz")
    log = parse_log(path)
    assert log.skipped_lines == 3
    assert [w.split(":")[1] for w in log.warnings] == [str(event_at + 1), "901", "1001"]
    assert all(str(path) in w for w in log.warnings)
    assert len(log.events) == sum(e["time_micros"] <= log.end_s * 1e6 for e in clean.events) - 1


def test_not_a_log_is_a_clear_error(tmp_path, capsys):
    path = tmp_path / "LOG"
    path.write_text("secs_elapsed,interval_qps\n1,100\n" * 20)
    with pytest.raises(LogFormatError, match="not a RocksDB LOG"):
        parse_log(path)
    folder = tmp_path / "run"
    folder.mkdir()
    shutil.copy(path, folder / "LOG")
    assert main(["trace", "import", str(folder)]) == 2
    assert "not a RocksDB LOG" in capsys.readouterr().err
    bad_gz = tmp_path / "LOG_1.gz"
    bad_gz.write_text("not gzip")
    with pytest.raises(LogFormatError, match="cannot read"):
        parse_log(bad_gz)


# -- import ----------------------------------------------------------------------------------
def test_imported_and_simulated_runs_share_the_trace_type(small_run):
    real = import_trace(LOCAL)
    assert isinstance(real, Trace) and isinstance(small_run, Trace)
    shared_keys = set(summarize_trace({}, [], [], 1.0, 1))
    assert shared_keys <= set(real.summary) and shared_keys <= set(small_run.summary)
    # The simulator's summary comes from the same function over its own trace.
    again = summarize_trace(small_run.timeseries, small_run.events, small_run.stall_episodes,
                            small_run.summary["duration_s"],
                            small_run.summary["user_bytes"] / small_run.summary["ops"])
    for key in ("throughput_ops_per_s", "write_amplification", "flush_count",
                "compaction_count", "stall_time_s", "stall_count_by_cause"):
        assert again[key] == pytest.approx(small_run.summary[key]), key
    assert {j.kind for j in real.jobs()} == {"flush", "compaction"}


def test_import_local_excerpt_end_to_end(tmp_path, capsys):
    assert main(["trace", "import", str(LOCAL), "--out", str(tmp_path), "--no-plot"]) == 0
    printed = capsys.readouterr().out
    assert "RocksDB 7.8.3" in printed and "throughput" in printed
    summary = json.loads((tmp_path / "summary.json").read_text())["summary"]
    report = _lines(LOCAL / "report.csv")[1:]
    assert summary["ops"] == sum(float(r.split(",")[1]) for r in report)
    assert summary["duration_s"] == float(report[-1].split(",")[0])
    text = _lines(LOCAL / "LOG_excerpt.gz")
    start = _line_time(text[0])
    flushed = sum("Level-0 flush table" in t and "bytes OK" in t
                  and _line_time(t) - start <= summary["duration_s"] for t in text)
    assert summary["flush_count"] == flushed  # the LOG's flushes within report.csv's rows
    stalls = [json.loads(line) for line in (tmp_path / "stalls.jsonl").read_text().splitlines()]
    assert {s["cause"] for s in stalls} == {"level0_slowdown", "memtable_compaction"}
    assert summary["stall_time_s"] == pytest.approx(
        sum(min(s["end_s"], summary["duration_s"]) - s["start_s"] for s in stalls))
    for name in ("timeseries.csv", "events.jsonl"):
        assert (tmp_path / name).stat().st_size > 0


def test_stall_episodes_cover_every_stall_line():
    trace = import_trace(LOCAL)
    log = parse_log(LOCAL / "LOG_excerpt.gz")
    for line in (s for s in log.stall_lines if s.at_s <= trace.summary["duration_s"]):
        name = cause_name(line.condition, line.cause)
        assert any(e["cause"] == name and e["start_s"] <= line.at_s <= e["end_s"]
                   for e in trace.stall_episodes), line


def test_import_adoc_excerpt_reads_options_from_the_log():
    trace = import_trace(ADOC)
    assert trace.config["options"]["max_background_jobs"] == 1
    assert trace.config["options"]["delayed_write_rate"] == 8 * MIB
    assert trace.config["workload"]["value_size"] == 1000
    assert trace.config["workload"]["write_rate_limit_bps"] == 30_000_000
    assert trace.summary["stall_count_by_cause"]["level0_slowdown"] >= 1
    # RocksDB 6.11 had no level_compaction_dynamic_file_size (7.8+): off for its runs.
    assert trace.config["options"]["level_compaction_dynamic_file_size"] is False


def test_a_logged_run_that_did_not_do_its_num_puts_was_ended_by_time(tmp_path):
    """ADOC's runs were ended by db_bench --duration (they did more or fewer puts than
    --num): their simulation has no op limit; a run that did its --num puts keeps it."""
    assert setup_from_trace_dir(ADOC).workload.max_ops == 0
    folder = tmp_path / "run"
    shutil.copytree(ADOC, folder)
    done = round(sum(float(line.split(",")[1]) for line in
                     (folder / "report.csv_0_597").read_text().splitlines()[1:]))
    stdout = folder / "stdout.txt_597"
    stdout.write_text(stdout.read_text().replace("Entries:    48318382", f"Entries:    {done}"))
    assert setup_from_trace_dir(folder).workload.max_ops == done


def test_import_full_local_2core_run_matches_its_own_stats():
    folder = TRACES / "local-2core-jobs" / "j2_wb16_r2"
    trace = import_trace(folder)
    log = parse_log(folder / "LOG.gz")
    assert assert_consistent_with_stats(log) >= 1
    text = _lines(folder / "LOG.gz")
    assert trace.summary["flush_count"] == sum("flush table" in t and "bytes OK" in t
                                               for t in text)
    lines = sum("Stalling writes" in t or "Stopping writes" in t for t in text)
    assert sum(trace.summary["rocksdb_stall_counters"].values()) == lines
    assert trace.summary["stall_time_s"] > 0
    assert setup_from_trace_dir(folder).duration_s == 50.0  # command.txt: "stopped after 50 s wall time"


def test_import_full_gzipped_adoc_run():
    folder = TRACES / "adoc-server-600s" / "30000000" / "StorageMaterial.SATASSD" / "1CPU" / "64MB"
    trace = import_trace(folder)
    log = parse_log(next(folder.glob("LOG_*.gz")))
    assert assert_consistent_with_stats(log) == len(log.stats_dumps) >= 2
    assert trace.summary["rocksdb_version"].startswith("6.11")
    assert trace.summary["duration_s"] > 500


# -- db_bench flags ----------------------------------------------------------------------------
def test_db_bench_flags_map_to_options_and_workload():
    setup = setup_from_flags(["--benchmarks=fillrandom", "--num=5000", "--threads", "2",
                              "--value_size=1000", "--write_buffer_size=16777216",
                              "--max_background_jobs=4", "--compression_type=none",
                              "--rate_limiter_bytes_per_sec=41943040", "--nodisable_wal"])
    assert setup.workload.max_ops == 2 * 5000 and setup.workload.num_keys == 5000
    assert setup.workload.threads == 2 and setup.workload.key_size == 16
    assert setup.options.write_buffer_size == 16 * MIB
    assert setup.options.max_background_jobs == 4
    assert setup.options.rate_limiter_bytes_per_sec == 40 * MIB
    assert setup.options.delayed_write_rate == DB_BENCH_DEFAULTS["delayed_write_rate"]
    assert setup.options.hard_pending_compaction_bytes_limit == 128 * GIB
    assert setup.duration_s is None and setup.unmodelled == ()
    default = setup_from_flags(["--benchmarks=fillseq"])
    assert default.workload.value_size == 100 and default.workload.max_ops == 1_000_000
    # db_bench's own default codec, simulated (`lsmsim.block_compression`); an unmeasured
    # one is named as not modelled and run uncompressed.
    assert default.options.compression == "snappy" and default.workload.compression_ratio == 0.5
    zlib = setup_from_flags(["--benchmarks=fillseq", "--compression_type=zlib"])
    assert zlib.options.compression == "none"
    assert any("compression_type=zlib" in f for f in zlib.unmodelled)


def test_db_bench_unknown_flag_is_an_error_with_did_you_mean(capsys):
    with pytest.raises(DbBenchError, match="Did you mean --write_buffer_size"):
        setup_from_flags(["--benchmarks=fillrandom", "--write_bufer_size=64"])
    assert main(["db_bench", "--benchmarks=fillrandom", "--max_backgroud_jobs=2"]) == 2
    assert "max_background_jobs" in capsys.readouterr().err
    with pytest.raises(DbBenchError, match="one write benchmark"):
        setup_from_flags(["--benchmarks=readrandom"])


def test_db_bench_reporting_meta_operations_beside_the_write_change_nothing():
    """`--benchmarks=fillrandom,stats` (the wiki's first example) runs fillrandom; meta
    operations that change the DB (compact, flush, waitforcompaction) are refused, as is
    a list with only reporting ones."""
    plain = setup_from_flags(["--benchmarks=fillrandom", "--num=5000"])
    reported = setup_from_flags(["--benchmarks=stats,fillrandom,levelstats,sstables",
                                 "--num=5000"])
    assert reported.workload == plain.workload and reported.options == plain.options
    for benchmarks in ("fillrandom,compact", "fillrandom,waitforcompaction", "stats",
                       "fillrandom,fillseq"):
        with pytest.raises(DbBenchError, match="one write benchmark"):
            setup_from_flags([f"--benchmarks={benchmarks}"])


def test_db_bench_unmodelled_flag_is_listed_in_a_warning(capsys):
    argv = ["db_bench", "--benchmarks=fillrandom", "--num=20000", "--compression_type=none",
            "--write_buffer_size=1048576", "--mmap_read=true", "--open_files=500",
            "--report_interval_seconds=1", "--machine", "local-2core", "--device", "nvme"]
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert "not modelled" in captured.err and "mmap_read" in captured.err
    assert "open_files" in captured.err and "report_interval" not in captured.err
    assert "after 20,000 puts" in captured.out


def test_command_file_gives_the_real_run_duration():
    argv, stopped_s = read_command_file(LOCAL / "command.txt")
    text = (LOCAL / "command.txt").read_text()
    assert stopped_s is not None and f"stopped after {stopped_s:.0f} s" in text
    setup = setup_from_trace_dir(LOCAL)
    assert setup.duration_s == stopped_s
    assert setup.options.write_buffer_size == 16 * MIB and setup.seed == 42
    result = setup_from_flags(argv, duration_s=2.0).simulate(machine="local-2core")
    assert result.summary["duration_s"] == pytest.approx(2.0)


# -- live capture with the real db_bench -------------------------------------------------------
def _db_bench_available() -> bool:
    try:
        find_db_bench()
        return True
    except Exception:
        return False


@pytest.mark.skipif(not _db_bench_available(),
                    reason="db_bench not installed (apt-get install rocksdb-tools)")
def test_live_capture_then_import(tmp_path, capsys):
    out = tmp_path / "run"
    code = main(["trace", "capture", "--out", str(out), "--seconds", "8", "--",
                 "--benchmarks=fillrandom", "--num=100000000", "--value_size=1000",
                 "--compression_type=none", "--write_buffer_size=4194304",
                 "--max_bytes_for_level_base=16777216", "--target_file_size_base=4194304",
                 "--seed=1"])
    assert code == 0, capsys.readouterr().err
    for name in ("report.csv", "LOG", "command.txt", "machine.json", "stdout.txt",
                 "threads.csv"):
        assert (out / name).is_file(), name
    assert list(out.glob("OPTIONS-*")) and not (out / "db").exists()
    # Each thread's scheduler statistics every second: db_bench's own threads and RocksDB's
    # flush (rocksdb:high) and compaction (rocksdb:low) pools, counters that never fall.
    with open(out / "threads.csv") as handle:
        samples = list(csv.DictReader(handle))
    assert {"db_bench", "rocksdb:high", "rocksdb:low"} <= {row["comm"] for row in samples}
    assert len({row["at_s"] for row in samples}) >= 7
    by_thread: dict[str, list[int]] = {}
    for row in samples:
        by_thread.setdefault(row["tid"], []).append(int(row["run_ns"]))
    assert all(runs == sorted(runs) for runs in by_thread.values())
    assert max(runs[-1] for runs in by_thread.values()) > 1e9  # the writer ran for seconds
    machine = json.loads((out / "machine.json").read_text())
    assert machine["cores"] >= 1 and machine["db_bench_rocksdb_version"]
    trace = import_trace(out)
    assert trace.summary["ops"] > 0 and trace.summary["flush_count"] > 0
    assert trace.summary["rocksdb_version"] == machine["db_bench_rocksdb_version"]
    setup = setup_from_trace_dir(out)
    assert setup.options.write_buffer_size == 4 * MIB
    assert setup.duration_s is not None and 7 <= setup.duration_s <= 30


def test_capture_without_db_bench_says_how_to_install(tmp_path, capsys):
    from lsmsim.traces.trace_capture import CaptureError, capture
    with pytest.raises(CaptureError, match="apt-get install rocksdb-tools"):
        capture(tmp_path, ["--benchmarks=fillrandom"], seconds=1, db_bench="no-such-db-bench")
    with pytest.raises(CaptureError, match="sets --db"):
        capture(tmp_path, ["--benchmarks=fillrandom", f"--db={tmp_path}"], seconds=1)


def test_capture_refuses_values_import_would_refuse(tmp_path):
    """`trace capture -- --num=-5` ran db_bench, and `trace import` then refused the run."""
    from lsmsim.traces.db_bench import DbBenchError
    from lsmsim.traces.trace_capture import capture
    with pytest.raises(DbBenchError, match="--num must be an integer"):
        capture(tmp_path / "run", ["--benchmarks=fillrandom", "--num=-5"], seconds=1,
                db_bench="no-such-db-bench")
    assert not (tmp_path / "run").exists()


def test_db_bench_bloom_bits_and_cache_size_set_the_read_path_options():
    """db_bench's --bloom_bits (NewBloomFilterPolicy; its default -1 is no filter) and
    --cache_size (the LRU block cache) are the options bloom_bits_per_key and
    block_cache_size, not unmodelled flags."""
    setup = setup_from_flags(["--benchmarks=fillrandom", "--bloom_bits=10",
                              "--cache_size=1073741824"])
    assert (setup.options.bloom_bits_per_key, setup.options.block_cache_size) == (10, 1 << 30)
    assert setup.unmodelled == ()
    assert setup_from_flags(["--benchmarks=fillrandom", "--bloom_bits=-1"]
                            ).options.bloom_bits_per_key == 0
