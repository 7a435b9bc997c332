"""The red team's Python API cases: every public function of lrngpt (lrngpt.__all__) and every
public method of Run and Sweep, called with hostile values in each parameter (the others valid).
A UserError is the wanted refusal (exit 2); any other exception is a traceback."""

from __future__ import annotations

import inspect
import os

from red_team_cases import WORDS, Case, pick

SETS = "{'data.corpus': {corpus}, 'data.vocab_size': 300, 'train.steps': 2, 'train.eval_tokens': 300, " \
       "'train.train_eval_tokens': 300, 'train.device': 'cpu'}"
CATS = repr({"a": WORDS[:16], "b": WORDS[16:32]})  # enough single tokens of a 300-token BPE for a purity
# a valid call of each: the keyword arguments as Python source ({t} and fixtures are replaced by their paths)
CALLS = {
    "config": {"name_or_path": "'mlp-tiny'"},
    "config_keys": {"model_type": "'mlp'"},
    "config_list": {},
    "config_show": {"name_or_path": "'mlp-tiny'"},
    "cost_gpt": {"vocab": "300", "context": "16"},
    "cost_mlp": {"vocab": "300"},
    "cost_models": {},
    "data_prepare": {"corpus": "{corpus}", "vocab_size": "280", "out": "{t} + '/prep'"},
    "data_stories": {"out": "{t} + '/s.txt'", "size": "'10KB'"},
    "demo": {"out": "{t} + '/demo'", "steps": "1", "set": "{'data.corpus': {corpus}, 'data.vocab_size': 300}"},
    "doctor": {"probe": "False"},
    "embed_axes": {"run": "{mlp}"},
    "embed_explore": {"sources": "{mlp}", "out": "{t} + '/x.html'"},
    "embed_export": {"run": "{mlp}", "out": "{t} + '/e'"},
    "embed_neighbors": {"run": "{mlp}", "tokens": "[' Lily']"},
    "embed_purity": {"run": "{mlp}", "categories": CATS},
    "export_hf": {"run": "{gpt}", "out": "{t} + '/hf'"},
    "import_gpt2": {"hf_dir": "{export}", "out": "{t} + '/imp'"},
    "lesson_lookup": {},
    "lesson_lookup_grad": {},
    "lesson_renumber": {"run": "{mlp}", "max_tokens": "300"},
    "lesson_softmax_bottleneck": {"run": "{mlp}"},
    "lesson_superposition": {"features": "5", "dims": "2", "sparsity": "[0.5]", "steps": "10"},
    "lesson_superposition_figure": {"result": "lrngpt.lesson_superposition(features=5, dims=2, sparsity=[0.5], steps=10)"},
    "lesson_tying": {},
    "load": {"path": "{mlp}"},
    "load_sweep": {"path": "{sweep}"},
    "plan": {"what": "'mlp-tiny'", "set": SETS},
    "sweep": {"name": "'embed-dim'", "scale": "'tiny'", "out": "{t} + '/sw'", "set": SETS,
              "axes": "{'model.n_embd': [8]}", "progress": "False"},
    "table": {"rows": "[{'a': 1}]"},
    "theory_fourth_root": {"n": "100"},
    "theory_jl": {"n": "10", "eps": "0.5"},
    "theory_pip": {"corpus": "{corpus}", "vocab_size": "280", "train_tokens": "3000"},
    "theory_random_cosine": {"n": "64", "dims": "[4, 8]"},
    "tokenizer_decode": {"tokenizer": "{tok}", "ids": "[1, 2]"},
    "tokenizer_encode": {"tokenizer": "{tok}", "text": "'Lily'"},
    "tokenizer_show": {"tokenizer": "{tok}", "items": "['1']"},
    "tokenizer_train": {"corpus": "{corpus}", "out": "{t} + '/tk'", "vocab_size": "280"},
    "train": {"config": "'mlp-tiny'", "out": "{t} + '/run'", "set": SETS, "progress": "False"},
    "undertrained": {"run_or_path": "{mlp}"},
    "write_report": {"dirs": "{mlp}", "out": "{t} + '/r.html'"},
    "width_from_depth": {"n_layer": "4"},
    "width_depth_finding": {"sweep": "{sweep}"},
    "Run": {"path": "{mlp}"},
    "Sweep": {"path": "{sweep}"},
}
METHODS = {  # (the object, its valid call)
    "Run.axes": ("lrngpt.load({mlp})", {}), "Run.eval": ("lrngpt.load({mlp})", {"max_tokens": "300"}),
    "Run.explore": ("lrngpt.load({mlp})", {"out": "{t} + '/x.html'"}),
    "Run.export_hf": ("lrngpt.load({gpt})", {"out": "{t} + '/hf'"}), "Run.figure": ("lrngpt.load({mlp})", {}),
    "Run.neighbors": ("lrngpt.load({mlp})", {"token": "' Lily'"}),
    "Run.purity": ("lrngpt.load({mlp})", {"categories": CATS}),
    "Run.report": ("lrngpt.load({mlp})", {"out": "{t} + '/r.html'"}),
    "Run.sample": ("lrngpt.load({mlp})", {"prompt": "'Lily'", "max_new_tokens": "5"}),
    "Run.samples": ("lrngpt.load({mlp})", {"prompt": "'Lily'", "max_new_tokens": "5"}),
    "Run.undertrained": ("lrngpt.load({mlp})", {}),
    "Sweep.explore": ("lrngpt.load_sweep({sweep})", {"out": "{t} + '/x.html'"}),
    "Sweep.figure": ("lrngpt.load_sweep({sweep})", {}), "Sweep.report": ("lrngpt.load_sweep({sweep})", {}),
    "Sweep.run": ("lrngpt.load_sweep({sweep})", {"point": "8"}), "Sweep.summarize": ("lrngpt.load_sweep({sweep})", {}),
}
FIFO_PATH = "{t} + '/fifo'"


