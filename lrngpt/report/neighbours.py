"""The embedding-neighbours section: nearest tokens by cosine for a few query words, the last and the
best weights side by side, and the category purity of the stories corpus.

The queries are the tokens asked for, else the stories corpus's category words, else the most
frequent content words of the run's validation split (function words left out: STOPWORDS)."""

from __future__ import annotations

from pathlib import Path

from lrngpt.analysis.embeddings import has_categories, pair_cosine, purity, token_neighbors
from lrngpt.analysis.vocab import count_ids, frequency_order
from lrngpt.data.prepared import cached_prepared
from lrngpt.errors import UserError
from lrngpt.experiments.chapter import NEIGHBOURS, UNTRAINED_NEIGHBOURS
from lrngpt.report.html import code, esc, fmt, rows_table
from lrngpt.store.rundir import RunDir, load_run

N_FREQUENT, K_NEIGHBOURS = 5, 8  # frequent words queried when none are given; neighbours per query

STORIES_WORDS = (" Lily", " Tom", " red", " cat", " apple", " park")  # one or two per category
# Function words: frequent in any English text and no help in judging an embedding table.
STOPWORDS = frozenset("""
a about above after again against all am an and any are as at be because been before being below between both
but by can could did do does doing down during each few for from further had has have having he her here hers
herself him himself his how i if in into is it its itself just me more most my myself no nor not now of off on
once only or other our ours ourselves out over own same she should so some such than that the their theirs them
themselves then there these they this those through to too under until up very was we were what when where which
while who whom why will with would you your yours yourself yourselves one said says get got went go also like
""".split())


def _checkpoints(run_dir: Path, checkpoint: str | None) -> list[tuple[str, str]]:
    """(which, heading) of the weights to show: the one asked for, else the last and a different best."""
    s = RunDir(run_dir).summary() or {}
    last = f"last, step {fmt(s.get('step'), 'step')}, val bpb {fmt(s.get('val_bpb'), 'bpb')}" if s else "last"
    best = (f"best, step {fmt(s.get('best_step'), 'step')}, periodic val bpb {fmt(s.get('best_val_bpb'), 'bpb')}"
            if s and s.get("best_val_bpb") is not None else "best")
    if checkpoint is not None:
        return [(checkpoint, {"last": last, "best": best, "init": "untrained, step 0"}[checkpoint])]
    shown = [("last", last)]
    if s and s.get("best_step") not in (None, s.get("step")) and (run_dir / "ckpt_best.pt").is_file():
        shown.append(("best", best))
    return shown


