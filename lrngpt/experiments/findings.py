"""The book chapter's three findings on the embedding width, judged on a student's own sweeps.

The chapter on choosing the embedding width (its MLP on TinyStories, d = 4 ... 512) finds:

    1. each doubling of d saves less validation bpb than the one before (diminishing returns);
    2. with enough data (65.5M of 550M tokens read: 0.12 passes, almost nothing read twice) there
       is no turn: val bpb keeps falling to d = 512, and train bpb sits at or above val bpb
       (gap = val - train, the chapter's sign, -0.0051 to -0.0021);
    3. on a small training prefix read many times (4M tokens, 16 times) val bpb turns (lowest at
       d = 128, rising after it) while train bpb keeps falling to d = 512.

`judge(docs)` takes summary documents (lrngpt.experiments.summary.collect; only their `rows`,
`sweep`/`label` and `preset`/`axes` are read) and returns one dict per finding: the finding, this
run's evidence (sentences and `numbers`), a verdict (`shows`, `does not show`, `cannot tell`), a
one-sentence `reason` where it does not show or cannot tell, and `next`: what would tell, or what
to try. Pure functions of plain data: nothing is trained or read from disk.

Which series is which: a series (one sweep's runs at one steps / prefix setting, see
summary.series_label) with a training prefix (`data.train_tokens`) or at least MANY_PASSES passes
is a small-data series, judged by finding 3; the other series with the most widths is the full-data
series, judged by findings 1 and 2. Runs at one width over several seeds (a seed-variance sweep,
given beside the others) give the seed spread: the largest max - min of val bpb over seeds.

The thresholds (named below; docs/embedding-width-study.md states them with the measured studies):

    noise            the seed spread when a seed-variance sweep is given, else NOISE_WITHOUT_SEEDS
                     (0.002 bpb, about twice the largest spread measured: chapter 0.0004, stories
                     0.0006, State of the Union 0.0012). Savings or rises within it are noise.
    finding 1        shows when the first saving is above the noise and no saving exceeds the one
                     before by more than the noise; a rise within the default noise, without a seed
                     spread to judge it, cannot tell.
    finding 2        shows when val bpb never rises more than the noise above its lowest value at a
                     wider width and every gap is at most GAP_TOLERANCE (0.005 bpb) above zero.
                     Where it does not, the reason is the reading when the run made more than
                     FEW_PASSES (0.25) passes; else what `lrn eval --by-reads` measured, if given.
    finding 3        shows when val bpb rises more than the noise past its lowest width while train
                     bpb never rises by more than the noise from one width to the next.

The share of training targets read, and the read / never-read train bpb, come from `read_share`,
`train_bpb_read` and `train_bpb_unread` where a row has them (`lrn eval RUN --by-reads`'s keys; a
sweep's own summary rows do not carry them yet). Without them the share is 1 - exp(-passes): windows
are drawn uniformly at random, so each target is read a Poisson number of times with mean = passes
(at 0.70 passes 50.6%, where --by-reads measured 50.3%); twice or more, 1 - exp(-passes)(1 + passes).
"""

from __future__ import annotations

import math

from lrngpt.experiments.shape_findings import is_shape_study, judge_shapes
from lrngpt.experiments.summary import by_width, seed_stats, series_label

SHOWS, DOES_NOT_SHOW, CANNOT_TELL = "shows", "does not show", "cannot tell"

NOISE_WITHOUT_SEEDS = 0.002  # bpb: savings and rises within this are noise when no seed spread is given
GAP_TOLERANCE = 0.005  # bpb: a gap (val - train) up to this is "at or below zero" (the chapter's: -0.005..-0.002)
FEW_PASSES = 0.25  # passes over the training text: below it, finding 2's premise (nothing read twice) holds
MANY_PASSES = 4.0  # passes: a series reading its text this often is a small-data series (the chapter: 16)

