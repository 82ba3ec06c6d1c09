#!/bin/sh
# After train_pairs.py (both runs): export both models, check them against Hugging Face (and write the fixture),
# evaluate on the held-out pairs, write the cards. Run from anywhere; works on intermediate checkpoints too.
set -e
cd "$(dirname "$0")"
export OMP_NUM_THREADS=1 OPENBLAS_CORETYPE=SkylakeX
PY="nice -n 10 /usr/bin/python3"
$PY export_pairs.py --arch deberta --out ../../models/default-pairs
$PY export_pairs.py --arch bert --out ../../models/bert-twin-pairs
(cd ../.. && $PY tools/train-default-model/make_pairs_reference.py)
$PY evaluate_pairs.py --arch deberta --model ../../models/default-pairs --out work/pairs_eval_deberta.json
$PY evaluate_pairs.py --arch bert --model ../../models/bert-twin-pairs --out work/pairs_eval_bert.json
$PY make_pairs_card.py
