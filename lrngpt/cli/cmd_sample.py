"""`lrn sample RUN_DIR --prompt TEXT`."""

from __future__ import annotations

import sys

import lrngpt.api as api
from lrngpt.cli.common import add_checkpoint, add_device, command, emit, positive_int, seed


def register(sub) -> None:
    p = command(sub, "sample", cmd_sample, "generate text from a trained run",
        "Continue a prompt with the run's model: temperature, then top-k, then top-p (nucleus) filtering; "
        "a fixed seed gives the same text every time. --temperature 0 is greedy decoding: the most likely "
        "token at every step.",
        'examples:\n  lrn sample runs/mlp64 --prompt "Once upon a time"\n'
        '  lrn sample runs/mlp64 --prompt "Lily saw a" --temperature 0.8 --top-k 40 --num-samples 3 --json\n'
        '  lrn sample runs/gpt-cpu --prompt "Once upon a time" --temperature 0   # greedy')
    p.add_argument("run_dir", help="a run directory (lrn train --out)")
    p.add_argument("--prompt", required=True, help="the text to continue")
    p.add_argument("--max-new-tokens", type=int, default=100, help="tokens to generate at most")
    p.add_argument("--temperature", type=float, default=1.0, help="divides the logits; below 1 is more certain; 0 is greedy (the most likely token each step)")
    p.add_argument("--top-k", type=int, default=None, help="keep only the k most likely tokens (default: all of them)")
    p.add_argument("--top-p", type=float, default=1.0,
                   help="keep the most likely tokens that hold this much probability; 1.0 keeps all")
    p.add_argument("--seed", type=seed, default=0, help="random seed of the first sample")
    p.add_argument("--num-samples", type=positive_int, default=1, help="how many samples, with seeds seed, seed+1, ...")
    p.add_argument("--no-stop", action="store_true", help="keep going past <|endoftext|>")
    p.add_argument("--no-cache", action="store_true", help="GPT: recompute the whole window at every token instead of using the KV cache (same tokens, slower)")
    add_checkpoint(p)
    add_device(p)


def cmd_sample(args) -> None:
    result = api.load(args.run_dir, args.checkpoint, args.device).samples(
        args.prompt, args.num_samples, args.max_new_tokens, args.temperature, args.top_k, args.top_p, args.seed,
        stop_at_eot=not args.no_stop, use_cache=not args.no_cache,
        on_text=None if args.json else _printer())  # --json: one document at the end
    if args.json:
        emit(args, result)
    else:
        print(flush=True)  # what was printed is "\n---\n".join(the samples' texts), as it was generated


def _printer():
    """on_text: each piece printed at once, samples apart by a --- line; a reader that closes the pipe
    (`| head`) stops the sampling at the next token (BrokenPipeError: lrn exits quietly)."""
    current = 0

    def write(i: int, piece: str) -> None:
        nonlocal current
        if i != current:
            current = i
            sys.stdout.write("\n---\n")
        print(piece, end="", flush=True)

    return write
