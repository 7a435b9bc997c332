"""Start-up time of `lrn` commands that need no torch, next to `python -c "import torch"`.

    .venv/bin/python benchmarks/bench_startup.py [REPEATS]

Each command runs REPEATS times (default 7) as a fresh process, interleaved with the reference
so that a busy machine slows both alike; the median wall time of each is printed with its ratio
to the reference. The target: `lrn --help` and `lrn theory fourth-root --n 4096` at most a
quarter of the time of importing torch.
"""

import statistics
import subprocess
import sys
import time

COMMANDS = {
    'python -c "import torch"  (reference)': [sys.executable, "-c", "import torch"],
    "lrn --help": [sys.executable, "-m", "lrngpt", "--help"],
    "lrn theory fourth-root --n 4096": [sys.executable, "-m", "lrngpt", "theory", "fourth-root", "--n", "4096"],
    "lrn cost models": [sys.executable, "-m", "lrngpt", "cost", "models"],
    'python -c "pass"  (interpreter alone)': [sys.executable, "-c", "pass"],
}


def wall(argv: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0


def main() -> None:
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    times: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for argv in COMMANDS.values():  # warm the file cache once
        wall(argv)
    for _ in range(repeats):
        for name, argv in COMMANDS.items():
            times[name].append(wall(argv))
    ref = statistics.median(next(iter(times.values())))
    for name, ts in times.items():
        med = statistics.median(ts)
        print(f"{name:<42} median {med * 1000:7.0f} ms  ratio to import torch {med / ref:5.2f}")


if __name__ == "__main__":
    main()
