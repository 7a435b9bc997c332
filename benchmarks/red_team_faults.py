"""The red team's issue-38 set: forged ownership records beside the user's files, sizes past lrn's
bounds, outputs and corpora in the kernel's file systems, dash values, damaged records, and the
API's words (parameters, not lrn's options)."""

from __future__ import annotations

import hashlib
import json

from red_team_cases import TINY, Case
from red_team_writers import WRITERS, _with

FILE_WRITERS = {cmd: argv for cmd, (argv, kind, _) in WRITERS.items() if kind == "file"}
DIR_WRITERS = {"data prepare": None, "export": None, "train": None, "tokenizer train": "tokenizer.json"}


def _forged(rel_dir: str, names: dict[str, str], mac: str | None = None):
    """Plant the user's files and, beside them, a hand-written record naming each with its true sha256."""
    def prepare(ctx):
        files, what = {}, {}
        for name, text in names.items():
            p = ctx.user(f"{rel_dir}/{name}", text)
            files[name], what[name] = hashlib.sha256(p.read_bytes()).hexdigest(), "report"
        doc = {"format": 3, "kind": None, "files": files, "what": what, "stat": {}, "earlier": {}, "append": {}}
        if mac:
            doc["mac"] = mac
        (ctx.t / rel_dir / ".lrn-output").write_text(json.dumps(doc))
    return prepare


def _record_as(how: str):
    def prepare(ctx):
        ctx.user("out/notes.txt", "my notes\n")
        record = ctx.t / "out" / ".lrn-output"
        if how == "a directory":
            record.mkdir()
        else:
            record.write_text("{not json")
    return prepare


def _keys_file(keys: str):
    def prepare(ctx):
        (ctx.t / "c.json").write_text(f'{{"about": "mlp-tiny", "keys": {keys}}}')
    return prepare


def _forged_cases() -> list[Case]:
    out = []
    for cmd, argv in FILE_WRITERS.items():
        name = "page.png" if cmd == "lesson superposition" else "page.html"
        for mac, label in ((None, "unsigned"), ("0" * 64, "a made-up signature")):
            for force in ([], ["--force"]) if cmd in ("data stories", "lesson superposition") else ([],):
                out.append(Case(f"a forged record ({label}) naming the user's {name}{' --force' if force else ''}",
                                cmd, [*_with(argv, "{t}/out/" + name), *force], "exit2",
                                _forged("out", {name: "my own page\n"}, mac), says="not signed by lrn",
                                watch_user=True))
    for cmd, only in DIR_WRITERS.items():  # (a tokenizer is one file in its --out: the user's of that name)
        names = {only: '{"mine": true}\n'} if only else {"README.md": "# my card\n", "config.json": "{}\n",
                                                         "notes.txt": "mine\n"}
        out.append(Case("a forged record naming every file of the user's --out, --force", cmd,
                        [*_with(WRITERS[cmd][0], "{t}/out"), "--force"], "exit2", _forged("out", names),
                        watch_user=True))
    for how in ("a directory", "damaged JSON"):
        out.append(Case(f"the record is {how}, the user's file at --out", "data stories",
                        ["data", "stories", "--size", "10KB", "--out", "{t}/out/notes.txt", "--force"], "exit2",
                        _record_as(how), says="is a directory, not lrn's record" if how == "a directory" else
                        "is damaged", watch_user=True))
    return out


def _bound_cases() -> list[Case]:
    train = ["train", "--config", "mlp-tiny", "--set", "data.corpus={corpus}", *TINY]
    out = [Case("data.vocab_size=10**9 --dry-run", "train", [*train, "--set", "data.vocab_size=1000000000",
                                                             "--dry-run"], "exit2", says="above lrn's limit"),
           Case("--vocab-size 10**9", "tokenizer train", ["tokenizer", "train", "--corpus", "{corpus}", "--vocab-size",
                                                           "1000000000", "--out", "{t}/tok"], "exit2",
                says="above lrn's limit"),
           Case("--vocab-size 2**20+1", "data prepare", ["data", "prepare", "--corpus", "{corpus}", "--vocab-size",
                                                          "1048577"], "exit2", says="above lrn's limit")]
    for key, value in (("model.n_embd", 2**24 + 1), ("model.block_size", 2**24 + 1), ("train.batch_size", 2**24 + 1),
                       ("model.n_hidden", 2**24), ("model.block_size", 2**24), ("train.steps", 10**18)):
        for dry in ([], ["--dry-run"]):
            out.append(Case(f"{key}={value:,}{' --dry-run' if dry else ''}", "train",
                            [*train, "--set", f"{key}={value}", "--out", "{t}/r", *dry],
                            "ok|exit2" if dry else "exit2", says="" if dry else "limit|memory|would take"))
    return out


def _advice_cases() -> list[Case]:
    out = [Case(f"--out /proc/x ({cmd})", cmd, _with(argv, "/proc/x" + (".png" if "superposition" in cmd else "")),
                "exit2", says="lies in /proc") for cmd, (argv, _, _) in WRITERS.items()]
    out += [Case("--corpus text:/", "data prepare", ["data", "prepare", "--corpus", "text:/", "--out", "{t}/p"],
                 "exit2", says="more than 100,000 files|lies in|cannot read"),
            Case("--corpus text:/proc", "data prepare", ["data", "prepare", "--corpus", "text:/proc"], "exit2",
                 says="lies in /proc"),
            Case("--corpus nsmc:/dev/null", "data prepare", ["data", "prepare", "--corpus", "nsmc:/dev/null"], "exit2",
                 says="character device"),
            Case("--sparsity -0.5,0.9", "lesson superposition", ["lesson", "superposition", "--sparsity", "-0.5,0.9"],
                 "exit2", says="--sparsity=-0.5,0.9")]
    for keys in ('{"model.n_embd": 8}', "null"):
        out.append(Case(f"a config show --json file whose keys is {keys}", "train",
                        ["train", "--config", "{t}/c.json", "--dry-run"], "exit2", _keys_file(keys),
                        says="'keys' must be the list"))
    return out


def _api_cases() -> list[Case]:
    return [
        Case("eval(by_reads=True), the default split", "api Run.eval",
             code="r = lrngpt.load({mlp}).eval(by_reads=True, device='cpu')\n"
                  "assert 'train_bpb_read' in r and 'val_bpb' in r, sorted(r)", expect="ok"),
        Case("eval(corpus=..., by_reads=True): named as parameters", "api Run.eval",
             code="lrngpt.load({mlp}).eval(corpus={corpus}, by_reads=True)", expect="exit2",
             says="by_reads needs the run's own training text; drop corpus"),
        Case("sweep(minutes=0): named as a parameter", "api sweep",
             code="lrngpt.sweep('embed-dim', minutes=0, out={t} + '/w')", expect="exit2", says="minutes=25"),
        Case("sweep(shard='3/2'): named as a parameter", "api sweep",
             code="lrngpt.sweep('embed-dim', scale='tiny', shard='3/2', out={t} + '/w', dry_run=True)",
             expect="exit2", says="shard=3/2 is outside"),
        Case("lrngpt shows only __all__", "api (package)",
             code="extra = {n for n in dir(lrngpt) if not n.startswith('__')} - set(lrngpt.__all__)\n"
                  "assert not extra and not hasattr(lrngpt, 'os'), extra", expect="ok", quick=True),
    ]


def cases() -> list[Case]:
    return [*_forged_cases(), *_bound_cases(), *_advice_cases(), *_api_cases()]
