"""A red-team pass of the whole command line and API: hundreds of hostile cases, each a real
subprocess in a fresh directory, classified by what happened.

    python benchmarks/red_team.py                 # every case (about 10-20 minutes on 2 cores)
    python benchmarks/red_team.py --quick         # about 40 cheap cases, no trained run: a smoke test
    python benchmarks/red_team.py --jobs 2 --out red_team.json --only sample

Each case runs `python -m lrngpt -q ARGV` (or a small `python -c` program for the Python API) with
a timeout, in its own temporary directory, with the user's files planted beforehand. It is
classified as one of:

  ok          exit 0
  exit2       exit 2, the wanted refusal (one line: checked, and listed under "advice" when not)
  exit1       exit 1 (a full disk or an unexpected failure)
  traceback   the word Traceback on stderr (an uncaught exception, in the CLI or the API)
  hang        still running at the timeout (SIGTERM to its process group, SIGKILL 5 s later)
  crash       killed by a signal or another exit code
  data_loss   a file planted beforehand (the user's, or an lrn output the user edited) whose sha256
              changed or that vanished

Each case declares the classes it expects (`ok`, `exit2` or either); the cases are generated from
tables (benchmarks/red_team_cases.py) and the commands are enumerated from lrn's own parser, so a
new command or option gets its hostile values without anyone writing them. The advice of a refusal
is checked where it can be: every --option it names must be one lrn has, it must not suggest the
--force that would remove a planted file, and a case may say what the line must name (a FIFO is
"a named pipe", not "no such file").

Exit status: 1 when any case is an unexpected exit 1, a traceback, a hang, a crash or data loss;
0 otherwise. --out FILE writes every case's record as JSON. Standard library and lrngpt only.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

import red_team_cases as cases_mod  # noqa: E402  (beside this script)

CLASSES = ("ok", "exit2", "exit1", "traceback", "hang", "crash", "data_loss")
FAILING = ("exit1", "traceback", "hang", "crash", "data_loss")
API_PRELUDE = """\
import sys
import lrngpt
try:
{body}
except lrngpt.UserError as e:
    print(f"UserError: {{e}}", file=sys.stderr)
    sys.exit(2)
"""


def sha256(p: Path) -> str | None:
    try:
        if p.is_symlink() and not p.exists():
            return "broken-link"
        if p.is_dir():
            return "dir"
        h = hashlib.sha256()
        with open(p, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        return h.hexdigest()
    except OSError:
        return None


def known_options() -> set[str]:
    """Every --option of every lrn command (the advice of a refusal may name only these)."""
    from lrngpt.cli.main import build_parser

    seen: set[str] = set()

    def walk(p):
        for a in p._actions:
            seen.update(o for o in a.option_strings if o.startswith("--"))
            if isinstance(a, argparse._SubParsersAction):
                for sp in a.choices.values():
                    walk(sp)

    walk(build_parser())
    return seen


OPTION = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")


def advice_problems(case, last: str, options: set[str]) -> list[str]:
    problems = []
    for opt in OPTION.findall(last):
        if opt not in options and not any(w.startswith(opt) for w in case.argv):  # the user's own, quoted back
            problems.append(f"names {opt}, an option no lrn command has")
    if case.says and not any(n.lower() in last.lower() for n in case.says.split("|")):
        problems.append(f"does not say {case.says!r}")
    if case.watch_user and re.search(r"\b(add|pass|use|with|try|give|rerun with) (the )?--force",
                                     last.replace("with or without --force", "")):
        problems.append("suggests a --force over a file of the user's")
    return problems


class Ctx:
    """One case's directory: fixtures copied in on demand, files planted and watched."""

    def __init__(self, t: Path, fixtures: dict[str, Path]):
        self.t, self.fixtures, self.copied, self.watched = t, fixtures, {}, {}
        self.file = ""

    def get(self, name: str) -> Path:
        if name == "t":
            return self.t
        if name == "file":
            return Path(self.file)
        if name == "corpus":
            return Path("text:" + str(self.fixtures["corpus_file"]))
        if name in ("corpus_file", "home"):
            return self.fixtures[name]
        if name not in self.copied:
            src = self.fixtures[name]
            dst = self.t / f"fx-{name}"
            if src.is_dir():
                shutil.copytree(src, dst, symlinks=True)
            else:
                shutil.copy2(src, dst)
            self.copied[name] = dst
        return self.copied[name]

    def user(self, rel: str | Path, content: str | bytes = "the user's own file\n") -> Path:
        """Plant a file of the user's (rel to the case directory) and watch its sha256."""
        p = self.t / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(content if isinstance(content, bytes) else content.encode())
        self.watch(p)
        return p

    def edit(self, p: Path, extra: str = "\n<!-- my own note: keep this -->\n") -> Path:
        """Edit a file lrn wrote (so it is the user's now) and watch it."""
        with open(p, "a") as f:
            f.write(extra)
        self.watch(p)
        return p

    def watch(self, p: Path) -> None:
        self.watched[str(p)] = sha256(p)


