"""Ctrl-C (SIGINT) and SIGTERM while work runs: the first is kept and acted on, and both
are ignored from then on until the work has stopped, so a terminal's second Ctrl-C cannot
cut the clean-up short. One run stops at its next event (`lsmsim.simulation`); the worker
pools of many runs stop at once (`lsmsim.sweeps.worker_pool`)."""

from __future__ import annotations

import signal
import threading
from typing import Any, Callable

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class StopSignals:
    """The handlers of STOP_SIGNALS: the first signal is kept in `signum` and passed to
    `on_stop` (in the handler, so it may raise); the rest are ignored. Installed from the
    main thread only (Python delivers signals there); `restore` puts the old handlers back."""

    def __init__(self, on_stop: Callable[[int], None]) -> None:
        self.signum = 0
        self._on_stop = on_stop
        self.previous: dict[int, Any] = {}
        if threading.current_thread() is threading.main_thread():
            self.previous = {s: signal.signal(s, self._stop) for s in STOP_SIGNALS}

    def _stop(self, signum: int, _frame: Any) -> None:
        for each in STOP_SIGNALS:
            signal.signal(each, signal.SIG_IGN)
        self.signum = signum
        self._on_stop(signum)

    def restore(self) -> None:
        for signum, handler in self.previous.items():
            signal.signal(signum, handler)
