"""Held-out evaluation of the sentence-pair models (models/default-pairs, models/bert-twin-pairs).

1. Accuracy on the held-out pairs (prepare_pairs.py: g_heldout / t_heldout, files no model saw in training), per
   source and per negative kind, with n; baselines: the majority label (the pairs are balanced, so 50%), and a word
   overlap rule (predict next when A and B share at least k lower-cased words of ≥ 4 letters; k chosen for the best
   accuracy on 20,000 training pairs) — what surface overlap alone gets.
2. What the heads do, on the held-out pairs, for the fine-tuned model and for the model it started from (the same
   encoder before fine-tuning): per layer and head, the mean attention probability of the [CLS] row on [CLS], A,
   the middle [SEP], B and the final [SEP]; the mean share of A's rows on B and of B's rows on A (attention across
   the [SEP]); each for next and not_next pairs. The classifier reads only the last layer's [CLS] row.
3. Head ablation in the last layer: each head's output at [CLS] replaced by its mean over the held-out pairs (mean
   ablation, so the rest of the input to the pooler stays in range); the change in held-out accuracy says how much
   the decision goes through that head.
Writes --out (JSON). float32, no autocast.
"""
import argparse
import json
import os
import re
import sys
import time

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import classifier as C  # noqa: E402
from safetensors_io import read_safetensors  # noqa: E402
from train_pairs import ARCHS, collate, load_start  # noqa: E402

CLS, SEP = 1, 2
KINDS = ("next", "same_paragraph", "nearby", "random")
WORD = re.compile(r"[a-z]{4,}")


def load_folder(folder):
    cfg = json.load(open(os.path.join(folder, "config.json")))
    m = C.build(cfg)
    m.load_state_dict({k: v.float() for k, v in read_safetensors(os.path.join(folder, "model.safetensors")).items()},
                      strict=True)
    return m.eval(), cfg


def predict(model, pairs, bs=64):
    order = sorted(range(len(pairs)), key=lambda k: len(pairs[k]["a_ids"]) + len(pairs[k]["b_ids"]))
    logits = [None] * len(pairs)
    for s in range(0, len(order), bs):
        idx = order[s : s + bs]
        ids, mask, types = collate([(pairs[k]["a_ids"], pairs[k]["b_ids"]) for k in idx])
        with torch.no_grad():
            lo = model(ids, mask, types)
        for k, row in zip(idx, lo):
            logits[k] = row
    return torch.stack(logits)


def accuracy_table(pred, pairs):
    rows = {}
    for src in ("g_heldout", "t_heldout", "all"):
        sel = [k for k, p in enumerate(pairs) if src == "all" or p["source"] == src]
        r = {"n": len(sel), "accuracy": sum(pred[k] == pairs[k]["label"] for k in sel) / len(sel),
             "majority": max(sum(pairs[k]["label"] for k in sel), sum(1 - pairs[k]["label"] for k in sel)) / len(sel),
             "by_kind": {}}
        for kind in KINDS:
            ks = [k for k in sel if pairs[k]["kind"] == kind]
            if ks:
                r["by_kind"][kind] = {"n": len(ks), "accuracy": sum(pred[k] == pairs[k]["label"] for k in ks) / len(ks)}
        rows[src] = r
    return rows


def overlap(a, b):
    return len(set(WORD.findall(a.lower())) & set(WORD.findall(b.lower())))


def overlap_baseline(train_texts, pairs):
    """Best threshold k on training pairs; returns k, train accuracy, held-out predictions."""
    best = None
    for k in range(1, 6):
        acc = sum((overlap(a, b) >= k) == bool(y) for a, b, y in train_texts) / len(train_texts)
        if best is None or acc > best[1]:
            best = (k, acc)
    k = best[0]
    return k, best[1], [int(overlap(p["a"], p["b"]) >= k) for p in pairs]


def head_shares(model, pairs, bs=32):
    """Per layer/head attention shares (see the module doc), averaged over pairs, split by label."""
    acc = {}
    order = sorted(range(len(pairs)), key=lambda k: len(pairs[k]["a_ids"]) + len(pairs[k]["b_ids"]))
    for s in range(0, len(order), bs):
        idx = order[s : s + bs]
        ids, mask, types = collate([(pairs[k]["a_ids"], pairs[k]["b_ids"]) for k in idx])
        cap = []
        with torch.no_grad():
            model.backbone_forward(ids, mask, types, cap)
        valid = mask.bool()
        seg_a = valid & (types == 0) & (ids != CLS) & (ids != SEP)
        seg_b = valid & (types == 1) & (ids != SEP)
        first_sep = torch.zeros_like(valid)
        last_sep = torch.zeros_like(valid)
        for r in range(ids.shape[0]):
            seps = (ids[r] == SEP).nonzero().flatten()
            first_sep[r, seps[0]] = True
            last_sep[r, seps[-1]] = True
        is_cls = ids == CLS
        for li, c in enumerate(cap):
            p = c["probs"].float()  # [B, H, L, L]
            cls_row = p[:, :, 0, :]  # [B, H, L]
            feats = {
                "cls_to_cls": (cls_row * is_cls[:, None]).sum(-1),
                "cls_to_a": (cls_row * seg_a[:, None]).sum(-1),
                "cls_to_sep1": (cls_row * first_sep[:, None]).sum(-1),
                "cls_to_b": (cls_row * seg_b[:, None]).sum(-1),
                "cls_to_sep2": (cls_row * last_sep[:, None]).sum(-1),
                # rows of A on B's tokens, rows of B on A's tokens (mean over the segment's rows)
                "a_to_b": ((p * seg_b[:, None, None, :]).sum(-1) * seg_a[:, None]).sum(-1) / seg_a.sum(-1)[:, None],
                "b_to_a": ((p * seg_a[:, None, None, :]).sum(-1) * seg_b[:, None]).sum(-1) / seg_b.sum(-1)[:, None],
            }
            for name, v in feats.items():  # v: [B, H]
                for r, k in enumerate(idx):
                    lab = "next" if pairs[k]["label"] == 1 else "not_next"
                    key = (li, name, lab)
                    if key not in acc:
                        acc[key] = [torch.zeros(v.shape[1], dtype=torch.float64), 0]
                    acc[key][0] += v[r].double()
                    acc[key][1] += 1
    rows = []
    layers = sorted({k[0] for k in acc})
    H = next(iter(acc.values()))[0].numel()
    for li in layers:
        for h in range(H):
            r = {"layer": li, "head": h}
            for (l2, name, lab), (tot, n) in acc.items():
                if l2 == li:
                    r[f"{name}.{lab}"] = round(float(tot[h] / n), 4)
            rows.append(r)
    return rows


