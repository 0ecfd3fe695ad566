"""Ctrl-C while the ``proxanon`` command starts: one line and exit status 130.

Importing the package (numpy, pandas, the native module) takes most of a second, before the
command's own handling of KeyboardInterrupt (``proxanon.cli._main.main``) is in place; an
interrupt then would print a traceback. Where this process is the command (the console
script, or ``python -m proxanon``), :func:`guard` makes SIGINT end it at once with the
command's line, nothing having been written yet; ``main`` puts Python's handler back before
it runs the command. The package imports this module first, which guards (a library import
changes nothing).
"""

from __future__ import annotations

import os
import signal
import sys
from types import FrameType

#: What the command prints when interrupted, as ``proxanon.cli._main`` words it.
INTERRUPTED = "proxanon: interrupted: stopped; no output file was written\n"
#: The exit status of an interrupted command (128 + SIGINT).
EXIT_INTERRUPTED = 130


def is_command() -> bool:
    """Whether this process runs the ``proxanon`` command rather than a program that
    imports the library."""
    argv = getattr(sys, "orig_argv", sys.argv)
    return (os.path.basename(sys.argv[0]) == "proxanon"
            or list(argv[1:3]) == ["-m", "proxanon"])


def _exit(signum: int, frame: FrameType | None) -> None:
    os.write(2, INTERRUPTED.encode())
    os._exit(EXIT_INTERRUPTED)


def guard() -> None:
    """While the command starts, SIGINT exits with its line (see the module)."""
    if is_command() and signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _exit)


def release() -> None:
    """Python's KeyboardInterrupt again, where :func:`guard` replaced it."""
    if signal.getsignal(signal.SIGINT) is _exit:
        signal.signal(signal.SIGINT, signal.default_int_handler)


guard()
