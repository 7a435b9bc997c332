"""The values `lrn completion` completes besides commands, options and choices: the names lrn knows.

`completion_values()` is what a shell offers after `--config` (the presets; the shell adds .json /
.yaml files), after `lrn sweep` (the studies; the shell adds .json files), after `--set` and
`--axis` (every key of a config, both model types, with its `=`; derived keys are left out, they
cannot be set) and after `--corpus` (the corpus kinds, with the `:` of those that take a path).
Read from the registries themselves (presets/, the study table, the config schema, the corpus
kinds), so a new preset or key completes without a change here.
"""

from __future__ import annotations

from lrngpt.corpora.registry import KINDS
from lrngpt.experiments.presets import STUDIES
from lrngpt.runconfig.help import key_table
from lrngpt.runconfig.schema import preset_names

# corpus kinds that also stand alone (a generated or downloaded corpus) besides KIND:ARG
STANDALONE_KINDS = ("stories", "tinystories", "nsmc")


def completion_values() -> dict[str, list[str]]:
    """{"configs": presets, "studies": sweep presets, "keys": "section.key=" for --set / --axis,
    "corpora": corpus kinds ("stories", "text:", ...)}."""
    keys = dict.fromkeys(r["key"] for model_type in ("mlp", "gpt") for r in key_table(model_type)
                         if not r["derived"])
    corpora = [*STANDALONE_KINDS, *(f"{kind}:" for kind in KINDS)]
    return {"configs": preset_names(), "studies": list(STUDIES), "keys": [f"{k}=" for k in keys],
            "corpora": sorted(corpora)}
