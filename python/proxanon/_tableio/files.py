"""Every output file written whole or not at all (docs/guide/command-line.md).

:func:`atomic_write` writes a temporary file in the target's folder and renames it over the
target only when complete and synced, so a failure or an interrupt leaves the previous
file as it was and no partial file behind; temporary files of a process that died are
removed by :func:`remove_stale`. Cost: one write and one rename per file.
"""

from __future__ import annotations

import glob
import io
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO

from proxanon._tableio.base import StandardOutput, Target


def atomic_write(target: Target, write: Callable[[IO[bytes]], None]) -> None:
    """Calls ``write`` on a new temporary file in ``target``'s folder, then flushes, syncs
    and renames it over ``target`` (``os.replace``, atomic on POSIX and Windows).

    :data:`STDOUT`: ``write`` fills a buffer, written to standard output once it returns
    (an error or an interrupt before then writes nothing).

    On any exception, KeyboardInterrupt included, the temporary file is removed and
    ``target`` is left as it was. The new file gets the mode a plainly created file would.
    The temporary file is named ``.NAME.PID.RANDOM.part`` after the writing process; a writer
    killed outright (``kill -9``, a power cut) cannot remove it, so each write first removes
    the partial files of the same target whose process no longer runs (:func:`remove_stale`).
    """
    if isinstance(target, StandardOutput):
        buffer = io.BytesIO()
        write(buffer)
        sys.stdout.flush()
        sys.stdout.buffer.write(buffer.getvalue())
        sys.stdout.buffer.flush()
        return
    where = Path(target)
    remove_stale(where)
    try:
        descriptor, temporary = tempfile.mkstemp(dir=where.parent,
                                                 prefix=f".{where.name}.{os.getpid()}.",
                                                 suffix=".part")
    except OSError as exc:  # named by the file asked for, not the temporary one
        raise OSError(f"cannot write {where}: its folder {where.parent} does not take a new "
                      f"file ({exc.strerror})") from None
    try:
        with os.fdopen(descriptor, "wb") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)
        os.replace(temporary, where)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def remove_stale(target: Path) -> list[Path]:
    """Removes the partial files :func:`atomic_write` left beside ``target`` in a process that
    no longer runs on this machine; returns them. Partial files of running writers, and files
    not named as :func:`atomic_write` names them, are left alone."""
    removed: list[Path] = []
    prefix = f".{target.name}."
    try:
        candidates = list(target.parent.glob(f"{glob.escape(prefix)}*.part"))
    except OSError:
        return removed
    for path in candidates:
        pid_text = path.name[len(prefix):].split(".", 1)[0]
        if not pid_text.isdigit() or _running(int(pid_text)):
            continue
        try:
            path.unlink()
        except OSError:
            continue
        removed.append(path)
    return removed


def _running(pid: int) -> bool:
    """Whether a process with this id runs here (one we may not signal counts as running)."""
    if pid <= 0:
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, OSError):
        return True
    return True
