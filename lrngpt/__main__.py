"""`python -m lrngpt ...` runs the `lrn` command line, so launchers that take a module
(`torchrun ... -m lrngpt train ...`) need no script path. The entry point, not a library module:
like the `lrn` console script, it is the one place outside lrngpt/cli/ that calls the CLI."""

import sys

from lrngpt.cli.main import main

sys.exit(main())