# The chapter's numbers (its 4,000-step sweep, three seeds at d = 64, the 16,000-step rerun, the
# 4M-token small-data rerun): the reference curve and the comparisons quote them.
CHAPTER_VAL_BPB = {4: 1.1734, 8: 1.0882, 16: 1.0247, 32: 0.9751, 64: 0.9326, 128: 0.9033, 256: 0.8864,
                   512: 0.8795}
CHAPTER_GAP = {4: -0.0051, 64: -0.0033, 512: -0.0021}  # the widths it reports a gap at
CHAPTER_SEEDS = [0.9326, 0.9327, 0.9323]  # d = 64, seeds 1337, 1338, 1339
CHAPTER_PASSES = 4000 * 64 * 256 / 550_000_000  # 65.5M tokens read of 550M: 0.12
CHAPTER_LONG_PASSES = 16000 * 64 * 256 / 550_000_000  # the 16,000-step rerun: 0.48, gap still -0.0040..-0.0021
CHAPTER_SMALL_VAL = {8: 1.0998, 32: 1.0030, 64: 0.9806, 128: 0.9781, 256: 0.9972, 512: 1.0326}
CHAPTER_SMALL_TRAIN = {8: 1.0625, 64: 0.8579, 128: 0.7984, 256: 0.7312, 512: 0.6541}
CHAPTER_CORPUS = "TinyStories"
CHAPTER_LABEL = f"book chapter: {CHAPTER_CORPUS}, {CHAPTER_PASSES:.2f} passes (compare the shape)"
CHAPTER_NOTE = (f"the book chapter's val bpb ({CHAPTER_CORPUS}, 4,000 steps of 64 x 256: {CHAPTER_PASSES:.2f} passes), "
                "to compare the shape: bpb of different texts do not compare")

FINDINGS = {
    1: "Each doubling of the embedding width saves less val bpb than the one before",
    2: "With enough data (nothing read twice) there is no turn: val bpb keeps falling or flattens with the "
       "width, and train bpb stays at or above val bpb (gap val - train at or below zero)",
    3: "On a small training prefix read many times val bpb turns (rises past some width) while train bpb "
       "keeps falling",
}
KEYS = {1: "diminishing-returns", 2: "no-turn-with-enough-data", 3: "small-data-turn"}
EXTRA = ("read_share", "train_bpb_read", "train_bpb_unread", "tokens_read")  # averaged over seeds like the rest


def is_width_study(doc: dict) -> bool:
    """One of the chapter's width presets, or any sweep with model.n_embd as an axis (not a shape study:
    its widths change with the depth, lrngpt.experiments.shape_findings)."""
    from lrngpt.experiments.presets import STUDIES

    return not is_shape_study(doc) and (doc.get("preset") in STUDIES or "model.n_embd" in (doc.get("axes") or {}))


def read_shares(passes: float) -> tuple[float, float]:
    """Expected share of training targets read at least once, and twice or more, at `passes`."""
    return 1 - math.exp(-passes), 1 - math.exp(-passes) * (1 + passes)


def _mean(values) -> float | None:
    values = [v for v in values if isinstance(v, int | float) and not isinstance(v, bool)]
    return sum(values) / len(values) if values else None


def series_of(docs: list[dict]) -> list[dict]:
    """Each sweep's series: its label, passes, whether it is small-data, its widths in order."""
    out = []
    for doc in docs:
        rows = doc.get("rows") or []
        groups: dict[tuple, list[dict]] = {}
        for r in rows:
            groups.setdefault((series_label(r), r["n_embd"]), []).append(r)
        per: dict[str, list[dict]] = {}
        for e in by_width(rows):
            if e["val_bpb"] is None:  # no bytes to score: not a point of the curve
                continue
            group = groups[(e["series"], e["n_embd"])]
            per.setdefault(e["series"], []).append({**e, **{k: _mean(r.get(k) for r in group) for k in EXTRA}})
        name = str(doc.get("label") or doc.get("sweep") or "sweep")
        for label, entries in per.items():
            passes = _mean(e.get("passes") for e in entries)
            small = bool(entries[0].get("train_tokens")) or (passes is not None and passes >= MANY_PASSES)
            out.append({"sweep": name, "series": label, "label": f"{name}: {label}", "entries": entries,
                        "passes": passes, "small": small, "train_tokens": entries[0].get("train_tokens")})
    return out


