"""The book chapter's findings 1-3, one judge each, on the series lrngpt.experiments.findings picked.

A claim about trained models cannot show where no width trained: a width whose train bpb is still
above TRAINED x its untrained val bpb has learned little beyond token frequencies (train bpb, not val:
a validation text unlike the training text keeps val bpb high however well a model learned).
"""

from __future__ import annotations

from lrngpt.corpora.registry import corpus_label
from lrngpt.data.sizing import STORIES_BYTES_PER_TOKEN
from lrngpt.experiments import chapter
from lrngpt.experiments import trend as T
from lrngpt.experiments.chapter import quote, read_shares, seconds_text
from lrngpt.experiments.finding import Claim, Finding, Move, Span, of_untrained, say, untrained_because
from lrngpt.experiments.finding import Verdict as V
from lrngpt.experiments.stats import mean_or_none
from lrngpt.experiments.thresholds import FEW_PASSES, MANY_PASSES, TRAINED, Z_STRICT, Z
from lrngpt.experiments.trend import Noise

CH_READ = read_shares(chapter.PASSES)[0]
CLAIMS = {
    1: Claim("diminishing-returns", "Each doubling of the embedding width saves less val bpb than the one before",
             f"the chapter: {quote('diminishing')}; {quote('ten_times')} (its three seeds at d = 64: max - min "
             f"{max(chapter.SEED_VAL_BPB) - min(chapter.SEED_VAL_BPB):.4f}); {quote('train_seconds')} "
             f"({seconds_text(chapter.SECONDS)})", 1),
    2: Claim("no-turn-with-enough-data", "With enough data (hardly a token read twice) there is no turn: val bpb keeps "
             "falling or flattens with the width, and train bpb stays at or above val bpb (gap val - train at or "
             "below zero)", f"the chapter: {quote('hardly_twice')} (lrn's figures for it: {chapter.PASSES:.2f} passes, "
             f"about {CH_READ:.0%} of its targets read, under 1% twice); {quote('flat')}; {quote('gap')}; its "
             f"16,000-step lines ({chapter.LONG_PASSES:.2f} passes, {seconds_text(chapter.LONG_SECONDS)}) print gaps "
             f"of {min(v - t for v, t in chapter.LONG.values()):+.4f} to {max(v - t for v, t in chapter.LONG.values()):+.4f}",
             2),
    3: Claim("small-data-turn", "On a small training prefix read many times val bpb turns (rises past some width) "
             "while train bpb keeps falling",
             f"the chapter: {quote('small')}; {quote('small_val')}; {quote('small_train')}; {quote('small_gap')} (its "
             f"lowest val bpb during training: {', '.join(f'{v:.4f}' for v, _ in chapter.SMALL_BEST.values())} at d = "
             f"{', '.join(map(str, chapter.SMALL_BEST))}, each at step 4,000 but d = 512's at 3,750; "
             f"{seconds_text(chapter.SMALL_SECONDS)}); its Problem 11: {quote('problem11_train')}; "
             f"{quote('problem11_val')}", 3),
}
SPLITS = {"documents": "a seeded draw of whole documents", "tail": "the last part of its one document (its ending)",
          "chunks": "seeded chunks from all over the text", "own split": "the corpus's own validation split"}
LIKE_TRAINING = ("documents", "chunks")  # validation drawn as the training text is: not another kind of text
UP = {"tiny": ("cpu", "400 steps of 16 x 256 on stories:5MB, where every width of the stories trains"),
      "cpu": ("full", "the chapter's 4,000 steps of 64 x 256, a GPU job")}
TIMES = {2: "twice", 4: "four times"}


def _passes(p: float | None) -> str:
    return "-" if p is None else f"{p:.2f}"


def _noise(est: T.Estimate, sigma: float, noise: Noise, what: str) -> str:
    """'3 x 0.0130, the seed spread 0.0184 carried through a saving over 2 doublings (x 0.71)'."""
    return say("{z:g} x {n:.4f}, {src} {s:.4f} carried through {what} (x {w:.2f})", z=Z_STRICT, n=est.noise(sigma),
               src=noise.source("val"), s=sigma, what=what, w=est.norm)


