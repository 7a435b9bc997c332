"""The values `lrn completion` completes besides commands, options and choices, read from the registries
themselves (presets, studies, config keys, corpus kinds), so a new preset or key completes unchanged."""

from __future__ import annotations

from lrngpt.corpora.registry import DOWNLOADS, KINDS
from lrngpt.experiments.presets import STUDIES
from lrngpt.runconfig.help import key_table
from lrngpt.runconfig.schema import preset_names


def completion_values() -> dict[str, list[str]]:
    """{"configs": presets, "studies", "keys": "section.key=" for --set / --axis (derived keys cannot be
    set), "corpora": corpus kinds ("stories", "text:", ...)}."""
    keys = dict.fromkeys(r["key"] for model_type in ("mlp", "gpt") for r in key_table(model_type)
                         if not r["derived"])
    corpora = ["stories", *DOWNLOADS, *(f"{kind}:" for kind in KINDS)]  # generated and downloaded ones stand alone
    return {"configs": preset_names(), "studies": list(STUDIES), "keys": [f"{k}=" for k in keys],
            "corpora": sorted(corpora)}