def seed_spread(docs: list[dict]) -> dict | None:
    """The largest max - min of val bpb over the seeds of one setting, with where it came from."""
    best = None
    for doc in docs:
        for g in seed_stats(doc.get("rows") or []):
            if len(g["val_bpb"]) > 1 and (best is None or g["spread"] > best["spread"]):
                best = {**g, "sweep": str(doc.get("label") or doc.get("sweep") or "sweep")}
    return best


def _turn(entries: list[dict], key: str, noise: float) -> dict:
    """Where `key` is lowest, and how far it rises at a wider width (turned: by more than the noise)."""
    ds, vs = [e["n_embd"] for e in entries], [e[key] for e in entries]
    i = min(range(len(vs)), key=lambda k: (vs[k], k))
    j = max(range(i, len(vs)), key=lambda k: (vs[k], -k))
    return {"best": ds[i], "best_bpb": vs[i], "narrowest": i == 0, "widest": i == len(vs) - 1,
            "peak": ds[j], "peak_bpb": vs[j], "rise": vs[j] - vs[i], "turned": vs[j] - vs[i] > noise,
            "last": ds[-1], "last_bpb": vs[-1]}


def _curve_text(t: dict, noise: float) -> str:
    if t["widest"]:
        return f"val bpb falls to the widest run, d = {t['best']} ({t['best_bpb']:.4f})"
    narrowest = ", the narrowest run" if t["narrowest"] else ""
    text = f"val bpb is lowest at d = {t['best']} ({t['best_bpb']:.4f}{narrowest})"
    if not t["turned"]:
        return text + f"; the wider runs stay within the noise ({noise:.4f}) of it: it flattens"
    text += f" and rises to {t['peak_bpb']:.4f} at d = {t['peak']}"
    return text + (f" ({t['last_bpb']:.4f} at d = {t['last']})" if t["peak"] != t["last"] else "")


def _noise_text(spread: dict | None) -> str:
    if spread is None:
        return (f"no seed-variance sweep given: differences within {NOISE_WITHOUT_SEEDS} bpb are taken as noise "
                "(about twice the largest seed spread measured)")
    return (f"seed spread {spread['spread']:.4f} (max - min of val bpb over seeds "
            f"{', '.join(map(str, spread['seeds']))} at d = {spread['n_embd']}, {spread['sweep']})")


def _finding(n: int, verdict: str, evidence: list[str], chapter: str, reason: str | None = None,
             next_: str | None = None, numbers: dict | None = None) -> dict:
    return {"number": n, "key": KEYS[n], "finding": FINDINGS[n], "verdict": verdict, "reason": reason,
            "next": next_, "evidence": evidence, "chapter": chapter, "numbers": numbers or {}}


SEED_SWEEP = ("add a seed-variance sweep with the same settings (lrn sweep seed-variance ... --out DIR2) and give "
              "both directories to lrn report")
WIDTHS_SWEEP = "run at least three widths, each double the last (the embed-dim preset: d = 4 ... 512)"
_CH_SAVED = [a - b for a, b in zip(list(CHAPTER_VAL_BPB.values()), list(CHAPTER_VAL_BPB.values())[1:], strict=False)]
CH1 = (f"the chapter: {', '.join(f'{s:.4f}' for s in _CH_SAVED)} saved per doubling from d = 4 to 512, the "
       f"smallest more than ten times its seed spread of {max(CHAPTER_SEEDS) - min(CHAPTER_SEEDS):.4f}")


