"""Fuzzing the inputs a user writes (issue 18): scenario files, `lsmsim run`'s flags, `--set`
option values, policy specs, device and machine profiles. Whatever they hold, `lsmsim run`
either prints a result with no NaN or infinity in it, or stops with the project's one-line
user error (exit 2): never another exception, a traceback or a hang.

Runs are tiny (1-2 simulated seconds, 2,000 keys, 16 buckets, 4 MB memtables) so each
example takes a fraction of a second. `LSMSIM_FUZZ_EXAMPLES=3000 python -m pytest
tests/test_fuzz_inputs.py` runs longer (the default is 40 examples per test).
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import math
import os
import re
import signal
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from lsmsim.cli.main import main
from lsmsim.machine import COST_FIELDS, KERNEL_FIELDS
from lsmsim.options import LsmOptions
from lsmsim.policy import Param, Policy
from lsmsim.policies import _REGISTRY, policy_names

EXAMPLES = int(os.environ.get("LSMSIM_FUZZ_EXAMPLES", "40"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize="LSMSIM_FUZZ_EXAMPLES" not in
                os.environ, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                   HealthCheck.too_slow])
HANG_S = 30  # one tiny run takes well under a second; this long is a hang
TINY = ["--duration", "1.5", "--num", "2000", "--buckets", "16", "--no-plot",
        "--set", "write_buffer_size=4MB", "--set", "max_bytes_for_level_base=16MB",
        "--set", "target_file_size_base=4MB"]
NOT_A_NUMBER = re.compile(r"\b(nan|inf|infinity)\b", re.IGNORECASE)


class Hang(Exception):
    """A run that took more than HANG_S of wall time."""


def run_cli(argv: list[str]) -> tuple[int, str, str]:
    """`lsmsim argv` in this process: (status, stdout, stderr), with an alarm for hangs.
    An exception other than the user errors (which `main` prints as one line) propagates
    and fails the test."""
    def alarm(signum, frame):  # type: ignore[no-untyped-def]
        raise Hang(f"lsmsim {' '.join(argv)} ran for more than {HANG_S} s")

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(HANG_S)
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                status = main(argv)
            except SystemExit as exc:   # argparse refused a flag
                status = exc.code if isinstance(exc.code, int) else 1
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    return status, out.getvalue(), err.getvalue()


def assert_result_or_one_line_error(argv: list[str]) -> str:
    """Run `lsmsim argv` and check its outcome; returns which it was, for the statistics."""
    status, out, err = run_cli(argv)
    if status == 0:
        figures = out.split("\n", 1)[1]   # after the names of workload, device and policy
        assert not NOT_A_NUMBER.search(figures), f"lsmsim {argv}: a figure is not a number:\n{out}"
        assert "Traceback" not in err
        return "a result"
    assert status == 2, f"lsmsim {argv}: exit {status}\n{err}"
    lines = err.splitlines()
    assert len(lines) == 1, err
    # lsmsim's own errors, or argparse's about a flag (`lsmsim run: error: argument --seed: ...`)
    assert lines[0].startswith("lsmsim: error: ") or (
        lines[0].startswith("lsmsim ") and ": error: argument " in lines[0]), err
    return "a user error: " + re.sub(r"\S*\.toml", "F", lines[-1])[:60]


# -- values a user might type: mostly plausible ones, sometimes anything ------------------
SPECIAL_TEXT = ["nan", "NaN", "inf", "-inf", "1e400", "-1e400", "1e-400", "0", "-0", "-1",
                "0.5", "1.5", "2", "64MB", "1.5GiB", "12XB", "true", "false", "",
                str(2 ** 31), str(2 ** 63), str(2 ** 64), str(2 ** 64 - 1), "9" * 400,
                "1" * 5000, "0x10", "1_000", " 7 ", "\x00", "é"]
numbers = st.one_of(st.integers(-2 ** 70, 2 ** 70), st.floats(allow_nan=True, allow_infinity=True),
                    st.sampled_from([0, 1, 2, 4, 1e-300, 1e300, 1e9, 2 ** 64, -1]))
# Text as a command line or a TOML file holds it: Unicode scalar values (no lone surrogates).
toml_strings = st.text(st.characters(exclude_categories=("Cs",)), max_size=10)
anything_text = st.one_of(st.sampled_from(SPECIAL_TEXT), numbers.map(str), toml_strings)
# TOML holds 64-bit integers.
toml_scalars = st.one_of(st.integers(-2 ** 63, 2 ** 63 - 1),
                         st.floats(allow_nan=True, allow_infinity=True),
                         st.sampled_from([0, 1, 1e-300, 1e300, -1, 2 ** 63 - 1]), st.booleans(),
                         toml_strings, st.sampled_from(SPECIAL_TEXT))
anything_toml = st.one_of(toml_scalars, st.lists(
    st.one_of(st.lists(toml_scalars, max_size=3), toml_scalars), max_size=4))


def mostly(good: st.SearchStrategy, anything: st.SearchStrategy) -> st.SearchStrategy:
    """A plausible value nine times in ten, else anything. (Not `one_of`: Hypothesis does
    not repeat an example, so once a small plausible space is used up it would draw
    almost only from the large `anything`.)"""
    return st.integers(0, 9).flatmap(lambda tenth: anything if tenth == 0 else good)


SIZES = st.sampled_from(["64KB", "1MB", "4MB", "16MB", "64MB", "1GB", 65536, 4 << 20])
BY_KIND = {"size": SIZES, "rate": st.sampled_from([0, "1MB", "16MB", "1GB"]),
           "int": st.integers(1, 40), "float": st.floats(0, 20), "bool": st.booleans(),
           "codec": st.sampled_from(["none", "snappy", "lz4", "zstd", "Snappy", "zlib"]),
           "codec_list": st.sampled_from(["", "none:lz4", "none,none,zstd", "kLZ4Compression",
                                          "lz4::zstd", "none:zlib"]),
           "bottommost_codec": st.sampled_from(["disable", "zstd", "kZSTD", "Disabled",
                                                "lz4hc"])}


def option_value(name: str) -> st.SearchStrategy:
    """A plausible value of a RocksDB option, by its declared kind."""
    field = next(f for f in dataclasses.fields(LsmOptions) if f.name == name)
    return BY_KIND[field.metadata["kind"]]


def param_value(param: Param) -> st.SearchStrategy:
    """A plausible value of a policy parameter, by its kind."""
    if param.kind == "choice":
        return st.sampled_from(param.choices)
    if param.kind == "float":
        return st.one_of(st.floats(0, 3), st.sampled_from([0.001, 0.5, 1.0, 10.0]))
    return BY_KIND[param.kind]


# -- RocksDB options via --set ----------------------------------------------------------------
@st.composite
def option_settings(draw) -> tuple[str, str]:
    name = draw(mostly(st.sampled_from(LsmOptions.names()), toml_strings))
    good = option_value(name).map(str) if name in LsmOptions.names() else anything_text
    return name, draw(mostly(good, anything_text))


@FUZZ
@given(st.lists(option_settings(), min_size=1, max_size=3))
def test_option_values(pairs):
    sets = [arg for name, value in pairs for arg in ("--set", f"{name}={value}")]
    event(assert_result_or_one_line_error(["run", "fillrandom", *TINY, *sets]))


# -- lsmsim run's own flags ------------------------------------------------------------------
# Plausible values keep the run tiny. Any text goes to every flag but --duration and
# --interval, which take only the special texts: a number such as 4e5 there is a long run
# (or 150,000 rows), not a bug.
_SPECIAL = st.sampled_from(SPECIAL_TEXT)
RUN_FLAGS = {
    "--duration": (st.sampled_from(["0.5", "1.5", "3"]), _SPECIAL),
    "--interval": (st.sampled_from(["0.1", "1", "7"]), _SPECIAL),
    "--threads": (st.sampled_from(["1", "4", "64"]), anything_text),
    "--key-size": (st.sampled_from(["8", "16", "1000"]), anything_text),
    "--value-size": (st.sampled_from(["0", "100", "4096"]), anything_text),
    "--record-count": (st.sampled_from(["0", "500", "2000"]), anything_text),
    "--readwritepercent": (st.sampled_from(["0", "50", "90"]), anything_text),
    "--write-rate-limit": (st.sampled_from(["0", "1MB/s", "16MB"]), anything_text),
    "--open-loop-ops": (st.sampled_from(["1000", "1e6"]), anything_text),
    "--seed": (st.sampled_from(["0", "7"]), anything_text),
    "--key-distribution": (st.sampled_from(["uniform", "zipfian", "sequential", "unique",
                                            "latest"]), anything_text),
    "--device": (st.sampled_from(["nvme", "hdd", "pm"]), anything_text),
    "--machine": (st.sampled_from(["server", "local-2core"]), anything_text),
}


@st.composite
def run_flags(draw) -> list[str]:
    names = draw(st.lists(st.sampled_from(sorted(RUN_FLAGS)), min_size=1, max_size=4,
                          unique=True))
    return [arg for name in names for arg in (name, draw(mostly(*RUN_FLAGS[name])))]


@FUZZ
@given(run_flags(), st.sampled_from(["fillrandom", "readrandomwriterandom"]))
def test_run_flags(flags, workload):
    """TINY's --duration is overridden by a drawn one (argparse keeps the last)."""
    event(assert_result_or_one_line_error(["run", workload, *TINY, *flags]))


