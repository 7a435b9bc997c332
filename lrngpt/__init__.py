"""lrn-gpt: a laboratory for small language models."""

import os

# OpenMP threads that spin while waiting turn a busy 2-core laptop into a crawl: measured
# here with another job on the machine, an MLP training step ran at 0.65 of matmul speed
# with spinning threads and 0.94 with passive ones. It must be set before torch loads
# OpenMP, which is why it lives here; a value the user set wins.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

__version__ = "0.1.0"
