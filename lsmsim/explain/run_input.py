"""What `lsmsim explain` and `lsmsim replay` accept as a run, read into one `Trace`.

A folder written by `lsmsim run --out` or `lsmsim trace import --out` (timeseries.csv,
events.jsonl, stalls.jsonl, summary.json) is read back; a real RocksDB run folder (a LOG
with report.csv, OPTIONS-*, ...) or a lone LOG file is imported (`lsmsim.traces.trace_import`);
a scenario .toml file is simulated first, as `lsmsim run FILE` would.
"""

from __future__ import annotations

from pathlib import Path

from lsmsim.trace import Trace, TraceReadError

WRITTEN_FILES = ("timeseries.csv", "events.jsonl", "stalls.jsonl", "summary.json")


class RunInputError(ValueError):
    """A path that is neither a written run folder, a real run folder nor a scenario file."""


def load_run(path: str | Path) -> Trace:
    """The run at `path`, whichever of the three forms it takes."""
    path = Path(path)
    if path.suffix == ".toml":
        return _simulate_scenario(path)
    if path.is_dir():
        present = [name for name in WRITTEN_FILES if (path / name).is_file()]
        if len(present) == len(WRITTEN_FILES):
            try:
                return Trace.read(path)
            except TraceReadError as exc:
                raise RunInputError(str(exc)) from None
        if present:
            missing = sorted(set(WRITTEN_FILES) - set(present))
            raise RunInputError(f"{path}: run folder lacks {', '.join(missing)} "
                                "(write it again with lsmsim run --out)")
    if not path.exists():
        raise RunInputError(f"{path}: no such run folder, LOG file or scenario file")
    from lsmsim.traces.trace_import import import_trace
    return import_trace(path)


def _simulate_scenario(path: Path) -> Trace:
    """`lsmsim run FILE` without flags: the file's workload, device, options and duration."""
    from lsmsim.keyspace import DEFAULT_BUCKETS
    from lsmsim.scenario import load_scenario
    from lsmsim.simulation import simulate

    scenario = load_scenario(path)
    return simulate(scenario.make_workload(), device=scenario.device, machine=scenario.machine,
                    duration_s=scenario.duration_s, options=scenario.lsm_options(),
                    policy=scenario.policy, interval_s=scenario.interval_s, seed=scenario.seed,
                    key_buckets=scenario.key_buckets or DEFAULT_BUCKETS)
