#!/bin/sh
# Fine-tune both models on the sentence-pair task in the background, one process per model (1 thread each: on the
# shared 2 cores one thread per process ran 2-4x faster per step than 2 threads in one process), lowest priority.
# Both processes get the same data, batch order, schedule and step count (train_pairs.py is deterministic by seed).
# Usage: ./run_pairs.sh STEPS DEADLINE [--resume] [extra train_pairs.py args]   (ARCHS="bert" ./run_pairs.sh ... for one)
cd "$(dirname "$0")"
STEPS="$1"; DEADLINE="$2"; shift 2
export OMP_NUM_THREADS=1 OPENBLAS_CORETYPE=SkylakeX
mkdir -p work/pairs_run
for ARCH in ${ARCHS:-deberta bert}; do
  nohup nice -n 19 /usr/bin/python3 train_pairs.py --archs "$ARCH" --threads 1 --steps "$STEPS" \
    --deadline "$DEADLINE" --run-dir "work/pairs_run/$ARCH" "$@" >> "work/pairs_run/$ARCH.log" 2>&1 &
  echo "train_pairs.py $ARCH pid $!"
done
