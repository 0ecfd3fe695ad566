"""proxanon: anonymize microdata against proximity breaches with XColor."""

# First, before the slow imports: importing it guards the command's start against Ctrl-C
# (proxanon._startup; a library import changes nothing).
from proxanon import _startup  # noqa: F401, I001

from importlib.metadata import version as _distribution_version

from proxanon import datasets, evaluate

# The renderer registers the writers of Anonymization.to_html and AuditReport.to_html
# (proxanon._display.html_writer): imported with the package, they are always registered.
from proxanon import html_report as _html_report  # noqa: F401
from proxanon._errors import (
    ExploreInterrupted,
    GraphTooDenseError,
    InfeasibleError,
    LeadingZerosError,
    TimeLimitError,
)
from proxanon._results.anonymization import Anonymization, Report
from proxanon._results.audit import AuditReport
from proxanon._results.criteria import (
    BetaLikeness,
    CriterionVerdict,
    DeltaDisclosure,
    LDiversity,
    TCloseness,
)
from proxanon._results.partition import Partition
from proxanon._results.privacy import PrivacyMeasures, RiskBin, privacy_measures
from proxanon.advise import Advice, advise
from proxanon.anonymize import anonymize
from proxanon.audit import audit
from proxanon.explore import EpsilonSearch, explore, explore_plot, find_epsilon
from proxanon.hierarchy import Hierarchy
from proxanon.m_color import m_color
from proxanon.partition import partition
from proxanon.substitute import substitute
from proxanon.tables import scale_sensitive

#: The installed distribution's version; pyproject.toml is the one place it is written.
__version__ = _distribution_version("proxanon")

__all__ = [
    "Advice",
    "Anonymization",
    "AuditReport",
    "BetaLikeness",
    "CriterionVerdict",
    "DeltaDisclosure",
    "EpsilonSearch",
    "ExploreInterrupted",
    "GraphTooDenseError",
    "Hierarchy",
    "InfeasibleError",
    "LeadingZerosError",
    "LDiversity",
    "Partition",
    "PrivacyMeasures",
    "Report",
    "RiskBin",
    "TCloseness",
    "TimeLimitError",
    "__version__",
    "advise",
    "anonymize",
    "audit",
    "datasets",
    "evaluate",
    "explore",
    "explore_plot",
    "find_epsilon",
    "m_color",
    "partition",
    "privacy_measures",
    "scale_sensitive",
    "substitute",
]
