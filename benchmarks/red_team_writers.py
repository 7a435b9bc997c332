"""The red team's data-loss set: the user's files in the --out of every writing command, with and
without --force, outputs of lrn's that the user edited, and hostile --out paths."""

from __future__ import annotations

import os

from red_team_cases import GPT, SWEEP, TINY, Case, pick

# command -> (argv with OUT, "dir" or "file", has --force)
WRITERS = {
    "train": (["train", "--config", "mlp-tiny", "--set", "data.corpus={corpus}", *TINY, "--out", "OUT"], "dir", True),
    "demo": (["demo", "--out", "OUT", "--steps", "1", "--set", "data.corpus={corpus}", "--set", "data.vocab_size=300"],
             "dir", False),
    "sweep": ([*SWEEP, "--out", "OUT"], "dir", False),
    "data prepare": (["data", "prepare", "--corpus", "{corpus}", "--vocab-size", "280", "--out", "OUT"], "dir", True),
    "tokenizer train": (["tokenizer", "train", "--corpus", "{corpus}", "--vocab-size", "280", "--out", "OUT"], "dir",
                        True),
    "embed export": (["embed", "export", "{mlp}", "--out", "OUT"], "dir", False),
    "export": (["export", "{gpt}", "--out", "OUT"], "dir", True),
    "import-gpt2": (["import-gpt2", "{export}", "--out", "OUT"], "dir", True),
    "data stories": (["data", "stories", "--size", "10KB", "--out", "OUT"], "file", True),
    "report": (["report", "{mlp}", "--out", "OUT"], "file", False),
    "embed explore": (["embed", "explore", "{mlp}", "--out", "OUT"], "file", False),
    "lesson superposition": (["lesson", "superposition", "--features", "5", "--dims", "2", "--sparsity", "0.5",
                              "--steps", "10", "--out", "OUT"], "file", True),
}
USER_FILES = {"README.md": "# my model card\n", "config.json": '{"model_type": "gpt2", "n_embd": 768}\n',
              "notes.txt": "my notes\n", "tokenizer.json": '{"mine": true}\n', "sub/data.bin": "my data"}


def plant_user_dir(ctx, rel: str = "out") -> None:
    for name, text in USER_FILES.items():
        ctx.user(f"{rel}/{name}", text)


def _with(argv, out):
    return [out if w == "OUT" else w for w in argv]


def _edit(fixture: str, rel: str, extra: str = "\nmy own note: keep this\n"):
    def prepare(ctx):
        ctx.edit(ctx.get(fixture) / rel, extra)
    return prepare


def _add(fixture: str, rel: str):
    def prepare(ctx):
        ctx.user(ctx.get(fixture).relative_to(ctx.t) / rel, "my notes\n")
    return prepare


