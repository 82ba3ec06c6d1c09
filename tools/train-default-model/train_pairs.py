"""Fine-tune the default model and its BERT twin on the sentence-pair task (prepare_pairs.py), in lockstep.

One process, both models: every step draws one batch and updates the DeBERTa classifier and the BERT classifier on
it, so the two get exactly the same data, order, schedule and step count whatever the machine's load (and stop at
the same step if the deadline comes first). Each starts from its MLM checkpoint (models/default, models/bert-twin)
with a new pooler + classifier (classifier.py; the same seed, so the same initial head weights).

Inputs: [CLS] A [SEP] B [SEP], padded per batch to its longest pair (attention mask); token types 0 for
[CLS] A [SEP] and 1 for B [SEP] (used by BERT; DeBERTa-v3 here has no token-type embedding). Batches: the pairs in a
seeded random order, cut into chunks of 50 batches, each chunk sorted by length and cut into batches, batch order
shuffled again (less padding). Loss: cross-entropy over the two labels.

Optimiser: AdamW (β 0.9/0.999, ε 1e-6, weight decay 0.01 except biases and LayerNorm), peak --lr after a linear
warmup over --warmup-frac of the steps, then linear decay to 0 at --steps; gradient clip 1.0; no dropout; bf16
autocast on CPU (weights, optimiser state, LayerNorm and the loss in float32). Checkpoint (both models, both
optimisers, step) every --ckpt-minutes to RUN/ckpt.pt; --resume continues from it. Log: RUN/train_log.tsv.
"""
import argparse
import datetime as dt
import json
import os
import random
import sys
import time

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import classifier as C  # noqa: E402
from safetensors_io import read_safetensors  # noqa: E402

CLS, SEP, PAD = 1, 2, 0
ARCHS = {"deberta": os.path.join(HERE, "..", "..", "models", "default"),
         "bert": os.path.join(HERE, "..", "..", "models", "bert-twin")}


def encode_pair(a, b):
    ids = [CLS] + list(a) + [SEP] + list(b) + [SEP]
    types = [0] * (len(a) + 2) + [1] * (len(b) + 1)
    return ids, types


def collate(pairs):
    """pairs: [(a_ids, b_ids)] → ids, mask, token types [B, L] (right padding with [PAD] = 0)."""
    enc = [encode_pair(a, b) for a, b in pairs]
    L = max(len(i) for i, _ in enc)
    ids = torch.zeros(len(enc), L, dtype=torch.long)
    types = torch.zeros(len(enc), L, dtype=torch.long)
    mask = torch.zeros(len(enc), L, dtype=torch.long)
    for r, (i, t) in enumerate(enc):
        ids[r, : len(i)] = torch.tensor(i)
        types[r, : len(t)] = torch.tensor(t)
        mask[r, : len(i)] = 1
    return ids, mask, types


def batch_order(n_pairs, lengths, batch, steps, seed):
    """Index lists for `steps` batches: epochs of a seeded permutation, length-bucketed within chunks."""
    rng = random.Random(seed)
    out = []
    while len(out) < steps:
        perm = list(range(n_pairs))
        rng.shuffle(perm)
        chunk = 50 * batch
        epoch = []
        for s in range(0, len(perm) - batch + 1, chunk):
            part = sorted(perm[s : s + chunk], key=lambda k: lengths[k])
            epoch += [part[j : j + batch] for j in range(0, len(part) - batch + 1, batch)]
        rng.shuffle(epoch)
        out += epoch
    return out[:steps]


def lr_at(step, steps, peak, warmup, replan=None, restart=None):
    """Linear warmup, then linear decay to 0 at `steps`; with replan (S, N): from step S on, linear decay from the
    learning rate at S to 0 at step N instead (a shortened run, continuous at S); with restart (S, N, P, W): a second
    phase from step S, W warmup steps to peak P, linear decay to 0 at step N (weights and optimiser kept); a list of
    them for several such phases, one after another."""
    for s0, n, p, w in reversed(restart or []):
        if step >= s0:
            return p * min(1.0, (step - s0 + 1) / w) * max(0.0, (n - step) / (n - s0))
    if replan and step >= replan[0]:
        return lr_at(replan[0], steps, peak, warmup) * max(0.0, (replan[1] - step) / (replan[1] - replan[0]))
    if step < warmup:
        return peak * (step + 1) / warmup
    return peak * max(0.0, (steps - step) / max(1, steps - warmup))


