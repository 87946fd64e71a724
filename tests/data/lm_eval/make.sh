#!/bin/sh
# Remakes the lm-evaluation-harness outputs under this folder, offline, with the real tool:
#   python3 -m venv /tmp/lmeval-venv && /tmp/lmeval-venv/bin/pip install lm-eval==0.4.13
#   LM_EVAL=/tmp/lmeval-venv/bin/lm_eval sh tests/data/lm_eval/make.sh
# The tasks (tasks/*.yaml) read small local JSONL files; the `dummy` model answers "lol" to
# every generation and a seeded random log-likelihood to every choice. Three runs:
#   full/      both tasks, every document, --log_samples
#   limit/     both tasks, --limit 3, --log_samples
#   nosamples/ both tasks, every document, no --log_samples (headline figures only)
# File names carry the time of the run, so a remake gives other names (and other bytes).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
lm_eval=${LM_EVAL:-/tmp/lmeval-venv/bin/lm_eval}
export HF_DATASETS_OFFLINE=1 HF_HUB_OFFLINE=1 HF_HOME="$here/.hf-home" TOKENIZERS_PARALLELISM=false
cd "$here/tasks"  # the task YAMLs name their data files relative to here
run() {
  out=$1
  shift
  rm -rf "${here:?}/$out"
  "$lm_eval" run --model dummy --tasks tiny_mc tiny_gen --include_path "$here/tasks" \
    --output_path "$here/$out" --seed 1 "$@"
}
run full --log_samples
run limit --log_samples --limit 3
run nosamples
rm -rf "$here/.hf-home"