# (label, command, argv, prepare, expect, uses): outputs lrn wrote that the user changed since
EDITED = [
    ("an edited lines.txt, --summary-only", "sweep", [*SWEEP, "--out", "{sweep}", "--summary-only"],
     _edit("sweep", "lines.txt"), "exit2", ()),
    ("an edited lines.txt, the sweep run again", "sweep", [*SWEEP, "--out", "{sweep}"], _edit("sweep", "lines.txt"),
     "ok|exit2", ()),
    ("an edited summary.md, --summary-only", "sweep", [*SWEEP, "--out", "{sweep}", "--summary-only"],
     _edit("sweep", "summary.md"), "exit2", ()),
    ("an edited summary.csv, the sweep run again", "sweep", [*SWEEP, "--out", "{sweep}"], _edit("sweep", "summary.csv"),
     "ok|exit2", ()),
    ("notes.txt in the sweep, run again", "sweep", [*SWEEP, "--out", "{sweep}"], _add("sweep", "notes.txt"), "ok|exit2",
     ()),
    ("an edited run's config.json inside the sweep", "sweep", [*SWEEP, "--out", "{sweep}"], None, "ok|exit2", ()),
    ("an edited report page", "report", ["report", "{mlp}", "--out", "{page}/page.html"], _edit("page", "page.html"),
     "exit2", ()),
    ("a page carrying lrn's generator tag", "report", ["report", "{mlp}", "--out", "{t}/mine.html"],
     lambda ctx: ctx.user("mine.html", '<html><meta name="generator" content="lrn report">mine</html>'), "exit2", ()),
    ("an edited explorer page", "embed explore", ["embed", "explore", "{mlp}", "--out", "{explore}/explore.html"],
     _edit("explore", "explore.html"), "exit2", ()),
    ("an edited meta.json, --force", "data prepare", ["data", "prepare", "--corpus", "{corpus}", "--vocab-size", "280",
                                                      "--out", "{prep}", "--force"], _edit("prep", "meta.json", " "),
     "ok|exit2", ()),  # (the same data: nothing to write, the edit kept)
    ("an edited meta.json", "data prepare", ["data", "prepare", "--corpus", "{corpus}", "--vocab-size", "280",
                                             "--out", "{prep}"], _edit("prep", "meta.json", " "), "ok|exit2", ()),
    ("an edited meta.json, another vocabulary, --force", "data prepare",
     ["data", "prepare", "--corpus", "{corpus}", "--vocab-size", "290", "--out", "{prep}", "--force"],
     _edit("prep", "meta.json", " "), "exit2", ()),
    ("notes.txt in prepared data, --force", "data prepare",
     ["data", "prepare", "--corpus", "{corpus}", "--vocab-size", "290", "--out", "{prep}", "--force"],
     _add("prep", "notes.txt"), "exit2", ()),
    ("an edited tokenizer.json, --force", "tokenizer train",
     ["tokenizer", "train", "--corpus", "{corpus}", "--vocab-size", "290", "--out", "{tok}", "--force"],
     _edit("tok", "tokenizer.json", " "), "exit2", ()),
    ("an edited stories file, --force", "data stories",
     ["data", "stories", "--size", "10KB", "--seed", "3", "--out", "{stories}/stories.txt", "--force"],
     _edit("stories", "stories.txt"), "exit2", ()),
    ("an edited vectors.tsv", "embed export", ["embed", "export", "{mlp}", "--out", "{emb}"],
     _edit("emb", "vectors.tsv"), "exit2", ()),
    ("notes.txt in an embedding export", "embed export", ["embed", "export", "{mlp}", "--out", "{emb}"],
     _add("emb", "notes.txt"), "exit2", ()),
    ("an edited export README.md, --force", "export", ["export", "{gpt}", "--out", "{export}", "--force"],
     _edit("export", "README.md"), "exit2", ()),
    ("an edited export config.json, --force", "export", ["export", "{gpt}", "--out", "{export}", "--force"],
     _edit("export", "config.json", " "), "exit2", ()),
    ("notes.txt in an export, --force", "export", ["export", "{gpt}", "--out", "{export}", "--force"],
     _add("export", "notes.txt"), "exit2", ()),
    ("an edited imported config.json, --force", "import-gpt2", ["import-gpt2", "{export}", "--out", "{imported}",
                                                                "--force"], _edit("imported", "config.json", " "),
     "exit2", ()),
    ("an edited run config.json, --force", "train", ["train", "--config", "mlp-tiny", "--set", "data.corpus={corpus}",
                                                     *TINY, "--out", "{mlp}", "--force"],
     _edit("mlp", "config.json", " "), "exit2", ()),
    ("notes.txt in a run, --force", "train", ["train", "--config", "mlp-tiny", "--set", "data.corpus={corpus}", *TINY,
                                              "--out", "{mlp}", "--force"], _add("mlp", "notes.txt"), "ok|exit2",
     ()),  # (--force replaces the run's own files: notes.txt is kept)
    ("notes.txt in a run, --resume --extend", "train", ["train", "--out", "{mlp}", "--resume", "--extend",
                                                        "--steps", "3"], _add("mlp", "notes.txt"), "ok|exit2", ()),
    ("notes.txt in a GPT run, export over it", "export", ["export", "{gpt}", "--out", "{gpt}", "--force"],
     _add("gpt", "notes.txt"), "exit2", ()),
    ("report over the run's config.json", "report", ["report", "{mlp}", "--out", "{mlp}/config.json"],
     lambda ctx: ctx.watch(ctx.get("mlp") / "config.json"), "exit2", ()),
    ("explore over the run's checkpoint", "embed explore", ["embed", "explore", "{mlp}", "--out", "{mlp}/ckpt_last.pt"],
     lambda ctx: ctx.watch(ctx.get("mlp") / "ckpt_last.pt"), "exit2", ()),
    ("tokenizer into a run, --force", "tokenizer train", ["tokenizer", "train", "--corpus", "{corpus}",
                                                          "--vocab-size", "280", "--out", "{mlp}", "--force"],
     lambda ctx: ctx.watch(ctx.get("mlp") / "tokenizer.json"), "exit2", ()),
    ("stories over a run's tokenizer.json, --force", "data stories", ["data", "stories", "--size", "10KB", "--out",
                                                                       "{mlp}/tokenizer.json", "--force"],
     lambda ctx: ctx.watch(ctx.get("mlp") / "tokenizer.json"), "exit2", ()),
    ("import over its own source, --force", "import-gpt2", ["import-gpt2", "{export}", "--out", "{export}", "--force"],
     lambda ctx: [ctx.watch(p) for p in ctx.get("export").iterdir() if p.is_file()], "exit2", ()),
]


