"""bfloat16 on a CPU: native or emulated from the CPU's flags (both ways, with made-up flag sets), the
warning a run gets where it is emulated, what summary.json records, the budget dry run's offer (both
ways, with made-up caps and step times), and benchmarks/bench_bf16.py --quick."""

from __future__ import annotations

import importlib.util
import json
import logging
from pathlib import Path

import pytest

from lrngpt.core import log as logging_module
from lrngpt.device import precision as P
from lrngpt.device.precision import DeviceCaps, cpu_bf16, cpu_flags, cpu_isa, resolve_precision
from lrngpt.experiments import bf16_offer as O
from lrngpt.training.trainer import train_run
from tests.cli_run import run_cli

ROOT = Path(__file__).resolve().parents[1]
ZEN1 = {"fpu", "sse2", "avx", "avx2", "fma"}  # this project's development machine: AVX2 only
ZEN4 = ZEN1 | {"avx512f", "avx512bw", "avx512_bf16"}
SAPPHIRE = ZEN4 | {"avx512_fp16", "amx_tile", "amx_bf16", "amx_int8"}
GRAVITON3 = {"fp", "asimd", "sve", "bf16", "fphp"}
NATIVE_CPU = DeviceCaps("cpu", "Intel Xeon Platinum 8480+", None, True, None, True)
EMULATED_CPU = DeviceCaps("cpu", "AMD EPYC", None, True, None, False)
UNKNOWN_CPU = DeviceCaps("cpu", "arm", None, True, None, None)


@pytest.mark.parametrize("flags, bf16, isa", [(ZEN1, "emulated", "avx2"), (ZEN4, "native", "avx512_bf16"),
                                              (SAPPHIRE, "native", "amx"), (ZEN4 - {"avx512_bf16"}, "emulated", "avx512"),
                                              (GRAVITON3, "native", "sve"), ({"fp", "asimd"}, "emulated", "neon"),
                                              ({"fpu", "sse2"}, "emulated", "baseline"), (set(), "unknown", "unknown")])
def test_bf16_and_the_isa_level_follow_the_flags(flags, bf16, isa):
    assert cpu_bf16(flags) == bf16 and cpu_isa(flags) == isa


def test_cpu_flags_reads_x86_flags_and_arm_features(tmp_path):
    x86 = tmp_path / "x86"
    x86.write_text("processor\t: 0\nvendor_id\t: GenuineIntel\nflags\t\t: fpu avx2 amx_bf16\n\n"
                   "processor\t: 1\nflags\t\t: fpu\n")
    arm = tmp_path / "arm"
    arm.write_text("processor\t: 0\nFeatures\t: fp asimd bf16\nCPU implementer\t: 0x41\n")
    assert cpu_flags(str(x86)) == {"fpu", "avx2", "amx_bf16"} and P.cpu_vendor(str(x86)) == "GenuineIntel"
    assert cpu_flags(str(arm)) == {"fp", "asimd", "bf16"} and P.cpu_vendor(str(arm)) == "0x41"
    assert cpu_flags(str(tmp_path / "missing")) == frozenset()  # macOS: no /proc/cpuinfo, bf16 unknown


def test_cpu_info_names_what_decides_bf16():
    info = P.cpu_info(SAPPHIRE)
    assert (info["isa"], info["bf16"], info["fp16_units"]) == ("amx", "native", True)
    assert info["flags"] == ["avx2", "avx512f", "avx512_bf16", "avx512_fp16", "amx_tile", "amx_bf16"]
    assert info["torch_capability"] and info["name"]
    assert (P.cpu_info(ZEN1)["bf16"], P.cpu_info(ZEN1)["fp16_units"]) == ("emulated", False)