# -- policy specs -------------------------------------------------------------------------------
@st.composite
def policy_specs(draw) -> str:
    name = draw(mostly(st.sampled_from(policy_names()), toml_strings))
    factory = _REGISTRY.get(name)
    known = factory.parameters if isinstance(factory, type) and issubclass(factory, Policy) else {}
    params = []
    for _ in range(draw(st.integers(0, 3))):
        key = draw(mostly(st.sampled_from(sorted(known)), toml_strings) if known
                   else toml_strings)
        good = param_value(known[key]).map(str) if key in known else anything_text
        params.append((key, draw(mostly(good, anything_text))))
    if not params:
        return name
    return name + ":" + ",".join(f"{key}={value}" for key, value in params)


@FUZZ
@given(policy_specs(), st.sampled_from(["fillrandom", "ycsb_a"]))
def test_policy_specs(spec, workload):
    event(assert_result_or_one_line_error(["run", workload, *TINY, "--policy", spec]))


# -- TOML files: scenarios, devices, machines -------------------------------------------------
def toml_value(value: object) -> str:
    """`value` as TOML, including the nan and inf TOML allows."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, int):
        return str(value)
    return toml_string(str(value))


def toml_string(text: str) -> str:
    """A TOML basic string: control characters escaped, the rest as is (JSON's escapes of
    characters beyond the BMP are surrogate pairs, which TOML refuses)."""
    escaped = "".join(f"\\u{ord(c):04x}" if ord(c) < 0x20 or ord(c) == 0x7f or c in '"\\'
                      else c for c in text)
    return f'"{escaped}"'


def toml_text(top: dict[str, object], tables: dict[str, dict[str, object]]) -> str:
    lines = [f"{toml_string(key)} = {toml_value(value)}" for key, value in top.items()]
    for table, fields in tables.items():
        lines.append(f"[{table}]")
        lines += [f"{toml_string(key)} = {toml_value(value)}" for key, value in fields.items()]
    return "\n".join(lines) + "\n"


@st.composite
def some_fields(draw, fields: dict[str, st.SearchStrategy]) -> dict[str, object]:
    """Every field with a plausible value, except one time in two up to two fields with
    any value; one time in five some fields left out, one time in ten a field that does
    not exist."""
    chosen = {key: draw(good) for key, good in fields.items()}
    if draw(st.booleans()):
        for key in draw(st.lists(st.sampled_from(sorted(fields)), min_size=1, max_size=2)):
            chosen[key] = draw(anything_toml)
    if draw(st.integers(0, 4)) == 0:
        for key in draw(st.lists(st.sampled_from(sorted(fields)), max_size=3)):
            chosen.pop(key, None)
    if draw(st.integers(0, 9)) == 0:
        chosen[draw(toml_strings.filter(bool))] = draw(anything_toml)
    return chosen


def write(tmp_path: Path, name: str, text: str | bytes) -> str:
    path = tmp_path / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass"))
    return str(path)


SCALING = st.lists(st.integers(1, 64), min_size=1, max_size=4, unique=True).flatmap(
    lambda streams: st.tuples(*[st.tuples(st.just(n), st.floats(0.01, 2))
                                for n in sorted(streams)]))
DEVICE_FIELDS = {
    "description": st.just("fuzzed"), "source": toml_strings, "name": st.just("fuzz"),
    "read_MBps": st.floats(1, 5000), "write_MBps": st.floats(1, 5000),
    "read_latency_us": st.floats(0, 1e4), "write_latency_us": st.floats(0, 1e4),
    "mixed_efficiency": st.floats(0.01, 1), "random_read_kiops": st.floats(0, 1e3),
    "read_scaling": SCALING, "write_scaling": SCALING, "program_latency_us": st.floats(0, 2e3),
}
MACHINE_FIELDS = {
    "description": st.just("fuzzed"), "cores": st.integers(1, 64),
    **{name: st.floats(0, 1e4) for name in COST_FIELDS}, "page_cache_GiB": st.floats(0, 64),
    # Linux and scheduler figures, each within its own plausible range.
    "dirty_background_ratio": st.floats(0, 100), "dirty_expire_centisecs": st.integers(0, 10**4),
    "wakeup_wait_us": st.floats(0, 1e4), "wakeups_per_output_file": st.floats(0, 100),
    "wakeups_per_dirty_mib": st.floats(0, 10), "core_sharing_slope": st.floats(0, 10),
    "run_queue_idle_share": st.floats(0, 0.9), "timer_slack_us": st.floats(0, 1e3),
    "memtable_cache_MiB": st.floats(0, 1e3), "memtable_update_seek_share": st.floats(0, 10),
    "writer_cpu_ratio": st.floats(0.1, 10),
    "other_work_cores": st.floats(0, 0.9),  # below the fewest cores drawn
}
assert set(KERNEL_FIELDS) <= set(MACHINE_FIELDS), "a machine field the fuzz test never tries"


def run_with_profile(tmp_path: Path, flag: str, fields: dict[str, object] | bytes) -> None:
    """A ycsb_a run (puts and gets) on the profile file holding `fields` (or bytes)."""
    text = fields if isinstance(fields, bytes) else toml_text(fields, {})
    profile = write(tmp_path, "profile.toml", text)
    event(assert_result_or_one_line_error(["run", "ycsb_a", *TINY, flag, profile]))


@FUZZ
@given(st.one_of(some_fields(DEVICE_FIELDS), st.binary(max_size=40)))
def test_device_profiles(tmp_path, fields):
    run_with_profile(tmp_path, "--device", fields)


@FUZZ
@given(st.one_of(some_fields(MACHINE_FIELDS), st.binary(max_size=40)))
def test_machine_profiles(tmp_path, fields):
    run_with_profile(tmp_path, "--machine", fields)


WORKLOADS = ["fillrandom", "fillseq", "ycsb_a", "ycsb_d", "ycsb_e", "readwhilewriting",
             "write_bursts", "dopa_shift_up", "cruisedb_a"]
WORKLOAD_FIELDS = {
    "name": st.sampled_from(WORKLOADS),
    "key_distribution": st.sampled_from(["uniform", "zipfian", "latest", "unique"]),
    "zipf_theta": st.floats(0, 1.5), "key_size": st.integers(0, 64),
    "value_size": st.integers(-1, 4096), "threads": st.integers(0, 64),
    "max_ops": st.integers(-1, 10 ** 6), "record_count": st.integers(-1, 2000),
    "repeat_from_phase": st.integers(-2, 2), "readwritepercent": st.integers(-1, 101),
    "write_rate_limit": st.sampled_from(["30MB/s", "1KB/s", "0", "fast", 5e6]),
}
TOP_FIELDS = {
    "duration_s": st.floats(0, 2), "interval_s": st.floats(0, 2),
    "seed": st.integers(0, 2 ** 63 - 1),
    "key_buckets": st.integers(1, 64), "device": st.sampled_from(["nvme", "hdd", "floppy"]),
    "machine": st.sampled_from(["server", "local-2core"]), "policy": policy_specs(),
    "db_bench_defaults": st.booleans(), "description": toml_strings,
}


@st.composite
def few_fields(draw, fields: dict[str, st.SearchStrategy], always: tuple[str, ...] = ()):
    """The `always` fields and up to three others, mostly plausible values."""
    names = [*always, *draw(st.lists(st.sampled_from(sorted(set(fields) - set(always))),
                                     max_size=3, unique=True))]
    return {name: draw(mostly(fields[name], anything_toml)) for name in names}


OPTION_FIELDS = {name: option_value(name) for name in LsmOptions.names()}


@FUZZ
@given(st.one_of(st.tuples(few_fields(TOP_FIELDS), few_fields(WORKLOAD_FIELDS, ("name",)),
                           few_fields(OPTION_FIELDS)),
                 st.binary(max_size=60)))
def test_scenario_files(tmp_path, drawn):
    if isinstance(drawn, bytes):
        text: str | bytes = drawn
    else:
        top, workload, options = drawn
        text = toml_text(top, {"workload": workload, "options": options})
    scenario = write(tmp_path, "scenario.toml", text)
    # The file's duration is checked on loading, then --duration keeps the run tiny.
    event(assert_result_or_one_line_error(["run", scenario, *TINY]))


def test_the_guard_itself_catches_a_traceback_and_a_nan(monkeypatch):
    """The fuzz tests can fail: an unexpected exception propagates, and a NaN in the
    printed summary is caught."""
    import lsmsim.cli.main as cli

    monkeypatch.setattr(cli, "format_summary",
                        lambda summary, config: "a / b / c\nput throughput nan")
    with pytest.raises(AssertionError, match="not a number"):
        assert_result_or_one_line_error(["run", "fillrandom", *TINY])
    monkeypatch.setattr(cli, "_run", lambda args: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        assert_result_or_one_line_error(["run", "fillrandom", *TINY])
