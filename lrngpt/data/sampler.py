"""The batch sampler: random contiguous windows of the training tokens, seeded, with a state for an
exact resume (every rank draws the same global batch and keeps its slice)."""

from __future__ import annotations

import numpy as np
import torch

from lrngpt.errors import UserError


class BatchSampler:
    """Random contiguous windows (batch_size x seq_len), seeded; every rank keeps its slice of one global batch."""

    def __init__(self, tokens: np.ndarray, batch_size: int, seq_len: int, seed: int,
                 rank: int = 0, world_size: int = 1):
        if len(tokens) < seq_len + 1:
            raise UserError(f"the training split has {len(tokens)} tokens, too few for one window of "
                            f"{seq_len + 1}; use a bigger corpus or a smaller train.seq_len")
        if batch_size % world_size:
            raise UserError(f"train.batch_size {batch_size} is not divisible by {world_size} processes")
        self.tokens, self.batch_size, self.seq_len = tokens, batch_size, seq_len
        self.rank, self.world_size = rank, world_size
        self.generator = torch.Generator().manual_seed(seed)
        self._ar = np.arange(seq_len + 1)

    def _drawn(self, steps: int) -> np.ndarray:
        """The window starts of the next `steps` global batches, in draw order."""
        drawn = [self._global_starts().numpy() for _ in range(steps)]
        return np.concatenate(drawn).astype(np.int64) if drawn else np.zeros(0, dtype=np.int64)

    def _global_starts(self) -> torch.Tensor:
        """The next global batch's window starts (every rank draws the same)."""
        return torch.randint(0, len(self.tokens) - self.seq_len, (self.batch_size,), generator=self.generator)

    def next(self) -> tuple[torch.Tensor, torch.Tensor]:
        per = self.batch_size // self.world_size
        starts = self._global_starts()[self.rank * per : (self.rank + 1) * per].numpy()
        w = torch.from_numpy(self.tokens[starts[:, None] + self._ar].astype(np.int64))
        return w[:, :-1], w[:, 1:]

    def reads(self, steps: int) -> np.ndarray:
        """How many times each position of the split was a training target in `steps` global batches
        (replayed from this sampler's seed: a fresh sampler gives the run's own windows)."""
        starts = self._drawn(steps)
        # a window starting at s has the targets s+1 .. s+seq_len: +1 there, -1 after, then a running sum
        # (int32: a count never exceeds steps x batch_size; a split of 10^9 tokens takes 4 GB, not 8)
        diff = np.zeros(len(self.tokens) + 1, dtype=np.int32)
        np.add.at(diff, starts + 1, 1)
        np.add.at(diff, starts + 1 + self.seq_len, -1)
        return np.cumsum(diff[:-1], dtype=np.int32)

    def read_counter(self, steps: int):
        """`reads(steps)` as a function of positions, without an array the size of the split: a position
        p was read by the sorted starts in [p - seq_len, p - 1]."""
        starts = np.sort(self._drawn(steps))

        def counts(positions: np.ndarray) -> np.ndarray:
            pos = np.asarray(positions, dtype=np.int64)
            return (np.searchsorted(starts, pos - 1, side="right")
                    - np.searchsorted(starts, pos - self.seq_len, side="left")).astype(np.int32)

        return counts

    def read_shares(self, steps: int) -> tuple[float, float]:
        """`(reads(steps)[1:] > 0).mean()` and `> 1`, without an array the size of the split. Over the
        sorted starts s, window i alone covers s[i]+1 .. min(s[i+1], s[i]+seq_len) beyond the next one;
        the targets it shares with window i+1, before window i+2 starts, are read at least twice."""
        s, n = np.sort(self._drawn(steps)), self.seq_len
        if not len(s):
            return 0.0, 0.0
        once = np.minimum(np.diff(s, append=s[-1] + n), n).sum()
        twice = np.maximum(0, np.minimum(np.append(s[2:], s[-1] + n), s[:-1] + n) - s[1:]).sum()
        targets = len(self.tokens) - 1
        return float(once) / targets, float(twice) / targets

    def state(self) -> torch.Tensor:
        return self.generator.get_state()

    def set_state(self, state: torch.Tensor) -> None:
        self.generator.set_state(state)