def _edit_sweep_run_config(ctx):
    runs = sorted((ctx.get("sweep") / "runs").iterdir())
    ctx.edit(runs[0] / "config.json", " ")


EDITED[5] = (*EDITED[5][:3], _edit_sweep_run_config, *EDITED[5][4:])


def cases() -> list[Case]:
    out = []
    for cmd, (argv, kind, force) in WRITERS.items():
        for with_force in (False, True) if force else (False,):
            extra = ["--force"] if with_force else []
            f = " --force" if with_force else ""
            if kind == "dir":
                out.append(Case(f"--out a directory of the user's files{f}", cmd, [*_with(argv, "{t}/out"), *extra],
                                "exit2", plant_user_dir, watch_user=True, quick=cmd == "data stories"))
                out.append(Case(f"--out . (the user's working directory){f}", cmd, [*_with(argv, "."), *extra], "exit2",
                                plant_user_dir, cwd="t/out", watch_user=True))
                out.append(Case(f"--out the user's file{f}", cmd, [*_with(argv, "{t}/out/notes.txt"), *extra], "exit2",
                                plant_user_dir, watch_user=True))
            else:
                for name in ("notes.txt", "README.md"):
                    out.append(Case(f"--out the user's {name}{f}", cmd, [*_with(argv, "{t}/out/" + name), *extra],
                                    "exit2", plant_user_dir, watch_user=True,
                                    quick=cmd == "data stories" and name == "notes.txt"))
                out.append(Case(f"--out a directory of the user's{f}", cmd, [*_with(argv, "{t}/out"), *extra],
                                "ok|exit2", plant_user_dir, watch_user=True))
        # hostile --out paths (nothing of the user's there, but nothing may hang or crash either)
        hostile = [("a FIFO", "{t}/fifo", lambda ctx: os.mkfifo(ctx.t / "fifo"), "exit2"),
                   ("/dev/full", "/dev/full", None, "exit2"),
                   ("below a file", "{t}/f.txt/sub", lambda ctx: ctx.user("f.txt"), "exit2"),
                   ("empty", "", None, "exit2"),
                   ("a broken link", "{t}/bl", lambda ctx: (ctx.t / "bl").symlink_to("/nonexistent/x"), "exit2"),
                   ("/proc/version", "/proc/version", None, "exit2"),
                   ("a name with a newline", "{t}/my\nout" + (".html" if cmd in ("report", "embed explore") else
                                                             ".png" if cmd == "lesson superposition" else ""),
                    None, "ok")]
        for label, path, prep, expect in pick(hostile, 2, cmd):
            if label == "a name with a newline" and cmd in ("demo", "sweep", "lesson superposition"):
                continue  # the slow ones: an ordinary success
            out.append(Case(f"--out {label}", cmd, _with(argv, path), expect, prep,
                            watch_user=label == "below a file"))
    for label, cmd, argv, prep, expect, uses in EDITED:
        out.append(Case(label, cmd, argv, expect, prep, uses=uses, watch_user=True))
    # a GPT run resumed after its config was edited
    out.append(Case("resume after config.json was edited", "train", ["train", "--out", "{gpt}", "--resume",
                                                                      "--extend", "--steps", "3"],
                    "ok|exit2", _edit("gpt", "config.json", " "), watch_user=True))
    out.append(Case("train GPT (valid)", "train", ["train", *GPT, "--set", "data.corpus={corpus}", "--out", "{t}/g"], "ok"))
    return out
