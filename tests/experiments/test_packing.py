"""Points at once: the choice from a measurement, its plan, bit-identical results, and the faults of
worker processes (a point killed, the sweep killed, the whole group killed, a full disk, two sweeps)."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from lrngpt.experiments import packing
from lrngpt.experiments.grid import resolve_sweep
from tests.cli_run import HUNG, run_cli, wait_for

TINY = ["--scale", "tiny", "--axis", "model.n_embd=16,32,64"]


def weights(out: Path) -> dict:
    """Every point's final weights and summary numbers (what must be the same, bit for bit)."""
    got = {}
    for run in sorted((out / "runs").iterdir()):
        ckpt = torch.load(run / "ckpt_last.pt", weights_only=True)
        s = json.loads((run / "summary.json").read_text())
        got[run.name] = ({k: v.clone() for k, v in ckpt["model"].items()}, ckpt["step"], s["val_bpb"], s["train_bpb"])
    return got


def same(a: dict, b: dict) -> bool:
    """The weights, the step and the val bpb bit for bit; the train bpb to 1e-9: its evaluation batches are
    big enough for torch's CPU matrix products to split them by the thread count, so its last digits
    follow the threads a point had (1 packed, all alone), never the packing itself."""
    return a.keys() == b.keys() and all(
        a[n][1:3] == b[n][1:3] and a[n][3] == pytest.approx(b[n][3], rel=1e-9)
        and all(torch.equal(a[n][0][k], b[n][0][k]) for k in a[n][0]) for n in a)


def sha(paths) -> dict:
    return {str(p): hashlib.sha256(Path(p).read_bytes()).hexdigest() for p in paths}


@pytest.fixture(scope="module")
def one_after_another(tmp_path_factory):
    """The tiny sweep trained in this process, one point after another: what every packed run must equal."""
    out = tmp_path_factory.mktemp("seq") / "sw"
    code, _, err = run_cli("sweep", "embed-dim", *TINY, "--set", "train.steps=40", "--out", str(out),
                           "--points-at-once", "1")
    assert code == 0, err
    return weights(out)


def test_packed_points_are_bit_identical_to_one_after_another(one_after_another, tmp_path):
    out = tmp_path / "sw"
    code, stdout, err = run_cli("sweep", "embed-dim", *TINY, "--set", "train.steps=40", "--out", str(out),
                                "--points-at-once", "2", "--json")
    assert code == 0, err
    assert "points at once: 2 (why: --points-at-once 2" in err and "2 at once)" in err
    assert json.loads(stdout)["packing"]["points_at_once"] == 2
    assert sorted(json.loads(stdout)["trained"]) == ["d16-s1337-t40", "d32-s1337-t40", "d64-s1337-t40"]
    assert same(weights(out), one_after_another)  # 1 thread each (packed) and all threads: the same bits


def test_the_choice_is_a_measurement_with_its_reason():
    cfgs = [p.config for p in resolve_sweep("embed-dim", "tiny", [], ["model.n_embd=4,64"]).points]
    alone = [{"train_s_per_token": 2e-6, "eval_s_per_token": 1e-6}] * 2

    def packed_at(per_token):
        return lambda cfg, device, n, k: {"train_s_per_token": per_token, "eval_s_per_token": per_token / 2}

    fast = packing.choose(cfgs, alone, 8, "cpu", None, 600.0, packed_fn=packed_at(3e-6))
    threads = packing.threads_here()
    if threads >= 2:  # 2 points at 3e-6 s a token each against one at 2e-6: 1.33x
        assert fast["points_at_once"] >= 2 and fast["gain"] == pytest.approx(fast["points_at_once"] * 2 / 3, rel=1e-3)
        assert fast["slowdown"] == pytest.approx(1.5) and "the tokens per second of one point" in fast["why"]
        slow = packing.choose(cfgs, alone, 8, "cpu", None, 600.0, packed_fn=packed_at(2e-6 * threads))
        assert slow["points_at_once"] == 1 and f"under the {packing.PACK_GAIN}x it takes" in slow["why"]
    for args, why in ((("cpu", 1, 600.0), "--points-at-once 1"), (("cuda", None, 600.0), "train on cuda"),
                      (("cpu", None, 30.0), "too short to gain")):
        device, forced, serial = args
        got = packing.choose(cfgs, alone, 8, device, forced, serial, packed_fn=packed_at(1e-9))
        assert got["points_at_once"] == 1 and why in got["why"], got
    assert packing.choose(cfgs, alone, 1, "cpu", None, 600.0, packed_fn=packed_at(1e-9))["why"] == "one point to train"
    forced = packing.choose(cfgs, alone, 8, "cpu", 3, 30.0, packed_fn=lambda *a: None)  # forced, not measurable
    assert forced["points_at_once"] == 3 and forced["slowdown"] is None


