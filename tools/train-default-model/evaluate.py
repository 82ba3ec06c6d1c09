"""Evaluate an exported model folder on the held-out text.

1. Masked-token accuracy / perplexity per source (g_heldout books, t_heldout technical): consecutive
   126-token windows wrapped as [CLS] x [SEP], 15% of content positions (19 per window, seeded) all replaced
   by [MASK]; vs a unigram-frequency baseline from the training streams (argmax token; add-one smoothed
   frequencies for perplexity).
2. Fill-mask: a few sentences with one word piece masked, top-5.
3. Attention structure per layer/head on held-out windows: c2p peak distance (δ = i − argmax_j c2p[i,j]; mode
   and mean over queries; DeBERTa only — BERT has no separate c2p term in its layers), share of attention probability on [CLS]/[SEP], on punctuation, on the previous /
   same / next token, and a one-word label.
Works for the default model (deberta-v2) and its BERT twin (bert), chosen by config.json's model_type, with the
same windows and masks, so the two are compared on exactly the same positions. Writes --out (JSON).
"""
import argparse
import json
import math
import os
import sys
import time

import numpy as np
import sentencepiece as spm
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from model import DebertaV2ForMaskedLM  # noqa: E402
from model_bert import BertForMaskedLM  # noqa: E402
from safetensors_io import read_safetensors  # noqa: E402

SEQ, CLS, SEP = 128, 1, 2
FILL_MASK = [
    ("The old man walked slowly down the road to the village.", "road"),
    ("She opened the door and looked out into the dark night.", "door"),
    ("He put his hand in his pocket and took out a letter.", "hand"),
    ("The function returns a list of strings.", "list"),
    ("Install the package with npm and then import it in your code.", "package"),
]


def load_model(folder):
    cfg = json.load(open(os.path.join(folder, "config.json")))
    model = BertForMaskedLM(cfg) if cfg["model_type"] == "bert" else DebertaV2ForMaskedLM(cfg)
    sd = {k: v.float() for k, v in read_safetensors(os.path.join(folder, "model.safetensors")).items()}
    missing, unexpected = model.load_state_dict(sd, strict=False)
    if missing or unexpected:
        raise SystemExit(f"{folder}/model.safetensors does not fit config.json: missing {missing}, "
                         f"unexpected {unexpected}")
    return model.eval(), cfg