def last_layer_head_ablation(model, pairs, bs=64):
    """Mean-ablate each last-layer head's context vector at [CLS] (its slice of the attention output before
    attention.output.dense); accuracy with each head ablated."""
    layer = model.backbone.encoder.layer[-1]
    self_att = layer.attention.self
    H = self_att.H if hasattr(self_att, "H") else model.cfg["num_attention_heads"]
    d = model.cfg["hidden_size"] // H if not hasattr(self_att, "d") else self_att.d
    state = {"mode": "collect", "sum": None, "n": 0, "head": None}

    def hook(mod, inp, out):
        ctx = out  # [B, L, H*d]
        if state["mode"] == "collect":
            v = ctx[:, 0].double().sum(0)
            state["sum"] = v if state["sum"] is None else state["sum"] + v
            state["n"] += ctx.shape[0]
            return None
        if state["mode"] == "ablate":
            h = state["head"]
            ctx = ctx.clone()
            ctx[:, 0, h * d : (h + 1) * d] = (state["sum"] / state["n"])[h * d : (h + 1) * d].to(ctx.dtype)
            return ctx
        return None

    handle = self_att.register_forward_hook(hook)
    try:
        labels = torch.tensor([p["label"] for p in pairs])
        base = (predict(model, pairs, bs).argmax(-1) == labels).float().mean().item()
        state["mode"] = "ablate"
        out = []
        for h in range(H):
            state["head"] = h
            acc = (predict(model, pairs, bs).argmax(-1) == labels).float().mean().item()
            out.append({"head": h, "accuracy": round(acc, 4), "change_points": round(100 * (acc - base), 2)})
    finally:
        handle.remove()
    return {"layer": len(model.backbone.encoder.layer) - 1, "base_accuracy": round(base, 4), "heads": out}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--arch", required=True, choices=list(ARCHS))
    ap.add_argument("--model", required=True, help="exported folder (models/default-pairs, models/bert-twin-pairs)")
    ap.add_argument("--pairs-dir", default=os.path.join(HERE, "work", "pairs"))
    ap.add_argument("--probe-pairs", type=int, default=600, help="held-out pairs per source for the head probes")
    ap.add_argument("--out", required=True)
    ap.add_argument("--accuracy-only", action="store_true", help="held-out accuracy only (no baselines, no probes)")
    args = ap.parse_args()
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    t0 = time.time()
    pairs = json.load(open(os.path.join(args.pairs_dir, "heldout.json")))
    model, cfg = load_folder(args.model)
    logits = predict(model, pairs)
    pred = logits.argmax(-1).tolist()
    res = {"model": os.path.relpath(args.model, os.path.join(HERE, "..", "..")), "heldout": accuracy_table(pred, pairs)}
    print(json.dumps(res["heldout"], indent=1), f"{time.time() - t0:.0f}s", flush=True)
    if args.accuracy_only:
        with open(args.out, "w") as f:
            json.dump(res, f, indent=1)
        return
    # word-overlap baseline, threshold fitted on training pairs (texts rebuilt from ids)
    import sentencepiece as spm
    sp = spm.SentencePieceProcessor(model_file=os.path.join(args.model, "spm.model"))
    tr = torch.load(os.path.join(args.pairs_dir, "train.pt"))
    n = min(20000, len(tr["label"]))
    train_texts = [(sp.decode(tr["a"][k]), sp.decode(tr["b"][k]), tr["label"][k]) for k in range(n)]
    k, tr_acc, base_pred = overlap_baseline(train_texts, pairs)
    res["overlap_baseline"] = {"min_shared_words": k, "train_accuracy": tr_acc,
                               "heldout": accuracy_table(base_pred, pairs)}
    print("overlap baseline", k, json.dumps({s: r["accuracy"] for s, r in res["overlap_baseline"]["heldout"].items()}),
          flush=True)
    # head probes on a subset (first pairs of each source; the held-out list is already in random order)
    probe = [p for s in ("g_heldout", "t_heldout") for p in [q for q in pairs if q["source"] == s][: args.probe_pairs]]
    res["probe_pairs"] = len(probe)
    res["heads_finetuned"] = head_shares(model, probe)
    start, _ = load_start(args.arch, 1234)
    res["heads_start"] = head_shares(start.eval(), probe)
    res["ablation"] = last_layer_head_ablation(model, probe)
    print(json.dumps(res["ablation"]), flush=True)
    res["seconds"] = round(time.time() - t0, 1)
    with open(args.out, "w") as f:
        json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
