"""Independent jobs (the cells of `compare`, the runs of `reproduce`, `validate` and
`calibrate`) on forked worker processes, stopped at once by Ctrl-C or SIGTERM.

concurrent.futures' pool is not used: on Ctrl-C its workers (in the terminal's process
group, they get the SIGINT too) die inside a job or run the rest of the queue while the main
process waits on the result queue, and a second Ctrl-C deadlocks both on the queue's lock.
Here each worker owns one pipe and ignores SIGINT; the main process hands out one job
index at a time (the jobs themselves are inherited by fork, never pickled) and, on SIGINT
or SIGTERM, kills every worker with SIGKILL, reaps it, and raises `Interrupted` carrying
the results that had come back. A worker also dies with the main process if that is killed
outright (Linux `prctl(PR_SET_PDEATHSIG)`), so no worker is ever left behind.

A job that raises is data, not the end of the sweep: its result is a `JobFailed` naming
the exception (desmod's "a failure is data").
"""

from __future__ import annotations

import multiprocessing
import signal
import sys
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from typing import TYPE_CHECKING, Any, Callable, Optional, Sequence, TypeVar, Union

from lsmsim.stop_signals import STOP_SIGNALS, StopSignals as SignalHandlers

if TYPE_CHECKING:
    from lsmsim.sweeps.progress import Progress

T = TypeVar("T")
# Called in the main process with (job index, result) as each job comes back.
OnResult = Optional[Callable[[int, Any], None]]
NOT_RUN = "not run: interrupted"  # the error of a job an interruption left undone
CHECK_S = 0.1  # how often the main process looks at a stop signal it could not raise
_PR_SET_PDEATHSIG = 1  # linux/prctl.h


@dataclass(frozen=True)
class JobFailed:
    """What a job that raised leaves: `ExceptionType: message`."""

    error: str


class Interrupted(KeyboardInterrupt):
    """Ctrl-C or SIGTERM stopped the jobs; `results` holds those that finished (None for
    the others, in job order). The command line exits with `exit_status` (128 + signal)."""

    def __init__(self, results: list[Any], signum: int, noun: str = "runs") -> None:
        self.results = results
        self.signum = signum
        self.noun = noun  # what the jobs are to the user: runs, cells, trials
        self.exit_status = 128 + signum
        self.finished = sum(r is not None for r in results)
        self.total = len(results)
        super().__init__(self.summary())

    def carrying(self, results: Any) -> "Interrupted":
        """The same interruption (signal, counts) carrying `results` instead: what the
        caller made of the finished jobs, for its own caller to write."""
        copy = Interrupted([], self.signum, self.noun)
        copy.results, copy.finished, copy.total = results, self.finished, self.total
        copy.args = (self.summary(),)
        return copy

    @property
    def signal_name(self) -> str:
        return signal.Signals(self.signum).name

    def summary(self) -> str:
        return (f"interrupted by {self.signal_name}: {self.finished} of {self.total} "
                f"{self.noun} finished")


def _raise_stop(signum: int) -> None:
    raise Stop(signum)


