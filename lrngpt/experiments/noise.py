"""The noise of a sweep's numbers: per kind, the largest max - min over the seeds of one setting, at
least NOISE_FLOOR; NOISE_WITHOUT_SEEDS where no seeds measured it (lrngpt.experiments.thresholds).
"""

from __future__ import annotations

from dataclasses import dataclass

from lrngpt.experiments.summary import settings
from lrngpt.experiments.thresholds import NOISE_FLOOR, NOISE_WITHOUT_SEEDS

KINDS = {"val": lambda r: r.get("val_bpb"), "train": lambda r: r.get("train_bpb"), "gap": lambda r: r.get("gap"),
         "memorising": lambda r: None if r.get("train_bpb_read") is None or r.get("train_bpb_unread") is None
         else r["train_bpb_unread"] - r["train_bpb_read"]}
KIND_NAMES = {"val": "val bpb", "train": "train bpb", "gap": "the gap", "memorising": "never-read - read train bpb"}


@dataclass
class Noise:
    """The noise of one measured number per kind (val, train, gap, memorising)."""
    spreads: dict  # kind -> {"spread", "seeds", "n_embd", "sweep"}

    def sigma(self, kind: str = "val") -> float:
        g = self.spreads.get(kind)
        return NOISE_WITHOUT_SEEDS if g is None else max(g["spread"], NOISE_FLOOR)

    def measured(self, kind: str = "val") -> bool:
        return kind in self.spreads

    def source(self, kind: str = "val") -> str:
        """What sigma is: the seed spread, the floor it was raised to, or the noise taken without seeds."""
        g = self.spreads.get(kind)
        return ("the noise taken without seeds" if g is None else "the noise floor" if g["spread"] < NOISE_FLOOR
                else "the seed spread")

    def text(self, kind: str = "val") -> str:
        g = self.spreads.get(kind)
        if g is None:
            return (f"no seed-variance sweep measured {KIND_NAMES[kind]}: its noise is taken as {NOISE_WITHOUT_SEEDS} "
                    "bpb (about twice the largest seed spread measured)")
        floor = f", taken as the floor {NOISE_FLOOR}" if g["spread"] < NOISE_FLOOR else ""
        return (f"seed spread {g['spread']:.4f} (max - min of {KIND_NAMES[kind]} over seeds "
                f"{', '.join(map(str, g['seeds']))} at d = {g['n_embd']}, {g['sweep']}{floor})")


def seed_noise(docs: list[dict]) -> Noise:
    spreads: dict[str, dict] = {}
    for doc in docs:
        for (_, d), group in settings(doc.get("rows") or []).items():
            for kind, get in KINDS.items():
                pairs = [(r["seed"], get(r)) for r in group if get(r) is not None]
                if len(pairs) < 2:
                    continue
                vals = [v for _, v in pairs]
                spread = max(vals) - min(vals)
                if kind not in spreads or spread > spreads[kind]["spread"]:
                    spreads[kind] = {"spread": spread, "seeds": [s for s, _ in pairs], "n_embd": d,
                                     "sweep": str(doc.get("label") or doc.get("sweep") or "sweep")}
    return Noise(spreads)