def load_start(arch, seed):
    folder = ARCHS[arch]
    cfg = json.load(open(os.path.join(folder, "config.json")))
    sd = read_safetensors(os.path.join(folder, "model.safetensors"))
    return C.from_mlm_state(cfg, sd, seed)


def make_opt(model, lr, wd):
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    return torch.optim.AdamW([{"params": decay, "weight_decay": wd}, {"params": no_decay, "weight_decay": 0.0}],
                             lr=lr, betas=(0.9, 0.999), eps=1e-6)


def save(path, obj):
    tmp = path + ".tmp"
    torch.save(obj, tmp)
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", default=os.path.join(HERE, "work", "pairs", "train.pt"))
    ap.add_argument("--run-dir", default=os.path.join(HERE, "work", "pairs_run"))
    ap.add_argument("--archs", default="deberta,bert")
    ap.add_argument("--steps", type=int, required=True)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--lr", type=float, default=2e-4)
    ap.add_argument("--warmup-frac", type=float, default=0.06)
    ap.add_argument("--wd", type=float, default=0.01)
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--bf16", type=int, default=1)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--deadline", default=None, help="UTC ISO time: stop (and checkpoint) there even if not done")
    ap.add_argument("--ckpt-minutes", type=float, default=5)
    ap.add_argument("--log-every", type=int, default=20)
    ap.add_argument("--resume", action="store_true")
    ap.add_argument("--restart", default=None, help="S:N:PEAK:WARMUP[,S2:N2:PEAK2:WARMUP2...] — further phases, each "
                                                    "from step S (after the previous one has decayed to 0): WARMUP "
                                                    "steps to PEAK, linear decay to 0 at N")
    ap.add_argument("--replan", default=None, help="S:N — from step S on, decay linearly to 0 at step N instead of "
                                                   "--steps (--steps stays the planned run: warmup, data order)")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    os.makedirs(args.run_dir, exist_ok=True)
    archs = args.archs.split(",")
    data = torch.load(args.pairs)
    lengths = [len(a) + len(b) + 3 for a, b in zip(data["a"], data["b"])]
    warmup = max(1, round(args.warmup_frac * args.steps))
    replan = tuple(int(v) for v in args.replan.split(":")) if args.replan else None
    restart = []
    for part in (args.restart.split(",") if args.restart else []):
        r = part.split(":")
        restart.append((int(r[0]), int(r[1]), float(r[2]), int(r[3])))
    final_steps = restart[-1][1] if restart else replan[1] if replan else args.steps
    if final_steps > args.steps and len(data["a"]) < final_steps * args.batch:
        raise SystemExit("not enough pairs for the steps")
    order = batch_order(len(lengths), lengths, args.batch, max(args.steps, final_steps), args.seed)
    deadline = (dt.datetime.fromisoformat(args.deadline.replace("Z", "+00:00")).timestamp() if args.deadline else None)

    models, opts, cfgs = {}, {}, {}
    for a in archs:
        models[a], cfgs[a] = load_start(a, args.seed)
        opts[a] = make_opt(models[a], args.lr, args.wd)
    ckpt_path = os.path.join(args.run_dir, "ckpt.pt")
    log_path = os.path.join(args.run_dir, "train_log.tsv")
    st = {"step": 0, "train_seconds": 0.0, "start_utc": dt.datetime.utcnow().isoformat(), "seconds_per_arch": {}}
    if args.resume and os.path.exists(ckpt_path):
        ck = torch.load(ckpt_path)
        for a in archs:
            models[a].load_state_dict(ck["models"][a])
            opts[a].load_state_dict(ck["opts"][a])
        st = ck["state"]
        print(f"resumed at step {st['step']}", flush=True)
    else:
        with open(log_path, "w") as f:
            f.write("step\tarch\tloss\tacc\tlr\tseconds_per_step\ttrain_seconds\tutc\n")
    for a in archs:
        json.dump(cfgs[a], open(os.path.join(args.run_dir, f"config_{a}.json"), "w"), indent=1)
    print(f"archs {archs} steps {args.steps} warmup {warmup} pairs {len(lengths)} args {vars(args)}", flush=True)

    def checkpoint():
        save(ckpt_path, {"models": {a: models[a].state_dict() for a in archs},
                         "opts": {a: opts[a].state_dict() for a in archs}, "configs": cfgs, "state": st,
                         "args": vars(args)})
        with open(os.path.join(args.run_dir, "train_state.json"), "w") as f:
            json.dump({"state": st, "args": vars(args), "saved_utc": dt.datetime.utcnow().isoformat()}, f, indent=1)

    for m in models.values():
        m.train()
    win = {a: {"loss": 0.0, "acc": 0.0, "sec": 0.0, "n": 0} for a in archs}
    last_ckpt, seg_start, seg_train0 = time.time(), time.time(), st["train_seconds"]
    labels_all = torch.tensor(data["label"])
    if replan:
        st["replan"] = {"from_step": replan[0], "to_steps": replan[1], "planned_steps": args.steps,
                        "utc": st.get("replan", {}).get("utc", dt.datetime.utcnow().isoformat())}
    if restart:
        known = {r["from_step"]: r for r in st.get("restarts", [])}
        st["restarts"] = [{"from_step": r[0], "to_steps": r[1], "lr": r[2], "warmup": r[3],
                           "utc": known.get(r[0], {}).get("utc", dt.datetime.utcnow().isoformat())} for r in restart]
        st.pop("restart", None)
    while st["step"] < final_steps:
        if deadline and time.time() >= deadline:
            print("deadline reached", flush=True)
            break
        idx = order[st["step"]]
        ids, mask, types = collate([(data["a"][k], data["b"][k]) for k in idx])
        y = labels_all[idx]
        lr = lr_at(st["step"], args.steps, args.lr, warmup, replan, restart)
        for a in archs:
            t = time.time()
            for g in opts[a].param_groups:
                g["lr"] = lr
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bool(args.bf16)):
                logits = models[a](ids, mask, types)
            loss = F.cross_entropy(logits.float(), y)
            opts[a].zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(models[a].parameters(), 1.0)
            opts[a].step()
            w = win[a]
            w["loss"] += loss.item()
            w["acc"] += (logits.argmax(-1) == y).float().mean().item()
            w["sec"] += time.time() - t
            w["n"] += 1
            st["seconds_per_arch"][a] = st["seconds_per_arch"].get(a, 0.0) + time.time() - t
        st["step"] += 1
        st["train_seconds"] = seg_train0 + time.time() - seg_start
        if st["step"] % args.log_every == 0:
            with open(log_path, "a") as f:
                for a in archs:
                    w = win[a]
                    f.write(f"{st['step']}\t{a}\t{w['loss'] / w['n']:.4f}\t{w['acc'] / w['n']:.4f}\t{lr:.3e}\t"
                            f"{w['sec'] / w['n']:.3f}\t{st['train_seconds']:.0f}\t"
                            f"{dt.datetime.utcnow().strftime('%H:%M:%S')}\n")
                    win[a] = {"loss": 0.0, "acc": 0.0, "sec": 0.0, "n": 0}
        if time.time() - last_ckpt >= args.ckpt_minutes * 60:
            checkpoint()
            last_ckpt = time.time()
            print(f"checkpoint step {st['step']}", flush=True)
    st["end_utc"] = dt.datetime.utcnow().isoformat()
    checkpoint()
    print(f"done: step {st['step']} train_seconds {st['train_seconds']:.0f}", flush=True)


if __name__ == "__main__":
    main()
