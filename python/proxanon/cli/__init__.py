"""The ``proxanon`` command line: one module per subcommand (anonymize, audit, demo)."""

from proxanon.cli._main import main

__all__ = ["main"]