def judge_savings(full: dict | None, spread: dict | None) -> dict:
    """Finding 1 on the full-data series: each doubling saves less, beyond the noise."""
    if full is None or len(full["entries"]) < 3:
        what = "no full-data series" if full is None else f"only {len(full['entries'])} widths"
        return _finding(1, CANNOT_TELL, [], CH1, f"{what}: two savings per doubling are needed to compare",
                        WIDTHS_SWEEP)
    noise = spread["spread"] if spread else NOISE_WITHOUT_SEEDS
    entries = full["entries"]
    steps = [(p["n_embd"], e["n_embd"], e["saved_per_doubling"]) for p, e in zip(entries, entries[1:], strict=False)]
    saved = [s for _, _, s in steps]
    listed = ", ".join(f"{a}->{b} {s:.4f}" for a, b, s in steps)
    rises = [(steps[i], steps[i + 1]) for i in range(len(steps) - 1) if saved[i + 1] > saved[i]]
    real = [(p, q) for p, q in rises if q[2] - p[2] > noise]
    evidence = [f"val bpb saved per doubling ({full['label']}): {listed}",
                "each smaller than the one before" if not rises else
                f"{len(steps) - 1 - len(rises)} of {len(steps) - 1} smaller than the one before", _noise_text(spread)]
    positive = [s for s in saved if s > noise]
    if spread and positive:
        lost = [s for s in saved if s < -noise]
        evidence.append(f"{len(positive)} of {len(saved)} savings are above the seed spread, the smallest of them "
                        f"{min(positive) / spread['spread']:.0f}x it" if spread["spread"] > 0 else
                        f"{len(positive)} of {len(saved)} savings are above zero spread")
        if lost:
            evidence.append(f"{len(lost)} doubling{'s lose' if len(lost) > 1 else ' loses'} val bpb beyond the spread "
                            f"({', '.join(f'{s:.4f}' for s in lost)})")
    numbers = {"saved_per_doubling": [{"from": a, "to": b, "saved": s} for a, b, s in steps], "noise": noise,
               "seed_spread": spread["spread"] if spread else None}
    if saved[0] <= noise:
        return _finding(1, DOES_NOT_SHOW, evidence, CH1,
                        f"the first doubling ({steps[0][0]}->{steps[0][1]}) saves only {saved[0]:.4f}, within the "
                        f"noise of {noise:.4f}: val bpb hardly falls with the width here", None, numbers)
    if real:
        p, q = real[0]
        return _finding(1, DOES_NOT_SHOW, evidence, CH1,
                        f"the doubling {q[0]}->{q[1]} saves {q[2]:.4f}, more than {p[0]}->{p[1]} ({p[2]:.4f}) by "
                        f"{q[2] - p[2]:.4f}, beyond the noise of {noise:.4f}", None, numbers)
    if rises and spread is None:
        p, q = rises[0]
        return _finding(1, CANNOT_TELL, evidence, CH1,
                        f"the doubling {q[0]}->{q[1]} saves {q[2] - p[2]:.4f} more than {p[0]}->{p[1]}, within the "
                        "usual seed noise but with no seed spread here to judge it", SEED_SWEEP, numbers)
    return _finding(1, SHOWS, evidence, CH1, None, None if spread else SEED_SWEEP + " to tell the savings from noise",
                    numbers)


def _reading(series: dict) -> tuple[str, float | None]:
    """'N passes: X% of the training targets read ...' and the read share (measured, else estimated)."""
    passes, measured = series["passes"], _mean(e.get("read_share") for e in series["entries"])
    if passes is None:
        return "passes over the training text unknown (a summary from before they were recorded)", measured
    once, twice = read_shares(passes)
    how = "an estimate: 1 - e^-passes, for windows drawn at random" if measured is None else \
        "measured by lrn eval --by-reads"
    share = once if measured is None else measured
    return (f"{passes:.2f} passes over the training text: {share:.1%} of the training targets read at least once "
            f"({how}), about {twice:.1%} twice or more"), share


CH2 = (f"the chapter ({CHAPTER_CORPUS}, 65.5M of 550M tokens read: {CHAPTER_PASSES:.2f} passes, about "
       f"{read_shares(CHAPTER_PASSES)[0]:.0%} of its targets read, under 1% twice): val bpb falls to d = 512 "
       f"({CHAPTER_VAL_BPB[512]:.4f}), gap {CHAPTER_GAP[4]:+.4f} at d = 4 to {CHAPTER_GAP[512]:+.4f} at d = 512; "
       f"at 16,000 steps ({CHAPTER_LONG_PASSES:.2f} passes) still -0.0040 to -0.0021")