def test_the_warning_only_for_bfloat16_where_it_is_emulated_or_may_be():
    bf16 = lambda caps: resolve_precision("bfloat16", caps)  # noqa: E731
    assert P.emulation_warning(bf16(NATIVE_CPU), NATIVE_CPU) is None
    assert P.emulation_warning(resolve_precision("float32", EMULATED_CPU), EMULATED_CPU) is None
    assert P.emulation_warning(resolve_precision("auto", EMULATED_CPU), EMULATED_CPU) is None
    w = P.emulation_warning(bf16(EMULATED_CPU), EMULATED_CPU)
    assert "AMD EPYC, which has no bfloat16 instructions" in w and "emulated here, typically slower than float32" in w
    assert "float32 (what auto picks on a CPU) is the exact default" in w
    assert "may have no bfloat16 instructions" in P.emulation_warning(bf16(UNKNOWN_CPU), UNKNOWN_CPU)
    assert [P.bf16_hardware(bf16(c), c) for c in (NATIVE_CPU, EMULATED_CPU, UNKNOWN_CPU)] == \
        ["native", "emulated", "unknown"]
    assert P.bf16_hardware(resolve_precision("float32", NATIVE_CPU), NATIVE_CPU) is None


def test_an_emulated_bf16_run_warns_once_and_its_summary_says_so(tiny_config, tmp_path, monkeypatch, caplog):
    import lrngpt.training.start as T  # where a job finds its device's capabilities

    monkeypatch.setattr(T, "device_caps", lambda device: EMULATED_CPU)
    logging_module.warning_once.cache_clear()  # warnings given before this test: forgotten
    cfg = lambda: tiny_config("train.steps=2", "train.eval_every=2", "train.dtype=bfloat16")  # noqa: E731
    with caplog.at_level(logging.WARNING, logger="lrngpt"):
        train_run(cfg(), tmp_path / "a", progress=False)
        train_run(cfg(), tmp_path / "b", progress=False)  # a sweep's second point: no second warning
    warned = [r.getMessage() for r in caplog.records if "emulated here" in r.getMessage()]
    assert len(warned) == 1 and warned[0].startswith("warning: train.dtype=bfloat16 on AMD EPYC")
    s = json.loads((tmp_path / "a" / "summary.json").read_text())
    assert (s["dtype"], s["bf16_hardware"]) == ("bfloat16", "emulated")
    assert json.loads((tmp_path / "b" / "summary.json").read_text())["bf16_hardware"] == "emulated"  # unwarned, recorded


def test_the_offer_line_only_for_native_bf16_measured_faster():
    from lrngpt.experiments.grid import resolve_sweep

    points = resolve_sweep("embed-dim", "tiny", ["train.device=cpu"]).points

    def line(caps, float32, bfloat16=1.0):
        return O.bf16_offer(points, caps, lambda cfg, device: {"float32": float32, "bfloat16": bfloat16})["line"]
    assert line(NATIVE_CPU, 1.8).startswith("bfloat16 would be 1.80x faster per step here (measured); add --set "
                                            "train.dtype=bfloat16")
    assert "not bit-identical to float32" in line(NATIVE_CPU, 1.8) and O.SEE in line(NATIVE_CPU, 1.8)
    assert line(NATIVE_CPU, 1.05) is None  # within a probe's noise
    assert line(NATIVE_CPU, 0.5) is None and line(EMULATED_CPU, 3.0) is None
    assert line(UNKNOWN_CPU, 3.0) is None and line(NATIVE_CPU, 3.0, 0.0) is None  # no bfloat16 time: no speedup


