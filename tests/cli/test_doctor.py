"""`lrn doctor --json`: every field, on this CPU-only machine, in seconds (--no-probe); the compile
probe reports a failure or a hang instead of raising."""

from __future__ import annotations

import json

from lrngpt.api import machine as doctor_mod
from lrngpt.api import texts
from lrngpt.cli.main import main
from lrngpt.data.sizing import STORIES_BYTES_PER_TOKEN


def test_doctor_json_has_every_field_and_exits_0_without_a_gpu(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("LRN_CACHE_DIR", str(tmp_path / "not-yet" / "cache"))
    assert main(["doctor", "--json", "--no-probe"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert {"lrn", "python", "torch", "cuda", "devices", "default_device", "precision", "compile", "threads",
            "cache", "full_scale"} <= set(r)
    import torch

    assert r["torch"] == torch.__version__ and r["cuda"] == torch.version.cuda
    cpu = r["devices"][0]
    assert cpu["device"] == "cpu" and cpu["memory_bytes"] > 0 and {"bf16", "fp16", "tf32", "capability"} <= set(cpu)
    if not torch.cuda.is_available():
        assert r["default_device"] == "cpu" and r["precision"]["dtype"] == "float32" and r["precision"]["tf32"] is False
    assert r["compile"] == {"probed": False, "works": None}
    assert r["threads"]["torch"] == torch.get_num_threads() >= 1
    assert r["cache"]["dir"] == str(tmp_path / "not-yet" / "cache") and r["cache"]["exists"] is False
    assert r["cache"]["free_bytes"] > 0  # of the disk it will be on
    f = r["full_scale"]
    assert f["points"] == 8 and f["est_seconds"] > 0 and f["device"] == r["default_device"]
    assert f["disk_bytes"] == sum(f["disk"].values()) and f["disk"]["download"] == 2_227_753_162 + 22_502_601
    # uint16 ids at the bytes per token measured on the stories (the value a budget sizes stories:SIZE with)
    assert f["disk"]["token_arrays"] == int(f["disk"]["download"] / STORIES_BYTES_PER_TOKEN) * 2
    assert not (tmp_path / "not-yet").exists()  # it downloads and writes nothing


def test_doctor_text_says_each_thing_in_a_line(capsys):
    assert main(["doctor", "--no-probe"]) == 0
    out = capsys.readouterr().out
    for part in ("torch ", "cpu: ", "train.dtype=auto on ", "torch.compile: not probed", "threads: ", "cache: ",
                 "--scale full here: about "):
        assert part in out, part


def test_the_compile_probe_reports_a_failure_and_a_hang(monkeypatch):
    monkeypatch.setattr(doctor_mod, "COMPILE_PROBE", "raise SystemExit('no compiler: {device}')")
    r = doctor_mod.compile_probe("cpu", timeout=600)  # (it answers at once: only a stuck machine waits)
    assert r["works"] is False and r["error"] == "no compiler: cpu"
    # a probe that never answers: compile_probe returning at all is its timeout at work
    monkeypatch.setattr(doctor_mod, "COMPILE_PROBE", "import threading; threading.Event().wait()  # {device}")
    r = doctor_mod.compile_probe("cpu", timeout=0.5)
    assert r["works"] is False and "no answer within 0.5 s" in r["error"] and r["seconds"] >= 0.5


def test_a_bad_probe_timeout_is_one_line(capsys):
    try:
        main(["doctor", "--probe-timeout", "0"])
    except SystemExit as e:
        assert e.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "must be a positive, finite number of seconds" in err[0]


def test_doctor_says_what_the_cpu_has_and_whether_bf16_is_native_here(capsys):
    from lrngpt.device.precision import cpu_bf16, cpu_flags

    assert main(["doctor", "--json", "--no-probe"]) == 0
    c = json.loads(capsys.readouterr().out)["cpu"]
    assert {"vendor", "name", "isa", "flags", "torch_capability", "bf16", "fp16_units"} <= set(c)
    import torch

    here = cpu_bf16(cpu_flags())
    assert c["bf16"] == here and c["torch_capability"] == torch.backends.cpu.get_cpu_capability()
    assert main(["doctor", "--no-probe"]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("cpu ISA: "))
    assert f"cpu ISA: {c['isa']} (" in line and f"bfloat16 {here} here" in line


def test_the_cpu_line_both_ways():
    from lrngpt.device.precision import cpu_info

    native = texts.cpu_text(cpu_info({"avx2", "avx512f", "avx512_bf16", "amx_tile", "amx_bf16"}))
    assert "cpu ISA: amx (" in native and "flags avx2, avx512f, avx512_bf16, amx_tile, amx_bf16" in native
    assert "bfloat16 native here" in native and "float32 stays the exact default" in native
    emulated = texts.cpu_text(cpu_info({"avx", "avx2"}))
    assert "cpu ISA: avx2 (" in emulated and "bfloat16 emulated here" in emulated and "typically slower" in emulated
    assert "bfloat16 unknown here" in texts.cpu_text(cpu_info(set()))