def _by_reads(entries: list[dict]) -> tuple[list[str], dict | None]:
    """--by-reads evidence: never-read vs val (a different text), read vs never-read (memorising)."""
    split = [e for e in entries if e.get("train_bpb_read") is not None and e.get("train_bpb_unread") is not None]
    if not split:
        return ["lrn eval RUN --by-reads splits a run's train bpb into the targets training read and those it never "
                "read: memorising shows between the two, a harder validation text between never-read and val"], None
    other = [e["val_bpb"] - e["train_bpb_unread"] for e in split]
    memo = [e["train_bpb_unread"] - e["train_bpb_read"] for e in split]
    pairs = ", ".join(f"d = {e['n_embd']} {e['train_bpb_read']:.4f} / {e['train_bpb_unread']:.4f}" for e in split)
    return [f"train bpb of the targets read / never read (lrn eval --by-reads): {pairs}",
            f"never-read targets sit {min(other):.4f} to {max(other):.4f} below val bpb (the validation text differs "
            f"from the training text); read ones sit {memo[0]:.4f} (d = {split[0]['n_embd']}) to {memo[-1]:.4f} "
            f"(d = {split[-1]['n_embd']}) below the never-read ones (memorising)"], \
        {"other_text": other, "memorising": memo, "widest": split[-1]}


def judge_no_turn(full: dict | None, others: list[dict], spread: dict | None) -> dict:
    """Finding 2 on the full-data series: no turn and gap <= 0 while little is read twice."""
    if full is None or len(full["entries"]) < 3:
        what = "no full-data series" if full is None else f"only {len(full['entries'])} widths"
        return _finding(2, CANNOT_TELL, [], CH2, f"{what}: a turn needs three widths or more", WIDTHS_SWEEP)
    entries = full["entries"]
    if any(e["train_bpb"] is None for e in entries):
        return _finding(2, CANNOT_TELL, [], CH2, "the runs measured no train bpb (train.train_eval_tokens is 0)",
                        "set train.train_eval_tokens (the cpu scale measures 200,000 tokens)")
    noise = spread["spread"] if spread else NOISE_WITHOUT_SEEDS
    turn = _turn(entries, "val_bpb", noise)
    gaps = [e["gap"] for e in entries]
    reading, share = _reading(full)
    evidence = [reading, _curve_text(turn, noise),
                f"gap (val - train) {gaps[0]:+.4f} at d = {entries[0]['n_embd']} -> {gaps[-1]:+.4f} at d = "
                f"{entries[-1]['n_embd']}" + (f", largest {max(gaps):+.4f}" if max(gaps) > max(gaps[0], gaps[-1]) else "")]
    split_text, split = _by_reads(entries)
    evidence += split_text
    for s in others:
        if len(s["entries"]) >= 2 and all(e["train_bpb"] is not None for e in s["entries"]):
            t = _turn(s["entries"], "val_bpb", noise)
            evidence.append(f"{s['label']} ({'-' if s['passes'] is None else format(s['passes'], '.2f')} passes): "
                            f"lowest val bpb at d = {t['best']}, gap {s['entries'][0]['gap']:+.4f} -> "
                            f"{s['entries'][-1]['gap']:+.4f}")
    numbers = {"passes": full["passes"], "read_share": share, "turn": turn, "noise": noise,
               "gap": {e["n_embd"]: e["gap"] for e in entries}, "gap_tolerance": GAP_TOLERANCE}
    if not turn["turned"] and max(gaps) <= GAP_TOLERANCE:
        return _finding(2, SHOWS, evidence, CH2, None, None, numbers)
    what = (f"val bpb turns at d = {turn['best']}" if turn["turned"] else "") + \
        (" and " if turn["turned"] and max(gaps) > GAP_TOLERANCE else "") + \
        (f"the gap is positive (up to {max(gaps):+.4f})" if max(gaps) > GAP_TOLERANCE else "")
    passes = full["passes"]
    if passes is not None and passes > FEW_PASSES:
        _, twice = read_shares(passes)
        ch_once, _ = read_shares(CHAPTER_PASSES)
        reason = (f"it read {share:.0%} of its training targets ({passes:.2f} passes, about {twice:.0%} twice or "
                  f"more) where the chapter's model read about {ch_once:.0%} ({CHAPTER_PASSES:.2f} passes) and almost "
                  f"none twice; here {what}")
        read = _mean(e.get("tokens_read") for e in entries)
        if read:
            need = read / FEW_PASSES
            next_ = (f"a training text of at least {need:,.0f} tokens ({passes / FEW_PASSES:.1f}x this one) for these "
                     f"steps, or fewer steps, reads it under {FEW_PASSES} times")
        else:
            next_ = (f"a training text {passes / FEW_PASSES:.1f}x as large, or fewer steps, reads it under "
                     f"{FEW_PASSES} times")
        return _finding(2, DOES_NOT_SHOW, evidence, CH2, reason, next_, numbers)
    if split is not None and max(gaps) > GAP_TOLERANCE:
        w = split["widest"]
        if split["other_text"][-1] >= split["memorising"][-1]:
            why = (f"its never-read training targets already score {split['other_text'][-1]:.4f} below val bpb at "
                   f"d = {w['n_embd']}: its validation text is harder than its training text")
        else:
            why = (f"its read training targets score {split['memorising'][-1]:.4f} below the never-read ones at "
                   f"d = {w['n_embd']}: it memorised what it read even at "
                   f"{'-' if passes is None else format(passes, '.2f')} passes")
        return _finding(2, DOES_NOT_SHOW, evidence, CH2, f"{what}: {why}", None, numbers)
    if max(gaps) > GAP_TOLERANCE:
        return _finding(2, DOES_NOT_SHOW, evidence, CH2,
                        f"{what} though it read little of its text twice: its validation text is harder to predict "
                        "than its training text, or it memorised what it read",
                        "lrn eval RUN --by-reads on the widest run tells the two apart", numbers)
    return _finding(2, DOES_NOT_SHOW, evidence, CH2,
                    f"{what}: val bpb rises {turn['rise']:.4f} from d = {turn['best']} to d = {turn['peak']}, beyond "
                    f"the noise of {noise:.4f}, with the gap at or below zero",
                    None if spread else SEED_SWEEP + " to tell the rise from noise", numbers)


