"""Progress of a long command on stderr: jobs done of the total, failures and an ETA for
the multi-run commands (`sweep`, `compare`, `reproduce`, `validate`, `calibrate`),
simulated seconds of the total for one long `run`.

On a terminal the line is rewritten in place, at most `REDRAW_S` apart; elsewhere (a log
file, a pipe) each update is its own line, and only when asked (`--progress`), since a
command's stderr in a script is for its errors. `--quiet` silences it everywhere.

    lsmsim: 37 of 200 cells finished, 1 failed, 12 s, ETA 53 s
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import TextIO

REDRAW_S = 0.2  # a terminal line is redrawn at most this often (the last update always)
LOG_EVERY_S = 1.0  # elsewhere, a line at most this often (the first and the last always)


def add_progress_flags(parser: argparse.ArgumentParser) -> None:
    """`--progress` and `--quiet` on a subcommand (read back by `progress_wanted`)."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--progress", action="store_true", default=None,
                       help="show progress even when stderr is not a terminal")
    group.add_argument("--quiet", action="store_true", help="no progress line")


def progress_wanted(args: argparse.Namespace, stream: TextIO | None = None) -> bool:
    """Whether a command shows progress: `--progress` forces it, `--quiet` silences it,
    otherwise only on a terminal."""
    if getattr(args, "quiet", False):
        return False
    if getattr(args, "progress", None):
        return True
    return (stream or sys.stderr).isatty()


class Progress:
    """A count of `total` jobs (`noun`: "cells", "runs"), or of simulated seconds with
    `noun="simulated s"`. A disabled one does nothing, so callers need not check; nothing
    is drawn before `delay_s` (a run that ends at once shows no bar)."""

    def __init__(self, total: float, noun: str, enabled: bool = True,
                 stream: TextIO | None = None, delay_s: float = 0.0) -> None:
        self.total = total
        self.noun = noun
        self.enabled = enabled
        self.stream = stream or sys.stderr
        self.done = 0.0
        self.failed = 0
        self.skipped = 0  # jobs that took no time (results found in the cache): not in the ETA
        self.started = time.monotonic()
        self.delay_s = delay_s
        self._drawn_at = float("-inf")
        self._drawn = False
        self._tty = self.stream.isatty()

    def advance(self, failed: bool = False, count: float = 1, skipped: bool = False) -> None:
        """`count` more jobs done (`failed`: of which this one failed; `skipped`: it cost
        nothing, as a cached result)."""
        self.done += count
        self.total = max(self.total, self.done)  # a total that was an estimate grows
        self.failed += int(failed)
        self.skipped += int(skipped) * int(count)
        self._draw(final=self.done >= self.total)

    def update(self, done: float) -> None:
        """Set the amount done (simulated seconds of a run)."""
        self.done = done
        self._draw(final=done >= self.total)

    def line(self) -> str:
        """The progress in words (without the leading `lsmsim: `)."""
        elapsed = time.monotonic() - self.started
        if self.noun == "simulated s":
            text = f"{self.done:,.0f} of {self.total:,.0f} simulated s"
        else:
            text = f"{self.done:.0f} of {self.total:.0f} {self.noun} finished"
            if self.failed:
                text += f", {self.failed} failed"
            if self.skipped:
                text += f", {self.skipped} from the cache"
        text += f", {_seconds(elapsed)}"
        worked = self.done - self.skipped
        if 0 < worked and self.done < self.total:
            eta = elapsed / worked * (self.total - self.done)
            text += f", ETA {_seconds(eta)}"
        return text

    def _draw(self, final: bool) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self.started < self.delay_s:
            return
        if not final and now - self._drawn_at < (REDRAW_S if self._tty else LOG_EVERY_S):
            return
        if self._tty:
            self.stream.write("\r\x1b[K" + "lsmsim: " + self.line())
        else:
            self.stream.write("lsmsim: " + self.line() + "\n")
        self._drawn_at = now
        self._drawn = True
        self.stream.flush()

    def close(self) -> None:
        """End the terminal line (the next output starts on its own line)."""
        if self.enabled and self._tty and self._drawn:
            self.stream.write("\n")
            self.stream.flush()
            self._drawn = False


def _seconds(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
