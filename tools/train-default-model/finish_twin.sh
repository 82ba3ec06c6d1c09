#!/bin/sh
# After the BERT twin's training stops: export it to models/bert-twin, evaluate both models by the same protocol
# (the default model's results are reused when present), write both cards, and refresh the Hugging Face reference
# the unit tests check the engine against (needs /work/shared/hf-reference or its path as $1).
set -e
cd "$(dirname "$0")"
export OMP_NUM_THREADS=2 OPENBLAS_CORETYPE=SkylakeX
/usr/bin/python3 export.py --ckpt work/bert/ckpt.pt --out ../../models/bert-twin
[ -f work/eval_results.json ] || /usr/bin/python3 evaluate.py --model ../../models/default --tokens "${EVAL_TOKENS:-300000}" --out work/eval_results.json > work/eval_stdout.log
/usr/bin/python3 evaluate.py --model ../../models/bert-twin --tokens "${EVAL_TOKENS:-300000}" --out work/bert/eval_results.json > work/bert/eval_stdout.log
/usr/bin/python3 make_twin_card.py
/usr/bin/python3 ../fixtures/make-twin-reference.py "${1:-/work/shared/hf-reference}"
du -b ../../models/bert-twin/* && du -sb ../../models/bert-twin
