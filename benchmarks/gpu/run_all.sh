#!/usr/bin/env bash
# The one-call GPU check, sized for one 10-minute call on a GPU machine that has torch and no
# network: prepares stories:100MB there, runs the 8-point embed-dim sweep at the chapter's shape
# (4,000 steps of 64 x 256, train.dtype=auto), then d = 64 with float32+TF32, bfloat16 and
# bfloat16+compile, and prints per point the training seconds, tokens/s, MFU, val bpb and the
# overhead (benchmarks/gpu/chapter_check.py). Everything goes to $OUT (default ./gpu-out):
# results.json, results.md, chapter_check.log, gpu.txt (nvidia-smi), doctor.json (lrn doctor).
# The check stops itself after 560 s, leaving the runs it finished in results.json.
#
#     bash benchmarks/gpu/run_all.sh                    # on the GPU machine, from anywhere
#     bash benchmarks/gpu/run_all.sh --smoke            # on a CPU: the same code at the tiny scale, seconds
#     bash benchmarks/gpu/run_all.sh --chapter          # the whole book chapter at its scale (lrn chapter
#                                                       # --scale full, on stories:100MB: no download there)
#     bash benchmarks/gpu/run_all.sh --smoke --chapter  # the same command at the tiny scale, on a CPU
#
# Not run on a GPU yet: no GPU was lent to the session that wrote it.
set -uo pipefail
cd "$(dirname "$0")/../.."
export PYTHONPATH="$PWD" LRN_CACHE_DIR="${LRN_CACHE_DIR:-/tmp/lrn-cache}"
out="${OUT:-$PWD/gpu-out}"
mkdir -p "$out"
py="$(command -v python3)"
[ -x .venv/bin/python ] && py=.venv/bin/python
py="${PYTHON:-$py}"  # the interpreter with torch (default: .venv's, else python3)
smoke=0; chapter=0
for a in "$@"; do
  case "$a" in --smoke) smoke=1 ;; --chapter) chapter=1 ;; *) echo "run_all.sh: unknown option $a (--smoke, --chapter)"; exit 2 ;; esac
done
if [ "$chapter" = 1 ]; then  # one call: every study, its verdicts in $OUT/chapter/verdicts.json and report.html
  if [ "$smoke" = 1 ]; then scale=(--scale tiny); else scale=(--scale full --corpus stories:100MB); fi
  timeout 560 "$py" -m lrngpt chapter "${scale[@]}" --out "$out/chapter" --json > "$out/chapter.json" 2> "$out/chapter.log"
  code=$?
  tail -n 20 "$out/chapter.log"
  exit "$code"
fi
if [ "$smoke" = 1 ]; then
  "$py" benchmarks/gpu/chapter_check.py --smoke --out "$out" 2>&1 | tee "$out/chapter_check.log"
  exit "${PIPESTATUS[0]}"
fi
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv 2>&1 | tee "$out/gpu.txt"
"$py" -m lrngpt doctor --json --no-probe > "$out/doctor.json" 2> "$out/doctor.err"
timeout 560 "$py" benchmarks/gpu/chapter_check.py --out "$out" 2>&1 | tee "$out/chapter_check.log"
exit "${PIPESTATUS[0]}"