CH3 = ("the chapter (its first 4M training tokens read 16 times): val bpb lowest at d = 128 "
       f"({CHAPTER_SMALL_VAL[128]:.4f}), {CHAPTER_SMALL_VAL[512]:.4f} at d = 512; train bpb "
       f"{CHAPTER_SMALL_TRAIN[8]:.4f} (d = 8) -> {CHAPTER_SMALL_TRAIN[512]:.4f} (d = 512); gap +0.0373 -> +0.3785")
SMALL_SWEEP = ("run the small-data preset with this sweep's settings (lrn sweep embed-dim-small-data ... --out DIR2) "
               "and give both directories to lrn report")


def judge_small_data(small: dict | None, full: dict | None, spread: dict | None) -> dict:
    """Finding 3 on the small-data series: val bpb turns while train bpb keeps falling."""
    if small is None:
        return _finding(3, CANNOT_TELL, [], CH3, "no small-data series here: no sweep trains on a short prefix read "
                        "many times", SMALL_SWEEP)
    entries = small["entries"]
    if len(entries) < 3 or any(e["train_bpb"] is None for e in entries):
        why = f"only {len(entries)} widths" if len(entries) < 3 else "the runs measured no train bpb"
        return _finding(3, CANNOT_TELL, [], CH3, f"{why} in {small['label']}", WIDTHS_SWEEP)
    noise = spread["spread"] if spread else NOISE_WITHOUT_SEEDS
    turn = _turn(entries, "val_bpb", noise)
    trains = [e["train_bpb"] for e in entries]
    up = [(entries[i], entries[i + 1]) for i in range(len(entries) - 1) if trains[i + 1] - trains[i] > noise]
    passes = small["passes"]
    prefix = f" over a prefix of {small['train_tokens']:,} tokens" if small.get("train_tokens") else ""
    evidence = [f"{small['label']}: {'-' if passes is None else format(passes, '.2f')} passes{prefix}",
                f"train bpb {trains[0]:.4f} (d = {entries[0]['n_embd']}) -> {trains[-1]:.4f} (d = "
                f"{entries[-1]['n_embd']}), " + ("falling at every width" if not up else
                                                 f"rising at {len(up)} of {len(entries) - 1} doublings"),
                _curve_text(turn, noise),
                f"gap (val - train) {entries[0]['gap']:+.4f} -> {entries[-1]['gap']:+.4f}", _noise_text(spread)]
    if full is not None:
        ref = {e["n_embd"]: e["val_bpb"] for e in full["entries"]}
        above = [e["val_bpb"] - ref[e["n_embd"]] for e in entries if e["n_embd"] in ref]
        if above:
            evidence.append(f"against the full-data val bpb at the same widths ({full['label']}): "
                            f"{min(above):+.4f} to {max(above):+.4f}")
    numbers = {"passes": passes, "turn": turn, "noise": noise,
               "train_bpb": {e["n_embd"]: e["train_bpb"] for e in entries}}
    if turn["turned"] and not up:
        return _finding(3, SHOWS, evidence, CH3, None, None, numbers)
    if not turn["turned"]:
        if passes is not None and passes < MANY_PASSES:
            reason = (f"val bpb does not turn: it read its text only {passes:.2f} times, where the chapter read its "
                      "prefix 16 times")
            return _finding(3, DOES_NOT_SHOW, evidence, CH3, reason,
                            "a smaller data.train_tokens (the small-data preset reads its prefix 16 times)", numbers)
        return _finding(3, DOES_NOT_SHOW, evidence, CH3,
                        f"val bpb does not turn by d = {turn['last']}: these widths did not memorise the prefix "
                        f"at {'-' if passes is None else format(passes, '.2f')} passes",
                        "a smaller prefix (data.train_tokens) or wider tables", numbers)
    a, b = up[0]
    return _finding(3, DOES_NOT_SHOW, evidence, CH3,
                    f"train bpb rises from d = {a['n_embd']} ({a['train_bpb']:.4f}) to d = {b['n_embd']} "
                    f"({b['train_bpb']:.4f}): the wider tables did not fit even their training text",
                    "more steps per run", numbers)