def untrained(entries: list[dict]) -> dict[int, float]:
    """{width: its bpb over the untrained model's} of the widths not trained past token frequencies."""
    ratios = {e["n_embd"]: of_untrained(e) for e in entries}
    return {d: r for d, r in ratios.items() if r is not None and r > TRAINED}


def longer_move(series: dict, times: int, why: str = "", **kw) -> list[Move]:
    """Every width trained `times` as long: a budget's minutes (its plan chooses the steps), else the steps."""
    minutes, steps, word = series["meta"].get("minutes"), series.get("steps"), TIMES[times]
    if minutes:
        return [Move(f"give the study {word} the --minutes, so each width trains longer", minutes=times * minutes,
                     suffix="-longer", **kw)]
    return [Move(f"train every width {word} as long{why}", sets={"train.steps": times * steps}, suffix="-longer",
                 **kw)] if steps else []


def scale_move(series: dict) -> list[Move]:
    """Where the widths train: the next scale up, four times a budget's minutes, or four times the steps."""
    up = UP.get(series["meta"].get("scale"))
    if up is None or series["meta"].get("minutes"):
        return longer_move(series, 4)
    return [Move(f"run it at --scale {up[0]} ({up[1]})", scale=up[0], suffix=f"-{up[0]}")]


def _judged(n: int, series: dict, evidence: list[str], numbers: dict):
    """The maker of finding n's verdicts on `series`: where a width did not train past token frequencies,
    each is "cannot show at this scale" instead (the claim is about trained models)."""
    stale = untrained(series["entries"])

    def found(verdict: V, because=(), moves=()) -> Finding:
        if not stale:
            return Finding.judged(CLAIMS[n], verdict, because, evidence, numbers, moves)
        why = untrained_because(stale, len(series["entries"]), "no width has", "the {t:.0%} a model reaches once it "
                                "reads its context; the claim is about trained models", prefix="d = ")
        return Finding.judged(CLAIMS[n], V.CANNOT_SHOW, [why], evidence, {**numbers, "untrained": stale},
                              scale_move(series))
    return found


def seed_moves(noise: Noise) -> list[Move]:
    """A seed-variance sweep beside this one where no seeds measured the noise of val bpb."""
    return [] if noise.measured("val") else [Move(
        "add a seed-variance sweep with this sweep's settings (three seeds at d = 64) to measure the noise of val bpb",
        study="seed-variance", suffix="-seeds", beside=True, checked="a sweep beside this one: it changes none of this "
        "sweep's runs")]


def widths_move(study: str | None = "embed-dim") -> Move:
    """More widths: the study's own grid (the embed-dim study: d = 4 ... 512; None: the sweep's own study)."""
    return Move("run at least three widths, each double the last (the study's own: d = 4 ... 512)", sets={},
                suffix="-widths", checked="the same settings at more widths", study=study,
                axes={"model.n_embd": None})


def _too_few(n: int, full: dict | None, why: str) -> Finding:
    what = "no full-data series" if full is None else f"only {len(full['entries'])} widths"
    return Finding.judged(CLAIMS[n], V.CANNOT_TELL, [f"{what}: {why}"], moves=[widths_move()])


