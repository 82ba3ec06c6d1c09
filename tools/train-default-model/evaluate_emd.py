"""Held-out masked-token accuracy of the bundled model with and without its Enhanced Mask Decoder, and the same
figures from microsoft/DeBERTa's own code and from the project's engine on a subset.

1. evaluate.py's protocol exactly (consecutive 126-token windows of g_heldout / t_heldout wrapped as [CLS] x [SEP],
   19 positions per window chosen with seed 4321, all replaced by [MASK]; --tokens per source): accuracy (top-1 =
   original piece) and perplexity over the masked positions, plain head on the last hidden state (what evaluate.py
   and the card have always measured) and through the EMD (emd.py), both with this folder's torch model, from one
   encoder run (H, then the last layer at the masked rows; the parity below checks the ordinary forward too).
2. On the first --parity-windows windows of each source (same masks): microsoft's MaskedLanguageModel in float64
   (its EnhancedMaskDecoder; its own LM head on the last encoder layer for the plain path) and the engine
   (engine_emd_predict.mjs: predict with emd true / false): top-1 ids must be the same everywhere (a top-1 decided by
   less than 1e-3 in logit is reported, not failed) and the top-1 logits within 1e-3 of microsoft's.
Writes --out (JSON); exit 1 if the parity fails.

    OMP_NUM_THREADS=2 /usr/bin/python3 evaluate_emd.py --tokens 300000    # after `npx tsc -p .` in the repo root
"""
import argparse
import json
import math
import os
import subprocess
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tools", "fixtures"))
from emd import POSITION_TABLE, add_position_table, emd_rows, from_microsoft_keys, to_microsoft_keys  # noqa: E402
from evaluate import SEQ, windows  # noqa: E402
from model import DebertaV2ForMaskedLM  # noqa: E402
from safetensors_io import read_safetensors  # noqa: E402


def load(folder, dtype):
    cfg = json.load(open(os.path.join(folder, "config.json")))
    sd = {k: v.to(dtype) for k, v in read_safetensors(os.path.join(folder, "model.safetensors")).items()}
    if POSITION_TABLE not in sd:
        raise SystemExit(f"{folder}/model.safetensors has no {POSITION_TABLE}: run train_emd.py and export_emd.py")
    model = DebertaV2ForMaskedLM(cfg).to(dtype)
    add_position_table(model, sd[POSITION_TABLE].shape[0]).to(dtype)
    model.load_state_dict(from_microsoft_keys(sd), strict=True)
    return model.eval(), cfg, sd


def masked_windows(stream, mask_id, max_tokens, seed):
    """evaluate.py's windows and masks (the same generator calls in the same order): [(ids [b, SEQ], cols [b, 19])]."""
    ids = windows(stream, max_tokens)
    gen = torch.Generator().manual_seed(seed)
    n_mask = round(0.15 * (SEQ - 2))
    out = []
    for s in range(0, ids.shape[0], 64):
        x = ids[s:s + 64].clone()
        cols = torch.rand(x.shape[0], SEQ - 2, generator=gen).topk(n_mask, dim=1).indices + 1
        out.append((x, cols))
    return out


def mlm_eval(model, batches, mask_id):
    tot = {"plain": [0, 0.0], "emd": [0, 0.0]}
    n = 0
    for x, cols in batches:
        b = x.shape[0]
        labels = torch.gather(x, 1, cols)
        inp = x.clone()
        inp.scatter_(1, cols, mask_id)
        flat = (torch.arange(b).unsqueeze(1) * SEQ + cols).reshape(-1)
        with torch.no_grad():  # one encoder run for both: the plain last layer and the EMD's passes read the same H
            plain, emd = (model.mlm_logits(h).reshape(-1, model.cls.predictions.bias.shape[0]).float()
                          for h in emd_rows(model, inp, cols, with_plain=True))
        y = labels.reshape(-1)
        for name, lg in (("plain", plain), ("emd", emd)):
            tot[name][0] += int((lg.argmax(-1) == y).sum())
            tot[name][1] += float(-F.log_softmax(lg, -1).gather(1, y[:, None]).sum())
        n += y.numel()
    return {"masked": n, **{f"{k}_accuracy": v[0] / n for k, v in tot.items()},
            **{f"{k}_perplexity": math.exp(v[1] / n) for k, v in tot.items()}}


