"""Train the bundled model's Enhanced Mask Decoder: only the absolute position table P, everything else frozen.

The EMD (emd.py, as microsoft/DeBERTa's MaskedLanguageModel runs it) reuses the last encoder layer and the MLM head,
so freezing every existing weight keeps the plain path (the head on the last hidden state, `--no-emd`) exactly as it
was: every number pinned for it stays. What is new and trained is P, the [max_position_embeddings, hidden] table the
EMD adds to its query, through microsoft's EMD loss: cross-entropy of the head on the second pass at the masked
positions. P starts at zero (then the first pass is the plain last layer).

Batches: random windows of the training streams as in train.py (80% books, 20% technical prose, 15% of the content
positions chosen, 80/10/10 [MASK]/random/kept); with probability --long-frac a step uses --long-batch windows of the
full table length (512) instead of --batch windows of 128, so every row of P is trained (the encoder itself was trained
on 128). Schedule by step (reproducible whatever the machine's load): --warmup steps to --lr, linear decay to 0 at
--steps. Adam on P only, no weight decay, gradient clipping 1.0, bf16 autocast (P and the frozen weights in float32).

    OMP_NUM_THREADS=2 OPENBLAS_CORETYPE=SkylakeX nice -n 19 /usr/bin/python3 train_emd.py --steps 3000
    #   -> work/emd/ckpt.pt, work/emd/train_log.tsv; resumable with --resume; then export_emd.py
"""
import argparse
import datetime as dt
import json
import os
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from emd import POSITION_TABLE, add_position_table, emd_rows, from_microsoft_keys, hidden_before_last  # noqa: E402
from emd import _layer_rows  # noqa: E402
from model import DebertaV2ForMaskedLM  # noqa: E402
from safetensors_io import read_safetensors  # noqa: E402

CLS, SEP = 1, 2


def load_frozen(folder):
    """The exported model (either head layout; a position table already there is ignored: P is trained anew)."""
    cfg = json.load(open(os.path.join(folder, "config.json")))
    sd = from_microsoft_keys({k: v.float() for k, v in read_safetensors(os.path.join(folder, "model.safetensors")).items()})
    sd.pop(POSITION_TABLE, None)
    model = DebertaV2ForMaskedLM(cfg)
    model.load_state_dict(sd, strict=True)
    for p in model.parameters():
        p.requires_grad_(False)
    return model.eval(), cfg


class Batcher:
    def __init__(self, work, mask_id, tech_frac, seed):
        self.g = np.load(os.path.join(work, "g_train.npy"))
        self.t = np.load(os.path.join(work, "t_train.npy"))
        self.mask_id = mask_id
        self.tech_frac = tech_frac
        self.gen = torch.Generator().manual_seed(seed)

    def batch(self, bs, seq):
        n = seq - 2
        src = torch.rand(bs, generator=self.gen) < self.tech_frac
        u = torch.rand(bs, generator=self.gen)
        ids = np.empty((bs, seq), dtype=np.int64)
        ids[:, 0], ids[:, -1] = CLS, SEP
        for b in range(bs):
            arr = self.t if src[b] else self.g
            start = int(u[b] * (arr.size - n))
            ids[b, 1:-1] = arr[start:start + n]
        ids = torch.from_numpy(ids)
        m = round(0.15 * n)
        pos = (torch.rand(bs, n, generator=self.gen).topk(m, dim=1).indices + 1).sort(dim=1).values  # [bs, m]
        labels = torch.gather(ids, 1, pos)
        r = torch.rand(bs, m, generator=self.gen)
        rand_tok = torch.randint(4, self.mask_id, (bs, m), generator=self.gen)
        new = torch.where(r < 0.8, torch.full_like(labels, self.mask_id), torch.where(r < 0.9, rand_tok, labels))
        inp = ids.clone()
        inp.scatter_(1, pos, new)
        return inp, pos, labels