def hostile(name: str, annotation: str) -> list[str]:
    """Two or three hostile values (Python source) for a parameter of this annotation."""
    a = annotation.replace(" ", "")
    if name in ("set", "axes", "overrides"):
        return ["{1: 2}", "{'train.steps': 10**10000}", "{'': 1}"]
    if name == "shard":
        return ["(1, -1)", "'1/2'"]
    if name in ("on_metric", "on_text"):
        return ["5"]
    if name == "categories":
        return ["{'a': 5}", "'/dev/zero'"]
    if name == "result":
        return ["{'x': 1}", "{'features': 5, 'dims': 2, 'sparsities': [{}]}"]
    if name == "rows":
        return ["[5]", "'abc'"]
    if any(k in a for k in ("Path", "Run", "HasPath", "Sweep")) or name in ("tokenizer", "hf_dir", "out", "what"):
        return ["'/dev/zero'", FIFO_PATH, "''"]
    if a.startswith(("Sequence", "list")) or "Sequence[" in a:
        return ["'abc'", "[None]", "[]"]
    if a in ("bool",):
        return ["'yes'", "2"]
    if "float" in a:
        return ["float('nan')", "10**400", "-1.0"]
    if "int" in a:
        return ["10**10000", "-1", "True"]
    if a.startswith("str"):
        return ["''", "b'x'", "'\\x00'"]
    return ["'LAST'", "5"]  # a Literal alias (Checkpoint, MapMethod, ...)


def _fifo(ctx):
    os.mkfifo(ctx.t / "fifo")


def _call(target: str, kwargs: dict[str, str], positional: tuple[str, ...] = ()) -> str:
    args = [kwargs[p] for p in positional] + [f"{k}={v}" for k, v in kwargs.items() if k not in positional]
    return f"{target}({', '.join(args)})"