class Stop(BaseException):
    """Raised in the main process by SIGINT/SIGTERM while jobs run (a BaseException, so that
    a job's own `except Exception` cannot swallow it in the serial case)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def run_jobs(function: Callable[[Any], T], jobs: Sequence[Any], workers: int,
             progress: "Progress | str | None" = None,
             on_result: OnResult = None) -> list[Union[T, JobFailed]]:
    """`function(job)` for every job, in job order, on up to `workers` forked processes (in
    this process when one is enough). `progress` counts the finished jobs (a `JobFailed`
    as a failure; a noun such as "runs" is a `Progress` always shown); `on_result(index,
    result)` sees each as it comes back. Raises `Interrupted` on SIGINT or SIGTERM."""
    if isinstance(progress, str):
        from lsmsim.sweeps.progress import Progress
        progress = Progress(len(jobs), progress, enabled=bool(progress))
    results: list[Any] = [None] * len(jobs)
    stops = StopSignals()

    def done(index: int, result: Any) -> None:
        results[index] = result
        if on_result is not None:
            on_result(index, result)
        if progress is not None:
            progress.advance(failed=isinstance(result, JobFailed))

    try:
        if workers <= 1 or len(jobs) <= 1:
            for index, job in enumerate(jobs):
                done(index, _call(function, job))
                stops.check()
        else:
            _run_on_workers(function, jobs, min(workers, len(jobs)), done, stops)
    except Stop as stop:
        raise Interrupted(results, stop.signum) from None
    finally:
        stops.restore()
        if progress is not None:
            progress.close()
    return results


def run_all(function: Callable[[Any], T], jobs: Sequence[Any], workers: int,
            describe: Callable[[Any], str]) -> list[T] | None:
    """`run_jobs` with progress, for a script that needs every result: None, each failure
    printed to stderr on its own line (the job named by `describe`), if any job failed."""
    results = run_jobs(function, jobs, workers, progress="runs")
    failed = [(job, r) for job, r in zip(jobs, results) if isinstance(r, JobFailed)]
    for job, result in failed:
        print(f"FAILED {describe(job)}: {result.error}", file=sys.stderr)
    return None if failed else results  # type: ignore[return-value]


def _call(function: Callable[[Any], T], job: Any) -> Union[T, JobFailed]:
    try:
        return function(job)
    except Exception as exc:  # noqa: BLE001 - a failed job is reported as data
        return JobFailed(f"{type(exc).__name__}: {exc}")


def _run_on_workers(function: Callable[[Any], Any], jobs: Sequence[Any], workers: int,
                    done: Callable[[int, Any], None], stops: "StopSignals") -> None:
    context = multiprocessing.get_context("fork")
    busy: dict[Connection, tuple[Any, int]] = {}  # connection -> (process, job index)
    queue = iter(range(len(jobs)))
    processes = []

    def start() -> None:
        index = next(queue, None)
        if index is None:
            return
        ours, theirs = context.Pipe()
        process = context.Process(target=_worker, args=(theirs, function, jobs), daemon=True)
        # Blocked across fork: the child must not run this process's handler; a signal
        # that came meanwhile is delivered when the mask is restored, once the child is
        # in `processes` to be killed.
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
        try:
            process.start()
            processes.append(process)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        theirs.close()
        ours.send(index)
        busy[ours] = (process, index)

    try:
        for _ in range(workers):
            start()
        while busy:
            ready = wait(list(busy), timeout=CHECK_S)
            stops.check()
            for conn in ready:
                process, index = busy.pop(conn)  # type: ignore[index]
                try:
                    result = conn.recv()  # type: ignore[union-attr]
                except EOFError:  # the worker died (out of memory, killed): that job failed
                    process.join()
                    conn.close()  # type: ignore[union-attr]
                    start()
                    done(index, JobFailed(f"worker process died (exit code "
                                          f"{process.exitcode})"))
                    continue
                # The worker gets its next job before this process handles the result
                # (a cache write, a progress line), so it never waits on them.
                following = next(queue, None)
                if following is None:
                    conn.send(None)  # type: ignore[union-attr]
                    conn.close()  # type: ignore[union-attr]
                else:
                    conn.send(following)  # type: ignore[union-attr]
                    busy[conn] = (process, following)
                done(index, result)
    except Stop:
        for process in processes:
            if process.is_alive():
                process.kill()
        raise
    finally:
        for process in processes:
            process.join(timeout=1.0)
            if process.is_alive():
                process.kill()
                process.join()


def _worker(conn: Connection, function: Callable[[Any], Any], jobs: Sequence[Any]) -> None:
    """A forked worker: run the job indices the main process sends until it sends None or
    goes away. Ctrl-C in the terminal reaches the whole process group: the main process
    alone decides, and kills the workers."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
    _die_with_parent()
    while True:
        try:
            index = conn.recv()
        except EOFError:
            return
        if index is None:
            return
        result = _call(function, jobs[index])
        try:
            conn.send(result)
        except OSError:  # the main process has gone
            return
        except Exception as exc:  # noqa: BLE001 - a result pickle refuses fails its job
            conn.send(JobFailed(f"result not sent: {type(exc).__name__}: {exc}"))


def _die_with_parent() -> None:
    """Ask Linux to SIGKILL this process when its parent dies (no-op elsewhere)."""
    if sys.platform.startswith("linux"):
        import ctypes
        try:
            ctypes.CDLL(None).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        except (OSError, AttributeError):
            pass


class StopSignals(SignalHandlers):
    """SIGINT and SIGTERM while jobs run (`lsmsim.stop_signals`). The first raises `Stop` and
    is kept in `signum`, since Python swallows an exception raised where it cannot propagate
    (a signal handled inside an at-fork hook or a `__del__` prints "Exception ignored"):
    `check` raises it again."""

    def __init__(self) -> None:
        super().__init__(_raise_stop)

    def check(self) -> None:
        if self.signum:
            raise Stop(self.signum)
