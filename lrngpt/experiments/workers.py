"""Worker processes for points at once: each trains one sweep point (or times one probe) with its share
of the threads, forked from a fork server that imported torch once, and reports over a pipe.

A worker killed leaves its run at its last checkpoint; the sweep lets the others finish and stops
naming it. A sweep that dies closes its end of the pipe, and each worker stops as on SIGTERM.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import multiprocessing.forkserver
import os
import signal
import sys
import threading
import time
import types
from multiprocessing.connection import wait

import torch
from tqdm import tqdm

from lrngpt.store.lifecycle import RunInUse
from lrngpt.training import timing as run_timing
from lrngpt.training.interrupt import StopFlag
from lrngpt.training.trainer import train_run

# What every worker needs, imported once in the fork server: the trainer, and what torch imports on the
# first model built on the meta device (a parameter count: dynamo, the refs and decompositions, ~3 s)
PRELOAD = ["lrngpt.training.trainer", "torch._dynamo", "torch._refs", "torch._decomp"]


def context():
    """The fork server where there is one, else spawn. It starts with SIGINT ignored, so Ctrl-C reaches
    this process alone, which stops its workers (each would print a KeyboardInterrupt traceback)."""
    if "forkserver" in multiprocessing.get_all_start_methods():
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(PRELOAD)
        if threading.current_thread() is threading.main_thread():  # signal.signal works there alone
            old = signal.signal(signal.SIGINT, signal.SIG_IGN)  # for the milliseconds of a fork and exec
            try:
                multiprocessing.forkserver.ensure_running()
            finally:
                signal.signal(signal.SIGINT, old)
        return ctx
    return multiprocessing.get_context("spawn")


def _start(env: dict, cwd: str, threads: int, conn) -> None:
    """A worker's first steps: the sweep's environment, directory and threads, and the watch on the sweep."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    StopFlag.signals = (signal.SIGTERM,)
    # tqdm's default lock is a multiprocessing semaphore registered with the sweep's resource tracker: a
    # worker killed (SIGKILL) would leave it registered, and the sweep would end on a "leaked semaphore"
    # warning after its own line. A worker's bars are its own (progress is off), so a thread lock does.
    tqdm.set_lock(threading.RLock())
    os.environ.clear()
    os.environ.update(env)
    os.chdir(cwd)
    torch.set_num_threads(threads)

    def watch():  # the sweep sends nothing: its end closing reads as end of file
        try:
            conn.recv()
        except (EOFError, OSError):  # the sweep process is gone: stop as on SIGTERM (save, then exit)
            os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, daemon=True).start()


def _send(conn, msg) -> None:
    with contextlib.suppress(OSError):  # (BrokenPipeError too) the sweep is gone: its lines have no reader
        conn.send(msg)


def _worker(job: dict, threads: int, conn, env: dict, cwd: str) -> None:
    """A worker's life: one sweep point trained, or one probe timed (a "probe" job), its end sent."""
    _start(env, cwd, threads, conn)
    try:
        if "probe" in job:  # a packed probe (run_timing.probe's arguments, a barrier among them): its seconds a token
            result = run_timing.probe(**job["probe"])
        else:  # train_run's arguments as the sweep gives them, its lines and metrics sent here
            result = None
            train_run(**job["train"], log=lambda msg: _send(conn, ("log", msg)), progress=False,
                      on_metric=(lambda row: _send(conn, ("metric", row))) if job["metrics"] else None)
    except RunInUse as e:
        _send(conn, ("busy", e.who))
    except KeyboardInterrupt:  # SIGINT or SIGTERM: the trainer saved and said how to continue
        _send(conn, ("stopped", None))
    except Exception as e:  # raised again in the sweep's process, so the command says it as it would its own
        try:
            conn.send(("raise", e))
        except Exception:  # an exception that does not pickle: its type and words
            _send(conn, ("raise", RuntimeError(f"{type(e).__name__}: {e}")))
    else:
        _send(conn, ("done", result))
    # (conn stays open while `watch` reads it: the process's end closes it, and the sweep reads end of file)


def _launch(ctx, args: tuple):
    """A worker and the sweep's end of their pipe (the worker's end closed here, so that either side's
    end reads as end of file on the other once its process is gone)."""
    recv, send = ctx.Pipe()
    proc = ctx.Process(target=_worker, args=(*args, send, dict(os.environ), os.getcwd()), daemon=False)
    with _starting() as held:
        proc.start()
    send.close()
    if held:  # Ctrl-C while it started: it stops (SIGTERM) before the interrupt goes on up
        proc.terminate()
        proc.join(timeout=120)
        recv.close()
        raise KeyboardInterrupt
    return proc, recv


