"""Cross-check the exported model: the project's engine (`node out/src/cli/main.js explain --ids ...`, needs
`npx tsc -p .` first) against this folder's torch model on the same weights. Uses a held-out window longer
than position_buckets/2 so the log-bucket rows are exercised. Exit 1 if a difference exceeds the tolerances
(raw terms: 1e-4 × max|term|; probs: 1e-4 absolute)."""
import argparse
import json
import os
import subprocess
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
from evaluate import load_model  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default=os.path.join(ROOT, "models", "default"))
    ap.add_argument("--work", default=os.path.join(HERE, "work"))
    ap.add_argument("--n", type=int, default=100)
    args = ap.parse_args()
    stream = np.load(os.path.join(args.work, "g_heldout.npy"))
    ids = [1] + [int(t) for t in stream[5000 : 5000 + args.n - 2]] + [2]
    out = subprocess.run(["node", os.path.join(ROOT, "out", "src", "cli", "main.js"), "explain", "--model", args.model,
                          "--ids", ",".join(map(str, ids)), "--format", "json"], capture_output=True, text=True,
                         check=True).stdout
    eng = json.loads(out)
    model, _ = load_model(args.model)
    cap = []
    with torch.no_grad():
        model.deberta(torch.tensor([ids]), capture=cap)
    worst_ok = True
    scale = model.deberta.encoder.layer[0].attention.self.scale
    print(f"n={len(ids)} scale engine {eng['scale']:.6f} torch {scale:.6f}")
    for li, layer in enumerate(eng["layers"]):
        parts = []
        for term in ("c2c", "c2p", "p2c", "probs"):
            a = torch.tensor(layer[term], dtype=torch.float64)
            b = cap[li][term][0].double()
            d = (a - b).abs().max().item()
            tol = 1e-4 if term == "probs" else 1e-4 * b.abs().max().item()
            worst_ok &= d <= tol
            parts.append(f"{term} {d:.1e} (tol {tol:.1e})")
        print(f"layer {li}: " + ", ".join(parts))
    print("OK" if worst_ok else "FAIL")
    sys.exit(0 if worst_ok else 1)


if __name__ == "__main__":
    main()
