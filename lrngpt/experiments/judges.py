"""The three findings, one judge each, on the series lrngpt.experiments.findings picked out; the rules
are that module's docstring, the thresholds lrngpt.experiments.thresholds.

Each judge returns the finding's dict with the `moves` that would tell or help (advice.Move); the
findings module checks them against the other findings and writes them out as commands.
"""

from __future__ import annotations

from lrngpt.corpora.registry import corpus_label
from lrngpt.data.sizing import STORIES_BYTES_PER_TOKEN
from lrngpt.experiments import chapter
from lrngpt.experiments import trend as T
from lrngpt.experiments.advice import Move
from lrngpt.experiments.chapter import quote, read_shares
from lrngpt.experiments.noise import KIND_NAMES, Noise
from lrngpt.experiments.stats import mean_or_none
from lrngpt.experiments.thresholds import FEW_PASSES, MANY_PASSES, Z_STRICT, Z

SHOWS, DOES_NOT_SHOW, CANNOT_TELL = "shows", "does not show", "cannot tell"
FINDINGS = {
    1: "Each doubling of the embedding width saves less val bpb than the one before",
    2: "With enough data (hardly a token read twice) there is no turn: val bpb keeps falling or flattens with "
       "the width, and train bpb stays at or above val bpb (gap val - train at or below zero)",
    3: "On a small training prefix read many times val bpb turns (rises past some width) while train bpb "
       "keeps falling",
}
KEYS = {1: "diminishing-returns", 2: "no-turn-with-enough-data", 3: "small-data-turn"}
SPLITS = {"documents": "a seeded draw of whole documents", "tail": "the last part of its one document (its ending)",
          "chunks": "seeded chunks from all over the text", "own split": "the corpus's own validation split"}


def _finding(n: int, verdict: str, evidence: list[str], chapter_text: str, reason: str | None = None,
             moves: list[Move] | None = None, numbers: dict | None = None, note: str | None = None) -> dict:
    return {"number": n, "key": KEYS[n], "finding": FINDINGS[n], "verdict": verdict, "reason": reason,
            "next": note, "moves": moves or [], "commands": [], "evidence": evidence, "chapter": chapter_text,
            "numbers": numbers or {}}


def seed_move(kind: str = "val") -> Move:
    return Move(f"add a seed-variance sweep with this sweep's settings (three seeds at d = 64) to measure the noise of "
                f"{KIND_NAMES[kind]}",
                study="seed-variance", suffix="-seeds",
                checked="a sweep beside this one: it changes none of this sweep's runs")


def widths_move(study: str | None = "embed-dim") -> Move:
    """More widths: the study's own grid (the embed-dim study: d = 4 ... 512; None: the sweep's own study)."""
    return Move("run at least three widths, each double the last (the study's own: d = 4 ... 512)", sets={},
                suffix="-widths", beside=False, checked="the same settings at more widths", study=study,
                axes={"model.n_embd": None})


def small_move() -> Move:
    return Move("run the small-data study with this sweep's settings (its training text cut to a prefix read "
                "about 16 times) and judge the two together", study="embed-dim-small-data", suffix="-small",
                checked="a sweep beside this one: findings 1 and 2 stay judged on this sweep's runs")


def _listed(steps: list[tuple[int, int, float]]) -> str:
    return ", ".join(f"{a}->{b} {s:.4f}" for a, b, s in steps)


CH1 = (f"the chapter: {quote('diminishing')}; {quote('ten_times')} (its three seeds at d = 64: max - min "
       f"{max(chapter.SEED_VAL_BPB) - min(chapter.SEED_VAL_BPB):.4f})")