def lr_at(step, args):
    return args.lr * min(1.0, (step + 1) / args.warmup) * max(0.0, 1.0 - step / args.steps)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default=os.path.join(HERE, "..", "..", "models", "default"))
    ap.add_argument("--work", default=os.path.join(HERE, "work"))
    ap.add_argument("--run-dir", default=None, help="default: WORK/emd")
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--lr", type=float, default=5e-3)
    ap.add_argument("--warmup", type=int, default=30)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--long-batch", type=int, default=2)
    ap.add_argument("--long-frac", type=float, default=0.1)
    ap.add_argument("--tech-frac", type=float, default=0.2)
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--bf16", type=int, default=0, help="1 = bf16 autocast (fast only on AVX-512 CPUs)")
    ap.add_argument("--log-every", type=int, default=20)
    ap.add_argument("--ckpt-minutes", type=float, default=3)
    ap.add_argument("--resume", action="store_true")
    args = ap.parse_args()

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    run = args.run_dir or os.path.join(args.work, "emd")
    os.makedirs(run, exist_ok=True)
    stats = json.load(open(os.path.join(args.work, "data_stats.json")))
    model, cfg = load_frozen(args.model)
    rows = cfg["max_position_embeddings"]
    table = add_position_table(model, rows)
    opt = torch.optim.Adam([table.weight], lr=args.lr, betas=(0.9, 0.98), eps=1e-6)
    batcher = Batcher(args.work, stats["mask_id"], args.tech_frac, args.seed)
    ckpt_path, log_path = os.path.join(run, "ckpt.pt"), os.path.join(run, "train_log.tsv")
    st = {"step": 0, "tokens": 0, "train_seconds": 0.0, "start_utc": dt.datetime.utcnow().isoformat()}
    if args.resume and os.path.exists(ckpt_path):
        ck = torch.load(ckpt_path)
        table.weight.data.copy_(ck["position_table"])
        opt.load_state_dict(ck["opt"])
        batcher.gen.set_state(ck["batch_rng"])
        st = ck["state"]
        print(f"resumed at step {st['step']}", flush=True)
    else:
        with open(log_path, "w") as f:
            f.write("step\ttokens\tloss_emd\tacc_emd\tloss_plain\tacc_plain\tlr\ttokens_per_s\ttrain_seconds\tutc\n")
    print(f"trainable {table.weight.numel():,} (position table {rows} x {table.weight.shape[1]}); args {vars(args)}",
          flush=True)

    def save():
        tmp = ckpt_path + ".tmp"
        torch.save({"position_table": table.weight.detach().clone(), "opt": opt.state_dict(),
                    "batch_rng": batcher.gen.get_state(), "state": st, "args": vars(args), "config": cfg}, tmp)
        os.replace(tmp, ckpt_path)
        with open(os.path.join(run, "train_state.json"), "w") as f:
            json.dump({"state": st, "args": vars(args), "saved_utc": dt.datetime.utcnow().isoformat()}, f, indent=1)

    last = model.deberta.encoder.layer[-1]
    win = {"t": time.time(), "tok": 0, "le": 0.0, "ae": 0.0, "lp": 0.0, "ap": 0.0, "n": 0}
    seg_start, seg0, last_ckpt = time.time(), st["train_seconds"], time.time()
    while st["step"] < args.steps:
        lr = lr_at(st["step"], args)
        for g in opt.param_groups:
            g["lr"] = lr
        # Every step draws its length first, so the batch stream is the same on every run with this seed.
        long = bool(torch.rand(1, generator=batcher.gen) < args.long_frac)
        bs, seq = (args.long_batch, rows) if long else (args.batch, 128)
        ids, pos, labels = batcher.batch(bs, seq)
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bool(args.bf16)):
            with torch.no_grad():
                H, rel, idx = hidden_before_last(model, ids)
                Hq = torch.gather(H, 1, pos.unsqueeze(-1).expand(-1, -1, H.shape[-1]))
                plain = model.mlm_logits(_layer_rows(last, Hq, pos, H, rel, idx)).float()
            q = Hq + table(pos)
            first = _layer_rows(last, q, pos, H, rel, idx)
            logits = model.mlm_logits(_layer_rows(last, first, pos, H, rel, idx)).float()
        flat = labels.reshape(-1)
        logits = logits.reshape(-1, logits.shape[-1])
        loss = F.cross_entropy(logits, flat)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_([table.weight], 1.0)
        opt.step()
        st["step"] += 1
        st["tokens"] += bs * seq
        win["tok"] += bs * seq
        win["le"] += loss.item()
        win["ae"] += (logits.argmax(-1) == flat).float().mean().item()
        plain = plain.reshape(-1, plain.shape[-1])
        win["lp"] += F.cross_entropy(plain, flat).item()
        win["ap"] += (plain.argmax(-1) == flat).float().mean().item()
        win["n"] += 1
        st["train_seconds"] = seg0 + time.time() - seg_start
        if st["step"] % args.log_every == 0:
            t, n = time.time(), win["n"]
            with open(log_path, "a") as f:
                f.write(f"{st['step']}\t{st['tokens']}\t{win['le'] / n:.4f}\t{win['ae'] / n:.4f}\t{win['lp'] / n:.4f}\t"
                        f"{win['ap'] / n:.4f}\t{lr:.3e}\t{win['tok'] / (t - win['t']):.0f}\t{st['train_seconds']:.0f}\t"
                        f"{dt.datetime.utcnow().strftime('%H:%M:%S')}\n")
            win = {"t": t, "tok": 0, "le": 0.0, "ae": 0.0, "lp": 0.0, "ap": 0.0, "n": 0}
        if time.time() - last_ckpt >= args.ckpt_minutes * 60:
            save()
            last_ckpt = time.time()
    save()
    print(f"done: step {st['step']} tokens {st['tokens']} train_seconds {st['train_seconds']:.0f}", flush=True)


if __name__ == "__main__":
    main()