def neighbours_html(run_dir: Path, tokens: list[str] | None = None, checkpoint: str | None = None) -> str:
    """Nearest tokens by cosine for the queries (the module's doc), the last and best weights side by side."""
    shown = _checkpoints(run_dir, checkpoint)
    if not RunDir(run_dir).has_checkpoint(shown[0][0]):
        return ("<p>No embedding table to show: the run has no "
                + ("ckpt_init.pt (an imported model has no step-0 weights)" if shown[0][0] == "init"
                   else "checkpoint yet") + ".</p>")
    # a damaged checkpoint is an error, not a blank section (a best is shown only when ckpt_best.pt is there)
    runs = [(load_run(run_dir, which), heading) for which, heading in shown]
    run = runs[0][0]
    stories = has_categories(run)
    if tokens:
        queries, why = list(tokens), "the tokens asked for (--token)"
    elif stories:
        queries, why = list(STORIES_WORDS), "category words of the stories corpus"
    else:
        queries, why = frequent_tokens(run, N_FREQUENT)
    rows = []
    for q in queries:
        cells, pieces = [], "-"
        for r, _ in runs:
            try:
                found = token_neighbors(r.tokenizer, r.model.token_embedding.weight.detach().float(), q, K_NEIGHBOURS)
            except UserError as e:
                cells.append(esc(str(e)))
                continue
            pieces = " + ".join(code(t["token"]) for t in found["tokens"])  # the same in every table
            cells.append(", ".join(f"{code(n['token'])}&nbsp;{n['cosine']:.2f}" for n in found["neighbors"]))
        rows.append([code(q), pieces, *cells])
    text = (f"<p>{esc(why.capitalize())}; {K_NEIGHBOURS} nearest tokens by cosine (a word the tokenizer split is "
            "looked up by the mean of its pieces)"
            + ("; the last and the best weights side by side" if len(runs) > 1 else "") + ".</p>")
    text += rows_table(["query", "tokens", *(f"neighbours ({h})" for _, h in runs)], rows, raw=True)
    # the book chapter's cosine for the queries it names (" Lily" ~ " Mia" trained), beside this table's
    untrained = shown[0][0] == "init"
    chapter = UNTRAINED_NEIGHBOURS if untrained else NEIGHBOURS
    table0 = run.model.token_embedding.weight.detach().float()
    for q in (q for q in queries if q in chapter):
        found = pair_cosine(run.tokenizer, table0, q, chapter[q][0])
        text += f'<p class="sub">{esc(neighbours_line(q, found, untrained))}.</p>'
    if stories and not tokens and (checkpoint in (None, "last")):
        try:
            p = purity(run_dir, log=lambda m: None)  # the page says what it scored; stderr stays for errors
        except UserError as e:
            return text + f"<p>Category purity not computed: {esc(str(e))}</p>"
        t, u = p["trained"], p["untrained"]
        text += (f"<p>Category purity (k={t['k']}, {t['n_words']} single-token category words): trained "
                 f"<b>{t['overall']:.3f}</b>, untrained {u['overall']:.3f}, chance {t['chance']:.3f}.</p>"
                 if u else f"<p>Category purity: trained <b>{t['overall']:.3f}</b>, chance {t['chance']:.3f}.</p>")
    return text


def is_content_word(token: str) -> bool:
    """A whole word with its leading space, alphabetic, not a function word, not a byte fragment."""
    word = token[1:]
    return token.startswith(" ") and len(word) >= 2 and word.isalpha() and word.lower() not in STOPWORDS


def frequent_tokens(run, n: int) -> tuple[list[str], str]:
    """The n most frequent content words of the run's validation split if its prepared data is cached,
    else the earliest such BPE merges (BPE merges the most frequent pair first)."""
    tok, counts = run.tokenizer, None
    key = run.checkpoint.get("data_key")
    data = cached_prepared(key) if isinstance(key, str) else None  # None: fall back to merge order
    if data is not None:
        counts = count_ids(data.tokens("val"), tok.vocab_size)
    order = frequency_order(counts, tok.vocab_size)
    texts = [tok.id_to_token(i) for i in order.tolist() if i not in tok.special_ids]
    words = [t for t in texts if is_content_word(t)]
    if len(words) < n:  # a text with few such words: function words, then pieces, rather than nothing
        words += [t for t in texts if t.strip().isalpha() and len(t.strip()) >= 2 and t not in words]
    why = ("the most frequent content words of the validation split" if counts is not None
           else "the earliest content-word BPE merges (its prepared data is not in the cache to count)")
    return words[:n], why


def _split(token: str, pieces: list[str]) -> str:
    return f"{token!r} is not one token of its BPE ({' + '.join(map(repr, pieces))})"


def neighbours_line(query: str, found: dict, untrained: bool) -> str:
    """The chapter's cosine for `query` beside the run's own (`found`: analysis.embeddings.pair_cosine)."""
    other, cos = (UNTRAINED_NEIGHBOURS if untrained else NEIGHBOURS)[query]
    head = (f"the chapter: {query!r}'s untrained neighbour {other!r} {cos:.2f}; this run, untrained: " if untrained
            else f"the chapter: {query!r} ~ {other!r} {cos:.2f} (trained); this run: ")
    split = found["split"]
    if query in split:
        return head + _split(query, split[query])
    nearest = f"{query!r}'s nearest {found['nearest']!r} {found['nearest_cosine']:.2f}"
    pair = _split(other, split[other]) if other in split else f"{query!r} ~ {other!r} {found['cosine']:.2f}"
    # untrained, the chapter's figure is the nearest neighbour's cosine: the run's nearest comes first
    return head + (f"{nearest}; {pair}" if untrained else f"{pair}; {nearest}")