PLACE = re.compile(r"\{([a-z_]+)\}")


def expand(text: str, ctx: Ctx, quote: bool = False) -> str:
    def sub(m):
        if m[1] not in cases_mod.PLACEHOLDERS:
            return m[0]
        v = str(ctx.get(m[1]))
        return repr(v) if quote else v
    return PLACE.sub(sub, text)


def child_env(root: Path, t: Path, extra: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("WANDB_", "MLFLOW_", "LRN_", "SLURM_", "HF_", "TENSORBOARD"))}
    env.update(PYTHONPATH=str(ROOT), LRN_CACHE_DIR=str(root / "cache"), HOME=str(root / "home"),
               HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", TRANSFORMERS_OFFLINE="1", MPLBACKEND="Agg",
               OMP_NUM_THREADS="1", OMP_WAIT_POLICY="PASSIVE", WANDB_SILENT="true", WANDB_DIR=str(t),
               TMPDIR=str(root / "tmp"), NO_COLOR="1", PYTHONHASHSEED="0")
    env.update(extra)
    return env


def _limit_memory():  # a hostile case may not take the shared machine's memory with it
    import resource

    os.setsid()
    cap = 16 << 30
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))


LIVE: set[int] = set()  # process groups of the cases running now: killed when the pass is stopped


def run_case(case, index: int, root: Path, fixtures: dict[str, Path], options: set[str]) -> dict:
    t = root / "cases" / f"{index:04d}"
    t.mkdir(parents=True)
    ctx = Ctx(t, fixtures)
    record = {"id": case.id, "command": case.command, "expect": case.expect}
    try:
        if case.prepare:
            case.prepare(ctx)
        if case.code is not None:
            body = "\n".join("    " + line for line in expand(case.code, ctx, quote=True).splitlines())
            argv = [sys.executable, "-c", API_PRELUDE.format(body=body)]
            shown = ["python", "-c", expand(case.code, ctx, quote=True)]
        else:
            words = [expand(a, ctx) for a in case.argv]
            argv = [sys.executable, "-m", "lrngpt", *(["-q"] if case.quiet else []), *words]
            shown = ["lrn", *(["-q"] if case.quiet else []), *words]
    except Exception as e:  # the case itself could not be built: say so, never hide it
        record.update(cls="setup_error", rc=None, seconds=0.0, argv=[], last=f"{type(e).__name__}: {e}")
        return record
    record["argv"] = [a if len(a) < 300 else a[:120] + f"...({len(a)} chars)" for a in shown]
    start = time.monotonic()
    child = subprocess.Popen(argv, cwd=t / case.cwd.removeprefix("t/") if case.cwd else t, env=child_env(root, t, case.env),
                             stdin=subprocess.PIPE if case.stdin is not None else subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=_limit_memory)
    LIVE.add(child.pid)
    hung = False
    try:
        out, err = child.communicate(input=case.stdin, timeout=case.timeout)
    except subprocess.TimeoutExpired:
        hung = True
        os.killpg(child.pid, signal.SIGTERM)
        try:
            out, err = child.communicate(timeout=5)
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)
            out, err = child.communicate()
    seconds = time.monotonic() - start
    with _suppress():
        os.killpg(child.pid, signal.SIGKILL)  # whatever it left running (a tracker's service)
    LIVE.discard(child.pid)
    stderr = err.decode("utf-8", "replace")
    lines = [line for line in stderr.splitlines() if line.strip()]
    lost = [p for p, h in ctx.watched.items() if sha256(Path(p)) != h]
    rc = child.returncode
    if lost:
        cls = "data_loss"
    elif hung:
        cls = "hang"
    elif "Traceback" in stderr:
        cls = "traceback"
    elif rc in (0, 1, 2):
        cls = ("ok", "exit1", "exit2")[rc]
    else:
        cls = "crash"
    last = lines[-1] if lines else ""
    record.update(cls=cls, rc=rc, seconds=round(seconds, 2), last=last[:500], stderr_lines=len(lines),
                  lost=[str(Path(p).relative_to(t)) for p in lost], stdout_bytes=len(out))
    problems = []
    if cls == "exit2":
        if len(lines) != 1:
            problems.append(f"{len(lines)} lines on stderr, not one")
        problems += advice_problems(case, last, options)
    record["advice"] = problems
    record["expected"] = cls in case.expect.split("|")
    return record