def judge_savings(full: dict | None, noise: Noise) -> dict:
    """Finding 1 on the full-data series: the savings per doubling fall, beyond the noise."""
    if full is None or len(full["entries"]) < 3:
        what = "no full-data series" if full is None else f"only {len(full['entries'])} widths"
        return _finding(1, CANNOT_TELL, [], CH1, f"{what}: two savings per doubling are needed to compare",
                        [widths_move()])
    sigma, measured = noise.sigma("val"), noise.measured("val")
    entries = full["entries"]
    widths, vals = [e["n_embd"] for e in entries], [e["val_bpb"] for e in entries]
    saved = T.savings(widths, vals)
    steps = [(a, b, s.value) for a, b, s in zip(widths, widths[1:], saved, strict=False)]
    rises = [i for i in range(len(saved) - 1) if saved[i + 1].value > saved[i].value]
    real = [i for i in rises if (saved[i + 1] - saved[i]).above(sigma, Z_STRICT)]
    slope = T.slope(T.midpoints(widths), saved)
    evidence = [f"val bpb saved per doubling ({full['label']}): {_listed(steps)}",
                "each smaller than the one before" if not rises else
                f"{len(steps) - 1 - len(rises)} of {len(steps) - 1} smaller than the one before",
                f"the savings' slope against log2 d: {slope.value:+.4f} per doubling, its noise "
                f"{slope.noise(sigma):.4f} (falling beyond the noise below {-Z_STRICT * slope.noise(sigma):+.4f})",
                noise.text("val")]
    positive = [s.value for s in saved if s.above(sigma)]
    spread = noise.spreads.get("val")
    if spread and positive:
        lost = [s.value for s in saved if s.below(sigma)]
        evidence.append(f"{len(positive)} of {len(saved)} savings are above the noise, the smallest of them "
                        f"{min(positive) / sigma:.0f}x the seed spread")
        if lost:
            evidence.append(f"{len(lost)} doubling{'s lose' if len(lost) > 1 else ' loses'} val bpb beyond the noise "
                            f"({', '.join(f'{s:.4f}' for s in lost)})")
    numbers = {"saved_per_doubling": [{"from": a, "to": b, "saved": s} for a, b, s in steps], "noise": sigma,
               "seed_spread": spread["spread"] if spread else None, "slope": slope.value,
               "slope_noise": slope.noise(sigma)}
    longer = Move("train every width twice as long, so the savings can grow above the noise",
                  sets={"train.steps": 2 * (full.get("steps") or 0)}, suffix="-longer", beside=False, tag="longer")
    if not saved[0].above(sigma, Z_STRICT):
        return _finding(1, DOES_NOT_SHOW, evidence, CH1,
                        f"the first doubling ({steps[0][0]}->{steps[0][1]}) saves only {saved[0].value:.4f}, within "
                        f"the noise ({Z_STRICT:g} x {saved[0].noise(sigma):.4f}): val bpb hardly falls with the width here",
                        [longer], numbers)
    if real:
        i = real[0]
        (a, b, p), (c, d, q) = steps[i], steps[i + 1]
        return _finding(1, DOES_NOT_SHOW, evidence, CH1,
                        f"the doubling {c}->{d} saves {q:.4f}, more than {a}->{b} ({p:.4f}) by {q - p:.4f}, beyond "
                        f"the noise ({Z_STRICT:g} x {(saved[i + 1] - saved[i]).noise(sigma):.4f})", None, numbers)
    if slope.below(sigma, Z_STRICT):
        if rises and not measured:
            (a, b, p), (c, d, q) = steps[rises[0]], steps[rises[0] + 1]
            return _finding(1, CANNOT_TELL, evidence, CH1,
                            f"the doubling {c}->{d} saves {q - p:.4f} more than {a}->{b}, within the usual seed noise "
                            "but with no seed spread here to judge it", [seed_move()], numbers)
        return _finding(1, SHOWS, evidence, CH1, None, None if measured else [seed_move()], numbers)
    grows = slope.above(sigma)
    how = "grow with the width" if grows else "do not fall beyond the noise"
    reason = (f"the savings per doubling {how} over d = {widths[0]} ... {widths[-1]} ({steps[0][2]:.4f} -> "
              f"{steps[-1][2]:.4f}: a slope of {slope.value:+.4f} per doubling, its noise "
              f"{slope.noise(sigma):.4f})")
    if not measured and not grows:
        return _finding(1, CANNOT_TELL, evidence, CH1, reason + " and no seed spread measures the noise",
                        [seed_move()], numbers)
    return _finding(1, DOES_NOT_SHOW, evidence, CH1, reason, [longer], numbers)