def judge(docs: list[dict]) -> list[dict]:
    """The three findings judged on the width-study sweeps among `docs`, then the width-against-depth
    finding on each shape study among them ([] when there are none)."""
    shape = [judge_shapes(d) for d in docs if is_shape_study(d)]
    docs = [d for d in docs if is_width_study(d)]
    if not docs:
        return shape
    series = series_of(docs)
    spread = seed_spread(docs)
    full_candidates = [s for s in series if not s["small"] and len(s["entries"]) >= 2]
    # the series with the most widths (ties: the fewest passes, the first given)
    full = min(full_candidates, key=lambda s: (-len(s["entries"]), s["passes"] or 0.0), default=None)
    smalls = [s for s in series if s["small"]]
    small = max(smalls, key=lambda s: len(s["entries"]), default=None)
    others = [s for s in full_candidates if s is not full]
    return [judge_savings(full, spread), judge_no_turn(full, others, spread), judge_small_data(small, full, spread),
            *shape]


def finding_lines(findings: list[dict]) -> list[str]:
    """The judgement as lines of text (lrn sweep's closing lines)."""
    if not findings:
        return []
    out = ["The book chapter's findings, judged on this sweep:"]
    for f in findings:
        out.append(f"{f['number']}. {f['finding']}: {f['verdict'].upper()}"
                   + (f": {f['reason']}." if f["reason"] else "."))
        out += [f"   - {e}" for e in f["evidence"]]
        if f["next"]:
            out.append(f"   next: {f['next']}.")
    return out