def windows(stream, max_tokens):
    n = SEQ - 2
    count = min(stream.size // n, max(1, max_tokens // n))
    w = np.asarray(stream[: count * n], dtype=np.int64).reshape(count, n)
    out = np.empty((count, SEQ), dtype=np.int64)
    out[:, 0], out[:, -1], out[:, 1:-1] = CLS, SEP, w
    return torch.from_numpy(out)


def mlm_eval(model, stream, mask_id, max_tokens, seed, freq_logp, bs=64):
    ids = windows(stream, max_tokens)
    gen = torch.Generator().manual_seed(seed)
    n_mask = round(0.15 * (SEQ - 2))
    correct = nll = base_correct = base_nll = total = 0.0
    top_unigram = int(torch.argmax(freq_logp))
    for s in range(0, ids.shape[0], bs):
        x = ids[s : s + bs].clone()
        b = x.shape[0]
        cols = torch.rand(b, SEQ - 2, generator=gen).topk(n_mask, dim=1).indices + 1
        flat = (torch.arange(b).unsqueeze(1) * SEQ + cols).reshape(-1)
        labels = x.reshape(-1)[flat].clone()
        x.view(-1)[flat] = mask_id
        with torch.no_grad():
            logits = model(x, positions=flat).float()
        logp = F.log_softmax(logits, -1)
        correct += (logits.argmax(-1) == labels).sum().item()
        nll += -logp.gather(1, labels[:, None]).sum().item()
        base_correct += (labels == top_unigram).sum().item()
        base_nll += -freq_logp[labels].sum().item()
        total += labels.numel()
    return {"windows": int(ids.shape[0]), "tokens": int(ids.shape[0] * (SEQ - 2)), "masked": int(total),
            "accuracy": correct / total, "perplexity": math.exp(nll / total),
            "baseline_accuracy": base_correct / total, "baseline_perplexity": math.exp(base_nll / total)}


def fill_mask(model, sp, mask_id):
    out = []
    for text, word in FILL_MASK:
        ids = sp.encode(text)
        pieces = [sp.id_to_piece(i) for i in ids]
        target = "▁" + word
        if target not in pieces:
            out.append({"text": text, "error": f"'{word}' is not a single piece: {pieces}"})
            continue
        k = pieces.index(target)
        x = torch.tensor([[CLS] + ids[:k] + [mask_id] + ids[k + 1 :] + [SEP]])
        with torch.no_grad():
            probs = F.softmax(model(x, positions=torch.tensor([k + 1])).float(), -1)[0]
        top = probs.topk(5)
        masked = "".join(pieces[:k] + ["▁[MASK]"] + pieces[k + 1 :]).replace("▁", " ").strip()
        out.append({"text": masked, "answer": word,
                    "top5": [(sp.id_to_piece(int(i)).replace("▁", "") if int(i) < sp.get_piece_size() else "[MASK]",
                              round(float(p), 3)) for p, i in zip(top.values, top.indices)]})
    return out


def punct_ids(sp):
    ids = []
    for i in range(sp.get_piece_size()):
        p = sp.id_to_piece(i).replace("▁", "")
        if p and all(not c.isalnum() for c in p) and not (p.startswith("[") and p.endswith("]")):
            ids.append(i)
    return torch.tensor(ids)


def label_head(r):
    if r["special_share"] >= 0.5:
        return "[SEP]-sink" if r["sep_share"] >= r["cls_share"] else "[CLS]-sink"
    if r["prev_share"] >= 0.4:
        return "previous-token"
    if r["next_share"] >= 0.4:
        return "next-token"
    if r["self_share"] >= 0.4:
        return "self"
    if r["punct_share"] >= 0.4:
        return "punctuation"
    if r["local_share"] >= 0.6:
        return "local"
    return "broad"


def attention_structure(model, streams, punct, n_windows):
    ids = torch.cat([windows(s, n_windows * (SEQ - 2))[:n_windows] for s in streams])
    cap = []
    with torch.no_grad():
        model.backbone(ids, capture=cap)
    L = SEQ
    ar = torch.arange(L)
    delta = ar[:, None] - ar[None, :]  # i − j
    is_special = (ids == CLS) | (ids == SEP)
    is_punct = torch.isin(ids, punct)
    rows = []
    for li, c in enumerate(cap):
        probs = c["probs"].float()  # [B, H, L, L]
        B, H = probs.shape[:2]
        peak_delta = (ar.view(1, 1, L) - c["c2p"].float().argmax(-1)).float() if "c2p" in c else None
        for h in range(H):
            p = probs[:, h]  # [B, L, L]
            r = {"layer": li, "head": h, "c2p_peak_delta_mode": None, "c2p_peak_delta_mean": None}
            if peak_delta is not None:
                pd = peak_delta[:, h].reshape(-1)
                vals, counts = torch.unique(pd, return_counts=True)
                r["c2p_peak_delta_mode"] = int(vals[counts.argmax()])
                r["c2p_peak_delta_mean"] = round(float(pd.mean()), 2)
            r.update({"cls_share": float((p * (ids == CLS)[:, None, :]).sum(-1).mean()),
                 "sep_share": float((p * (ids == SEP)[:, None, :]).sum(-1).mean()),
                 "special_share": float((p * is_special[:, None, :]).sum(-1).mean()),
                 "punct_share": float((p * is_punct[:, None, :]).sum(-1).mean()),
                 "prev_share": float((p * (delta == 1)).sum(-1).mean()),
                 "self_share": float((p * (delta == 0)).sum(-1).mean()),
                 "next_share": float((p * (delta == -1)).sum(-1).mean()),
                 "local_share": float((p * (delta.abs() <= 2)).sum(-1).mean()),
                 "mean_abs_distance": float((p * delta.abs()).sum(-1).mean())})
            r["label"] = label_head(r)
            rows.append({k: (round(v, 3) if isinstance(v, float) else v) for k, v in r.items()})
    return {"windows": int(ids.shape[0]), "rows": rows}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default=os.path.join(HERE, "..", "..", "models", "default"))
    ap.add_argument("--work", default=os.path.join(HERE, "work"))
    ap.add_argument("--tokens", type=int, default=300000, help="held-out tokens per source")
    ap.add_argument("--attn-windows", type=int, default=24, help="windows per source for attention stats")
    ap.add_argument("--seed", type=int, default=4321)
    ap.add_argument("--out", default=os.path.join(HERE, "work", "eval_results.json"))
    args = ap.parse_args()
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "2")))
    t0 = time.time()
    model, cfg = load_model(args.model)
    sp = spm.SentencePieceProcessor(model_file=os.path.join(args.model, "spm.model"))
    mask_id = sp.get_piece_size()
    counts = np.zeros(cfg["vocab_size"], dtype=np.float64)
    for name in ("g_train", "t_train"):
        counts += np.bincount(np.load(os.path.join(args.work, f"{name}.npy")), minlength=cfg["vocab_size"])
    counts[[0, 1, 2, 3, mask_id]] = 0
    counts += 1
    freq_logp = torch.from_numpy(np.log(counts / counts.sum()))
    res = {"model": os.path.abspath(args.model), "seed": args.seed, "mlm": {}}
    for name in ("g_heldout", "t_heldout"):
        stream = np.load(os.path.join(args.work, f"{name}.npy"))
        res["mlm"][name] = mlm_eval(model, stream, mask_id, args.tokens, args.seed, freq_logp)
        print(name, json.dumps(res["mlm"][name]), f"{time.time() - t0:.0f}s", flush=True)
    res["fill_mask"] = fill_mask(model, sp, mask_id)
    for f in res["fill_mask"]:
        print(json.dumps(f, ensure_ascii=False))
    streams = [np.load(os.path.join(args.work, f"{n}.npy")) for n in ("g_heldout", "t_heldout")]
    res["attention"] = attention_structure(model, streams, punct_ids(sp), args.attn_windows)
    for r in res["attention"]["rows"]:
        print(r["layer"], r["head"], r["label"], r["c2p_peak_delta_mode"], r["special_share"], r["prev_share"])
    res["seconds"] = round(time.time() - t0, 1)
    with open(args.out, "w") as f:
        json.dump(res, f, indent=1, ensure_ascii=False)


if __name__ == "__main__":
    main()
