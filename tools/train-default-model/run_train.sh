#!/bin/sh
# Start (or with --resume, continue) training in the background: lowest CPU priority, 2 threads,
# OpenBLAS forced to its SkylakeX kernels (Debian's runtime detection picks slower ones on these CPUs).
# Usage: ./run_train.sh 2026-11-30T09:00:00Z [--resume] [extra train.py args]
cd "$(dirname "$0")"
DEADLINE="$1"; shift
export OMP_NUM_THREADS=2 OPENBLAS_CORETYPE=SkylakeX
nohup nice -n 19 /usr/bin/python3 train.py --deadline "$DEADLINE" "$@" >> work/train_stdout.log 2>&1 &
echo "train.py pid $!"