class _suppress:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return exc[0] is not None and issubclass(exc[0], OSError)


def load_sampler(samples: list[float], stop: threading.Event) -> None:
    while not stop.wait(15):
        with _suppress():
            samples.append(float(Path("/proc/loadavg").read_text().split()[0]))


def table(records: list[dict]) -> str:
    by_cmd: dict[str, Counter] = {}
    for r in records:
        by_cmd.setdefault(r["command"], Counter())[r["cls"]] += 1
    total = Counter(r["cls"] for r in records)
    cols = [c for c in (*CLASSES, "setup_error") if total[c] or c in CLASSES]
    width = max(len(c) for c in [*by_cmd, "command"]) + 2
    head = "command".ljust(width) + "".join(c.rjust(11) for c in cols) + "      all"
    rows = [head, "-" * len(head)]
    for cmd in sorted(by_cmd):
        rows.append(cmd.ljust(width) + "".join(str(by_cmd[cmd][c]).rjust(11) for c in cols)
                    + str(sum(by_cmd[cmd].values())).rjust(9))
    rows.append("-" * len(head))
    rows.append("all".ljust(width) + "".join(str(total[c]).rjust(11) for c in cols) + str(len(records)).rjust(9))
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="the ~40 cheap cases only (a smoke test)")
    ap.add_argument("--jobs", type=int, default=1, help="cases at once (default 1; the machine is shared)")
    ap.add_argument("--out", type=Path, help="write the JSON record here")
    ap.add_argument("--only", default="", help="only cases whose command or id contains this")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds before a case is a hang (default 60)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory (its path is printed)")
    ap.add_argument("--list", action="store_true", help="list the cases and exit")
    ap.add_argument("--rerun", type=Path, metavar="JSON",
                    help="only the cases an earlier --out record has out of their class or with advice off")
    args = ap.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))

    all_cases = cases_mod.build_cases(args.timeout)
    ids = [f"{c.command}: {c.id}" for c in all_cases]
    dup = [i for i, n in Counter(ids).items() if n > 1]
    if dup:
        raise SystemExit(f"duplicate case ids: {dup[:5]}")
    chosen = [c for c in all_cases if (c.quick or not args.quick)
              and (args.only in c.command or args.only in c.id)]
    if args.rerun:
        old = json.loads(args.rerun.read_text())["records"]
        again = {(r["command"], r["id"]) for r in old if not r.get("expected") or r.get("advice")}
        chosen = [c for c in chosen if (c.command, c.id) in again]
    if args.list:
        for c in chosen:
            print(f"{c.command:24} {c.expect:10} {c.id}")
        print(f"{len(chosen)} cases")
        return 0
    root = Path(tempfile.mkdtemp(prefix="lrn-red-team-"))
    for d in ("home", "tmp", "cache"):
        (root / d).mkdir()
    started = time.time()
    load0 = Path("/proc/loadavg").read_text().split()[:3]
    samples: list[float] = []
    stop = threading.Event()
    threading.Thread(target=load_sampler, args=(samples, stop), daemon=True).start()
    try:
        needs = set().union(*(c.needs for c in chosen)) if chosen else set()
        print(f"red team: {len(chosen)} cases, fixtures {sorted(needs) or 'none'} in {root}", file=sys.stderr)
        t0 = time.monotonic()
        fixtures = cases_mod.make_fixtures(root / "fixtures", needs, lambda *a: subprocess.run(
            [sys.executable, "-m", "lrngpt", "-q", *map(str, a)], env=child_env(root, root, {}),
            cwd=root, check=True, stdout=subprocess.DEVNULL))
        setup_s = time.monotonic() - t0
        options = known_options()
        records: list[dict | None] = [None] * len(chosen)
        done = 0
        with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
            futures = {pool.submit(run_case, c, i, root, fixtures, options): i for i, c in enumerate(chosen)}
            for f in concurrent.futures.as_completed(futures):
                r = f.result()
                records[futures[f]] = r
                done += 1
                mark = "" if r["expected"] else "  <- UNEXPECTED" if "expected" in r else ""
                print(f"[{done}/{len(chosen)}] {r['cls']:9} {r.get('seconds', 0):6.1f}s {r['command']}: {r['id']}{mark}",
                      file=sys.stderr)
        wall = time.time() - started
    finally:
        stop.set()
        for pid in list(LIVE):
            with _suppress():
                os.killpg(pid, signal.SIGKILL)
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    recs = [r for r in records if r is not None]
    counts = Counter(r["cls"] for r in recs)
    unexpected = [r for r in recs if not r.get("expected")]
    advice = [r for r in recs if r.get("advice")]
    # a traceback is expected only where the user's own callback raised (re-raised as it is, rightly)
    failing = [r for r in recs if r["cls"] in FAILING and not r.get("expected")]
    failing += [r for r in recs if r["cls"] == "setup_error"]
    print(table(recs))
    print(f"\n{len(recs)} cases in {wall:.0f} s (fixtures {setup_s:.0f} s), --jobs {args.jobs}; "
          f"load average at start {' '.join(load0)}, while running mean "
          f"{sum(samples) / len(samples) if samples else float(load0[0]):.2f} max {max(samples, default=float(load0[0])):.2f}")
    if unexpected:
        print(f"\n{len(unexpected)} cases not in their expected class:")
        for r in unexpected:
            print(f"  [{r['cls']} expected {r['expect']}] {r['command']}: {r['id']}\n      $ {' '.join(map(repr, r['argv']))[:400]}"
                  f"\n      {r['last'][:300]}" + (f"\n      lost: {r['lost']}" if r.get("lost") else ""))
    if advice:
        print(f"\n{len(advice)} refusals whose advice is off:")
        for r in advice:
            print(f"  {r['command']}: {r['id']}: {'; '.join(r['advice'])}\n      {r['last'][:300]}")
    if args.out:
        args.out.write_text(json.dumps({
            "cases": len(recs), "counts": {c: counts[c] for c in (*CLASSES, "setup_error") if counts[c] or c in CLASSES},
            "unexpected": len(unexpected), "advice": len(advice), "failing": len(failing),
            "wall_s": round(wall, 1), "setup_s": round(setup_s, 1), "jobs": args.jobs, "quick": args.quick,
            "load_start": load0, "load_samples": samples, "date": time.strftime("%Y-%m-%d"),
            "records": recs}, indent=1))
    return 1 if failing else 0


if __name__ == "__main__":
    sys.exit(main())