def test_the_planned_wall_time_is_the_slots_makespan():
    assert packing.makespan([10, 6, 5, 1], 1) == 22
    assert packing.makespan([10, 6, 5, 1], 2) == 11  # 10 + 1 | 6 + 5
    assert packing.makespan([], 2) == 0
    pts = resolve_sweep("embed-dim", "tiny", [], ["model.n_embd=4,64,16"]).points
    assert [p.config.model.n_embd for p in packing.order(pts, lambda p: p.config.model.n_embd)] == [64, 16, 4]


def test_the_dry_run_says_how_many_points_run_at_once_and_why(tmp_path):
    code, doc, err = run_cli("sweep", "embed-dim", *TINY, "--out", str(tmp_path / "a"), "--dry-run", "--json")
    r = json.loads(doc)
    assert code == 0 and r["points_at_once"] == 1 and isinstance(r["points_at_once"], int), err
    assert "too short to gain" in r["packing"]["why"]  # tiny points: seconds, not worth the workers
    code, text, _ = run_cli("sweep", "embed-dim", *TINY, "--out", str(tmp_path / "a"), "--dry-run",
                            "--points-at-once", "2")
    assert code == 0 and "points at once: 2 (why: --points-at-once 2" in text and "(2 at once)" in text


def test_a_budget_plans_its_wall_time_with_points_at_once():
    from lrngpt.experiments import budget as B
    from tests.experiments.test_budget import probe_at

    def packed(cfg, device, n, k):  # two at once, each 1.25x slower than alone: 1.6x the tokens
        t = probe_at(2e-6)(cfg, device)
        return {"train_s_per_token": t["train_s_per_token"] * 1.25, "eval_s_per_token": t["eval_s_per_token"] * 1.25}

    alone = B.plan_budget("embed-dim", 10, [], [], probe_fn=probe_at(2e-6))
    two = B.plan_budget("embed-dim", 10, [], [], probe_fn=probe_at(2e-6), pack_fn=packed, points_at_once=2)
    assert alone.packing["points_at_once"] == 1 and two.packing["points_at_once"] == 2
    read = [b.sets["train.steps"] * b.sets["train.batch_size"] * len(b.point_seconds) for b in (alone, two)]
    assert read[1] > 1.15 * read[0]  # more steps fit in the same ten minutes (the largest run bounds a slot)
    assert two.est_seconds <= 600 and two.parts["points"] == pytest.approx(
        packing.makespan(list(two.point_seconds.values()), 2), abs=len(two.point_seconds))
    assert two.to_dict()["packing"]["points_at_once"] == 2


@pytest.mark.packed_probe
def test_the_real_packed_probe_times_two_workers_at_once():
    cfg = resolve_sweep("embed-dim", "tiny", [], ["model.n_embd=16"]).points[0].config
    t = packing.probe_packed(cfg, "cpu", 2, 1, steps=2)
    assert t is not None and t["at_once"] == 2 and t["threads"] == 1 and 0 < t["train_s_per_token"] < 1


# ---- faults: kills, a full disk, two sweeps at once (tiny models, few steps) ---------------------------

SLOW = ["--scale", "tiny", "--axis", "model.n_embd=16,32,64", "--set", "train.steps=400", "--set",
        "train.save_every=20", "--set", "train.eval_every=200"]


@pytest.fixture(scope="module")
def slow_reference(tmp_path_factory):
    out = tmp_path_factory.mktemp("ref") / "sw"
    code, _, err = run_cli("sweep", "embed-dim", *SLOW, "--out", str(out), "--points-at-once", "1")
    assert code == 0, err
    return weights(out)


def start(out: Path, *extra: str, session: bool = False) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "lrngpt", "sweep", "embed-dim", *SLOW, "--out", str(out),
                             "--points-at-once", "2", *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=session)


def trainers(out: Path, sweep: subprocess.Popen, at_least: int = 1) -> list[int]:
    """The pids of the worker processes training points in `out` (their run locks), once `at_least` have
    saved a first checkpoint: waited for as long as the sweep runs, however slowly."""
    found: list[int] = []

    def ready() -> bool:
        found[:] = [pid for pid in _training(out) if _alive(pid)]
        return len(found) >= at_least

    wait_for(ready, sweep, f"{at_least} points training in {out}")
    return list(found)


