"""The red team's cases (benchmarks/red_team.py runs them), generated from tables.

Placeholders in an argv word or an API program: {t} the case's directory; {corpus} a `text:` spec
of the small corpus; a fixture name ({mlp}, {gpt}, {export}, {sweep}, {tok}, {prep}, {page},
{explore}, {stories}, {emb}, {imported}) a fresh copy of that fixture inside the case's directory.
"""

from __future__ import annotations

import argparse
import json
import os
import zlib
import random
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

FIXTURES = ("mlp", "gpt", "export", "sweep", "tok", "prep", "page", "explore", "stories", "emb", "imported")
PLACEHOLDERS = {"t", "file", "corpus", "corpus_file", "home", *FIXTURES}
DEPENDS = {"export": {"gpt"}, "imported": {"export", "gpt"}, "page": {"mlp"}, "explore": {"mlp"}, "emb": {"mlp"}}
IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


@dataclass
class Case:
    id: str
    command: str
    argv: list[str] = field(default_factory=list)
    expect: str = "exit2"  # "ok", "exit2" or "ok|exit2"
    prepare: Callable | None = None
    code: str | None = None  # a Python API program (its UserError is exit 2, anything else a traceback)
    says: str = ""  # what a refusal's line must hold (one of '|'-separated forms), else "advice" is off
    env: dict = field(default_factory=dict)
    stdin: bytes | None = None
    timeout: float = 60.0
    quick: bool = False
    quiet: bool = True
    cwd: str | None = None
    uses: tuple = ()  # fixtures the prepare step copies (the argv's are found by themselves)
    watch_user: bool = False
    needs: set = field(default_factory=set)


# ---- fixtures: one small run, sweep, export, ... made once, copied per case ----------------------------------

WORDS = ("Lily Tom Mia Ben Luna saw a red blue green cat dog bird ball kite in the park garden "
         "was happy sad and said hello to her his friend big small ran jumped played with").split()
TINY = ["--set", "data.vocab_size=300", "--set", "train.steps=2", "--set", "train.eval_every=1",
        "--set", "train.eval_tokens=500", "--set", "train.train_eval_tokens=500", "--set", "train.device=cpu"]
GPT = ["--config", "cpu", "--set", "data.vocab_size=300", "--set", "model.n_embd=16", "--set", "model.n_head=2",
       "--set", "model.n_layer=1", "--set", "model.context_length=16", "--set", "train.batch_size=4",
       "--set", "train.steps=2", "--set", "train.eval_every=2", "--set", "train.eval_tokens=300",
       "--set", "train.train_eval_tokens=300", "--set", "train.device=cpu"]
SWEEP = ["sweep", "embed-dim", "--scale", "tiny", "--axis", "model.n_embd=8", "--set", "data.corpus={corpus}",
         "--set", "data.vocab_size=300", "--set", "train.steps=2"]


def make_fixtures(d: Path, needs: set[str], lrn: Callable) -> dict[str, Path]:
    d.mkdir(parents=True)
    rng = random.Random(0)
    docs = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(20, 60))) + "." for _ in range(300)]
    corpus = d / "corpus.txt"
    corpus.write_text("\n<|endoftext|>\n".join(docs), encoding="utf-8")
    fx = {"corpus_file": corpus, "home": d.parent / "home"}
    c = f"text:{corpus}"
    todo = set(needs)
    for n in needs:
        todo |= DEPENDS.get(n, set())
    steps = [  # in dependency order
        ("mlp", lambda: lrn("train", "--config", "mlp-tiny", "--set", f"data.corpus={c}", *TINY, "--out", d / "mlp")),
        ("gpt", lambda: lrn("train", *GPT, "--set", f"data.corpus={c}", "--out", d / "gpt")),
        ("export", lambda: lrn("export", d / "gpt", "--out", d / "export")),
        ("imported", lambda: lrn("import-gpt2", d / "export", "--out", d / "imported")),
        ("sweep", lambda: lrn(*[a.replace("{corpus}", c) for a in SWEEP], "--out", d / "sweep")),
        ("tok", lambda: lrn("tokenizer", "train", "--corpus", c, "--vocab-size", "280", "--out", d / "tok")),
        ("prep", lambda: lrn("data", "prepare", "--corpus", c, "--vocab-size", "280", "--out", d / "prep")),
        ("page", lambda: lrn("report", d / "mlp", "--out", d / "page" / "page.html")),
        ("explore", lambda: lrn("embed", "explore", d / "mlp", "--out", d / "explore" / "explore.html")),
        ("stories", lambda: lrn("data", "stories", "--size", "10KB", "--out", d / "stories" / "stories.txt")),
        ("emb", lambda: lrn("embed", "export", d / "mlp", "--out", d / "emb")),
    ]
    for name, make in steps:
        if name in todo:
            if name in ("page", "explore", "stories"):
                (d / name).mkdir()
            make()
            fx[name] = d / name
    return fx


