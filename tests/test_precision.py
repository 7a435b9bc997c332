"""train.dtype: auto resolves per device (CUDA branches with made-up devices); float16 and bfloat16
train and resume bit-exactly on CPU autocast; summary.json and the checkpoint record what was used."""

from __future__ import annotations

import json

import pytest
import torch

from lrngpt.device.precision import DeviceCaps, apply_tf32, resolve_precision, saved_dtype
from lrngpt.errors import UserError
from lrngpt.store.checkpoint import load_checkpoint
from lrngpt.store.layout import LAST
from lrngpt.training.trainer import train_run

CPU = DeviceCaps("cpu", "a CPU", None, True)
H100 = DeviceCaps("cuda", "NVIDIA H100 80GB HBM3", (9, 0), True, 80 * 2**30)
T4 = DeviceCaps("cuda", "Tesla T4", (7, 5), False, 15 * 2**30)
V100 = DeviceCaps("cuda", "Tesla V100-SXM2-16GB", (7, 0), False)
MPS = DeviceCaps("mps", "Apple MPS", None, True)


@pytest.mark.parametrize("caps, dtype, scaler", [(CPU, "float32", False), (MPS, "float32", False),
                                                  (H100, "bfloat16", False), (T4, "float16", True),
                                                  (V100, "float16", True)])
def test_auto_resolves_per_device(caps, dtype, scaler):
    p = resolve_precision("auto", caps)
    assert (p.dtype, p.grad_scaler, p.tf32, p.requested) == (dtype, scaler, False, "auto")
    assert p.autocast_dtype == {"float32": None, "bfloat16": torch.bfloat16, "float16": torch.float16}[dtype]


def test_tf32_only_for_float32_on_cuda_from_ampere_on_and_when_asked():
    assert resolve_precision("float32", H100).tf32 is True
    assert resolve_precision("float32", H100, tf32=False).tf32 is False
    assert resolve_precision("float32", T4).tf32 is False  # no TF32 before capability 8.0
    assert resolve_precision("float32", CPU).tf32 is False
    assert resolve_precision("bfloat16", H100).tf32 is False


def test_explicit_dtypes_are_kept_and_bfloat16_on_a_gpu_without_it_is_refused():
    assert resolve_precision("bfloat16", CPU).dtype == "bfloat16"
    assert resolve_precision("float16", CPU).grad_scaler is True
    assert resolve_precision("float16", H100).dtype == "float16"
    with pytest.raises(UserError, match="Tesla T4.*7.5.*no bfloat16; use train.dtype=float16"):
        resolve_precision("bfloat16", T4)


def test_config_accepts_the_four_dtypes_and_names_them_when_wrong(tiny_config):
    assert tiny_config().train.dtype == "auto" and tiny_config().train.tf32 is True
    for d in ("float32", "bfloat16", "float16"):
        assert tiny_config(f"train.dtype={d}").train.dtype == d
    with pytest.raises(UserError, match="train.dtype must be one of auto, float32, bfloat16, float16"):
        tiny_config("train.dtype=fp8")


def test_apply_tf32_leaves_cpu_matmuls_alone():
    before = torch.get_float32_matmul_precision()
    apply_tf32(resolve_precision("float32", H100), "cpu")
    assert torch.get_float32_matmul_precision() == before


def test_saved_dtype_is_the_recorded_one_and_none_without_a_record():
    assert saved_dtype({"precision": {"dtype": "float16"}, "config": {"train": {"dtype": "auto"}}}) == "float16"
    assert saved_dtype({"config": {"train": {"dtype": "float32"}}}) is None  # the config's wish is not a record
    assert saved_dtype({"precision": {"dtype": "int8"}}) is None


def test_auto_on_cpu_trains_in_float32_and_summary_records_device_and_dtype(tiny_config, tmp_path):
    lines = []
    train_run(tiny_config("train.steps=4", "train.eval_every=2"), tmp_path / "r", progress=False, log=lines.append)
    s = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert (s["device"], s["dtype"], s["tf32"], s["compile"], s["capability"]) == ("cpu", "float32", False, False, None)
    assert s["dtype_requested"] == "auto" and s["device_name"] and s["grad_scaler"] is False
    assert lines[0].startswith("device cpu (") and "float32 (auto: float32 on cpu)" in lines[0]
    ckpt = load_checkpoint(tmp_path / "r" / LAST)
    assert ckpt["precision"]["dtype"] == "float32" and ckpt["scaler"] is None


