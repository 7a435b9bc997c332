"""A run's summary: the document summary.json holds after the final evaluation (the full validation
split, the train bpb split by reads), and the line the run ends with."""

from __future__ import annotations

import math

from lrngpt.data.prepared import PreparedData
from lrngpt.data.sizing import sizing
from lrngpt.data.splits import validation_kind
from lrngpt.device.precision import DeviceCaps, Precision, bf16_hardware
from lrngpt.runconfig.schema import RunConfig
from lrngpt.training.resume import State


def summary_document(cfg: RunConfig, data: PreparedData, state: State, val: dict, trn: dict | None, reads: dict,
                     params: dict, device: str, precision: dict, schedules: list[dict]) -> dict:
    """summary.json: the final val bpb (`val`), the train bpb and its split (`trn`, `reads`, None and {}
    when train.train_eval_tokens is 0), and what the run read, computed in and changed."""
    tc = cfg.train
    n_train = len(data.tokens("train"))
    return {
        "step": state.step,
        "finished": state.step >= tc.steps,
        "val_bpb": val["bpb"], "val_loss": val["loss"], "val_tokens": val["tokens"], "val_bytes": val["bytes"],
        "train_bpb": trn["bpb"] if trn else None,
        "train_tokens": trn["tokens"] if trn else 0,
        "gap": (val["bpb"] - trn["bpb"]) if trn else None,  # val - train, the chapter's sign
        "params": params,
        "seconds": round(state.seconds, 2),
        "tokens_seen": state.step * tc.tokens_per_step,
        # how many times the training tokens were read: the chapter's finding assumes < 1
        "train_split_tokens": n_train,
        "passes": sizing(state.step, tc.tokens_per_step, n_train)["passes"],
        "best_val_bpb": state.best_val if math.isfinite(state.best_val) else None,
        "best_step": state.best_step,
        "device": device,
        **precision,
        "corpus": cfg.data.corpus,
        "data_key": data.key,
        "schedule_changes": schedules,  # what --extend changed, at which step
        # which part of the corpus is validation (documents, tail, chunks, own split), and the train
        # bpb split into the targets this run read and those it never read: what `lrn eval --by-reads`
        # measures, for the findings judge to tell memorising from a harder validation text
        "val_split": validation_kind(data.meta),
        **reads,
    }


def precision_summary(caps: DeviceCaps, precision: Precision, compile_: bool) -> dict:
    """What the run computed in, as summary.json records it."""
    return {"device_name": caps.name, "capability": list(caps.capability) if caps.capability else None,
            "dtype": precision.dtype, "dtype_requested": precision.requested,
            "grad_scaler": precision.grad_scaler, "tf32": precision.tf32,
            "bf16_hardware": bf16_hardware(precision, caps), "compile": bool(compile_)}


def final_line(summary: dict, val: dict, trn: dict | None, seconds: float) -> str:
    """What the run's last log line says of its summary (`seconds` unrounded, as the run counted them)."""
    return (f"step {summary['step']}: val bpb {val['bpb']:.4f} on the full validation split ({val['tokens']:,} "
            "tokens)"
            + (f", train bpb {trn['bpb']:.4f} (gap {summary['gap']:+.4f})" if trn else "")
            + f", {summary['passes']:.2f} passes, {seconds:.1f}s")