def judge_savings(full: dict | None, noise: Noise) -> Finding:
    """Finding 1 on the full-data series: the savings per doubling fall, beyond the noise."""
    if full is None or len(full["entries"]) < 3:
        return _too_few(1, full, "two savings per doubling are needed to compare")
    sigma, measured = noise.sigma("val"), noise.measured("val")
    entries = full["entries"]
    widths, vals = [e["n_embd"] for e in entries], [e["val_bpb"] for e in entries]
    saved = T.savings(widths, vals)
    steps = [(a, b, s.value) for a, b, s in zip(widths, widths[1:], saved, strict=False)]
    rises = [i for i in range(len(saved) - 1) if saved[i + 1].value > saved[i].value]
    real = [i for i in rises if (saved[i + 1] - saved[i]).above(sigma, Z_STRICT)]
    slope = T.slope(T.midpoints(widths), saved)
    evidence = [f"val bpb saved per doubling ({full['label']}): " + ", ".join(f"{a}->{b} {s:.4f}" for a, b, s in steps),
                "each smaller than the one before" if not rises else
                f"{len(steps) - 1 - len(rises)} of {len(steps) - 1} smaller than the one before",
                say("the savings' slope against log2 d: {v:+.4f} per doubling, its noise {n:.4f} (falling beyond the "
                    "noise below {b:+.4f})", v=slope.value, n=slope.noise(sigma), b=-Z_STRICT * slope.noise(sigma)),
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
    found = _judged(1, full, evidence, numbers)
    longer = longer_move(full, 2, ", so the savings can grow above the noise", tag="longer")
    if not saved[0].above(sigma, Z_STRICT):
        (a, b, s), doublings = steps[0], T.octaves(widths)[1] - T.octaves(widths)[0]
        because = say("the first doubling ({a}->{b}) {s:saves|loses|saves} only {s:~.4f}, within the noise ({n}): val "
                      "bpb hardly changes with the width here", a=a, b=b, s=s,
                      n=_noise(saved[0], sigma, noise, f"a saving over {doublings:g} doubling{'s' * (doublings != 1)}"))
        return found(V.DOES_NOT_SHOW, [because], longer)
    if real:
        i = real[0]
        (a, b, p), (c, d, q) = steps[i], steps[i + 1]
        because = say("the doubling {c}->{d} {q:saves|loses|saves} {q:~.4f}, more than {a}->{b} ({p:.4f}) by {r:.4f}, "
                      "beyond the noise ({n})", a=a, b=b, c=c, d=d, p=p, q=q, r=q - p,
                      n=_noise(saved[i + 1] - saved[i], sigma, noise, "the difference of two savings"))
        return found(V.DOES_NOT_SHOW, [because])
    if slope.below(sigma, Z_STRICT):
        if rises and not measured:
            (a, b, p), (c, d, q) = steps[rises[0]], steps[rises[0] + 1]
            because = say("the doubling {c}->{d} saves {r:.4f} more than {a}->{b}, within the usual seed noise but "
                          "with no seed spread here to judge it", a=a, b=b, c=c, d=d, r=q - p)
            return found(V.CANNOT_TELL, [because], seed_moves(noise))
        return found(V.SHOWS, [], seed_moves(noise))
    grows = slope.above(sigma)
    because = say("the savings per doubling {how} over d = {a} ... {b} ({s0:.4f} -> {s1:.4f}: a slope of {v:+.4f} per "
                  "doubling, its noise {n:.4f})", how="grow with the width" if grows else "do not fall beyond the noise",
                  a=widths[0], b=widths[-1], s0=steps[0][2], s1=steps[-1][2], v=slope.value, n=slope.noise(sigma))
    if not measured and not grows:
        return found(V.CANNOT_TELL, [because + " and no seed spread measures the noise"], seed_moves(noise))
    return found(V.DOES_NOT_SHOW, [because], longer)


def _turn(entries: list[dict], sigma: float, z: float = Z) -> dict:
    """Where val bpb is lowest, and how far it rises at a wider width (turned: beyond z x the noise)."""
    ds, vs = [e["n_embd"] for e in entries], [e["val_bpb"] for e in entries]
    i = min(range(len(vs)), key=lambda k: (vs[k], k))
    j = max(range(i, len(vs)), key=lambda k: (vs[k], -k))
    rise = T.difference(vs, i, j)
    return {"best": ds[i], "best_bpb": vs[i], "narrowest": i == 0, "widest": i == len(vs) - 1,
            "peak": ds[j], "peak_bpb": vs[j], "rise": rise.value, "rise_noise": rise.noise(sigma), "z": z,
            "turned": rise.above(sigma, z), "last": ds[-1], "last_bpb": vs[-1]}


def _curve_text(t: dict) -> str:
    if t["widest"]:
        return f"val bpb falls to the widest run, d = {t['best']} ({t['best_bpb']:.4f})"
    text = f"val bpb is lowest at d = {t['best']} ({t['best_bpb']:.4f}{', the narrowest run' * t['narrowest']})"
    if not t["turned"]:
        return text + f"; the wider runs stay within the noise ({t['z']:g} x {t['rise_noise']:.4f}) of it: it flattens"
    text += f" and rises to {t['peak_bpb']:.4f} at d = {t['peak']}"
    return text + (f" ({t['last_bpb']:.4f} at d = {t['last']})" if t["peak"] != t["last"] else "")


def _reading(series: dict) -> tuple[str, float | None, float | None]:
    """The reading as a sentence, the share read and the share read twice (measured, else Poisson)."""
    entries, passes = series["entries"], series["passes"]
    measured = [mean_or_none(e.get(k) for e in entries) for k in ("read_share", "read_twice_share")]
    if passes is None and measured[0] is None:
        return "passes over the training text unknown (the runs' summaries say none)", None, None
    once, twice = (m if m is not None else e for m, e in
                   zip(measured, read_shares(passes) if passes is not None else (None, None), strict=True))
    how = ("measured: the targets its seeded batches drew" if measured[0] is not None
           else "an estimate: 1 - e^-passes, for windows drawn at random")
    twice_text = "" if twice is None else f", {twice:.1%} twice or more"
    return (f"{_passes(passes)} passes over the training text: {once:.1%} of the training targets read at least once"
            f"{twice_text} ({how})"), once, twice


def split_gap(entries: list[dict]) -> dict | None:
    """The gap at each width split into (val - never-read) and (never-read - train); None without them."""
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


def reading_moves(series: dict) -> list[Move]:
    """Less reading of the training text: fewer steps or a larger text (a budget: only the text); read under
    FEW_PASSES already, half the passes."""
    passes, steps, meta = series["passes"], series.get("steps"), series["meta"]
    if not passes or not steps:
        return []
    target = FEW_PASSES if passes > FEW_PASSES else passes / 2
    read = mean_or_none(e.get("tokens_read") for e in series["entries"]) or 0
    need = read / target if read else None
    corpus = series["entries"][0].get("corpus") or ""
    out = []
    if need:
        # a command that runs as printed: the generated stories of that size stand in for a larger text
        bigger = f"stories:{int(need * STORIES_BYTES_PER_TOKEN / 0.95 / 1e6) + 1}MB"
        own = "" if corpus.startswith("stories:") else (
            f": {corpus_label(corpus) if corpus else 'this text'} has fewer, so this runs on the generated stories of "
            "that size (a larger text of yours: --set data.corpus=text:PATH)")
        out.append(Move(f"train on a larger text (at least {need:,.0f} training tokens), read under {target:.2g} "
                        f"passes by the same steps{own}", sets={"data.corpus": bigger}, suffix="-more-text", tag="more-text",
                        checked="the same steps and batch: finding 1's savings are measured as before, on a text read "
                        "less often"))
    fewer = int(steps * target / passes)
    if not meta.get("minutes") and 1 <= fewer < steps:
        out.insert(0, Move(f"train fewer steps ({fewer:,}), which read this text under {target:.2g} passes",
                           sets={"train.steps": fewer}, suffix="-fewer-steps", tag="fewer-steps"))
    return out


def chunks_move() -> Move:
    return Move("draw validation from all over the text (data.val_split=chunks), not from its ending or another "
                "text", sets={"data.val_split": "chunks"}, suffix="-chunks",
                checked="the same steps, batch and widths, and a training text within 5% of this one: finding 1's "
                        "savings are measured the same way")


def by_reads_move(series: dict) -> Move:
    widest = series["entries"][-1]
    return Move("split the widest run's train bpb into the targets it read and those it never read",
                eval_run=widest.get("name") or f"d{widest['n_embd']}", checked="an evaluation: it trains nothing")


def _read_share(share: float, passes: float | None, twice: float | None, about: str = "") -> str:
    return (f"it read {share:.0%} of its training targets ({_passes(passes)} passes"
            + (f", {about}{twice:.0%} twice or more" if twice is not None else "") + ")")


def judge_no_turn(full: dict | None, others: list[dict], noise: Noise) -> Finding:
    """Finding 2 on the full-data series: no turn and the gap within the noise of zero or below."""
    if full is None or len(full["entries"]) < 3:
        return _too_few(2, full, "a turn needs three widths or more")
    entries = full["entries"]
    if any(e["train_bpb"] is None for e in entries):
        return Finding.judged(CLAIMS[2], V.CANNOT_TELL, ["the runs measured no train bpb (train.train_eval_tokens is 0)"],
                              moves=[Move("measure train bpb on 200,000 training tokens", suffix="-train-bpb",
                                          sets={"train.train_eval_tokens": 200_000}, checked="an evaluation more: "
                                          "the runs train the same")])
    sv, sg, sm = noise.sigma("val"), noise.sigma("gap"), noise.sigma("memorising")
    widths, gaps = [e["n_embd"] for e in entries], [e["gap"] for e in entries]
    turn = _turn(entries, sv)
    end = T.fitted_last(T.octaves(widths), gaps)
    gap_ok = max(gaps) <= Z * sg and not end.above(sg)  # no gap, nor the line's end, above zero beyond the noise
    reading, share, twice = _reading(full)
    split = split_gap(entries)
    passes, val_split = full["passes"], entries[0].get("val_split")
    alike = split is not None and max(split["memorising"]) <= Z * sm
    evidence = [reading, _curve_text(turn),
                f"gap (val - train) {gaps[0]:+.4f} at d = {widths[0]} -> {gaps[-1]:+.4f} at d = {widths[-1]}"
                + (f", largest {max(gaps):+.4f}" if max(gaps) > max(gaps[0], gaps[-1]) else "")
                + f"; the line through the gaps reaches {end.value:+.4f} at d = {widths[-1]} (its noise "
                  f"{end.noise(sg):.4f})", noise.text("gap")]
    if split:
        o, m, w = split["other_text"], split["memorising"], split["widths"]
        evidence.append(say("the gap split by what training read (train bpb of the targets it read and of those it never "
                            "read), d = {a} to {b}: val bpb minus the never-read targets' {o:+.4f} (above zero where the "
                            "validation text reads harder than training text never read), never-read minus read {m:+.4f} "
                            "(above zero where reading lowered the read targets: memorising)", a=w[0], b=w[-1],
                            o=Span(o[0], o[-1]), m=Span(m[0], m[-1])))
    evidence += [f"validation: {SPLITS.get(val_split, val_split)}"] * bool(val_split)
    for s in others:
        if len(s["entries"]) >= 2 and all(e["train_bpb"] is not None for e in s["entries"]):
            t = _turn(s["entries"], sv)
            evidence.append(f"{s['label']} ({_passes(s['passes'])} passes): lowest val bpb at d = {t['best']}, gap "
                            f"{s['entries'][0]['gap']:+.4f} -> {s['entries'][-1]['gap']:+.4f}")
    numbers = {"passes": passes, "read_share": share, "read_twice_share": twice, "turn": turn, "noise": sv,
               "gap_noise": sg, "gap": {e["n_embd"]: e["gap"] for e in entries}, "gap_end": end.value,
               "premise": (passes is not None and passes <= FEW_PASSES) or alike, "val_split": val_split,
               "split": split}
    found, less = _judged(2, full, evidence, numbers), reading_moves(full)
    if not turn["turned"] and gap_ok:
        if numbers["premise"]:
            return found(V.SHOWS, [], seed_moves(noise))
        why = "its passes over the training text are unknown" if share is None else _read_share(share, passes, twice)
        return found(V.CANNOT_TELL, [
            f"its curve is the chapter's (no turn, the gap within the noise of zero or below) but not its premise: "
            f"{why}, where the chapter's model hardly ever read a token twice (about {CH_READ:.0%} of its targets, "
            f"lrn's estimate for its {chapter.PASSES:.2f} passes)"], less)
    what = " and ".join([f"val bpb turns at d = {turn['best']}"] * turn["turned"]
                        + [f"the gap is positive (up to {max(gaps):+.4f})"] * (not gap_ok))
    heavy = passes is not None and passes > FEW_PASSES
    read = (f"{_read_share(share, passes, twice, 'about ')} where the chapter's model read about {CH_READ:.0%} (lrn's "
            f"estimate for its {chapter.PASSES:.2f} passes) and almost none twice; here {what}"
            if share is not None and heavy else None)
    also = f"; it also read its text {passes:.2f} times, more than the {FEW_PASSES} of finding 2's premise" * heavy
    if not gap_ok and split is not None:
        k, at = split["k"], split["at"]
        nums = {"o": split["other_text"][k], "m": split["memorising"][k], "r": split["reading"][k], "at": at}
        if split["cause"] == "validation text" and val_split in LIKE_TRAINING:
            because = say(
                "{what}: at d = {at} val bpb sits {o:~.4f} {o:above|below|level with} the training targets it never "
                "read, though validation is {where}, drawn as the training text is: not a harder text, but what "
                "reading did around the never-read targets (they sit among read ones); the read targets score "
                "{m:~.4f} {m:below|above|level with} them{also}", what=what, where=SPLITS[val_split], also=also, **nums)
            return found(V.DOES_NOT_SHOW, [because], less)
        if split["cause"] == "validation text":
            where = f"; validation is {SPLITS[val_split]}" if val_split in SPLITS else ""
            because = say("{what}, and most of the gap is a harder validation text, not memorising: at d = {at} val bpb "
                          "sits {o:~.4f} {o:above|below|level with} the training targets it never read, and reading {r:lowered|raised|"
                          "changed} the train bpb by only {r:~.4f} (read targets {m:~.4f} {m:below|above|level with} never-read ones)"
                          "{where}{also}", what=what, where=where, also=also, **nums)
            return found(V.DOES_NOT_SHOW, [because],
                         [chunks_move()] * (val_split in ("tail", "own split")) + less * heavy)
        mem = say("the targets it read score {m:~.4f} {m:below|above|level with} those it never read at d = {at} "
                  "({m:memorising|not memorising|not memorising}), the validation text {o:~.4f} "
                  "{o:above|below|level with} the never-read ones", **nums)
        because = f"{read}: {mem}" if read else f"{what}: {mem}, even at {_passes(passes)} passes"
        return found(V.DOES_NOT_SHOW, [because], less)
    if read:
        tail = (f"; its validation is {SPLITS['tail']}, which can read unlike the rest: the read / never-read "
                "split tells" if val_split == "tail" and split is None else "")
        return found(V.DOES_NOT_SHOW, [read + tail], less + [by_reads_move(full)] * (split is None and not gap_ok))
    if not gap_ok:
        return found(V.DOES_NOT_SHOW, [
            f"{what} though it read little of its text twice: its validation text is harder to predict than its "
            "training text, or it memorised what it read"],
            [by_reads_move(full)] + [chunks_move()] * (val_split == "tail"))
    because = say("{what}: val bpb rises {r:.4f} from d = {a} to d = {b}, beyond the noise ({z:g} x {n:.4f}), with the "
                  "gap at or below zero", what=what, r=turn["rise"], a=turn["best"], b=turn["peak"], z=Z,
                  n=turn["rise_noise"])
    return found(V.DOES_NOT_SHOW, [because], seed_moves(noise))


def judge_small_data(small: dict | None, full: dict | None, noise: Noise) -> Finding:
    """Finding 3 on the small-data series: val bpb turns while train bpb keeps falling, beyond the noise."""
    if small is None:
        return Finding.judged(CLAIMS[3], V.CANNOT_TELL, ["no small-data series here: no sweep trains on a short prefix "
                                                         "read many times"], moves=[Move(
            "run the small-data study with this sweep's settings (its training text cut to a prefix read about 16 "
            "times) and judge the two together", study="embed-dim-small-data", suffix="-small", beside=True,
            checked="a sweep beside this one: findings 1 and 2 stay judged on this sweep's runs")])
    entries = small["entries"]
    if len(entries) < 3 or any(e["train_bpb"] is None for e in entries):
        why = f"only {len(entries)} widths" if len(entries) < 3 else "the runs measured no train bpb"
        return Finding.judged(CLAIMS[3], V.CANNOT_TELL, [f"{why} in {small['label']}"], moves=[widths_move(None)])
    sv, st, sg = noise.sigma("val"), noise.sigma("train"), noise.sigma("gap")
    turn = _turn(entries, sv, Z_STRICT)  # a turn makes it show
    trains, gaps = [e["train_bpb"] for e in entries], [e["gap"] for e in entries]
    up = [(entries[i], entries[i + 1]) for i in range(len(entries) - 1) if T.difference(trains, i, i + 1).above(st)]
    passes, (first, last) = small["passes"], (entries[0]["n_embd"], entries[-1]["n_embd"])
    prefix = f" over a prefix of {small['train_tokens']:,} tokens" if small.get("train_tokens") else ""
    evidence = [f"{small['label']}: {_passes(passes)} passes{prefix}",
                f"train bpb {trains[0]:.4f} (d = {first}) -> {trains[-1]:.4f} (d = {last}), "
                + ("falling at every width" if not up else
                   f"rising beyond the noise at {len(up)} of {len(entries) - 1} doublings"),
                _curve_text(turn), f"gap (val - train) {gaps[0]:+.4f} -> {gaps[-1]:+.4f}", noise.text("val")]
    if full is not None:
        ref = {e["n_embd"]: e["val_bpb"] for e in full["entries"]}
        above = [e["val_bpb"] - ref[e["n_embd"]] for e in entries if e["n_embd"] in ref]
        if above:
            evidence.append(say("against the full-data val bpb at the same widths ({label}): {s:+.4f}",
                                label=full["label"], s=Span(min(above), max(above))))
    numbers = {"passes": passes, "turn": turn, "noise": sv, "train_noise": st,
               "train_bpb": {e["n_embd"]: e["train_bpb"] for e in entries}}
    found = _judged(3, small, evidence, numbers)
    if turn["turned"] and not up:
        return found(V.SHOWS, [])
    check = "a small-data sweep: findings 1 and 2 are judged on another"
    longer = longer_move(small, 2, " on the same prefix", checked=check)
    if up:
        a, b = up[0]
        return found(V.DOES_NOT_SHOW, [
            f"train bpb rises from d = {a['n_embd']} ({a['train_bpb']:.4f}) to d = {b['n_embd']} ({b['train_bpb']:.4f}), "
            "beyond its noise: the wider tables did not fit even their training text"], longer)
    tt = small.get("train_tokens")
    if passes is not None and passes < MANY_PASSES and tt:
        return found(V.DOES_NOT_SHOW, [
            f"val bpb does not turn: it read its text only {passes:.2f} times, where the chapter read its prefix about "
            "16 times"],
            [Move("read a shorter prefix, about 16 times", sets={"data.train_tokens": max(2, int(tt * passes / 16))},
                  suffix="-shorter-prefix", checked=check)])
    grew, g = T.difference(gaps, 0, len(gaps) - 1).above(sg), {"g0": gaps[0], "g1": gaps[-1], "t0": trains[0],
                                                                "t1": trains[-1]}
    memorised = say("the gap grows {g0:+.4f} -> {g1:+.4f} while train bpb falls {t0:.4f} -> {t1:.4f}: the wide tables "
                    "memorise the prefix, but not yet enough to cost val bpb" if grew and trains[-1] < trains[0] else
                    "the gap grows {g0:+.4f} -> {g1:+.4f}, but train bpb does not fall ({t0:.4f} -> {t1:.4f})" if grew
                    else "the gap stays within its noise ({g0:+.4f} -> {g1:+.4f}): these widths did not memorise the "
                    "prefix", **g)
    return found(V.DOES_NOT_SHOW, [f"val bpb does not turn by d = {turn['last']} at {_passes(passes)} passes: {memorised}"],
                 longer)
