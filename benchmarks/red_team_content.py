"""The red team's hostile contents: config files (YAML, JSON), --set values, corpora, tracker settings."""

from __future__ import annotations

import gzip

from red_team_cases import TINY, Case, pick


def _laughs(levels: int, width: int = 9) -> str:
    lines = [f"l0: &l0 [{', '.join(['lol'] * width)}]"]
    lines += [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * width)}]" for i in range(1, levels)]
    return "\n".join(lines) + f"\nname: *l{levels - 1}\n"


YAML = {  # name -> text (every one refused: exit 2)
    "billion laughs (9 levels of 9)": _laughs(9),
    "an alias that holds itself": "name: &a [1, *a]\n",
    "lists 100,000 deep": "name: " + "[" * 100_000 + "]" * 100_000 + "\n",
    "block mappings 40 deep": "".join(f"{'  ' * i}k{i}:\n" for i in range(40)) + "  " * 40 + "x: 1\n",
    "a date as steps": "train:\n  steps: 2024-01-01\n",
    "!!binary": "name: !!binary aGVsbG8=\n",
    "!!python/object": "name: !!python/object/apply:os.system ['echo pwned']\n",
    "a duplicate key": "train:\n  steps: 1\n  steps: 2\n",
    "a 5,000-digit int": "train:\n  steps: " + "9" * 5000 + "\n",
    "yes as a bool": "train:\n  compile: yes\n",
    "2 MiB": "# " + "x" * (2 << 20) + "\n",
    "a tab": "train:\n\tsteps: 3\n",
    "two documents": "train: {steps: 3}\n---\ntrain: {steps: 4}\n",
    "a merge key": "base: &b {steps: 3}\ntrain:\n  <<: *b\n",
    "not UTF-8": b"train:\n  steps: \xff\n",
}
JSON = {
    "deep nesting": '{"name": ' + "[" * 100_000 + "]" * 100_000 + "}",
    "a duplicate key": '{"train": {"steps": 1, "steps": 2}}',
    "NaN": '{"train": {"lr": NaN}}',
    "a 5,000-digit int": '{"train": {"steps": ' + "9" * 5000 + "}}",
    "2 MiB": '{"name": "' + "x" * (2 << 20) + '"}',
    "keys: []": '{"keys": []}',
    "a list": "[1, 2]",
    "a string lr": '{"train": {"lr": "fast"}}',
    "a null section": '{"train": null}',
    "BOM": "\ufeff{}",
}
SETS = {  # key, value -> expect
    "train.steps=nan": ("train.steps", "nan", "exit2"), "train.steps=0": ("train.steps", "0", "exit2"),
    "train.steps=-1": ("train.steps", "-1", "exit2"), "train.steps=10,001 digits": ("train.steps", "9" * 10_001, "exit2"),
    "train.steps=True": ("train.steps", "True", "exit2"), "train.steps=1.5": ("train.steps", "1.5", "exit2"),
    "train.steps=[[...]] 40,000 deep": ("train.steps", "[" * 40_000 + "]" * 40_000, "exit2"),
    "train.steps=b'x'": ("train.steps", "b'x'", "exit2"), "train.steps={1, 2}": ("train.steps", "{1, 2}", "exit2"),
    "train.steps=1j": ("train.steps", "1j", "exit2"), "train.steps=None": ("train.steps", "None", "exit2"),
    "train.steps=''": ("train.steps", "", "exit2"), "train.lr=inf": ("train.lr", "inf", "exit2"),
    "train.lr=1e999": ("train.lr", "1e999", "exit2"), "train.lr=-1": ("train.lr", "-1", "exit2"),
    "train.lr='fast'": ("train.lr", "fast", "exit2"), "data.vocab_size=0": ("data.vocab_size", "0", "exit2"),
    "data.vocab_size=10**12": ("data.vocab_size", "1000000000000", "exit2"),
    "model.n_embd=0": ("model.n_embd", "0", "exit2"), "model.n_embd=-8": ("model.n_embd", "-8", "exit2"),
    "model.n_embd=10**9": ("model.n_embd", "1000000000", "ok|exit2"),
    "train.seed=2**64": ("train.seed", "18446744073709551616", "exit2"),
    "train.device=tpu": ("train.device", "tpu", "exit2"), "train.logger=bogus": ("train.logger", "bogus", "exit2"),
    "train.logger=[1]": ("train.logger", "[1]", "exit2"), "data.corpus=''": ("data.corpus", "", "exit2"),
    "data.corpus=nope:x": ("data.corpus", "nope:x", "exit2"), "model_type=rnn": ("model_type", "rnn", "exit2"),
    "train.stepz=1 (a typo)": ("train.stepz", "1", "exit2"), "a 100,001-char value": ("name", "x" * 100_001, "exit2"),
    "name=\\n": ("name", "a\nb", "ok|exit2"),
}
RAW_SETS = {"no =": "train.steps", "an empty key": "=5", "only =": "=", "a key with spaces": "train. steps=5"}