def microsoft(cfg, sd, rows):
    """microsoft's MaskedLanguageModel (float64): EMD logits and its LM head on the last layer at the [MASK]s."""
    sys.argv[1:] = []  # hf_loading reads an optional hf-reference path from argv[1]
    from hf_loading import HF_REFERENCE, use_hf_reference
    ms_dir = os.path.join(HF_REFERENCE, "microsoft_deberta")
    use_hf_reference(os.path.join(ms_dir, "stubs"), HF_REFERENCE, ms_dir)
    from emd_models import ms_model, ms_run
    m = ms_model(cfg, {k: v.double() for k, v in sd.items()}, hooked=False)
    out = []
    for ids, pos in rows:
        o, enc, _, _ = ms_run(m, ids, pos)
        with torch.no_grad():
            last = enc["hidden_states"][-1][0, pos]
            plain = m.lm_predictions.lm_head(last, m.deberta.embeddings.word_embeddings.weight)
        out.append({"emd": o["logits"], "plain": plain})
    torch.set_default_dtype(torch.float32)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default=os.path.join(ROOT, "models", "default"))
    ap.add_argument("--work", default=os.path.join(HERE, "work"))
    ap.add_argument("--tokens", type=int, default=300000, help="held-out tokens per source")
    ap.add_argument("--seed", type=int, default=4321)
    ap.add_argument("--parity-windows", type=int, default=16, help="per source, for microsoft's code and the engine")
    ap.add_argument("--out", default=os.path.join(HERE, "work", "emd_eval.json"))
    args = ap.parse_args()
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "2")))
    t0 = time.time()
    model, cfg, sd = load(args.model, torch.float32)
    mask_id = cfg["vocab_size"] - 1
    res = {"model": os.path.relpath(os.path.abspath(args.model), ROOT), "seed": args.seed, "tokens": args.tokens,
           "mlm": {}, "parity": {}}
    parity_rows = []
    for name in ("g_heldout", "t_heldout"):
        batches = masked_windows(np.load(os.path.join(args.work, f"{name}.npy")), mask_id, args.tokens, args.seed)
        res["mlm"][name] = mlm_eval(model, batches, mask_id)
        print(name, json.dumps(res["mlm"][name]), f"{time.time() - t0:.0f}s", flush=True)
        x, cols = batches[0]
        for i in range(min(args.parity_windows, x.shape[0])):
            ids = x[i].clone()
            ids[cols[i]] = mask_id
            parity_rows.append((name, ids.tolist(), sorted(cols[i].tolist()), x[i].tolist()))

    # The engine, then microsoft's code, on the parity windows.
    inp, eng_out = os.path.join(args.work, "emd_parity_inputs.json"), os.path.join(args.work, "emd_parity_engine.json")
    with open(inp, "w") as f:
        json.dump({"windows": [r[1] for r in parity_rows]}, f)
    subprocess.run(["node", os.path.join(HERE, "engine_emd_predict.mjs"), args.model, inp, eng_out], check=True)
    engine = json.load(open(eng_out))["windows"]
    ms = microsoft(cfg, to_microsoft_keys(from_microsoft_keys(sd)), [(r[1], r[2]) for r in parity_rows])
    ok = True
    for name in ("g_heldout", "t_heldout"):
        agg = {d: {"masked": 0, "correct_ms": 0, "correct_engine": 0, "correct_torch": 0, "top1_differ": 0,
                   "top1_differ_close": 0, "max_top1_logit_diff": 0.0} for d in ("plain", "emd")}
        for (src, ids, pos, orig), e, m in zip(parity_rows, engine, ms):
            if src != name:
                continue
            x = torch.tensor([ids])
            with torch.no_grad():
                torch_emd = model.mlm_logits(emd_rows(model, x, torch.tensor([pos]))[0])
                torch_plain = model(x)[0, pos]
            for d, torch_logits in (("emd", torch_emd), ("plain", torch_plain)):
                if e[d]["decoder"] != d:
                    raise SystemExit(f"engine decoder {e[d]['decoder']} where {d} was asked: {e[d].get('note')}")
                a = agg[d]
                for k, p in enumerate(pos):
                    ep = e[d]["predictions"][k]
                    assert ep["position"] == p, (ep["position"], p)
                    row = m[d][k]
                    ms_top = int(row.argmax())
                    a["masked"] += 1
                    a["correct_ms"] += int(ms_top == orig[p])
                    a["correct_engine"] += int(ep["ids"][0] == orig[p])
                    a["correct_torch"] += int(int(torch_logits[k].argmax()) == orig[p])
                    a["max_top1_logit_diff"] = max(a["max_top1_logit_diff"], abs(ep["logits"][0] - float(row[ep["ids"][0]])))
                    if ep["ids"][0] != ms_top or int(torch_logits[k].argmax()) != ms_top:
                        a["top1_differ"] += 1
                        gap = float(row.topk(2).values[0] - row.topk(2).values[1])
                        if gap < 1e-3:
                            a["top1_differ_close"] += 1
                        else:
                            ok = False
        for d, a in agg.items():
            ok &= a["max_top1_logit_diff"] <= 1e-3
            for k in ("ms", "engine", "torch"):
                a[f"accuracy_{k}"] = a[f"correct_{k}"] / a["masked"]
        res["parity"][name] = agg
        print(name, "parity", json.dumps(agg), flush=True)
    res["parity_ok"] = ok
    res["seconds"] = round(time.time() - t0, 1)
    with open(args.out, "w") as f:
        json.dump(res, f, indent=1)
    print("OK" if ok else "FAIL", f"{res['seconds']}s")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
