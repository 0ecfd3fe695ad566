"""proxanon: anonymize microdata against proximity breaches with XColor."""

from proxanon._errors import InfeasibleError
from proxanon.audit import AuditReport, audit
from proxanon.engine import Partition, partition

__version__ = "0.1.0"

__all__ = ["AuditReport", "InfeasibleError", "Partition", "audit", "partition", "__version__"]
