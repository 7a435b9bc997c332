"""What the ownership record costs: a checkpoint saved with and without its record entry, and the
check `--force` makes before it removes a run, on an unchanged and on a touched checkpoint.

    .venv/bin/python benchmarks/bench_record.py [MB]        # default 200 MB of float32 tensors

  save          lrngpt.store.checkpoint.save_checkpoint into a temporary directory, plain (os.replace)
                and recorded (the record's replace: the file hashed once, its entry written under the
                directory's lock, then the rename), alternating, median of 5 each: the ratio is the
                price of the record on every checkpoint a run saves
  check         lrngpt.core.ownership.state on the saved checkpoint: as written (size, mtime and inode
                match: nothing hashed) and after `touch` (the stamp moved: hashed once); wall time
                and the bytes this process read (`rchar` of /proc/self/io)

Both sides of each ratio run in the same process on the same files, so a loaded machine slows both.
Linux only (/proc/self/io).
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path


def rchar() -> int:
    with open("/proc/self/io") as f:
        return int(next(line for line in f if line.startswith("rchar")).split()[1])


def main(mb: int) -> None:
    import torch

    from lrngpt.core.ownership import recorded
    from lrngpt.core.ownership import state
    from lrngpt.store.checkpoint import save_checkpoint

    n = mb * (1 << 20) // 4 // 8
    payload = {"model": {f"w{i}": torch.randn(n) for i in range(8)}, "step": 1}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "ckpt_last.pt"
        times: dict[str, list[float]] = {"plain": [], "recorded": []}
        for _ in range(5):
            for kind in times:
                t0 = time.perf_counter()
                save_checkpoint(payload, path, recorded("run file", strict=False) if kind == "recorded" else None)
                times[kind].append(time.perf_counter() - t0)
        plain, rec = statistics.median(times["plain"]), statistics.median(times["recorded"])
        size = path.stat().st_size
        print(f"save {size / 1e6:,.0f} MB checkpoint: plain {plain:.3f} s, recorded {rec:.3f} s "
              f"(ratio {rec / plain:.2f})")
        for label, touch in (("as written", False), ("touched", True)):
            if touch:
                os.utime(path)
            r0, t0 = rchar(), time.perf_counter()
            found, _ = state(path)
            dt, read = time.perf_counter() - t0, rchar() - r0
            print(f"check {label}: {found}, {dt * 1e3:.1f} ms, {read:,} bytes read")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 200)
