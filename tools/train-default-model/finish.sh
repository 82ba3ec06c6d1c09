#!/bin/sh
# After training stops: export the final checkpoint, evaluate it, write loss.png + MODEL_CARD.md, and cross-check
# the engine (needs `npx tsc -p .` in the repo root) on the exported weights.
set -e
cd "$(dirname "$0")"
export OMP_NUM_THREADS=2 OPENBLAS_CORETYPE=SkylakeX
/usr/bin/python3 export.py --out ../../models/default
/usr/bin/python3 evaluate.py --model ../../models/default --tokens "${EVAL_TOKENS:-300000}" > work/eval_stdout.log
/usr/bin/python3 make_card.py
/usr/bin/python3 engine_parity.py
du -b ../../models/default/* && du -sb ../../models/default
