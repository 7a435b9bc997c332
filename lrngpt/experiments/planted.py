"""The planted-tokens study: a small GPT, tied and untied, trained on a stories split in which chosen
ids are read as input exactly 0, 1, 10 and 1,000 times; the indicators of under-trained tokens
(lrngpt.analysis.planted) scored on that known answer and on the whole vocabulary.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np

from lrngpt.analysis.glitch import INDICATORS, MAIN, indicators, reference_ids
from lrngpt.analysis.planted import (
    OWN_RULE,
    REF_RULE,
    TRUTHS,
    never_read_ids,
    own_flags,
    own_movement,
    plant,
    position_reads,
    reference_flags,
    score,
    share_flags,
)
from lrngpt.analysis.rare_tokens import decay_factor, replay_reads, tables
from lrngpt.core import log as logging
from lrngpt.core.fsio import atomic_dir, read_json, write_json
from lrngpt.core.once import parsed
from lrngpt.data.prepared import PreparedData, load_prepared, prepare
from lrngpt.errors import UserError
from lrngpt.experiments.budget import check_minutes
from lrngpt.experiments.finding import Claim, Finding
from lrngpt.experiments.finding import Verdict as V
from lrngpt.runconfig.schema import RunConfig, load_config
from lrngpt.store.rundir import RunDir
from lrngpt.training.timing import estimate_seconds, probe
from lrngpt.training.trainer import train_run

RESULT = "planted.json"
CLAIMS = {
    "under_trained": ("own movement, from ckpt_init.pt and the last weights alone, flags the tokens read as input "
                      "fewer than d times", "lrn's own rule, input reads < d (lrngpt.analysis.rare_tokens): the lecture "
                      "says only that a rare token may be under-trained, though not necessarily untouched"),
    "never_read": ("own movement flags the tokens never read as input", "the lecture: a rare token may be under-trained "
                   "but is not necessarily untouched (tied, the output path moves its row); never read is the limit "
                   "of lrn's rule"),
}
WORKS = 0.9  # precision and recall, on the planted ids and on the vocabulary, for the verdict "works"
PROTOCOLS: dict[str, dict[str, Any]] = {
    # lrn's GPT pair (2 layers, d=64, 200 steps of 16 x 64 on stories:1MB): about 2 minutes a run here
    "cpu": {"corpus": "stories:1MB", "vocab": 4096, "n_layer": 2, "n_embd": 64, "n_head": 4, "context": 64,
            "batch": 16, "steps": 200, "min_steps": 120, "groups": {"0": 8, "1": 8, "10": 8, "1000": 8}},
    # seconds, for the tests: d=16, so the 0/1/10 groups are under-trained and 200 is not
    "tiny": {"corpus": "stories:100KB", "vocab": 512, "n_layer": 1, "n_embd": 16, "n_head": 2, "context": 16,
             "batch": 8, "steps": 60, "min_steps": 60, "groups": {"0": 2, "1": 2, "10": 2, "200": 2}},
}
DEVIATIONS = [
    "lrn's GPT pair (2 layers, d=64), trained here for minutes, not lrn's gpt-default (the seed project's GPTConfig "
    "defaults: 6 layers, d=256; 2,000 steps)",
    "ids are planted into the text: the chosen ids replace the tokens at the planted positions (documents keep "
    "their <|endoftext|> bounds); every other token and every batch stays as the corpus gives it",
    "dropout 0 (gpt-default's 0.1): the planted reads are exact either way, but a row's movement is then the "
    "signal's alone",
    "Land & Bartolo's indicators scored with a threshold from the reference tokens (the paper ranks and verifies "
    "candidates by prompting; left out here) and with the authors' 2% share",
]


def _overrides(p: dict, steps: int) -> list[str]:
    return [f"data.corpus={p['corpus']}", f"data.vocab_size={p['vocab']}", f"model.n_layer={p['n_layer']}",
            f"model.n_embd={p['n_embd']}", f"model.n_head={p['n_head']}", f"model.context_length={p['context']}",
            "model.dropout=0.0", f"train.batch_size={p['batch']}", f"train.steps={steps}",
            f"train.eval_every={steps}", "train.eval_tokens=20000", "train.train_eval_tokens=20000",
            "train.device=cpu", f"train.warmup_steps={min(100, steps // 2)}"]


def config_of(plan: dict, tied: bool) -> RunConfig:
    """The run config of one of the pair."""
    return load_config("gpt-default", plan["overrides"] + [f"model.tie_embeddings={str(tied).lower()}"])


def planted_plan(minutes: float | None = None, scale: str = "cpu", probe_fn=None) -> dict:
    """The protocol as plain data with a time estimate from a probe; `minutes`: fewer steps to fit."""
    if scale not in PROTOCOLS:
        raise UserError(f"unknown scale {scale!r}; choose one of {', '.join(PROTOCOLS)}")
    minutes = None if minutes is None else check_minutes(minutes, 5)
    p = PROTOCOLS[scale]
    plan = {"scale": scale, "protocol": dict(p), "steps": p["steps"], "overrides": _overrides(p, p["steps"]),
            "seed": 1337, "groups": dict(p["groups"])}
    per_step = sum(estimate_seconds(c, (probe_fn or probe)(c)) for c in (config_of(plan, t) for t in (True, False))) \
        / p["steps"]
    steps = p["steps"] if minutes is None else min(p["steps"], max(p["min_steps"], int(minutes * 60 / per_step)))
    return {**plan, "steps": steps, "overrides": _overrides(p, steps), "est_seconds": round(per_step * steps, 1),
            "deviations": list(DEVIATIONS)}


def planted_data(out: Path, plan: dict, log) -> tuple[PreparedData, dict]:
    """out/data (made once): the prepared data with ids planted into its training split, and the groups."""
    cfg = config_of(plan, True)
    base = prepare(cfg.data, log=log)
    what = [base.key, plan["steps"], plan["seed"], plan["protocol"]["batch"], plan["protocol"]["context"], plan["groups"]]
    key, d = f"{base.key}-planted-{hashlib.sha256(json.dumps(what).encode()).hexdigest()[:12]}", out / "data"
    if (d / "meta.json").is_file():
        data = load_prepared(d)
        if data.meta.get("key") == key:
            log(f"planted: {d} (ids planted already)")
            return data, {int(k): v for k, v in data.meta["planted"]["groups"].items()}
        raise UserError(f"{d} holds data planted for another plan; give another out directory")
    tc, tokens = cfg.train, base.tokens("train")
    assert tc.seq_len is not None  # a RunConfig resolves it
    as_input, as_target = position_reads(tokens, tc.batch_size, tc.seq_len, tc.seed, plan["steps"])
    tok = base.tokenizer
    ref = reference_ids(tok, cfg.data.vocab_size)
    free = never_read_ids(tokens, as_input, min(tok.vocab_size, cfg.data.vocab_size), set(ref) | set(tok.special_ids))
    want = sum(plan["groups"].values())
    if len(free) < want:
        raise UserError(f"only {len(free)} ids are never read by this text, {want} needed; plant fewer ids")
    chosen = np.random.default_rng(plan["seed"]).choice(free, size=want, replace=False)
    cuts = np.cumsum(list(plan["groups"].values()))[:-1]  # each group takes the next n of the chosen ids
    groups = {int(k): sorted(map(int, ids)) for k, ids in zip(plan["groups"], np.split(chosen, cuts), strict=True)}
    new, where = plant(tokens, as_input, as_target, groups, plan["seed"], keep=tok.eot_id)
    meta = {**base.meta, "key": key, "planted": {"groups": {str(k): v for k, v in groups.items()},
                                                   "positions": {str(i): p for i, p in where.items()},
                                                   "from": base.key}}
    with atomic_dir(d) as tmp:
        for name in ("tokenizer.json", "val.bin"):
            shutil.copyfile(base.dir / name, tmp / name)
        np.asarray(new, dtype=base.meta["dtype"]).tofile(tmp / "train.bin")
        write_json(tmp / "meta.json", meta)
    log(f"planted: {want} ids into {d}/train.bin at {sum(len(p) for p in where.values()):,} positions")
    return load_prepared(d), groups


def score_run(path: Path, data: PreparedData, groups: dict[int, list[int]]) -> dict:
    """Every indicator of one run scored against its replayed reads."""
    run, init = RunDir(path).load("last"), RunDir(path).load("init")
    cfg, steps = run.config, run.step
    inp, out, tied = tables(run.model)
    inp0, out0, _ = tables(init.model)
    rows, width = inp.shape
    tc = cfg.train
    assert tc.seq_len is not None  # a RunConfig resolves it
    inputs, _ = replay_reads(data.tokens("train"), tc.batch_size, tc.seq_len, tc.seed, steps, rows)
    ref = reference_ids(run.tokenizer, rows)
    planted = [i for g in groups.values() for i in g]
    exact = all(int(inputs[i]) == c for c, g in groups.items() for i in g)
    outside = ~np.isin(np.arange(rows), ref)  # the vocabulary without the reference tokens
    own = own_movement(inp, inp0, decay_factor(tc, steps), ref)
    scores = {"own_movement": score(own_flags(own, ref, steps), inputs, width, planted, outside)}
    for name, values in indicators(out, ref, None if tied else inp).items():
        scores[name] = score(reference_flags(values, ref), inputs, width, planted, outside)
        scores[f"{name}@share"] = score(share_flags(values, ref), inputs, width, planted, outside)
    return {"tied": tied, "step": steps, "n_embd": width, "vocab": rows, "reads_exact": exact, "reference": ref,
            "planted_reads": {str(i): int(inputs[i]) for i in planted}, "drift": own["drift"], "scores": scores,
            "tokens": {"input_reads": inputs.tolist(), "own": own["own"].round(7).tolist(),
                       "init_norm": own["init_norm"].round(7).tolist()}}


def run_planted(out: Path, plan: dict, log=None) -> dict:
    """Train the pair into out/tied and out/untied (resuming) and write out/planted.json with the scores."""
    log = log or logging.info
    out = Path(out)
    if not isinstance(plan, dict) or plan.get("scale") not in PROTOCOLS or "overrides" not in plan:
        raise UserError("run_planted takes the plan planted_plan() returns")
    out.mkdir(parents=True, exist_ok=True)
    data, groups = planted_data(out, plan, log)
    result = {"plan": {k: v for k, v in plan.items() if k != "deviations"}, "deviations": plan.get("deviations", []),
              "groups": {str(k): v for k, v in groups.items()}, "rules": {"own_movement": OWN_RULE, "reference": REF_RULE}, "truths": TRUTHS,
              "indicators": {"own_movement": "own movement from ckpt_init.pt, the reference tokens' drift removed",
                             **INDICATORS}, "main": MAIN, "runs": {}}
    for name, tied in (("tied", True), ("untied", False)):  # trained, resumed, or skipped once finished
        cfg, run = config_of(plan, tied), RunDir(out / name)
        s = run.summary() if run.holds_run() else None
        if s and s.get("finished") and s.get("step") == cfg.train.steps:
            log(f"planted: skip {run.path}: finished at step {cfg.train.steps}")
        else:
            partial = run.holds_run() and any(run.checkpoint_path(w).is_file() for w in ("last", "init"))
            log(f"planted: {'resume' if partial else 'train'} {run.path}")
            train_run(cfg, run.path, resume=partial, force=run.holds_run() and not partial, log=log, progress=False,
                      warn_passes=False, data=data,
                      how_to_continue="continue it by calling run_planted again with the same out directory")
        result["runs"][name] = score_run(out / name, data, groups)
    write_json(out / RESULT, result)
    return result


def _pct(x) -> str:
    return "-" if x is None else f"{x:.0%}"


def _verdict(s: dict) -> dict:
    """One indicator's score against one truth: its verdict ("works" where precision and recall, on the
    planted ids and on the vocabulary, all reach WORKS), and the four shares."""
    shares = {w: {k: s[w][k] for k in ("precision", "recall")} for w in ("planted", "vocabulary")}
    ok = all(v is not None and v >= WORKS for per in shares.values() for v in per.values())
    return {"verdict": "works" if ok else "fails", **shares}


def _read(out: Path) -> dict:
    """out/planted.json, checked: a file edited into something else is one line saying so (read once a
    command: the findings and the figure both ask)."""
    return parsed(Path(out) / RESULT, "planted result", _checked)


def _checked(path: Path) -> dict:
    r = read_json(path, "planted result")

    def count(v, end: float = float("inf")) -> bool:  # an int in [0, end), not a bool
        return isinstance(v, int) and not isinstance(v, bool) and 0 <= v < end
    try:
        for run in (r["runs"][name] for name in ("tied", "untied")):
            for v in (s[t][w][k] for s in run["scores"].values() for t in TRUTHS for w in ("planted", "vocabulary")
                      for k in ("precision", "recall")):
                if v is not None and (isinstance(v, bool) or not isinstance(v, int | float) or not 0 <= v <= 1):
                    raise ValueError(f"{v!r} is not a share (a precision or recall)")
            if not isinstance(run["reads_exact"], bool) or not all(count(run[k]) for k in ("n_embd", "step", "vocab")):
                raise ValueError("reads_exact, n_embd, step or vocab is not what run_planted writes")
            if not run["reference"] or not all(count(i, run["vocab"]) for i in run["reference"]):
                raise ValueError("the reference ids are not ids of the vocabulary")
            columns = [np.asarray(run["tokens"][k], dtype=np.float64) for k in ("input_reads", "own", "init_norm")]
            if any(c.shape != (run["vocab"],) or not np.isfinite(c).all() or (c < 0).any() for c in columns):
                raise ValueError("the token columns are not one non-negative number per token of the vocabulary")
        if not all(count(i, r["runs"]["tied"]["vocab"]) for ids in r["groups"].values() for i in ids):
            raise ValueError("a planted id is outside the vocabulary")
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise UserError(f"{path} is not a planted result run_planted wrote ({type(e).__name__}: {e}); "
                        "run run_planted again into a fresh out directory") from None
    return r


def planted_scores(out: Path) -> dict:
    """{tying: {"reads_exact", "verdicts": {indicator: {truth: verdict, precision and recall}}}} from
    out/planted.json."""
    runs = _read(out)["runs"]
    return {name: {"reads_exact": runs[name]["reads_exact"],
                   "verdicts": {ind: {truth: _verdict(s[truth]) for truth in TRUTHS}
                                for ind, s in runs[name]["scores"].items()}} for name in ("tied", "untied")}


def planted_findings(out: Path) -> list[Finding]:
    """Own movement against input reads < d and against never read, tied and untied: four Findings."""
    scores = planted_scores(out)
    found = []
    for truth, (text, source) in CLAIMS.items():
        for name in ("tied", "untied"):
            claim = Claim(f"planted-{truth.replace('_', '-')}-{name}", f"{text} ({name} GPT)", source)
            run = scores[name]
            evidence = [f"{name}: planted reads exact: {run['reads_exact']}"]
            for ind, per in run["verdicts"].items():
                v = per[truth]
                evidence.append(f"{ind} against {TRUTHS[truth]}: {v['verdict']}; planted precision "
                                f"{_pct(v['planted']['precision'])} recall {_pct(v['planted']['recall'])}, vocabulary "
                                f"precision {_pct(v['vocabulary']['precision'])} recall {_pct(v['vocabulary']['recall'])}")
            own = run["verdicts"]["own_movement"][truth]
            low = [f"{w} {k} " + ("- (none flagged)" if own[w][k] is None else f"{own[w][k]:.1%}") for w in ("planted", "vocabulary") for k in ("precision", "recall")
                   if own[w][k] is None or own[w][k] < WORKS]
            because = [f"{', '.join(low)}: below the {WORKS:.0%} that 'works' asks of precision and recall on the "
                       "planted ids and the vocabulary"] if low else []
            found.append(Finding.judged(claim, V.WORKS if own["verdict"] == "works" else V.FAILS, because, evidence,
                                        {"own_movement": own, "reads_exact": run["reads_exact"]}))
    return found
