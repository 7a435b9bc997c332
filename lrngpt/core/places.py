"""Where no file of lrn's may go: the kernel's file systems, /proc, /sys and /dev.

What looks like a directory there holds the kernel's view of processes and devices: a file cannot
be created in it, and walking it (a corpus `text:/`) meets endless or unreadable entries
(/proc/1/cwd). Outputs there are refused before any work (lrngpt.core.fsio.check_output) and
corpus walks never enter them (lrngpt.corpora.text.walk). /dev/shm, shared memory, is a file
system files are written to, and allowed.
"""

from __future__ import annotations

import os
from pathlib import Path

VIRTUAL_ROOTS = {"/proc": "the kernel's view of its processes", "/sys": "the kernel's view of its devices",
                 "/dev": "the devices"}


def virtual_root(path: str | Path) -> str | None:
    """'/proc' when `path` (links resolved) lies in /proc, /sys or /dev, else None."""
    real = os.path.realpath(path)
    if real == "/dev/shm" or real.startswith("/dev/shm/"):
        return None
    return next((r for r in VIRTUAL_ROOTS if real == r or real.startswith(r + "/")), None)
