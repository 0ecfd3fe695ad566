"""The ``proxanon`` command line: one module per subcommand (anonymize, audit, report,
demo, substitute)."""

from proxanon.cli._main import main

__all__ = ["main"]