def _training(out: Path) -> dict[int, Path]:
    """pid -> run directory of each point in `out` with a checkpoint and a run lock naming a process."""
    got = {}
    for run in (out / "runs").glob("*") if (out / "runs").is_dir() else []:
        try:  # (a point that ends meanwhile takes its lock away)
            words = (run / ".lrn-lock").read_text().split() if (run / "ckpt_last.pt").is_file() else []
        except FileNotFoundError:
            words = []
        if words:
            got[int(words[0])] = run
    return got


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False


def wait_gone(out: Path, pids: list[int]) -> None:
    """The workers `pids` stop (for as long as they take: each ends at the latest with its point), and they
    stopped early: none trained its point to the end."""
    runs = {pid: run for pid, run in _training(out).items() if pid in pids}
    t0 = time.monotonic()
    while any(_alive(p) for p in pids):
        assert time.monotonic() - t0 < HUNG, f"workers {pids} hung"  # (only a machine stuck for good)
        time.sleep(0.05)
    finished = [run.name for run in runs.values() if (run / "summary.json").exists()]
    assert finished == [], f"workers {pids} trained on to the end of {finished} after the sweep died"


def resume_and_check(out: Path, reference: dict, mine: dict) -> None:
    """The same command again finishes every point bit-exactly; the user's files are as they were."""
    code, _, err = run_cli("sweep", "embed-dim", *SLOW, "--out", str(out), "--points-at-once", "2")
    assert code == 0, err
    assert same(weights(out), reference)
    assert {Path(k): v for k, v in sha(mine).items()} == mine


def users_files(out: Path) -> dict:
    """A file of yours beside the sweep (its directory itself refuses files that are not lrn's)."""
    note = out.parent / "my-notes.txt"
    note.write_text("mine, not lrn's\n")
    return {note: sha([note])[str(note)]}


@pytest.mark.slow
@pytest.mark.parametrize("victim", ["one point", "the sweep", "the whole group"])
def test_a_kill_while_points_train_at_once_resumes_bit_exactly(victim, slow_reference, tmp_path):
    out = tmp_path / "sw"
    mine = users_files(out)
    proc = start(out, session=True)
    try:
        pids = trainers(out, proc, at_least=2)
        if victim == "one point":
            os.kill(pids[0], signal.SIGKILL)
            _, err = proc.communicate()
            last = err.strip().splitlines()[-1]
            assert proc.returncode == 2 and "did not finish: its worker process ended (SIGKILL)" in last, err
            assert "run the same `lrn sweep` command again to resume it" in last and "Traceback" not in err
        elif victim == "the sweep":
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
            wait_gone(out, pids)  # the workers see the sweep gone, save and stop: no orphan trains on
        else:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            wait_gone(out, pids)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    assert {Path(k): v for k, v in sha(mine).items()} == mine
    resume_and_check(out, slow_reference, mine)


@pytest.mark.slow
def test_two_sweeps_on_one_directory_with_points_at_once_share_the_points(slow_reference, tmp_path):
    out = tmp_path / "sw"
    mine = users_files(out)
    first = start(out)
    busy = trainers(out, first, at_least=1)
    # the first's training workers held still while the second starts (a loaded machine could otherwise let
    # the first finish before the second, slower to import torch, reaches its points)
    for pid in busy:
        os.kill(pid, signal.SIGSTOP)
    try:
        second = start(out)
        done_second = second.communicate()
    finally:
        for pid in busy:
            os.kill(pid, signal.SIGCONT)
    outs = [first.communicate(), done_second]
    assert [p.returncode for p in (first, second)] == [0, 0], ["".join(err.splitlines(True)[-8:]) for _, err in outs]
    said = outs[0][1] + outs[1][1]
    assert "another process is training it" in said  # the second skipped what the first trains
    resume_and_check(out, slow_reference, mine)  # the one that ended first gathers the rest again


@pytest.mark.slow
def test_a_full_disk_while_two_points_write_stops_in_one_line_and_resumes(slow_reference, tmp_path):
    disk = tmp_path / "disk"
    disk.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2500k", "tmpfs", str(disk)],
                      capture_output=True).returncode != 0:
        pytest.skip("mounting a small tmpfs needs root")
    try:
        out = disk / "sw"
        mine = users_files(out)
        proc = start(out)
        _, err = proc.communicate()
        last = err.strip().splitlines()[-1]
        assert proc.returncode == 1 and "Traceback" not in err, err  # lrn's disk-full exit, as in one process
        assert "disk full while writing" in last and "the earlier file is intact" in last, last
        assert {Path(k): v for k, v in sha(mine).items()} == mine
        subprocess.run(["mount", "-o", "remount,size=64m", str(disk)], check=True)
        resume_and_check(out, slow_reference, mine)
    finally:
        subprocess.run(["umount", "-l", str(disk)], capture_output=True)


