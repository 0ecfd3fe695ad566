"""proxanon on Dask: anonymize and audit tables larger than one machine.

Installed with ``pip install "proxanon[dask]"``; ``import proxanon`` does not import it.
The single-machine :func:`proxanon.anonymize` is the unit of work: it runs per part in a
task, and a global pass handles what crosses parts.
"""

try:
    import dask.dataframe  # noqa: F401 (checked first, for the message below)
    import distributed  # noqa: F401
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError('proxanon.dask needs the dask extra: pip install "proxanon[dask]"'
                      ) from exc

from proxanon.dask._anonymize import DaskAnonymization, DaskReport, anonymize
from proxanon.dask._audit import audit
from proxanon.dask._cluster import SchedulerUnreachableError, connect

__all__ = ["DaskAnonymization", "DaskReport", "SchedulerUnreachableError", "anonymize",
           "audit", "connect"]
