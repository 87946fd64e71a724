#!/bin/sh
# Remakes the lm-evaluation-harness outputs under this folder, offline, with the real tool:
#   python3 -m venv /tmp/lmeval-venv && /tmp/lmeval-venv/bin/pip install lm-eval==0.4.13
#   LM_EVAL=/tmp/lmeval-venv/bin/lm_eval sh tests/data/lm_eval/make.sh [RUN...]
# The tasks (tasks/*.yaml) read small local JSONL files; the `dummy` model answers "lol" to
# every generation and a seeded random log-likelihood to every choice. The runs (all of
# them when none is named):
#   full/      tiny_mc and tiny_gen, every document, --log_samples
#   limit/     tiny_mc and tiny_gen, --limit 3, --log_samples
#   nosamples/ tiny_mc and tiny_gen, every document, no --log_samples (headline figures only)
#   unicode/   tiny_text (docs holding U+2028, U+2029, U+0085), --log_samples
# File names carry the time of the run, so a remake gives other names (and other bytes).
# tiny_mc's mcc (matthews_corrcoef) makes lm-eval bootstrap its stderr 100,000 times:
# several minutes per run on a busy machine.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
lm_eval=${LM_EVAL:-/tmp/lmeval-venv/bin/lm_eval}
hf_home=$(mktemp -d)
trap 'rm -rf "$hf_home"' EXIT
export HF_DATASETS_OFFLINE=1 HF_HUB_OFFLINE=1 HF_HOME="$hf_home" TOKENIZERS_PARALLELISM=false
export PYTHONWARNINGS=ignore  # sklearn warns on every bootstrap draw of mcc
cd "$here/tasks"  # the task YAMLs name their data files relative to here
run() {
  out=$1
  shift
  rm -rf "${here:?}/$out"
  "$lm_eval" run --model dummy --include_path "$here/tasks" --output_path "$here/$out" \
    --seed 1 "$@"
}
for name in ${@:-full limit nosamples unicode}; do
  case $name in
    full) run full --tasks tiny_mc tiny_gen --log_samples ;;
    limit) run limit --tasks tiny_mc tiny_gen --log_samples --limit 3 ;;
    nosamples) run nosamples --tasks tiny_mc tiny_gen ;;
    unicode) run unicode --tasks tiny_text --log_samples ;;
    *) echo "unknown run: $name" >&2; exit 2 ;;
  esac
done