def _turn(entries: list[dict], key: str, sigma: float, z: float = Z) -> dict:
    """Where `key` is lowest, and how far it rises at a wider width (turned: beyond z x the noise)."""
    ds, vs = [e["n_embd"] for e in entries], [e[key] for e in entries]
    i = min(range(len(vs)), key=lambda k: (vs[k], k))
    j = max(range(i, len(vs)), key=lambda k: (vs[k], -k))
    rise = T.difference(vs, i, j)
    return {"best": ds[i], "best_bpb": vs[i], "narrowest": i == 0, "widest": i == len(vs) - 1,
            "peak": ds[j], "peak_bpb": vs[j], "rise": rise.value, "rise_noise": rise.noise(sigma), "z": z,
            "turned": rise.above(sigma, z), "last": ds[-1], "last_bpb": vs[-1]}


def _curve_text(t: dict) -> str:
    if t["widest"]:
        return f"val bpb falls to the widest run, d = {t['best']} ({t['best_bpb']:.4f})"
    narrowest = ", the narrowest run" if t["narrowest"] else ""
    text = f"val bpb is lowest at d = {t['best']} ({t['best_bpb']:.4f}{narrowest})"
    if not t["turned"]:
        return text + (f"; the wider runs stay within the noise ({t['z']:g} x {t['rise_noise']:.4f}) of it: it flattens")
    text += f" and rises to {t['peak_bpb']:.4f} at d = {t['peak']}"
    return text + (f" ({t['last_bpb']:.4f} at d = {t['last']})" if t["peak"] != t["last"] else "")


def _reading(series: dict) -> tuple[str, float | None, float | None]:
    """'N passes: X% of the training targets read ...', the share read and the share read twice or more
    (measured where the rows carry them, else the Poisson estimate)."""
    entries, passes = series["entries"], series["passes"]
    once_m = mean_or_none(e.get("read_share") for e in entries)
    twice_m = mean_or_none(e.get("read_twice_share") for e in entries)
    if passes is None and once_m is None:
        return "passes over the training text unknown (a summary from before they were recorded)", None, None
    once_e, twice_e = read_shares(passes) if passes is not None else (None, None)
    once, twice = (once_m, twice_m if twice_m is not None else twice_e) if once_m is not None else (once_e, twice_e)
    how = ("measured: the targets its seeded batches drew" if once_m is not None
           else "an estimate: 1 - e^-passes, for windows drawn at random")
    where = "-" if passes is None else f"{passes:.2f}"
    twice_text = "" if twice is None else f", {twice:.1%} twice or more"
    return (f"{where} passes over the training text: {once:.1%} of the training targets read at least once{twice_text} "
            f"({how})"), once, twice


def split_gap(entries: list[dict]) -> dict | None:
    """The gap (val - train) at each width as (val - never-read) + (never-read - train): a validation
    text unlike the training text, and what reading did (never-read - read: memorising). None when
    the rows do not carry read / never-read train bpb."""
    rows = [e for e in entries if e.get("train_bpb_read") is not None and e.get("train_bpb_unread") is not None
            and e.get("train_bpb") is not None]
    if not rows:
        return None
    other = [e["val_bpb"] - e["train_bpb_unread"] for e in rows]
    memo = [e["train_bpb_unread"] - e["train_bpb_read"] for e in rows]
    reading = [e["train_bpb_unread"] - e["train_bpb"] for e in rows]
    k = max(range(len(rows)), key=lambda i: rows[i]["gap"])  # where the gap is largest
    return {"widths": [e["n_embd"] for e in rows], "other_text": other, "memorising": memo, "reading": reading,
            "at": rows[k]["n_embd"], "k": k, "cause": "validation text" if other[k] >= reading[k] else "memorising"}


