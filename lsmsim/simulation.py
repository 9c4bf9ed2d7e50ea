"""`simulate()`: build a DB from names and options, run it under SimPy, return the result."""

from __future__ import annotations

import dataclasses
import math
import signal
import time
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import simpy

from lsmsim.db import DB
from lsmsim.event_log import collector_held_off
from lsmsim.keyspace import DEFAULT_BUCKETS, MAX_BUCKETS
from lsmsim.machine import MachineProfile, load_machine
from lsmsim.mechanisms import Mechanisms
from lsmsim.options import LsmOptions
from lsmsim.policy import Policy, PolicyError
from lsmsim.policy_failure import policy_failure
from lsmsim.result import SimulationResult
from lsmsim.stop_signals import StopSignals
from lsmsim.storage_device import StorageDevice
from lsmsim.summary import summarize
from lsmsim.workload import Workload, make_workload


# A timeseries row is held as Python objects until the run ends, about 3 KiB of them with
# every column (measured: 3.6 M rows took 11.7 GB); more rows than this is refused up front.
MAX_TIMESERIES_ROWS = 500_000
ROW_BYTES = 3 << 10
# The longest run accepted: a year of simulated time. A day takes about two minutes (a
# 3600 s nvme run ~4 s, the cost linear in the events), so a year is most of a day of
# wall time; longer is a typo (1e300), and would run on for ever.
MAX_DURATION_S = 366 * 86400
PROGRESS_TICKS = 200  # how often a run reports its simulated time to `on_progress`


class RunParameterError(ValueError):
    """A run parameter of `simulate` out of its range, named with its value."""


def simulate(workload: str | Workload = "fillrandom", *, device: str | StorageDevice = "nvme",
             machine: str | MachineProfile = "server", duration_s: float | None = 3600.0,
             options: LsmOptions | Mapping[str, Any] | None = None,
             policy: str | Policy = "rocksdb", interval_s: float = 1.0, seed: int = 0,
             key_buckets: int = DEFAULT_BUCKETS, without: Sequence[str] = (),
             on_timeseries: Callable[[dict[str, Any], dict[str, np.ndarray]], None] | None = None,
             on_progress: Callable[[float], None] | None = None,
             stop_on_signals: bool = False,
             **workload_fields: Any) -> SimulationResult:
    """Run one simulation. Names are resolved here: devices from `device_models`, machine
    profiles from `lsmsim/machine_profiles`, policies from `policies`.

    The run ends at `duration_s` or when the workload's `max_ops` puts are done or its last
    phase ends, whichever comes first (db_bench's --duration and --num); `duration_s=None`
    needs a workload that ends by itself.

    `without` names resource-model mechanisms to switch off (`lsmsim.mechanisms`), to show
    what each changes.

    `on_timeseries(config, timeseries)` is called as soon as the run's rows are complete,
    before the summary is computed: `lsmsim run` hands them to its plotting process there.

    `on_progress(simulated_s)` is called PROGRESS_TICKS times along a run of known
    duration (its progress bar); the ticks only read the clock, so the run is the same.

    A policy's mistake is one `PolicyError` naming the policy and the hook, control call or
    process: an answer out of range where the engine reads it, and any exception raised
    from the policy's code (`policy mypolicy: job_weights raised ValueError: oops`, the
    original chained as its cause). What the run should tell about the policy's answers
    (a cap that admits no writes) is listed in `config["warnings"]`."""
    if isinstance(workload, str):
        workload = make_workload(workload, **workload_fields)
    elif workload_fields:
        workload = dataclasses.replace(workload, **workload_fields)
    if duration_s is None and not workload.ends_by_itself:
        raise RunParameterError("duration_s=None needs a workload that ends by itself "
                                "(max_ops, or phases that all end)")
    check_run_parameters(duration_s, interval_s, seed, key_buckets)
    mechanisms = Mechanisms.without(without)
    if isinstance(device, str):
        from lsmsim.device_models import load_device
        device = load_device(device)
    if isinstance(machine, str):
        machine = load_machine(machine)
    if isinstance(policy, str):
        from lsmsim.policies import make_policy
        policy = make_policy(policy)
    if not isinstance(options, LsmOptions):
        options = LsmOptions.from_mapping(options or {})
    started = time.perf_counter()
    env = simpy.Environment()
    db: DB | None = None
    try:
        db = DB(env, options, machine, device, workload, policy, interval_s, key_buckets,
                rng=np.random.default_rng(seed), mechanisms=mechanisms)
        end = db.writes_done if duration_s is None else env.timeout(duration_s) | db.writes_done
        if on_progress is not None and duration_s is not None:
            env.process(_progress_ticks(env, duration_s, on_progress))
        # Ctrl-C asks the DB to stop between events, where the tree and accounts are whole.
        stop = StopSignals(lambda _signum: db.request_stop()) if stop_on_signals else None
        if stop is not None:  # ends env.run as `end` does, without wrapping it in a Condition
            db.stopped.callbacks.append(simpy.core.StopSimulation.callback)
        try:
            with collector_held_off():
                env.run(until=end)
        finally:
            if stop is not None:
                stop.restore()
        duration_s = env.now
        if on_progress is not None:
            on_progress(duration_s)
        db.finish(duration_s)
    except Exception as exc:
        named = policy_failure(policy, db.picker if db is not None else None, exc,
                               ENGINE_PROCESSES)
        if named is None:
            raise
        raise named[0] from named[1]
    wall_s = time.perf_counter() - started
    config = {
        "workload": dataclasses.asdict(workload),
        "device": device.name,
        "machine": dataclasses.asdict(machine),
        "policy": policy.describe(),
        "options": db.open_options.as_dict(),
        "final_options": db.options.as_dict(),
        "duration_s": duration_s,
        "interval_s": interval_s,
        "seed": seed,
        "key_buckets": key_buckets,
        "mechanisms_off": mechanisms.switched_off(),
    }
    if stop is not None and stop.signum:
        config["interrupted_by"] = signal.Signals(stop.signum).name
    if db.warnings:
        config["warnings"] = list(db.warnings)
    timeseries = {name: np.asarray(values) for name, values in db.recorder.columns.items()}
    if on_timeseries is not None:
        on_timeseries(config, timeseries)
    return SimulationResult(config=config, summary=summarize(db, duration_s),
                            timeseries=timeseries, events=db.events.events,
                            stall_episodes=[e.as_dict() for e in db.stalls.episodes],
                            wall_s=wall_s)


