"""What `lrn` prints for the API's documents (a plan, a finished sweep, the machine report), so the text
of a result has one home and a notebook can print the same lines; --json prints the documents."""

from __future__ import annotations

from pathlib import Path

from lrngpt.analysis.rare_tokens import as_text
from lrngpt.experiments.budget import HEADROOM, budget_from_dict, budget_text
from lrngpt.experiments.chapter_plan import ChapterPlan
from lrngpt.experiments.dry_run import sweep_plan_text
from lrngpt.experiments.finding import Finding
from lrngpt.experiments.findings import finding_lines
from lrngpt.training.timing import clock


def run_plan_text(r: dict) -> str:
    """lrngpt.plan's document of a run as lines: the parameters, then what the steps read."""
    tc, corpus = r["config"]["train"], r["corpus"]
    steps = f"{r['steps']:,} steps x {tc['batch_size']} x {tc['seq_len']} read {r['tokens_read']:,} tokens"
    if r["train_tokens"] is None:
        said = (f"data: {steps}; {corpus} is not prepared yet (big, or downloaded): "
                f"`lrn data prepare --corpus {corpus}` counts its tokens, and so does training")
    else:
        said = (f"data: {r['train_tokens']:,} training tokens; {steps} = {r['passes']:.2f} passes over the training "
                f"text; one pass is --set train.steps={r['one_pass_steps']:,}")
    shape = [r["shape"]] if r.get("shape") else []  # a GPT's depth, width and heads
    return "\n".join([*(f"{k:>20}: {v:,}" for k, v in r["params"].items()), *shape, said])


def sweep_dry_run_text(doc: dict) -> str:
    """A sweep's dry run (sweep(dry_run=True)'s document) as lines, the budget's plan after them."""
    text = sweep_plan_text(doc)
    if doc.get("budget"):
        text += "\n" + budget_text(budget_from_dict(doc["budget"]))
    return text + "\n" + doc["bf16"]["line"] if (doc.get("bf16") or {}).get("line") else text


def chapter_plan_text(plan: ChapterPlan) -> str:
    """run_chapter's plan as `lrn chapter --dry-run` prints it: a line per part, the total, what each gives up."""
    budget = f" (the budget: {plan.minutes:g} min, {1 - HEADROOM:.0%} of it kept free)" if plan.minutes else ""
    lines = [f"the book chapter on this machine ({plan.scale} plan"
             + (f", {plan.minutes:g} minutes" if plan.minutes else "") + f") into {plan.out}:"]
    lines += [f"  {p.name:<14} ~{p.est_seconds / 60:5.1f} min  {p.what}" for p in plan.parts]
    lines.append(f"about {plan.est_seconds / 60:.1f} min in all{budget}")
    lines += [f"shrunk to fit: {s}" for s in plan.shrunk]
    for p in plan.parts:
        if p.deviations:
            lines.append(f"{p.name}: against the chapter's protocol, it gives up:")
            lines += [f"  - {d}" for d in p.deviations]
    return "\n".join(lines)


def sweep_summary_text(doc: dict, out: str | Path) -> str:
    """A finished sweep's closing lines: the run lines, the count, the files, the findings."""
    findings = [Finding.from_dict(f) for f in doc.get("findings") or []]
    closing = [""] + finding_lines(findings) + [f"(judged on this sweep alone: `lrn report {out} DIR2 ...` judges it "
                                                "with a seed-variance or small-data sweep)"] if findings else []
    return "\n".join([*doc["lines"], "", f"{len(doc['rows'])} of {doc['points']} runs finished ({doc['scale']} scale); "
                      f"table {doc['table']}", *(f"figure {f}" for f in doc["figures"]),
                      *(f"kept as it is (not lrn's to replace): {k}" for k in doc.get("kept") or []), *closing])


def cpu_text(c: dict) -> str:
    """The CPU's line: vendor, ISA level, torch's kernels, and what train.dtype=bfloat16 gets here."""
    bf16 = {"native": "native here (bfloat16 instructions): train.dtype=bfloat16 may be faster; float32 stays "
                      "the exact default",
            "emulated": "emulated here (no avx512_bf16, amx_bf16 or arm bf16): train.dtype=bfloat16 is typically "
                        "slower than float32",
            "unknown": "unknown here (the CPU's flags could not be read)"}[c["bf16"]]
    flags = ", ".join(c["flags"]) or "none named"
    return (f"cpu ISA: {c['isa']} ({c['vendor'] or '?'}, {c['name']}; flags {flags}; torch kernels "
            f"{c['torch_capability']}); bfloat16 {bf16}")


def doctor_text(r: dict) -> str:
    """The report as lines."""
    def gb(n):
        return "?" if n is None else f"{n / 1e9:.1f} GB"

    lines = [f"lrn {r['lrn']}, Python {r['python']}, torch {r['torch']}, CUDA {r['cuda'] or '-'}"
             + (f", cuDNN {r['cudnn']}" if r.get("cudnn") else "") + f" ({r['platform']})"]
    for d in r["devices"]:
        cap = f", capability {d['capability'][0]}.{d['capability'][1]}" if d["capability"] else ""
        support = ", ".join(f"{k} {'yes' if d[k] else 'no'}" for k in ("bf16", "fp16", "tf32"))
        fast = "" if d["device"] != "cpu" else f" (bf16 units: {'yes' if d['bf16_fast'] else 'no'})"
        lines.append(f"{d['device']}: {d['name']}, {gb(d['memory_bytes'])}{cap}; {support}{fast}")
    lines.append(cpu_text(r["cpu"]))
    p = r["precision"]
    lines.append(f"train.dtype=auto on {p['device']}: {p['dtype']}{' + GradScaler' if p['grad_scaler'] else ''} "
                 f"({p['reason']}), TF32 {'on' if p['tf32'] else 'off'}")
    c = r["compile"]
    lines.append("torch.compile: not probed (--no-probe)" if not c["probed"] else
                 f"torch.compile: {'works' if c['works'] else 'fails'} ({c['seconds']} s"
                 + (f"; C++ compiler {c['c_compiler']}" if c.get("c_compiler") else "; no C++ compiler found")
                 + (f"; {c['error']}" if c.get("error") else "") + ")")
    t = r["threads"]
    lines.append(f"threads: torch {t['torch']} (interop {t['interop']}), {t['usable_cpus'] or t['cpu_count']} usable "
                 f"CPUs of {t['cpu_count']}, OMP_NUM_THREADS {t['OMP_NUM_THREADS'] or 'unset'}")
    lines.append(f"cache: {r['cache']['dir']} ({'exists' if r['cache']['exists'] else 'not created yet'}), "
                 f"{gb(r['cache']['free_bytes'])} free")
    f = r["full_scale"]
    lines.append(f"lrn sweep embed-dim --scale full here: about {clock(f['est_seconds'])} on {f['device']} for "
                 f"{f['points']} points, {gb(f['disk_bytes'])} of disk (download {gb(f['disk']['download'])}, "
                 f"token arrays {gb(f['disk']['token_arrays'])}, checkpoints {gb(f['disk']['checkpoints'])})")
    return "\n".join(lines)


undertrained_text = as_text  # what `lrn embed undertrained` prints