@contextlib.contextmanager
def _starting():
    """While a worker starts: Ctrl-C held, so the sweep does not end before the worker read what it was sent
    (yields a list, true when it came), and `__main__` a bare module, so a script that calls lrngpt.sweep at
    its top level without a `__main__` guard does not run again in every worker."""
    held: list[int] = []
    catch = threading.current_thread() is threading.main_thread() and \
        signal.getsignal(signal.SIGINT) is not signal.SIG_IGN
    old = signal.signal(signal.SIGINT, lambda signum, frame: held.append(signum)) if catch else None
    main = sys.modules.get("__main__")
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        yield held
    finally:
        if main is None:
            sys.modules.pop("__main__", None)
        else:
            sys.modules["__main__"] = main
        if catch:
            signal.signal(signal.SIGINT, old)


def probe_at_once(cfg, device: str, n: int, threads: int, max_tokens: int, steps: int) -> dict | None:
    """`n` probes of `cfg` at once in worker processes of `threads` threads each, from a common barrier."""
    probe = {"cfg": cfg, "device": device, "max_tokens": max_tokens, "steps": steps,
             "barrier": context().Barrier(n, timeout=120)}
    ends = run_points([{"name": str(i), "probe": probe} for i in range(n)], n, threads, None)
    done = [value for kind, value in ends.values() if kind == "done"]
    if len(done) < n:
        return None
    return {k: sum(r[k] for r in done) / n for k in ("train_s_per_token", "eval_s_per_token")} | \
        {"probe_batch": done[0]["probe_batch"], "probe_steps": steps, "at_once": n, "threads": threads}


def run_points(jobs: list[dict], n: int, threads: int, on_line, on_metric=None, on_end=None) -> dict[str, tuple]:
    """Train `jobs` `n` at a time in workers of `threads` threads ({"name", "train": train_run's arguments},
    or time them: {"name", "probe": run_timing.probe's}),
    reporting lines, metrics and each end (done, busy, stopped, raise, killed). A failure starts no new
    point; an exception stops the rest."""
    ctx = context()
    pending, ends = list(jobs), {}
    running: dict[str, dict] = {}
    failed = False
    try:
        while running or (pending and not failed):  # a failure starts no new point
            while pending and len(running) < n and not failed:
                job = pending.pop(0)
                proc, recv = _launch(ctx, ({**job, "metrics": on_metric is not None}, threads))
                running[job["name"]] = {"proc": proc, "recv": recv, "last": None, "eof": False, "t0": time.perf_counter()}
            ready = wait([w["recv"] for w in running.values()] + [w["proc"].sentinel for w in running.values()],
                         timeout=5.0)
            for name, w in list(running.items()):
                if w["recv"] in ready:
                    _read(w, name, on_line, on_metric)
                if w["proc"].sentinel not in ready and not w["eof"]:
                    continue
                while not w["eof"] and w["recv"].poll():  # its last lines, then its end
                    _read(w, name, on_line, on_metric)
                end = _reap(running.pop(name))
                ends[name] = end
                if on_end:
                    on_end(name, *end, time.perf_counter() - w["t0"])
                failed = failed or end[0] in ("killed", "raise", "stopped")
                if end[0] == "raise":
                    _stop(running)
    except BaseException:  # Ctrl-C or an error here: the workers save and stop, then it goes on up
        _stop(running, join=True)
        raise
    return ends


def _read(w: dict, name: str, on_line, on_metric) -> None:
    """One message of a worker: a line, a metrics row, or its last word (kept for its end)."""
    try:
        kind, value = w["recv"].recv()
    except (EOFError, OSError):
        w["eof"] = True
        return
    if kind == "log":
        on_line(name, value)
    elif kind == "metric":
        on_metric(name, value)
    else:
        w["last"] = (kind, value)


def _reap(w: dict) -> tuple:
    """A worker that has ended: joined, its pipe closed; its last word, or how it died."""
    proc = w["proc"]
    proc.join()
    w["recv"].close()
    if w["last"] is not None:
        return w["last"]
    code = proc.exitcode or 0
    return "killed", signal.Signals(-code).name if code < 0 else f"exit code {code}"


def _stop(running: dict, join: bool = False) -> None:
    """SIGTERM to each worker still alive (it saves and stops); `join`: then wait for each."""
    for w in running.values():
        w["proc"].terminate()  # SIGTERM; nothing for one that has ended
    for w in running.values() if join else ():
        w["proc"].join(timeout=120)
