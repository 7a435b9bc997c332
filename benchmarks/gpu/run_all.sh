#!/usr/bin/env bash
# The prepared GPU check, one call: the chapter's d=64 point (issue: 23 s on the chapter's GPU)
# and the GPT at the nsmc shape (tokens/s, MFU). Each has its own time limit so the whole
# script stays under 5 minutes. Logs go to $OUT (the device tool's folder) or /tmp.
# The device image already has torch, tokenizers, tiktoken, numpy, matplotlib and tqdm.
#
#     bash benchmarks/gpu/run_all.sh            # on the GPU machine, from anywhere
#     bash benchmarks/gpu/run_all.sh --smoke    # on a CPU: both scripts for a few steps
set -uo pipefail
cd "$(dirname "$0")/../.."
export PYTHONPATH="$PWD" LRN_CACHE_DIR="${LRN_CACHE_DIR:-/tmp/lrn-cache}"
out="${OUT:-/tmp}"
py="$(command -v python3)"
[ -x .venv/bin/python ] && py=.venv/bin/python
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv 2>/dev/null | tee "$out/gpu.txt"
if [ "${1:-}" = "--smoke" ]; then
  "$py" benchmarks/gpu/embed_dim_point.py --smoke 2>&1 | tee "$out/embed_dim_point.log"
  "$py" benchmarks/gpu/gpt_nsmc.py --smoke 2>&1 | tee "$out/gpt_nsmc.log"
  exit 0
fi
timeout 200 "$py" benchmarks/gpu/embed_dim_point.py --bf16 2>&1 | tee "$out/embed_dim_point.log"
timeout 80 "$py" benchmarks/gpu/gpt_nsmc.py 2>&1 | tee "$out/gpt_nsmc.log"