def _split_text(s: dict) -> str:
    w = s["widths"]
    return (f"the gap split by what training read (train bpb of the targets it read and of those it never read): "
            f"val bpb sits {s['other_text'][0]:+.4f} (d = {w[0]}) to {s['other_text'][-1]:+.4f} (d = {w[-1]}) "
            f"above the never-read targets (a validation text unlike the training text), which sit "
            f"{s['memorising'][0]:+.4f} to {s['memorising'][-1]:+.4f} above the read ones (memorising)")


def _validation(split: str | None) -> str | None:
    return None if split is None else f"validation: {SPLITS.get(split, split)}"


def reading_moves(series: dict) -> list[Move]:
    """Less reading of the training text: fewer steps (checked against finding 1 by the caller) or a
    larger text; for a budget, only the larger text (the plan chooses its own steps). Read under
    FEW_PASSES already, less still: half the passes, which halves the share of targets read, so a gap
    from memorising what was read shrinks with it."""
    passes, steps, meta = series["passes"], series.get("steps"), series["meta"]
    if not passes or not steps:
        return []
    target = FEW_PASSES if passes > FEW_PASSES else passes / 2
    read = mean_or_none(e.get("tokens_read") for e in series["entries"]) or 0
    need = read / target if read else None
    corpus = series["entries"][0].get("corpus") or ""
    out = []
    if need:
        # a command that runs as printed: a student with one book has no larger text of theirs to name, so
        # the generated stories of that size stand in (95% of them train), and the sentence says how to
        # put a larger text of their own there instead
        bigger = f"stories:{int(need * STORIES_BYTES_PER_TOKEN / 0.95 / 1e6) + 1}MB"
        own = "" if corpus.startswith("stories:") else (
            f": {corpus_label(corpus) if corpus else 'this text'} has fewer, so this runs on the generated stories of that size "
            "(a larger text of yours: --set data.corpus=text:PATH)")
        out.append(Move(f"train on a larger text (at least {need:,.0f} training tokens), read under {target:.2g} "
                        f"passes by the same steps{own}", sets={"data.corpus": bigger}, suffix="-more-text",
                        beside=False, tag="more-text"))
    fewer = int(steps * target / passes)
    if not meta.get("minutes") and 1 <= fewer < steps:
        out.insert(0, Move(f"train fewer steps ({fewer:,}), which read this text under {target:.2g} passes",
                           sets={"train.steps": fewer}, suffix="-fewer-steps", beside=False, tag="fewer-steps"))
    return out


def chunks_move() -> Move:
    return Move("draw validation from all over the text (data.val_split=chunks), not from its ending or a few "
                "documents", sets={"data.val_split": "chunks"}, suffix="-chunks", beside=False,
                checked="the same steps, batch and widths, and a training text within 5% of this one: finding 1's "
                        "savings are measured the same way", tag="chunks")


def by_reads_move(series: dict) -> Move:
    widest = series["entries"][-1]
    return Move("split the widest run's train bpb into the targets it read and those it never read",
                eval_run=widest.get("name") or f"d{widest['n_embd']}", checked="an evaluation: it trains nothing")


CH2 = (f"the chapter: {quote('hardly_twice')} (lrn's figures for it: {chapter.PASSES:.2f} passes, about "
       f"{read_shares(chapter.PASSES)[0]:.0%} of its targets read, under 1% twice); {quote('flat')}; {quote('gap')}; "
       f"its 16,000-step lines ({chapter.LONG_PASSES:.2f} passes) print gaps of -0.0040 to -0.0021")
CH_READ = read_shares(chapter.PASSES)[0]


