"""The findings judge's noise and its arithmetic. `Noise`: per kind of number, the largest max - min over
the seeds of one setting, at least NOISE_FLOOR; NOISE_WITHOUT_SEEDS where no seeds measured it
(lrngpt.experiments.thresholds). An `Estimate` is a linear combination of numbers measured once per
width, each with the same independent noise sigma, so its noise is sigma x the coefficients' length.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from lrngpt.experiments.summary import settings
from lrngpt.experiments.thresholds import NOISE_FLOOR, NOISE_WITHOUT_SEEDS, Z


@dataclass(frozen=True)
class Estimate:
    value: float
    coeffs: np.ndarray  # over the measured numbers, one per width

    @property
    def norm(self) -> float:
        return float(np.linalg.norm(self.coeffs))

    def noise(self, sigma: float) -> float:
        """Its standard deviation, from sigma per measured number."""
        return sigma * self.norm

    def above(self, sigma: float, z: float = Z) -> bool:
        """Above zero beyond the noise (z times it)."""
        return self.value > z * self.noise(sigma)

    def below(self, sigma: float, z: float = Z) -> bool:
        """Below zero beyond the noise (z times it)."""
        return self.value < -z * self.noise(sigma)

    def __sub__(self, other: Estimate) -> Estimate:
        return Estimate(self.value - other.value, self.coeffs - other.coeffs)


def linear(coeffs, values: list[float]) -> Estimate:
    """The estimate coeffs . values."""
    c = np.asarray(coeffs, dtype=float)
    return Estimate(float(c @ np.asarray(values, dtype=float)), c)


def difference(values: list[float], i: int, j: int) -> Estimate:
    """values[j] - values[i]."""
    eye = np.eye(len(values))
    return linear(eye[j] - eye[i], values)


def octaves(widths: list[int]) -> list[float]:
    """log2 of each width: the chapter's axis, one unit per doubling."""
    return [math.log2(d) for d in widths]


def savings(widths: list[int], values: list[float]) -> list[Estimate]:
    """What each step between neighbouring widths saves, per doubling (16 -> 64 is two doublings)."""
    eye = np.eye(len(values))
    return [linear(row, values) for row in (eye[:-1] - eye[1:]) / np.diff(octaves(widths))[:, None]]


def _lsq(xs) -> tuple[np.ndarray, np.ndarray]:
    """The xs less their mean, and the least-squares slope's weights (x - mean) / sum((x - mean)^2)."""
    dx = np.asarray(xs, dtype=float) - np.mean(xs)
    return dx, dx / (dx @ dx)


def slope(xs, qs: list[Estimate]) -> Estimate:
    """The least-squares slope of the quantities `qs` against `xs` (at least two points)."""
    w = _lsq(xs)[1]
    return Estimate(float(w @ [q.value for q in qs]), w @ np.array([q.coeffs for q in qs]))


def fitted_last(xs, values: list[float]) -> Estimate:
    """The least-squares line through (xs, values) at the last x: less noisy than the last point alone."""
    dx, w = _lsq(xs)
    return linear(1 / len(dx) + w * dx[-1], values)


def midpoints(widths: list[int]) -> list[float]:
    """Where each saving sits on the log2 axis: halfway between its two widths."""
    x = octaves(widths)
    return [(a + b) / 2 for a, b in zip(x, x[1:], strict=False)]


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
