"""proxanon: anonymize microdata against proximity breaches with XColor."""

from proxanon import datasets, evaluate
from proxanon._errors import GraphTooDenseError, InfeasibleError
from proxanon.advise import Advice, advise
from proxanon.anonymize import Anonymization, Report, anonymize
from proxanon.audit import AuditReport, audit
from proxanon.engine import Partition, partition
from proxanon.hierarchy import Hierarchy
from proxanon.tables import scale_sensitive

__version__ = "0.1.0"

__all__ = [
    "Advice",
    "Anonymization",
    "AuditReport",
    "GraphTooDenseError",
    "Hierarchy",
    "InfeasibleError",
    "Partition",
    "Report",
    "__version__",
    "advise",
    "anonymize",
    "audit",
    "datasets",
    "evaluate",
    "partition",
    "scale_sensitive",
]