def judge_no_turn(full: dict | None, others: list[dict], noise: Noise) -> dict:
    """Finding 2 on the full-data series: no turn and the gap within the noise of zero or below, with
    its premise (few passes, or read and never-read targets alike)."""
    if full is None or len(full["entries"]) < 3:
        what = "no full-data series" if full is None else f"only {len(full['entries'])} widths"
        return _finding(2, CANNOT_TELL, [], CH2, f"{what}: a turn needs three widths or more", [widths_move()])
    entries = full["entries"]
    if any(e["train_bpb"] is None for e in entries):
        return _finding(2, CANNOT_TELL, [], CH2, "the runs measured no train bpb (train.train_eval_tokens is 0)",
                        [Move("measure train bpb on 200,000 training tokens", sets={"train.train_eval_tokens": 200_000},
                              suffix="-train-bpb", beside=False, checked="an evaluation more: the runs train the same")])
    sv, sg, sm = noise.sigma("val"), noise.sigma("gap"), noise.sigma("memorising")
    widths, gaps = [e["n_embd"] for e in entries], [e["gap"] for e in entries]
    turn = _turn(entries, "val_bpb", sv)
    end = T.fitted_last(T.octaves(widths), gaps)
    above = [widths[i] for i in range(len(gaps)) if T.point(gaps, i).above(sg)]
    gap_ok = not above and not end.above(sg)
    reading, share, twice = _reading(full)
    split = split_gap(entries)
    passes, val_split = full["passes"], entries[0].get("val_split")
    alike = split is not None and not any(T.point(split["memorising"], i).above(sm) for i in
                                          range(len(split["memorising"])))
    premise = (passes is not None and passes <= FEW_PASSES) or alike
    evidence = [reading, _curve_text(turn),
                f"gap (val - train) {gaps[0]:+.4f} at d = {widths[0]} -> {gaps[-1]:+.4f} at d = {widths[-1]}"
                + (f", largest {max(gaps):+.4f}" if max(gaps) > max(gaps[0], gaps[-1]) else "")
                + f"; the line through the gaps reaches {end.value:+.4f} at d = {widths[-1]} (its noise "
                  f"{end.noise(sg):.4f})", noise.text("gap")]
    evidence += _no_turn_more_evidence(split, val_split, others, sv)
    numbers = {"passes": passes, "read_share": share, "read_twice_share": twice, "turn": turn, "noise": sv,
               "gap_noise": sg, "gap": {e["n_embd"]: e["gap"] for e in entries}, "gap_end": end.value,
               "premise": premise, "val_split": val_split, "split": split}
    if not turn["turned"] and gap_ok:
        return _no_turn_curve_holds(full, evidence, numbers, noise)
    return _no_turn_curve_differs(full, evidence, numbers, gaps, gap_ok, noise)


def _no_turn_more_evidence(split: dict | None, val_split: str | None, others: list[dict], sv: float) -> list[str]:
    """Finding 2's evidence past the curve and the gap: the gap split by reads, the validation text, and
    the other series' lowest val bpb and gaps."""
    out = []
    if split is not None:
        out.append(_split_text(split))
    validation = _validation(val_split)
    if validation:
        out.append(validation)
    for s in others:
        if len(s["entries"]) >= 2 and all(e["train_bpb"] is not None for e in s["entries"]):
            t = _turn(s["entries"], "val_bpb", sv)
            out.append(f"{s['label']} ({'-' if s['passes'] is None else format(s['passes'], '.2f')} passes): "
                       f"lowest val bpb at d = {t['best']}, gap {s['entries'][0]['gap']:+.4f} -> "
                       f"{s['entries'][-1]['gap']:+.4f}")
    return out


def _no_turn_curve_holds(full: dict, evidence: list[str], numbers: dict, noise: Noise) -> dict:
    """No turn and the gap within the noise: finding 2 shown where its premise holds, else cannot tell."""
    if numbers["premise"]:
        return _finding(2, SHOWS, evidence, CH2, None, [] if noise.measured("val") else [seed_move()], numbers)
    passes, share, twice = numbers["passes"], numbers["read_share"], numbers["read_twice_share"]
    why = (f"it read {share:.0%} of its training targets ({'-' if passes is None else format(passes, '.2f')} passes"
           + (f", {twice:.0%} twice or more" if twice is not None else "") + ")" if share is not None
           else "its passes over the training text are unknown")
    return _finding(2, CANNOT_TELL, evidence, CH2,
                    f"its curve is the chapter's (no turn, the gap within the noise of zero or below) but not its "
                    f"premise: {why}, where the chapter's model hardly ever read a token twice (about "
                    f"{CH_READ:.0%} of its targets, lrn's estimate for its {chapter.PASSES:.2f} passes)",
                    reading_moves(full), numbers)


