"""Speed-up of the GPT's KV cache when sampling, at the nsmc preset's shape (random weights).

Generates N new tokens from a short prompt with and without the cache, same seed, and checks
that both give the same tokens. Rounds alternate (cache, no cache, cache, ...) so both see the
same machine load; the speed-up is taken per round and the median printed. Two lengths are
timed: the one asked for (default 256, past the 128-token context: once the window is full
the sampler crops it and rebuilds the cache every step, which is what keeps the tokens equal
to the no-cache path's, so past the context the cache saves little), and the longest that
stays inside the context, where every new token costs one position. Usage:

    python benchmarks/bench_kv_cache.py [--new-tokens 256] [--prompt-len 8] [--rounds 3] [--threads N]
"""

from __future__ import annotations

import lrngpt  # noqa: F401 - first: it sets OMP_WAIT_POLICY before torch loads OpenMP
import argparse
import os
import statistics
import time
from pathlib import Path

import torch

from lrngpt.runconfig.schema import load_config
from lrngpt.models.gpt import GPT
from lrngpt.inference.sample import SamplingConfig, generate


def threads_note() -> str:
    """See benchmarks/bench_gpt.py: on a busy 2-core machine use OMP_WAIT_POLICY=PASSIVE or --threads 1."""
    return f"{torch.get_num_threads()} threads, OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY', 'unset (active)')}"


def timed_generate(model, prompt, cfg, use_cache):
    t0 = time.perf_counter()
    out = generate(model, prompt, cfg, eot_id=None, use_cache=use_cache)
    return time.perf_counter() - t0, out


def bench(model, prompt, n_new: int, rounds: int) -> dict:
    cfg = SamplingConfig(max_new_tokens=n_new, seed=0, stop_at_eot=False)
    rows = []
    for _ in range(rounds):
        t_cache, with_cache = timed_generate(model, prompt, cfg, True)
        t_plain, without = timed_generate(model, prompt, cfg, False)
        assert with_cache == without, "the KV cache changed the sampled tokens"
        assert len(with_cache) == n_new
        rows.append({"cache_s": t_cache, "plain_s": t_plain, "speedup": t_plain / t_cache})
    return {k: statistics.median(r[k] for r in rows) for k in rows[0]}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", default="nsmc", help="a preset name or a JSON file (default: the nsmc preset)")
    ap.add_argument("--new-tokens", type=int, default=256)
    ap.add_argument("--prompt-len", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, help="torch.set_num_threads (default: torch's)")
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)

    c = load_config(args.config).model
    torch.manual_seed(0)
    model = GPT(c).eval()
    prompt = torch.randint(0, c.vocab_size, (args.prompt_len,), generator=torch.Generator().manual_seed(1)).tolist()
    generate(model, prompt, SamplingConfig(max_new_tokens=4))  # warm up
    print(f"{Path(args.config).name} shape: V {c.vocab_size}, context {c.context_length}, D {c.n_embd}, H {c.n_head}, "
          f"L {c.n_layer}; random weights; prompt {args.prompt_len} tokens; {threads_note()}; "
          f"median of {args.rounds} alternating rounds; tokens checked equal with and without the cache")
    inside = c.context_length - args.prompt_len
    for n_new in dict.fromkeys([args.new_tokens, inside]):
        r = bench(model, prompt, n_new, args.rounds)
        where = "past the context" if args.prompt_len + n_new > c.context_length else "inside the context"
        print(f"  {n_new:4d} new tokens ({where}): cache {r['cache_s']:6.2f} s ({n_new / r['cache_s']:6.1f} tok/s), "
              f"no cache {r['plain_s']:6.2f} s ({n_new / r['plain_s']:6.1f} tok/s), speed-up {r['speedup']:.2f}x")


if __name__ == "__main__":
    main()