def cases() -> list[Case]:
    import lrngpt

    out = []
    missing = []
    names = [n for n in lrngpt.__all__ if callable(getattr(lrngpt, n)) and n != "UserError"]
    targets = [(n, f"lrngpt.{n}", getattr(lrngpt, n), None) for n in names]
    for cls in (lrngpt.Run, lrngpt.Sweep):
        for m, fn in inspect.getmembers(cls, inspect.isfunction):
            if not m.startswith("_"):
                targets.append((f"{cls.__name__}.{m}", f"obj.{m}", fn, cls))
    for label, target, fn, cls in targets:
        if cls is None and label not in CALLS or cls is not None and label not in METHODS:
            missing.append(label)
            continue
        obj, valid = (None, CALLS[label]) if cls is None else METHODS[label]
        sig = inspect.signature(fn.__init__ if isinstance(fn, type) else fn)
        positional = tuple(p.name for p in sig.parameters.values() if p.kind is p.POSITIONAL_ONLY)
        prefix = f"obj = {obj}\n" if obj else ""
        quick = label in ("cost_gpt", "table")
        out.append(Case(f"valid: {label}", f"api {label}", code=prefix + _call(target, valid, positional),
                        expect="ok", quick=label == "theory_jl"))
        params = [p for p in sig.parameters.values() if p.name != "self" and p.kind not in (p.VAR_KEYWORD,
                                                                                              p.VAR_POSITIONAL)]
        for p in pick(params, 2, label):  # two of its parameters, one hostile value each
            for value in pick(hostile(p.name, str(p.annotation)), 1, f"{label} {p.name}"):
                kwargs = {**valid, p.name: value}
                out.append(Case(f"{p.name}={value}", f"api {label}", code=prefix + _call(target, kwargs, positional),
                                expect="ok|exit2", prepare=_fifo if value == FIFO_PATH else None,
                                quick=quick and value in ("10**10000", "float('nan')", "[5]")))
    # values a notebook gets wrong that no annotation tells
    for label, code in {
        "cost_gpt(300, 10**10000)": "lrngpt.cost_gpt(300, 10**10000)",
        "config(**{'train.steps': 10**10000})": "lrngpt.config('mlp-tiny', **{'train.steps': 10**10000})",
        "config(**{'train.lr': float('nan')})": "lrngpt.config('mlp-tiny', **{'train.lr': float('nan')})",
        "config(**{'model.n_embd': 2**40})": "lrngpt.config('mlp-tiny', **{'model.n_embd': 2**40})",
        "config(**{'train.steps': b'x'})": "lrngpt.config('mlp-tiny', **{'train.steps': b'x'})",
        "config of a FIFO": "import os; os.mkfifo('f.json'); lrngpt.config('f.json')",
        "config of /dev/zero": "lrngpt.config('/dev/zero')",
        "load of a truncated run": "import shutil; shutil.copytree({mlp}, 'r'); "
                                   "p = 'r/ckpt_last.pt'; d = open(p, 'rb').read(); open(p, 'wb').write(d[:len(d) // 2]); "
                                   "lrngpt.load('r').sample('Lily')",
        "sample(max_new_tokens=10**10000)": "lrngpt.load({mlp}).sample('Lily', max_new_tokens=10**10000)",
        "sample of a 1 MB prompt": "lrngpt.load({mlp}).sample('Lily ' * 200_000, max_new_tokens=2)",
        "samples(on_text raising)": "lrngpt.load({mlp}).samples('Lily', max_new_tokens=3, "
                                    "on_text=lambda i, s: 1 / 0)",
        "train(on_metric raising)": "lrngpt.train('mlp-tiny', {t} + '/run', set=" + SETS + ", progress=False, "
                                    "on_metric=lambda *a, **k: 1 / 0)",
    }.items():
        expect = "ok|exit2" if "raising" not in label else "ok|exit2|traceback"
        out.append(Case(label, "api (values)", code=code, expect=expect, quick=label.startswith("cost_gpt")))
    if missing:
        out.append(Case("every public API function has a valid call in the table", "api (coverage)",
                        code=f"raise SystemExit('no valid call for: {', '.join(missing)}')", expect="ok"))
    return out
