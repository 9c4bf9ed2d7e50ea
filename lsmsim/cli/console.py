"""The `lsmsim` command's entry point. It imports the command line, and through it the
simulator, only once it is running, so that a Ctrl-C at any moment, even while Python
loads numpy, ends with one line (`lsmsim: interrupted`, status 130) and no traceback."""

from __future__ import annotations

import os
import signal
import sys
from typing import Callable


def console_main() -> None:
    """`lsmsim.cli.main.main`, then exit at once with its status. Tearing down the
    interpreter would free the simulated tree and event log object by object (about 0.1 s
    after an hour's run) for memory the OS reclaims anyway; output is flushed first, and
    every file is already closed. A reader that goes away (`lsmsim list options | head`)
    ends the command quietly; an unexpected error still exits the usual way."""
    try:
        main = _import_main()
        status = main()
        sys.stdout.flush()
    except KeyboardInterrupt:  # before main() took over Ctrl-C: while importing
        print("lsmsim: interrupted", file=sys.stderr)
        status = 130
    except BrokenPipeError:
        status = 1
    sys.stderr.flush()
    os._exit(status)


def _import_main() -> Callable[[], int]:
    """`lsmsim.cli.main.main`, imported with SIGINT held back: a Ctrl-C that lands inside
    the import machinery's own callbacks is printed as "Exception ignored" and lost. Held,
    it is delivered once the import is done, as a KeyboardInterrupt here."""
    block = getattr(signal, "pthread_sigmask", None)
    if block is None:  # not on this platform: import as is
        from lsmsim.cli.main import main
        return main
    block(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        from lsmsim.cli.main import main
    finally:
        block(signal.SIG_UNBLOCK, {signal.SIGINT})
    return main


if __name__ == "__main__":
    console_main()
