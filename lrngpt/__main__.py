"""`python -m lrngpt ...` runs the `lrn` command line, so launchers that take a module
(`torchrun ... -m lrngpt train ...`) need no script path. An entry point like the `lrn` console
script, not a library module: nothing imports it."""

import sys

from lrngpt.cli.main import main

sys.exit(main())