def _gzip_bomb(ctx) -> None:
    """40 MiB of one line, compressed to about 40 KB: past the document limit (32 Mi characters)."""
    with gzip.open(ctx.t / "bomb.txt.gz", "wb") as f:
        for _ in range(40):
            f.write(b"a" * (1 << 20))


def _file(name: str, data: str | bytes):
    def prepare(ctx):
        (ctx.t / name).write_bytes(data if isinstance(data, bytes) else data.encode())
    return prepare


CORPORA = {  # label -> (spec, prepare, expect, says)
    "text: missing": ("text:{t}/nope.txt", None, "exit2", "does not exist|no such"),
    "text: a directory of nothing": ("text:{t}", None, "exit2", ""),
    "text: a FIFO": ("text:{t}/f.txt", lambda ctx: __import__("os").mkfifo(ctx.t / "f.txt"), "exit2", "pipe|fifo"),
    "text:/dev/zero": ("text:/dev/zero", None, "exit2", "device"),
    "text: an empty file": ("text:{t}/e.txt", _file("e.txt", ""), "exit2", ""),
    "text: not UTF-8": ("text:{t}/n.txt", _file("n.txt", b"\xff\xfe\x00" * 3000), "exit2", "utf-8"),
    "text: one character": ("text:{t}/one.txt", _file("one.txt", "a"), "ok|exit2", ""),
    "text: a gzip bomb": ("text:{t}/bomb.txt.gz", _gzip_bomb, "exit2", ""),
    "text: a broken gzip": ("text:{t}/b.txt.gz", _file("b.txt.gz", b"\x1f\x8b\x08\x00garbage"), "exit2", ""),
    "jsonl: a bad line": ("jsonl:{t}/c.jsonl", _file("c.jsonl", '{"text": "a b c"}\n{oops\n'), "exit2", "line 2"),
    "jsonl: nested 100,000 deep": ("jsonl:{t}/d.jsonl", _file("d.jsonl", '{"text": ' + "[" * 100_000 + "]" * 100_000
                                                               + "}\n"), "exit2", ""),
    "jsonl: no text field": ("jsonl:{t}/n.jsonl", _file("n.jsonl", '{"body": "hello there"}\n' * 50), "exit2", "text"),
    "jsonl: text a number": ("jsonl:{t}/x.jsonl", _file("x.jsonl", '{"text": 5}\n' * 50), "exit2", ""),
    "parquet: garbage": ("parquet:{t}/g.parquet", _file("g.parquet", b"PAR1" + b"\x00" * 500 + b"PAR1"), "exit2", ""),
    "hf: offline and absent": ("hf:nobody/no-such-dataset", None, "exit2", ""),
    "stories:0KB": ("stories:0KB", None, "exit2", ""),
    "stories:-5MB": ("stories:-5MB", None, "exit2", ""),
    "stories:999TB": ("stories:999TB", None, "exit2", ""),
    "an unknown kind": ("bogus:x", None, "exit2", "text:"),
    "an empty spec": ("", None, "exit2", ""),
}
CORPUS_ARGV = {
    "train": ["train", "--config", "mlp-tiny", *TINY, "--corpus", "SPEC", "--out", "{t}/run"],
    "data prepare": ["data", "prepare", "--corpus", "SPEC", "--vocab-size", "280", "--out", "{t}/prep"],
    "tokenizer train": ["tokenizer", "train", "--corpus", "SPEC", "--vocab-size", "280", "--out", "{t}/tk"],
    "theory pip": ["theory", "pip", "SPEC", "--vocab-size", "280"],
}
TRACKERS = {  # label -> (logger, env, prepare, expect)
    "WANDB_MODE=bogus": ("wandb", {"WANDB_MODE": "bogus"}, None, "exit2"),
    "WANDB_MODE=online without a key": ("wandb", {"WANDB_MODE": "online", "WANDB_BASE_URL": "http://127.0.0.1:9"},
                                        None, "exit2"),
    "MLFLOW_TRACKING_URI=/dev/null/x": ("mlflow", {"MLFLOW_TRACKING_URI": "/dev/null/x"}, None, "exit2"),
    "MLFLOW_TRACKING_URI a closed port": ("mlflow", {"MLFLOW_TRACKING_URI": "http://127.0.0.1:9"}, None, "exit2"),
    "MLFLOW_TRACKING_URI=bogus://": ("mlflow", {"MLFLOW_TRACKING_URI": "bogus://x"}, None, "exit2"),
    "RUN/tensorboard a file": ("tensorboard", {}, lambda ctx: ctx.user("run/tensorboard"), "exit2"),
    "RUN/metrics.csv a directory": ("csv", {}, lambda ctx: (ctx.t / "run" / "metrics.csv").mkdir(parents=True), "exit2"),
    "wandb offline (fine)": ("wandb", {"WANDB_MODE": "offline"}, None, "ok|exit2"),
    "csv (fine)": ("csv", {}, None, "ok"),
}


