#!/usr/bin/env bash
# Issue 61: spend a lent GPU machine's minutes on the growth run (training/configs/deep.toml), resumed from the
# checkpoint committed in checkpoints/deep/, and bring the checkpoint back.
#
#     bash training/device_run.sh LIMIT RUN_DIR OUT       # e.g. 7m checkpoints/deep "$OUT" on the lent machine
#
# Self-play plays on every core (worker processes), the learner on the GPU where torch sees one (--device auto); a
# checkpoint is written every minute (CHECKPOINT_MINUTES), and the run is stopped (SIGINT) after LIMIT (as timeout(1)
# reads it: 7m, 420s): it plays out its round and writes its checkpoint there; a run still going KILL_AFTER (default
# 30s) after that is killed, losing at most the minute since its last checkpoint. What it writes goes to OUT: the
# checkpoint (copy it over RUN_DIR/checkpoint.pt here to go on from it), each finished stage's network
# (generations/) and the training curves (tensorboard/). Tried on the CPU here on a tiny run
# (tests/test_training.py). The machine there has Python 3.12 with numpy, numba, torch, tensorboard and tqdm: bgai
# runs from this tree on PYTHONPATH, nothing installed.
set -u
limit=${1:?time limit}
run_dir=${2:?run folder}
out=${3:?output folder}
config=${CONFIG:-training/configs/deep.toml}
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
python=${PYTHON:-python3}
resume=$([ -f "$run_dir/checkpoint.pt" ] && echo --resume)
mkdir -p "$out"
timeout -k "${KILL_AFTER:-30s}" -s INT "$limit" \
    "$python" -m bgai.frontends.cli train --config "$config" --run-dir "$run_dir" $resume \
    --device auto --checkpoint-minutes "${CHECKPOINT_MINUTES:-1}" --quiet > "$out/train.log" 2>&1
status=$?
# 124: stopped at the time limit (the last checkpoint stands); 0: the run's stages are all done.
cp "$run_dir/checkpoint.pt" "$out/" 2>/dev/null
[ -d "$run_dir/generations" ] && mkdir -p "$out/generations" && cp "$run_dir"/generations/*.pt "$out/generations/"
[ -d "$run_dir/tensorboard" ] && mkdir -p "$out/tensorboard" && cp "$run_dir"/tensorboard/* "$out/tensorboard/"
echo "train exit $status; $(ls "$out" | tr '\n' ' ')"
[ "$status" = 0 ] || [ "$status" = 124 ]