# ---- hostile things on disk ------------------------------------------------------------------------------

def fifo(ctx, rel="fifo"):
    p = ctx.t / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(p)
    return p


def link(ctx, rel, target):
    p = ctx.t / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.symlink_to(target)
    return p


def cut_half(p: Path) -> None:
    data = p.read_bytes()
    p.write_bytes(data[: len(data) // 2])


def in_fixture(name: str, rel: str, how: str) -> Callable:
    """Damage file `rel` of a copy of fixture `name`: truncate, empty, garbage, fifo, devzero, dir, deep, huge, gone."""
    def prepare(ctx):
        p = ctx.get(name) / rel
        if how == "truncate":
            cut_half(p)
            return
        if p.is_dir():
            shutil.rmtree(p)
        elif p.exists() or p.is_symlink():
            p.unlink()
        if how == "empty":
            p.write_bytes(b"")
        elif how == "garbage":
            p.write_bytes(bytes(random.Random(1).randrange(256) for _ in range(4096)))
        elif how == "fifo":
            os.mkfifo(p)
        elif how == "devzero":
            p.symlink_to("/dev/zero")
        elif how == "dir":
            p.mkdir()
        elif how == "deep":
            p.write_text('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}")
        elif how == "huge":
            p.write_text('{"pad": "' + "x" * (3 << 20) + '"}')
        elif how == "list":
            p.write_text("[1, 2, 3]")
    return prepare


def only_config(name: str) -> Callable:
    def prepare(ctx):
        d = ctx.get(name)
        for p in d.iterdir():
            if p.name != "config.json":
                shutil.rmtree(p) if p.is_dir() else p.unlink()
    return prepare


def copy_as(name: str, rel: str) -> Callable:
    def prepare(ctx):
        shutil.copytree(ctx.get(name), ctx.t / rel, symlinks=True)
    return prepare


# (label, path in the case dir, prepare, expect, says); for a RUN argument
RUN_PATHS = [
    ("missing", "{t}/nope", None, "exit2", "does not exist"),
    ("a file", "{t}/file.txt", lambda ctx: ctx.user("file.txt"), "exit2", ""),
    ("an empty directory", "{t}/empty", lambda ctx: (ctx.t / "empty").mkdir(), "exit2", ""),
    ("a FIFO", "{t}/fifo", fifo, "exit2", "pipe|fifo"),
    ("/dev/zero", "/dev/zero", None, "exit2", "device|not a directory"),
    ("a link to /dev/zero", "{t}/zl", lambda ctx: link(ctx, "zl", "/dev/zero"), "exit2", "device|not a directory"),
    ("a broken link", "{t}/bl", lambda ctx: link(ctx, "bl", "/nonexistent/x"), "exit2", "link|does not exist"),
    ("only config.json", "{mlp}", only_config("mlp"), "exit2", ""),
    ("truncated ckpt_last.pt", "{mlp}", in_fixture("mlp", "ckpt_last.pt", "truncate"), "exit2",
     "truncated|damaged|incomplete|cut"),
    ("empty ckpt_last.pt", "{mlp}", in_fixture("mlp", "ckpt_last.pt", "empty"), "exit2", ""),
    ("garbage ckpt_last.pt", "{mlp}", in_fixture("mlp", "ckpt_last.pt", "garbage"), "exit2", ""),
    ("ckpt_last.pt a FIFO", "{mlp}", in_fixture("mlp", "ckpt_last.pt", "fifo"), "exit2", "pipe|fifo"),
    ("ckpt_last.pt to /dev/zero", "{mlp}", in_fixture("mlp", "ckpt_last.pt", "devzero"), "exit2", "device"),
    ("ckpt_last.pt a directory", "{mlp}", in_fixture("mlp", "ckpt_last.pt", "dir"), "exit2", ""),
    # (the checkpoint holds the tokenizer: a command that reads only the checkpoint need not read it)
    ("garbage tokenizer.json", "{mlp}", in_fixture("mlp", "tokenizer.json", "garbage"), "ok|exit2", "tokenizer"),
    ("tokenizer.json a FIFO", "{mlp}", in_fixture("mlp", "tokenizer.json", "fifo"), "ok|exit2", ""),
    ("config.json a FIFO", "{mlp}", in_fixture("mlp", "config.json", "fifo"), "ok|exit2", ""),
    ("config.json nested 100,000 deep", "{mlp}", in_fixture("mlp", "config.json", "deep"), "ok|exit2", ""),
    ("config.json of 3 MiB", "{mlp}", in_fixture("mlp", "config.json", "huge"), "ok|exit2", ""),
    ("config.json a list", "{mlp}", in_fixture("mlp", "config.json", "list"), "ok|exit2", ""),
    ("empty summary.json", "{mlp}", in_fixture("mlp", "summary.json", "empty"), "ok|exit2", ""),
    ("metrics.jsonl a directory", "{mlp}", in_fixture("mlp", "metrics.jsonl", "dir"), "ok|exit2", ""),
    ("garbage metrics.jsonl", "{mlp}", in_fixture("mlp", "metrics.jsonl", "garbage"), "ok|exit2", ""),
    ("a sweep directory", "{sweep}", None, "ok|exit2", ""),
    ("a name with a newline", "{t}/my\nrun", copy_as("mlp", "my\nrun"), "ok", ""),
    ("a name that is not UTF-8", "{t}/run-\udcff", copy_as("mlp", "run-\udcff"), "ok", ""),
]
if not IS_ROOT:
    RUN_PATHS.append(("unreadable", "{mlp}", lambda ctx: os.chmod(ctx.get("mlp") / "ckpt_last.pt", 0), "exit2",
                      "permission"))

# commands that read a RUN: argv around "RUN", and which RUN_PATHS apply ("all" or a few labels)
CORE = {"missing", "a FIFO", "/dev/zero", "a broken link", "only config.json", "truncated ckpt_last.pt",
        "ckpt_last.pt a FIFO", "garbage tokenizer.json", "a name that is not UTF-8"}
RUN_READERS = {
    "eval": (["eval", "RUN", "--max-tokens", "300"], CORE),
    "sample": (["sample", "RUN", "--prompt", "Lily", "--max-new-tokens", "5"], "all"),
    "embed neighbors": (["embed", "neighbors", "RUN", "--token", " Lily"], CORE),
    "embed axes": (["embed", "axes", "RUN"], CORE),
    "embed purity": (["embed", "purity", "RUN", "--categories", "{t}/cats.json"], CORE),
    "embed undertrained": (["embed", "undertrained", "RUN"], CORE),
    "embed export": (["embed", "export", "RUN", "--out", "{t}/emb-out"], CORE),
    "embed explore": (["embed", "explore", "RUN", "--out", "{t}/x.html"], CORE),
    "lesson softmax-bottleneck": (["lesson", "softmax-bottleneck", "RUN"], CORE),
    "lesson renumber": (["lesson", "renumber", "RUN", "--max-tokens", "300"], CORE),
    "report": (["report", "RUN", "--out", "{t}/r.html"], CORE),
    "train": (["train", "--out", "RUN", "--resume"], CORE),
    "tokenizer encode": (["tokenizer", "encode", "--tokenizer", "RUN", "--text", "Lily"], CORE),
}


def cats(ctx):  # two halves of the corpus's words: enough of them are single tokens of a 300-token BPE
    (ctx.t / "cats.json").write_text(json.dumps({"a": WORDS[:16], "b": WORDS[16:32]}))


# (label, prepare -> a path string, expect, says): a FILE argument (a config, a categories file, a sweep file)
FILE_PATHS = [
    ("missing", lambda ctx: f"{ctx.t}/nope.json", "exit2", "does not exist|no such file"),
    ("a directory", lambda ctx: (ctx.t / "d.json").mkdir() or f"{ctx.t}/d.json", "exit2", "directory"),
    ("a FIFO", lambda ctx: str(fifo(ctx, "f.json")), "exit2", "pipe|fifo"),
    ("/dev/zero", lambda ctx: "/dev/zero", "exit2", "device"),
    ("a link to /dev/zero", lambda ctx: str(link(ctx, "z.json", "/dev/zero")), "exit2", "device"),
    ("a broken link", lambda ctx: str(link(ctx, "b.json", "/nonexistent/b.json")), "exit2", "link|does not exist"),
    ("an empty file", lambda ctx: str(ctx.user("e.json", "")), "exit2", ""),
    ("not UTF-8", lambda ctx: str(ctx.user("n.json", b'{"a": "\xff\xfe"}')), "exit2", "utf-8|not a directory"),
    ("binary garbage", lambda ctx: str(ctx.user("g.json", bytes(range(256)) * 64)), "exit2", ""),
    ("3 MiB", lambda ctx: str(ctx.user("h.json", '{"pad": "' + "x" * (3 << 20) + '"}')), "exit2", ""),
]
FILE_READERS = {  # command -> argv around FILE
    "config show": ["config", "show", "FILE"],
    "train": ["train", "--config", "FILE", "--out", "{t}/run"],
    "sweep": ["sweep", "FILE", "--out", "{t}/sw", "--dry-run"],
    "embed purity": ["embed", "purity", "{mlp}", "--categories", "FILE"],
    "tokenizer encode": ["tokenizer", "encode", "--tokenizer", "FILE", "--text", "Lily"],
    "import-gpt2": ["import-gpt2", "FILE", "--out", "{t}/imp"],
}


# ---- a valid invocation of every command (its hostile option values are built on it) ----------------------

BASE: dict[str, tuple[list[str], Callable | None]] = {
    "demo": (["demo", "--out", "{t}/demo", "--steps", "1", "--set", "data.corpus={corpus}",
              "--set", "data.vocab_size=300"], None),
    "data stories": (["data", "stories", "--size", "10KB", "--out", "{t}/s.txt"], None),
    "data prepare": (["data", "prepare", "--corpus", "{corpus}", "--vocab-size", "280", "--out", "{t}/prep"], None),
    "tokenizer train": (["tokenizer", "train", "--corpus", "{corpus}", "--vocab-size", "280", "--out", "{t}/tk"], None),
    "tokenizer encode": (["tokenizer", "encode", "--tokenizer", "{tok}", "--text", "Lily saw a cat"], None),
    "tokenizer decode": (["tokenizer", "decode", "--tokenizer", "{tok}", "--ids", "1,2,3"], None),
    "tokenizer show": (["tokenizer", "show", "{tok}", "1", "2"], None),
    "config list": (["config", "list"], None),
    "config show": (["config", "show", "mlp-tiny"], None),
    "config keys": (["config", "keys"], None),
    "train": (["train", "--config", "mlp-tiny", "--set", "data.corpus={corpus}", *TINY, "--out", "{t}/run"], None),
    "eval": (["eval", "{mlp}", "--max-tokens", "300"], None),
    "sample": (["sample", "{mlp}", "--prompt", "Lily", "--max-new-tokens", "5"], None),
    "sweep": ([*SWEEP, "--out", "{t}/sw"], None),
    "embed neighbors": (["embed", "neighbors", "{mlp}", "--token", " Lily"], None),
    "embed axes": (["embed", "axes", "{mlp}"], None),
    "embed purity": (["embed", "purity", "{mlp}", "--categories", "{t}/cats.json"], cats),
    "embed undertrained": (["embed", "undertrained", "{mlp}"], None),
    "embed export": (["embed", "export", "{mlp}", "--out", "{t}/emb-out"], None),
    "embed explore": (["embed", "explore", "{mlp}", "--out", "{t}/x.html"], None),
    "theory random-cosine": (["theory", "random-cosine", "--n", "64", "--dims", "4,8"], None),
    "theory jl": (["theory", "jl", "--n", "10", "--eps", "0.5"], None),
    "theory fourth-root": (["theory", "fourth-root", "--n", "100"], None),
    "theory pip": (["theory", "pip", "{corpus}", "--vocab-size", "280", "--train-tokens", "3000"], None),
    "cost mlp": (["cost", "mlp"], None),
    "cost gpt": (["cost", "gpt", "--vocab", "300", "--context", "16"], None),
    "cost models": (["cost", "models"], None),
    "lesson lookup": (["lesson", "lookup"], None),
    "lesson lookup-grad": (["lesson", "lookup-grad"], None),
    "lesson tying": (["lesson", "tying"], None),
    "lesson softmax-bottleneck": (["lesson", "softmax-bottleneck", "{mlp}"], None),
    "lesson renumber": (["lesson", "renumber", "{mlp}", "--max-tokens", "300"], None),
    "lesson superposition": (["lesson", "superposition", "--features", "5", "--dims", "2", "--sparsity", "0.5",
                              "--steps", "10"], None),
    "report": (["report", "{mlp}", "--out", "{t}/r.html"], None),
    "import-gpt2": (["import-gpt2", "{export}", "--out", "{t}/imp"], None),
    "export": (["export", "{gpt}", "--out", "{t}/hf"], None),
    "doctor": (["doctor", "--no-probe"], None),
    "completion": (["completion", "bash"], None),
}
QUICK_OK = {"cost models", "cost mlp", "theory jl"}  # --quick: what needs no torch (its import is seconds)


def leaf_commands() -> dict[str, argparse.ArgumentParser]:
    """Every `lrn` command and subcommand, from lrn's own parser: a new one cannot be missed."""
    from lrngpt.cli.main import build_parser

    out = {}

    def walk(p, words):
        subs = [a for a in p._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs:
            out[" ".join(words)] = p
        for s in subs:
            for name, sp in s.choices.items():
                walk(sp, [*words, name])

    walk(build_parser(), [])
    return out


# hostile values by the option's type: (value, expect)
BIG = "9" * 10_000
INT_VALUES = [("-1", "ok|exit2"), ("0", "ok|exit2"), (BIG, "exit2"), ("nan", "exit2"), ("1.5", "exit2"),
              ("\u0661\u0662", "ok|exit2"), ("", "exit2")]
SEED_VALUES = [("-1", "ok|exit2"), (BIG, "exit2"), ("18446744073709551616", "exit2"), ("nan", "exit2")]
FLOAT_VALUES = [("-1", "ok|exit2"), ("0", "ok|exit2"), ("nan", "exit2"), ("inf", "exit2"), ("-inf", "exit2"),
                ("1e309", "exit2"), (BIG, "exit2"), ("", "exit2")]
SECONDS_VALUES = [("0", "exit2"), ("-1", "exit2"), ("inf", "exit2"), ("nan", "exit2"), ("1e309", "exit2"),
                  ("", "exit2")]
LIST_VALUES = [("", "exit2"), (",", "exit2"), ("1,,2", "ok|exit2"), ("-1", "exit2"), (BIG, "exit2"), ("nan", "exit2"),
               ("0", "ok|exit2")]
FLOAT_LIST_VALUES = [("", "exit2"), ("nan", "exit2"), ("-0.5", "exit2"), ("1.5", "exit2"), ("inf", "exit2"),
                     ("0.5,,0.7", "exit2")]
CHOICE_VALUES = [("", "exit2"), ("\u212aast", "exit2")]  # the Kelvin sign, which lowercases to k
STR_VALUES = [("", "ok|exit2"), ("\n", "ok|exit2"), ("x" * 100_000, "ok|exit2"), ("\ud55c\uad6d\uc5b4 \U0001f642", "ok|exit2")]
TYPE_VALUES = {"int": INT_VALUES, "positive_int": INT_VALUES, "seed": SEED_VALUES, "float": FLOAT_VALUES,
               "_seconds": SECONDS_VALUES, "int_list": LIST_VALUES, "float_list": FLOAT_LIST_VALUES}
SKIP_STR = {"--out", "--set", "--config", "--axis", "--corpus", "--categories", "--tokenizer", "--sweep"}


def pick(values: list, k: int, key: str) -> list:
    """k of the values, starting at a place fixed by key: each table is walked whole across its users,
    in a pass of a few hundred cases instead of thousands."""
    if len(values) <= k:
        return list(values)
    start = zlib.crc32(key.encode()) % len(values)
    return [values[(start + i) % len(values)] for i in range(k)]


def _with_option(base: list[str], opt: str, value: str) -> list[str]:
    """BASE with OPT set to VALUE (replacing its own), as `--opt=VALUE` so that `-1` or `` stays a value."""
    argv = list(base)
    if opt in argv:
        i = argv.index(opt)
        del argv[i:i + 2]
    return [*argv, f"{opt}={value}"]


def option_cases() -> list[Case]:
    out = []
    leaves = leaf_commands()
    for cmd, parser in leaves.items():
        base, prep = BASE.get(cmd, (cmd.split(), None))
        out.append(Case(f"valid: {' '.join(base)[:80]}", cmd, base, "ok", prep, quick=cmd in QUICK_OK))
        out.append(Case("--help", cmd, [*cmd.split(), "--help"], "ok", quick=True))
        out.append(Case("an unknown option --bogus", cmd, [*base, "--bogus"], "exit2", prep,
                        quick=cmd in ("cost gpt", "data stories")))
        for a in parser._actions:
            if not a.option_strings or a.option_strings[0] in ("-h", "-q", "-v") or a.nargs == 0:
                continue
            opt = a.option_strings[-1]
            tname = getattr(a.type, "__name__", None)
            if tname in TYPE_VALUES:
                values = TYPE_VALUES[tname]
            elif a.choices:
                values = CHOICE_VALUES
            elif opt in SKIP_STR:
                continue
            else:
                values = STR_VALUES
            for v, expect in pick(values, 2 if tname in TYPE_VALUES else 1, f"{cmd} {opt}"):
                shown = v if len(v) < 20 else f"{v[:6]}...({len(v)} chars)"
                out.append(Case(f"{opt} {shown!r}", cmd, _with_option(base, opt, v), expect, prep,
                                quick=v == BIG and f"{cmd} {opt}" in ("theory jl --n", "cost gpt --vocab",
                                                                        "lesson lookup --batch")))
    return out


def path_cases() -> list[Case]:
    out = []
    for cmd, (argv, which) in RUN_READERS.items():
        table = RUN_PATHS if which == "all" else pick([r for r in RUN_PATHS if r[0] in which], 4, cmd)
        for label, path, prep, expect, says in table:
            if cmd == "train" and label in ("a name with a newline", "a name that is not UTF-8"):
                expect = "ok|exit2"  # resuming a finished run: refused or nothing to do
            if cmd == "tokenizer encode" and "ckpt" in label:
                expect = "ok|exit2"  # it reads tokenizer.json, not the checkpoint
            base_prep = cats if cmd == "embed purity" else None
            both = (lambda p1, p2: lambda ctx: [f(ctx) for f in (p1, p2) if f])(base_prep, prep)
            words = [path if w == "RUN" else w for w in argv]
            out.append(Case(f"RUN is {label}", cmd, words, expect, both, says=says, uses=("mlp",) if prep else (),
                            watch_user=label == "a file", quick=label == "missing" and cmd == "sample"))
    for cmd, argv in FILE_READERS.items():
        for label, make, expect, says in (FILE_PATHS if cmd == "config show" else pick(FILE_PATHS, 3, cmd)):
            def prepare(ctx, make=make, argv=argv):
                ctx.file = make(ctx)
            words = ["{file}" if w == "FILE" else w for w in argv]
            out.append(Case(f"FILE is {label}", cmd, words, expect, prepare, says=says,
                            ))
    # a sweep's own files damaged, read by the commands that read a sweep
    for label, how in (("0-byte sweep.json", "empty"), ("garbage sweep.json", "garbage"), ("sweep.json a FIFO", "fifo"),
                       ("sweep.json nested 100,000 deep", "deep"), ("sweep.json a list", "list"),
                       ("sweep.json a directory", "dir")):
        for cmd, argv in pick([("report", ["report", "{sweep}", "--out", "{t}/r.html"]),
                               ("sweep", [*SWEEP, "--out", "{sweep}"]),
                               ("cost mlp", ["cost", "mlp", "--sweep", "{sweep}"])], 2, label):
            # (cost mlp reads the runs' summaries, not sweep.json: it may go on)
            out.append(Case(f"{label}", cmd, argv, "ok|exit2" if cmd == "cost mlp" else "exit2",
                            in_fixture("sweep", "sweep.json", how)))
    for label, rel, how in (("runs/ a file", "runs", "garbage"), ("lines.txt a FIFO", "lines.txt", "fifo"),
                            ("summary.json garbage", "summary.json", "garbage")):
        out.append(Case(label, "sweep", [*SWEEP, "--out", "{sweep}"], "ok|exit2", in_fixture("sweep", rel, how)))
        out.append(Case(label, "report", ["report", "{sweep}", "--out", "{t}/r.html"], "ok|exit2",
                        in_fixture("sweep", rel, how)))
    # an HF directory damaged, read by import-gpt2
    for label, rel, how in (("config.json garbage", "config.json", "garbage"), ("no weights", "model.safetensors", "gone"),
                            ("truncated model.safetensors", "model.safetensors", "truncate"),
                            ("model.safetensors a FIFO", "model.safetensors", "fifo"),
                            ("tokenizer.json a FIFO", "tokenizer.json", "fifo"),
                            ("config.json nested deep", "config.json", "deep")):
        # (vocab.json + merges.txt are a tokenizer too: one without tokenizer.json may be read)
        out.append(Case(f"HF dir with {label}", "import-gpt2", ["import-gpt2", "{export}", "--out", "{t}/imp"],
                        "ok|exit2" if rel == "tokenizer.json" else "exit2", in_fixture("export", rel, how)))
    return out


def build_cases(timeout: float = 60.0) -> list[Case]:
    import red_team_api
    import red_team_content
    import red_team_faults
    import red_team_writers

    cases = [*option_cases(), *path_cases(), *red_team_content.cases(), *red_team_writers.cases(),
             *red_team_api.cases(), *red_team_faults.cases()]
    for c in cases:
        c.timeout = min(c.timeout, timeout) if c.timeout != 60.0 else timeout
        text = " ".join(c.argv) + (c.code or "")
        c.needs = {n for n in FIXTURES if "{" + n + "}" in text} | set(c.uses)
    return cases
