"""Where a sweep's independent jobs run: the local process pool (`lsmsim.sweeps.worker_pool`, all
cores by default) or a Dask cluster (`--dask local` starts a `LocalCluster` on this
machine, `--dask tcp://host:8786` joins a running scheduler), with the result cache in
front and a progress line beside. `sweep`, `compare` and `reproduce` all run here.

Jobs whose result the cache holds are not run; the others go to the executor, and each
result is stored as it comes back, so an interrupted sweep keeps what finished. Results
come back in job order, whatever ran them and in whatever order they finished: every job
is an independent, seeded simulation, so the table does not depend on the executor.

On Dask, jobs are submitted with `Client.map` and collected with `as_completed`; a job
whose worker died, or that raised, is a `JobFailed` (a failure is data). Ctrl-C or SIGTERM
cancels what is queued, closes the client and, for a `LocalCluster`, stops its worker
processes (started with SIGINT ignored, so the terminal's Ctrl-C reaches only this
process, which decides), then raises `worker_pool.Interrupted` with what finished, as the
pool does. A remote cluster's workers must run the same model: their model fingerprint
is checked against this process's before any job is sent.
"""

from __future__ import annotations

import logging
import os
import signal
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from lsmsim.sweeps.progress import Progress
from lsmsim.sweeps.result_cache import ResultCache
from lsmsim.sweeps.worker_pool import (STOP_SIGNALS, Interrupted, JobFailed, Stop, StopSignals,
                                run_jobs as run_on_pool)

LOCAL = "local"  # `--dask local`: a LocalCluster on this machine


class ExecutorError(ValueError):
    """A Dask cluster that cannot be used (not installed, unreachable, another model)."""


def default_workers() -> int:
    """Every core of this machine."""
    return os.cpu_count() or 1


@dataclass(frozen=True)
class Execution:
    """How to run a batch of jobs: `workers` local processes (or, with `dask`, a
    LocalCluster of that many workers, or the scheduler at that address), which cache
    (None: none), and whether to show progress."""

    workers: int = 1
    dask: str | None = None
    cache: ResultCache | None = None
    progress: bool = False


def describe_execution(execution: Execution) -> str:
    """`2 workers` or `Dask local (2 workers)`, for the closing line of a command."""
    if execution.dask == LOCAL:
        return f"Dask local ({execution.workers} workers)"
    if execution.dask:
        return f"Dask {execution.dask}"
    return f"{execution.workers} worker" + ("s" if execution.workers > 1 else "")


class WriteOnlyCache(ResultCache):
    """`--no-cache`: every job runs, and its result replaces what was stored."""

    def get(self, key: str) -> Any | None:
        return None


def run_jobs(function: Callable[[Any], Any], jobs: Sequence[Any], execution: Execution,
             noun: str = "runs", keys: Sequence[str] | None = None,
             encode: Callable[[Any], Any] = lambda value: value,
             decode: Callable[[Any], Any] = lambda value: value,
             failed: Callable[[Any], bool] | None = None) -> list[Any]:
    """`function(job)` for every job, in job order. With a cache, `keys[i]` names job i's
    result, stored as `encode(result)` and read back with `decode`; a result for which
    `failed(result)` holds (default: a `JobFailed` or one with a non-empty `error`) is not
    stored. Raises `worker_pool.Interrupted` on Ctrl-C or SIGTERM, carrying the results
    in job order (None for the jobs not run)."""
    failed = failed or _is_failure
    results: list[Any] = [None] * len(jobs)
    progress = Progress(len(jobs), noun, enabled=execution.progress)
    cache = execution.cache if keys is not None else None
    todo = []
    for index in range(len(jobs)):
        hit = cache.get(keys[index]) if cache is not None else None  # type: ignore[index]
        if hit is None:
            todo.append(index)
        else:
            results[index] = decode(hit)
    if len(todo) < len(jobs):
        progress.advance(count=len(jobs) - len(todo), skipped=True)

    def done(position: int, result: Any) -> None:
        index = todo[position]
        results[index] = result
        if cache is not None and not failed(result):
            cache.put(keys[index], encode(result))  # type: ignore[index]
        progress.advance(failed=failed(result))

    pending = [jobs[index] for index in todo]
    try:
        if not pending:
            pass
        elif execution.dask:
            _run_on_dask(function, pending, execution.dask, execution.workers, done)
        else:
            run_on_pool(function, pending, execution.workers, on_result=done)
    except Interrupted as stop:
        raise Interrupted(results, stop.signum, noun) from None
    finally:
        progress.close()
    return results


def _is_failure(result: Any) -> bool:
    return isinstance(result, JobFailed) or bool(getattr(result, "error", ""))


def _run_on_dask(function: Callable[[Any], Any], jobs: Sequence[Any], address: str,
                 workers: int, done: Callable[[int, Any], None]) -> None:
    try:
        from dask.distributed import Client, LocalCluster, as_completed
    except ImportError:
        raise ExecutorError("--dask needs Dask: pip install 'dask[distributed]' (or "
                            "'.[dask]' in the lsmsim checkout)") from None
    stops = StopSignals()
    cluster = client = None
    futures: list[Any] = []
    local_pids: list[int] = []
    try:
        if address == LOCAL:
            cluster = _local_cluster(LocalCluster, workers)
            client = Client(cluster)
            local_pids = list(client.run(os.getpid).values())
        else:
            try:
                client = Client(address, timeout="10s")
            except (OSError, TimeoutError, ValueError) as exc:
                raise ExecutorError(f"--dask {address}: cannot reach the scheduler: "
                                    f"{exc}") from None
            _check_same_model(client, address)
        futures = client.map(function, jobs, pure=False)
        position = {future.key: index for index, future in enumerate(futures)}
        for future in as_completed(futures):
            index = position[future.key]
            if future.status == "error":
                exc = future.exception()
                done(index, JobFailed(f"{type(exc).__name__}: {exc}"))
            else:
                done(index, future.result())
            stops.check()
    except Stop as stop:
        for pid in local_pids:  # at once, as the pool does (a cell cannot be cancelled)
            _kill(pid)
        raise Interrupted([], stop.signum) from None
    finally:
        for each in STOP_SIGNALS:  # a second Ctrl-C must not cut the shutdown short
            signal.signal(each, signal.SIG_IGN)
        if client is not None:
            if futures:
                client.cancel(futures)
            client.close()
        if cluster is not None:
            cluster.close()
        stops.restore()


def _local_cluster(local_cluster: Any, workers: int) -> Any:
    """A LocalCluster of `workers` single-threaded worker processes, no dashboard; they
    start with SIGINT and SIGTERM ignored (inherited across their exec), so Ctrl-C in the
    terminal stops the sweep through this process alone."""
    previous = {each: signal.signal(each, signal.SIG_IGN) for each in STOP_SIGNALS}
    try:
        return local_cluster(n_workers=workers, threads_per_worker=1, processes=True,
                             dashboard_address=None, silence_logs=logging.ERROR)
    finally:
        for each, handler in previous.items():
            signal.signal(each, handler)


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _check_same_model(client: Any, address: str) -> None:
    """Refuse workers whose lsmsim model differs from this process's (their results
    would be stored under this model's cache keys)."""
    from lsmsim.sweeps.result_cache import model_fingerprint

    ours = model_fingerprint()
    theirs = client.run(model_fingerprint)
    other = sorted(worker for worker, fingerprint in theirs.items() if fingerprint != ours)
    if other:
        raise ExecutorError(f"--dask {address}: worker {other[0]} runs another lsmsim model "
                            "(other source files); install this version on every worker")
