"""`lrn config list | show | keys`: the named configs, a fully resolved config, every key explained."""

from __future__ import annotations

import json

import lrngpt.api as api
from lrngpt.api.frontend import MODEL_TYPES
from lrngpt.cli.common import add_set, command, emit, group


def register(sub) -> None:
    cmds = group(sub, "config", "list the named configs, show a resolved config with every key explained",
        "A run is configured by a preset name or a JSON or YAML file (sections data, model, train), changed "
        "with --set section.key=value. These commands show what a config holds before anything is trained.",
        "examples:\n  lrn config list\n  lrn config show mlp-cpu --set model.n_embd=128\n"
        "  lrn config keys --model-type gpt")
    command(cmds, "list", cmd_list, "the presets and the seed project's configs, by name",
        "Every config that --config takes by name: the MLP presets, gpt-default, and the seed project's GPT "
        "configs cpu and nsmc (shipped inside the package, so they work from any directory after pip install).",
        "examples:\n  lrn config list\n  lrn config list --json")
    s = command(cmds, "show", cmd_show, "every key of a resolved config: value and description",
        "Resolve a preset or a JSON or YAML file with the --set overrides, exactly as `lrn train` does, and print "
        "every key with its value and a one-line description; derived keys say what sets them.",
        "examples:\n  lrn config show mlp-cpu\n  lrn config show cpu --set train.steps=100 --json\n"
        "  lrn config show my-config.json")
    s.add_argument("config", metavar="PRESET_OR_FILE",
                   help="a name from `lrn config list`, a JSON or YAML config file, or the output of lrn config show --json")
    add_set(s, "a value as `lrn train --set` does")
    k = command(cmds, "keys", cmd_keys, "every key a config takes: type, default, description",
        "The keys of a config file, with their types, the defaults that apply when a file leaves "
        "them out, and what they do. Model keys differ between mlp and gpt.",
        "examples:\n  lrn config keys\n  lrn config keys --model-type gpt --json")
    k.add_argument("--model-type", choices=MODEL_TYPES, default="mlp", help="whose model keys to list")


def _value(v) -> str:
    return json.dumps(v, ensure_ascii=False)


def cmd_list(args) -> None:
    rows = api.config_list()
    width = max(len(r["name"]) for r in rows)
    text = "\n".join(f"{r['name']:<{width}}  {r['model_type']:<3}  {r['about']}" for r in rows)
    emit(args, {"configs": rows}, text + "\n\nshow one: lrn config show NAME")


def cmd_show(args) -> None:
    result = api.config_show(args.config, args.overrides)
    rows = result["keys"]
    width = max(len(r["key"]) for r in rows)
    vwidth = min(24, max(len(_value(r["value"])) for r in rows))
    lines = [f"{args.config}" + (f": {result['about']}" if result["about"] else "")]
    for r in rows:
        note = f"  [derived: {r['derived']}]" if r["derived"] else ""
        lines.append(f"{r['key']:<{width}}  {_value(r['value']):<{vwidth}}  {r['help']}{note}")
    emit(args, result, "\n".join(lines))


def cmd_keys(args) -> None:
    rows = api.config_keys(args.model_type)
    width = max(len(r["key"]) for r in rows)
    lines = []
    for r in rows:
        default = ("derived" if r["derived"] else "required" if r["required"] else _value(r["default"]))
        lines.append(f"{r['key']:<{width}}  {r['type']:<11}  {default:<12}  {r['help']}")
    emit(args, {"model_type": args.model_type, "keys": rows}, "\n".join(lines))
