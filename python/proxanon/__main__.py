"""``python -m proxanon``: the same as the ``proxanon`` command."""

import sys

from proxanon.cli import main

sys.exit(main())
