"""`python -m lrngpt ...` is `lrn ...` (torchrun launches it this way: `torchrun -m lrngpt train ...`)."""

import sys

from lrngpt.cli.main import main

sys.exit(main())