SCRIPT = """import lrngpt
print("top level")
s = lrngpt.sweep("embed-dim", "tiny", out="sw", axes={"model.n_embd": [16, 32]}, set={"train.steps": 10},
                 points_at_once=2)
print("points at once", s.result["packing"]["points_at_once"], "points", len(s.table))
"""


def test_a_script_without_the_main_guard_runs_points_at_once_and_its_top_level_once(tmp_path):
    """A worker does not import the user's script again: a top-level lrngpt.sweep (no `if __name__ ==
    "__main__":`) ran again in every worker, started sweeps there and ended on multiprocessing's tracebacks."""
    (tmp_path / "study.py").write_text(SCRIPT)
    root = Path(__file__).resolve().parents[2]
    r = subprocess.run([sys.executable, "study.py"], capture_output=True, text=True, timeout=HUNG, cwd=tmp_path,
                       env={**os.environ, "PYTHONPATH": str(root)})
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    assert r.stdout.splitlines() == ["top level", "points at once 2 points 2"], r.stdout


def forkserver_of(pid: int, timeout: float = HUNG) -> int:
    """The pid of the fork server process `pid` started, once it imports torch and `pid` hears SIGINT
    again (it ignores it while it starts the server: Linux, read from /proc)."""
    t0 = time.time()
    while time.time() - t0 < timeout:
        status = Path(f"/proc/{pid}/status").read_text()
        ignored = int(next(ln for ln in status.splitlines() if ln.startswith("SigIgn:")).split()[1], 16)
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                ppid = int(stat.read_text().rsplit(")", 1)[1].split()[1])
                if ppid == pid and b"forkserver" in (stat.parent / "cmdline").read_bytes() and \
                        not ignored & (1 << (signal.SIGINT - 1)) and "libtorch" in (stat.parent / "maps").read_text():
                    return int(stat.parent.name)
            except (OSError, ValueError, IndexError):
                continue
        time.sleep(0.01)
    raise AssertionError(f"process {pid} started no fork server")


@pytest.mark.parametrize("marker", ["timing 2 points at once", "step 5/400"])
def test_ctrl_c_while_points_at_once_are_probed_or_train_is_one_line(marker, tmp_path):
    """Ctrl-C reaches the whole process group (the sweep, the fork server importing torch, every worker):
    the sweep's process alone says it, in one line; it printed ~60 lines of KeyboardInterrupt tracebacks.
    A cache of its own, so that the packed probe runs (not remembered) and is interrupted."""
    root = Path(__file__).resolve().parents[2]
    child = subprocess.Popen([sys.executable, "-m", "lrngpt", "sweep", "embed-dim", *SLOW, "--out", str(tmp_path / "sw"),
                              "--points-at-once", "2", "-v"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             start_new_session=True, env={**os.environ, "PYTHONPATH": str(root),
                                                          "LRN_CACHE_DIR": str(tmp_path / "cache")},
                             # a terminal's foreground command hears Ctrl-C, whatever this harness inherited
                             # (a job started in the background of a script runs with SIGINT ignored)
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    before, after = [], []
    try:
        for line in child.stderr:
            before.append(line)
            if marker in line:
                if marker.startswith("timing"):  # the fork server importing torch (for seconds)
                    forkserver_of(child.pid)
                os.killpg(child.pid, signal.SIGINT)  # as a terminal's Ctrl-C: the foreground group
                break
        after = child.stderr.readlines()
        code = child.wait(timeout=HUNG)
    finally:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGKILL)
        child.wait()
    err = "".join(before + after)
    assert any(marker in line for line in before), err
    said = [line for line in after if not line.startswith("  d")]  # not a point's own lines, already sent
    assert code == 130 and said == ["lrn sweep: interrupted\n"], err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err


@pytest.mark.slow
def test_the_packed_benchmark_runs_in_its_quick_form():
    root = Path(__file__).resolve().parents[2]
    r = subprocess.run([sys.executable, str(root / "benchmarks" / "bench_packed.py"), "--quick"], capture_output=True,
                       text=True, timeout=HUNG, cwd=root)
    assert r.returncode == 0, r.stderr
    assert "packed / one after another:" in r.stdout and "same results: yes" in r.stdout, r.stdout
    assert "tokens/s" in r.stdout and "load average:" in r.stdout