def _no_turn_curve_differs(full: dict, evidence: list[str], numbers: dict, gaps: list[float], gap_ok: bool,
                           noise: Noise) -> dict:
    """A turn or a positive gap: finding 2 does not show, with the reason (reading its text too often, a
    harder validation text, memorising) and the moves that would tell."""
    turn, split, passes, val_split = numbers["turn"], numbers["split"], numbers["passes"], numbers["val_split"]
    share, twice = numbers["read_share"], numbers["read_twice_share"]
    parts = ([f"val bpb turns at d = {turn['best']}"] if turn["turned"] else []) + \
        ([f"the gap is positive (up to {max(gaps):+.4f})"] if not gap_ok else [])
    what = " and ".join(parts)
    heavy = passes is not None and passes > FEW_PASSES
    reading_reason = None
    if share is not None and heavy:
        reading_reason = (f"it read {share:.0%} of its training targets ({passes:.2f} passes"
                          + (f", about {twice:.0%} twice or more" if twice is not None else "")
                          + f") where the chapter's model read about {CH_READ:.0%} (lrn's estimate for its "
                          f"{chapter.PASSES:.2f} passes) and almost none twice; here {what}")
    if not gap_ok and split is not None:
        k, at = split["k"], split["at"]
        other, memo, part = split["other_text"][k], split["memorising"][k], split["reading"][k]
        if split["cause"] == "validation text":
            where = f"; validation is {SPLITS[val_split]}" if val_split in SPLITS else ""
            also = (f"; it also read its text {passes:.2f} times, more than the {FEW_PASSES} of finding 2's premise"
                    if heavy else "")
            reason = (f"{what}, and most of the gap is a harder validation text, not memorising: at d = {at} val bpb "
                      f"sits {other:+.4f} above the training targets it never read, and reading lowered the train "
                      f"bpb by only {part:.4f} more (read targets {memo:+.4f} below never-read ones){where}{also}")
            moves = ([chunks_move()] if val_split in ("tail", "documents") else []) + \
                (reading_moves(full) if heavy else [])
            return _finding(2, DOES_NOT_SHOW, evidence, CH2, reason, moves, numbers)
        mem = (f"the targets it read score {memo:.4f} below those it never read at d = {at} (memorising), the "
               f"validation text only {other:+.4f} above the never-read ones")
        reason = f"{reading_reason}: {mem}" if reading_reason else \
            f"{what}: {mem}, even at {'-' if passes is None else format(passes, '.2f')} passes"
        return _finding(2, DOES_NOT_SHOW, evidence, CH2, reason, reading_moves(full), numbers)
    if reading_reason:
        tail = (f"; its validation is {SPLITS['tail']}, which can read unlike the rest: the read / never-read "
                "split tells" if val_split == "tail" and split is None else "")
        moves = reading_moves(full) + ([by_reads_move(full)] if split is None and not gap_ok else [])
        return _finding(2, DOES_NOT_SHOW, evidence, CH2, reading_reason + tail, moves, numbers)
    if not gap_ok:
        moves = [by_reads_move(full)] + ([chunks_move()] if val_split == "tail" else [])
        return _finding(2, DOES_NOT_SHOW, evidence, CH2,
                        f"{what} though it read little of its text twice: its validation text is harder to predict "
                        "than its training text, or it memorised what it read", moves, numbers)
    return _finding(2, DOES_NOT_SHOW, evidence, CH2,
                    f"{what}: val bpb rises {turn['rise']:.4f} from d = {turn['best']} to d = {turn['peak']}, beyond "
                    f"the noise ({Z:g} x {turn['rise_noise']:.4f}), with the gap at or below zero",
                    [] if noise.measured("val") else [seed_move()], numbers)


CH3 = (f"the chapter: {quote('small')}; {quote('small_val')}; {quote('small_train')}; {quote('small_gap')}")


