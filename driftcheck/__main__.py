"""`python -m driftcheck`: the same as the `driftcheck` command."""

import sys

from driftcheck.cli import main

sys.exit(main())