def _weights(run_dir):
    return load_checkpoint(run_dir / LAST)["model"]


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_low_precision_on_cpu_autocast_resumes_bit_exactly(tiny_config, tmp_path, dtype):
    cfg = lambda: tiny_config("train.steps=12", "train.eval_every=4", f"train.dtype={dtype}")  # noqa: E731
    train_run(cfg(), tmp_path / "straight", progress=False)
    train_run(cfg(), tmp_path / "split", stop_at=6, progress=False)
    train_run(cfg(), tmp_path / "split", resume=True, progress=False)
    a, b = _weights(tmp_path / "straight"), _weights(tmp_path / "split")
    assert all(torch.equal(a[k], b[k]) for k in a)
    f32 = tmp_path / "f32"
    train_run(tiny_config("train.steps=12", "train.eval_every=4", "train.dtype=float32"), f32, progress=False)
    assert not all(torch.equal(a[k], v) for k, v in _weights(f32).items())  # autocast really ran
    s = json.loads((tmp_path / "split" / "summary.json").read_text())
    assert s["dtype"] == dtype and s["grad_scaler"] is (dtype == "float16")
    ckpt = load_checkpoint(tmp_path / "straight" / LAST)
    if dtype == "float16":
        assert ckpt["scaler"]["scale"] > 0 and ckpt["scaler"] == load_checkpoint(tmp_path / "split" / LAST)["scaler"]
    else:
        assert ckpt["scaler"] is None


def test_float16_resume_restores_the_loss_scale(tiny_config, tmp_path, monkeypatch):
    """The scale is not the default after a resume: it is the checkpoint's (a changed value shows it is read)."""
    cfg = lambda: tiny_config("train.steps=8", "train.eval_every=4", "train.dtype=float16")  # noqa: E731
    run = tmp_path / "r"
    train_run(cfg(), run, stop_at=4, progress=False)
    ckpt = torch.load(run / LAST, weights_only=True)
    ckpt["scaler"]["scale"] = 1024.0
    torch.save(ckpt, run / LAST)
    seen = []
    real = torch.amp.GradScaler.load_state_dict
    monkeypatch.setattr(torch.amp.GradScaler, "load_state_dict",
                        lambda self, sd: (seen.append(sd["scale"]), real(self, sd))[1])
    train_run(cfg(), run, resume=True, progress=False)
    assert seen == [1024.0]
    assert load_checkpoint(run / LAST)["scaler"]["scale"] <= 1024.0  # grown only after 2,000 clean steps


def test_resume_refuses_a_changed_dtype_but_not_a_same_one_written_another_way(tiny_config, tmp_path):
    run = tmp_path / "r"
    train_run(tiny_config("train.steps=6", "train.eval_every=3"), run, stop_at=3, progress=False)  # auto -> float32
    with pytest.raises(UserError, match="trained in float32 and would resume in bfloat16.*breaks the exact resume; "
                                        "resume with --set train.dtype=float32"):
        train_run(tiny_config("train.steps=6", "train.eval_every=3", "train.dtype=bfloat16"), run, resume=True,
              progress=False)
    summary = train_run(tiny_config("train.steps=6", "train.eval_every=3", "train.dtype=float32"), run, resume=True,
                    progress=False)
    assert summary["step"] == 6 and summary["dtype"] == "float32"


def test_a_checkpoint_without_its_precision_record_is_refused_saying_how_to_restart(tiny_config, tmp_path):
    """An exact resume must compute in the dtype the steps so far did; a checkpoint that does not say which is
    refused before any work, and the run is left as it was."""
    run = tmp_path / "r"
    train_run(tiny_config("train.steps=6", "train.eval_every=3", "train.dtype=float32"), run, stop_at=3, progress=False)
    ckpt = torch.load(run / LAST, weights_only=True)
    del ckpt["precision"]
    torch.save(ckpt, run / LAST)
    before = (run / LAST).read_bytes()
    cfg = tiny_config("train.steps=6", "train.eval_every=3", "train.dtype=float32")
    with pytest.raises(UserError, match=r"cannot be resumed: it does not record the precision its steps computed in"):
        train_run(cfg, run, resume=True, progress=False)
    assert (run / LAST).read_bytes() == before