def test_bf16_offer_probes_the_largest_cpu_point_only_where_native():
    from lrngpt.experiments.grid import resolve_sweep

    points = resolve_sweep("embed-dim", "tiny", ["train.device=cpu"]).points
    calls = []

    def measure(cfg, device):
        calls.append(cfg.model.n_embd)
        return {"float32": 0.9, "bfloat16": 0.5}

    r = O.bf16_offer(points, NATIVE_CPU, measure)
    assert calls == [max(p.config.model.n_embd for p in points)] and r["speedup"] == pytest.approx(1.8)
    assert r["line"].startswith("bfloat16 would be 1.80x faster per step here")
    assert O.bf16_offer(points, EMULATED_CPU, measure) == {"bf16": "emulated", "speedup": None, "seconds": None,
                                                           "line": None} and len(calls) == 1  # not probed
    slower = O.bf16_offer(points, NATIVE_CPU, lambda cfg, device: {"float32": 0.5, "bfloat16": 0.9})
    assert slower["line"] is None and slower["speedup"] == pytest.approx(0.5 / 0.9)
    asked = resolve_sweep("embed-dim", "tiny", ["train.device=cpu", "train.dtype=bfloat16"]).points
    assert O.bf16_offer(asked, NATIVE_CPU, measure) is None  # bfloat16 already asked for: nothing to offer


@pytest.mark.parametrize("native", [True, False])
def test_the_budget_dry_run_offers_bf16_only_where_native(monkeypatch, tmp_path, native):
    import lrngpt.training.timing as run_timing
    from tests.experiments.test_budget import probe_at

    monkeypatch.setattr(run_timing, "probe", probe_at(2e-6))
    monkeypatch.setattr(O, "device_caps", lambda device: NATIVE_CPU if native else EMULATED_CPU)
    monkeypatch.setattr(O, "dtype_step_seconds", lambda cfg, device: {"float32": 0.3, "bfloat16": 0.2})
    out = tmp_path / "width"
    code, text, _ = run_cli("sweep", "embed-dim", "--minutes", "3", "--out", str(out), "--dry-run")
    assert code == 0, text
    offered = [line for line in text.splitlines() if line.startswith("bfloat16 would be")]
    assert offered == (["bfloat16 would be 1.50x faster per step here (measured); add --set train.dtype=bfloat16 "
                        f"(not bit-identical to float32; see {O.SEE})"] if native else [])
    code, doc, _ = run_cli("sweep", "embed-dim", "--minutes", "3", "--out", str(out), "--dry-run", "--json")
    assert json.loads(doc)["bf16"]["bf16"] == ("native" if native else "emulated") and not out.exists()


@pytest.mark.slow
def test_the_benchmark_quick_mode_prints_both_dtypes_and_the_difference(tmp_path, capsys):
    spec = importlib.util.spec_from_file_location("bench_bf16", ROOT / "benchmarks/bench_bf16.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    out = tmp_path / "bf16.json"
    assert bench.main(["--quick", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert text.startswith("CPU: ") and f"bfloat16 {P.cpu_bf16(P.cpu_flags()).upper()}" in text.splitlines()[0]
    doc = json.loads(out.read_text())
    assert [v["n_embd"] for v in doc["verdicts"]] == [8, 16] and len(doc["rows"]) == 4
    for v in doc["verdicts"]:
        f32, b16 = v["float32"], v["bfloat16"]
        assert f32["s_per_step"] > 0 and b16["s_per_step"] > 0 and 3 < f32["val_bpb"] < 12
        assert v["val_bpb_diff"] == pytest.approx(b16["val_bpb"] - f32["val_bpb"])
        assert v["speedup"] == pytest.approx(f32["s_per_step"] / b16["s_per_step"])
        assert v["within_noise"] is (abs(v["val_bpb_diff"]) <= v["noise"]) and v["noise"] >= 0.0004
        assert f"d={v['n_embd']}: seconds per step bfloat16 / float32 {1 / v['speedup']:.2f}" in text
        assert f"difference {v['val_bpb_diff']:+.4f}" in text


def test_the_step_probe_times_both_dtypes_and_leaves_the_generator_alone(tiny_config):
    import torch

    from lrngpt.training.precision_probe import dtype_step_seconds

    torch.manual_seed(5)
    before = torch.get_rng_state()
    seconds = dtype_step_seconds(tiny_config("train.batch_size=2", "train.seq_len=16"), "cpu", rounds=2)
    assert set(seconds) == {"float32", "bfloat16"} and all(0 < s < 30 for s in seconds.values())
    assert torch.equal(torch.get_rng_state(), before)