def judge_small_data(small: dict | None, full: dict | None, noise: Noise) -> dict:
    """Finding 3 on the small-data series: val bpb turns while train bpb keeps falling, beyond the noise."""
    if small is None:
        return _finding(3, CANNOT_TELL, [], CH3, "no small-data series here: no sweep trains on a short prefix read "
                        "many times", [small_move()])
    entries = small["entries"]
    if len(entries) < 3 or any(e["train_bpb"] is None for e in entries):
        why = f"only {len(entries)} widths" if len(entries) < 3 else "the runs measured no train bpb"
        return _finding(3, CANNOT_TELL, [], CH3, f"{why} in {small['label']}", [widths_move(None)])
    sv, st = noise.sigma("val"), noise.sigma("train")
    turn = _turn(entries, "val_bpb", sv, Z_STRICT)  # a turn makes it show
    trains = [e["train_bpb"] for e in entries]
    up = [(entries[i], entries[i + 1]) for i in range(len(entries) - 1) if T.difference(trains, i, i + 1).above(st)]
    passes = small["passes"]
    prefix = f" over a prefix of {small['train_tokens']:,} tokens" if small.get("train_tokens") else ""
    evidence = [f"{small['label']}: {'-' if passes is None else format(passes, '.2f')} passes{prefix}",
                f"train bpb {trains[0]:.4f} (d = {entries[0]['n_embd']}) -> {trains[-1]:.4f} (d = "
                f"{entries[-1]['n_embd']}), " + ("falling at every width" if not up else
                                                 f"rising beyond the noise at {len(up)} of {len(entries) - 1} doublings"),
                _curve_text(turn),
                f"gap (val - train) {entries[0]['gap']:+.4f} -> {entries[-1]['gap']:+.4f}", noise.text("val")]
    if full is not None:
        ref = {e["n_embd"]: e["val_bpb"] for e in full["entries"]}
        above = [e["val_bpb"] - ref[e["n_embd"]] for e in entries if e["n_embd"] in ref]
        if above:
            evidence.append(f"against the full-data val bpb at the same widths ({full['label']}): "
                            f"{min(above):+.4f} to {max(above):+.4f}")
    numbers = {"passes": passes, "turn": turn, "noise": sv, "train_noise": st,
               "train_bpb": {e["n_embd"]: e["train_bpb"] for e in entries}}
    if turn["turned"] and not up:
        return _finding(3, SHOWS, evidence, CH3, None, None, numbers)
    if not turn["turned"]:
        steps, tt = small.get("steps"), small.get("train_tokens")
        if passes is not None and passes < MANY_PASSES and tt:
            reason = (f"val bpb does not turn: it read its text only {passes:.2f} times, where the chapter read its "
                      "prefix about 16 times")
            return _finding(3, DOES_NOT_SHOW, evidence, CH3, reason,
                            [Move("read a shorter prefix, about 16 times",
                                  sets={"data.train_tokens": max(2, int(tt * passes / 16))}, suffix="-shorter-prefix",
                                  beside=False, checked="a small-data sweep: findings 1 and 2 are judged on another")],
                            numbers)
        moves = [Move("train each width twice as long on the same prefix", sets={"train.steps": 2 * steps},
                      suffix="-longer", beside=False,
                      checked="a small-data sweep: findings 1 and 2 are judged on another")] if steps else []
        return _finding(3, DOES_NOT_SHOW, evidence, CH3,
                        f"val bpb does not turn by d = {turn['last']}: these widths did not memorise the prefix "
                        f"at {'-' if passes is None else format(passes, '.2f')} passes", moves, numbers)
    a, b = up[0]
    moves = [Move("train each width twice as long, so the wide tables fit their prefix",
                  sets={"train.steps": 2 * small["steps"]}, suffix="-longer", beside=False,
                  checked="a small-data sweep: findings 1 and 2 are judged on another")] if small.get("steps") else []
    return _finding(3, DOES_NOT_SHOW, evidence, CH3,
                    f"train bpb rises from d = {a['n_embd']} ({a['train_bpb']:.4f}) to d = {b['n_embd']} "
                    f"({b['train_bpb']:.4f}), beyond its noise: the wider tables did not fit even their training text",
                    moves, numbers)
