"""Check emd.py's Enhanced Mask Decoder against microsoft/DeBERTa's own MaskedLanguageModel (float64), on a model
folder: the bundled model as it is (its position table, or, before the table exists, a random one of std --std so the
position path is exercised), on held-out windows with 19 [MASK] each. Prints the worst logit difference; exit 1
above 1e-6 (float64 both sides).

    /usr/bin/python3 emd_check.py [--model ../../models/default] [--std 0.5]

microsoft's code: ../shared/hf-reference/microsoft_deberta, loaded by tools/fixtures/emd_models.py (its `.float()`
casts kept at float64 by float64_float).
"""
import argparse
import math
import json
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tools", "fixtures"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default=os.path.join(ROOT, "models", "default"))
    ap.add_argument("--work", default=os.path.join(HERE, "work"))
    ap.add_argument("--std", type=float, default=0.5)
    ap.add_argument("--windows", type=int, default=3)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--exact-scale", type=int, default=1)
    args = ap.parse_args()
    sys.argv[1:] = []  # hf_loading reads an optional hf-reference path from argv[1]
    from hf_loading import HF_REFERENCE, use_hf_reference
    ms_dir = os.path.join(HF_REFERENCE, "microsoft_deberta")
    use_hf_reference(os.path.join(ms_dir, "stubs"), HF_REFERENCE, ms_dir)  # float64 default dtype from here on
    from emd_models import ms_model, ms_run
    from emd import POSITION_TABLE, add_position_table, emd_rows, from_microsoft_keys, to_microsoft_keys
    from model import DebertaV2ForMaskedLM
    from safetensors_io import read_safetensors

    cfg = json.load(open(os.path.join(args.model, "config.json")))
    sd = {k: v.double() for k, v in read_safetensors(os.path.join(args.model, "model.safetensors")).items()}
    mine = DebertaV2ForMaskedLM(cfg).double().eval()
    add_position_table(mine, cfg["max_position_embeddings"]).double()
    if POSITION_TABLE not in sd:
        sd[POSITION_TABLE] = torch.randn(cfg["max_position_embeddings"], cfg["hidden_size"],
                                         generator=torch.Generator().manual_seed(7)) * args.std
        print(f"no position table in {args.model}: a random one (std {args.std})")
    mine.load_state_dict(from_microsoft_keys(sd), strict=True)
    ms = ms_model(cfg, to_microsoft_keys(sd), hooked=False)
    if args.exact_scale:  # microsoft's sqrt(d * 3) in float64, where model.py keeps HF's float32-rounded one
        for layer in mine.deberta.encoder.layer:
            layer.attention.self.scale = math.sqrt(layer.attention.self.d * 3)

    stream = np.load(os.path.join(args.work, "g_heldout.npy"))
    gen = torch.Generator().manual_seed(4321)
    worst = 0.0
    for w in range(args.windows):
        n = args.seq - 2
        ids = [1] + [int(t) for t in stream[w * n:(w + 1) * n]] + [2]
        pos = sorted((torch.rand(n, generator=gen).topk(19).indices + 1).tolist())
        x = torch.tensor([ids])
        x[0, pos] = cfg["vocab_size"] - 1
        out, _, _, _ = ms_run(ms, x[0].tolist(), pos)
        with torch.no_grad():
            h = emd_rows(mine, x, torch.tensor([pos]))
            logits = mine.mlm_logits(h[0])
        d = float((logits - out["logits"]).abs().max())
        worst = max(worst, d)
        print(f"window {w}: {len(pos)} masks, max |logit diff| {d:.2e} (logits up to {float(logits.abs().max()):.1f})")
    print("OK" if worst <= 1e-6 else "FAIL", f"worst {worst:.2e}")
    sys.exit(0 if worst <= 1e-6 else 1)


if __name__ == "__main__":
    main()