def _progress_ticks(env: simpy.Environment, duration_s: float,
                    on_progress: Callable[[float], None]):  # type: ignore[no-untyped-def]
    """Report the simulated time at each of PROGRESS_TICKS - 1 even steps along the run
    (`simulate` reports its end)."""
    for tick in range(1, PROGRESS_TICKS):
        yield env.timeout(max(duration_s * tick / PROGRESS_TICKS - env.now, 0.0))
        on_progress(env.now)


# The generators of the run's own processes; any other process is one the policy started.
ENGINE_PROCESSES = frozenset({DB._run.__code__, _progress_ticks.__code__})


def check_duration(duration_s: float | None) -> None:
    """Refuse a run length that is not a positive, finite number of seconds up to a year
    (None: the workload's own end). What a multi-run command checks once, before its cells."""
    if duration_s is not None and not (duration_s > 0 and math.isfinite(duration_s)):
        raise RunParameterError(f"duration_s must be a positive, finite number of seconds, "
                                f"got {duration_s!r}")
    if duration_s is not None and duration_s > MAX_DURATION_S:
        raise RunParameterError(f"duration_s must be at most {MAX_DURATION_S:,.0f} s (a year: "
                                f"a simulated day takes minutes), got {duration_s:.3g}")


def check_run_parameters(duration_s: float | None, interval_s: float, seed: int,
                          key_buckets: int) -> None:
    """Refuse what would run forever, divide by zero, fail deep in numpy's seeding, exhaust
    memory (too many buckets) or quietly mean something else (a key space of no buckets)."""
    check_duration(duration_s)
    if not (interval_s > 0 and math.isfinite(interval_s)):
        raise RunParameterError(f"interval_s must be a positive, finite number of seconds, "
                                f"got {interval_s!r}")
    if duration_s is not None and duration_s / interval_s > MAX_TIMESERIES_ROWS:
        rows = duration_s / interval_s
        counted, memory_GB = ((f"{rows:,.0f}", f"{rows * ROW_BYTES / 1e9:,.1f}") if rows < 1e12
                              else (f"{rows:.3g}", f"{rows * ROW_BYTES / 1e9:.3g}"))
        raise RunParameterError(
            f"interval_s={interval_s:.6g} over duration_s={duration_s:.6g} makes {counted} "
            f"timeseries rows (about {memory_GB} GB of memory); at most "
            f"{MAX_TIMESERIES_ROWS:,} are kept: use interval_s >= "
            f"{duration_s / MAX_TIMESERIES_ROWS:.3g}")
    for name, value, minimum in (("seed", seed, 0), ("key_buckets", key_buckets, 1)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
            raise RunParameterError(f"{name} must be an integer of at least {minimum}, "
                                    f"got {value!r}")
    if key_buckets > MAX_BUCKETS:
        raise RunParameterError(f"key_buckets must be at most {MAX_BUCKETS:,} (memory grows "
                                f"by ~300 B per bucket; see keyspace.MAX_BUCKETS), got "
                                f"{key_buckets:,}")