def cases() -> list[Case]:
    out = []
    for ext, table in ((".yaml", YAML), (".json", JSON)):
        for label, text in table.items():
            def prepare(ctx, text=text, ext=ext):
                p = ctx.t / f"hostile{ext}"
                p.write_bytes(text if isinstance(text, bytes) else text.encode())
            both = [("config show", ["config", "show", "{t}/hostile" + ext]),
                    ("train", ["train", "--config", "{t}/hostile" + ext, "--out", "{t}/run"])]
            for cmd, argv in both if label in ("billion laughs (9 levels of 9)", "lists 100,000 deep", "deep nesting",
                                               "2 MiB", "a duplicate key") else both[:1]:
                out.append(Case(f"{ext[1:]} config: {label}", cmd, argv, "exit2", prepare))
    for label, (key, value, expect) in SETS.items():
        out.append(Case(f"--set {label}", "config show", ["config", "show", "mlp-tiny", "--set", f"{key}={value}"],
                        expect))
    for label in ("train.steps=nan", "train.steps=10,001 digits", "train.steps=[[...]] 40,000 deep", "train.lr=inf",
                  "model.n_embd=10**9", "data.vocab_size=10**12", "train.logger=bogus", "train.device=tpu"):
        key, value, expect = SETS[label]
        out.append(Case(f"--set {label}", "train", ["train", "--config", "mlp-tiny", "--set", "data.corpus={corpus}",
                                                    *TINY, "--set", f"{key}={value}", "--out", "{t}/run"], expect))
    out.append(Case("--set train.steps=99999999999999 (planned, refused past the bound)", "train",
                    ["train", "--config", "mlp-tiny", "--set", "data.corpus={corpus}", *TINY,
                     "--set", "train.steps=99999999999999", "--out", "{t}/run"], "exit2"))
    for label, raw in RAW_SETS.items():
        out.append(Case(f"--set {label}", "config show", ["config", "show", "mlp-tiny", "--set", raw], "exit2"))
    for label, (spec, prepare, expect, says) in CORPORA.items():
        for cmd, argv in pick(list(CORPUS_ARGV.items()), 2 if label.startswith("text") else 1, label):
            out.append(Case(f"corpus {label}", cmd, [spec if w == "SPEC" else w for w in argv], expect, prepare,
                            says=says))
    for label, (logger, env, prepare, expect) in TRACKERS.items():
        out.append(Case(f"tracker {label}", "train", ["train", "--config", "mlp-tiny", "--set", "data.corpus={corpus}",
                                                      *TINY, "--set", f"train.logger={logger}", "--out", "{t}/run"],
                        expect, prepare, env=env))
    return out
