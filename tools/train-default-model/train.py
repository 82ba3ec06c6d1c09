"""MLM pre-training of the default DeBERTa-v3 model (or, with --arch bert, its BERT twin), CPU, resumable.

Batches are random 126-token windows of the encoded corpus wrapped as [CLS] x [SEP] (length 128); each
window comes from the technical stream with probability --tech-frac, else from the books. Masking: 15% of
the 126 content positions (a fixed count, 19), of which 80% → [MASK], 10% → random piece, 10% kept.

Learning rate: linear warmup (--warmup steps), then linear decay to 0 at the deadline, by wall-clock fraction
elapsed/(deadline − start). With --phases the schedule is by step instead, so a second model can follow the
first one's recorded schedule exactly whatever the machine's load: "0:6e-4:150,8320:4e-4:200,..." starts a phase
at each step with that peak lr and warmup, and every phase decays linearly to 0 at the next phase's first step
(the last one at --max-steps); weights and optimizer carry across phases as in a --new-phase resume. The step rate over the first --measure-seconds and the total steps it predicts
are logged (stdout) for the record, but not used: under nice 19 the rate depends on other people's load.
Checkpoints (model + optimizer + RNG + schedule) every --ckpt-minutes to work/ckpt.pt (atomic rename);
--resume continues from there. The log (TSV) has step, tokens, loss, lr, tokens/s, elapsed, UTC time.
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
from model import DebertaV2ForMaskedLM, count_params  # noqa: E402
from model_bert import BertForMaskedLM  # noqa: E402

SEQ = 128
CLS, SEP = 1, 2


def default_config(pieces):
    return {
        "model_type": "deberta-v2", "architectures": ["DebertaV2ForMaskedLM"],
        "vocab_size": pieces + 1, "hidden_size": 256, "num_hidden_layers": 4, "num_attention_heads": 8,
        "intermediate_size": 1024, "hidden_act": "gelu", "hidden_dropout_prob": 0.0,
        "attention_probs_dropout_prob": 0.0, "max_position_embeddings": 512, "type_vocab_size": 0,
        "initializer_range": 0.02, "layer_norm_eps": 1e-7, "relative_attention": True,
        "max_relative_positions": 512, "position_buckets": 64, "norm_rel_ebd": "layer_norm",
        "share_att_key": True, "pos_att_type": "p2c|c2p", "position_biased_input": False,
        "pad_token_id": 0, "torch_dtype": "float32",
    }


def bert_config(pieces):
    """The BERT twin: the default model's size, tokenizer ids and LayerNorm eps, absolute positions. Positions
    stop at the training length (128): rows never trained would give silently meaningless attention beyond it,
    so the engine refuses longer input with a message instead."""
    return {
        "model_type": "bert", "architectures": ["BertForMaskedLM"],
        "vocab_size": pieces + 1, "hidden_size": 256, "num_hidden_layers": 4, "num_attention_heads": 8,
        "intermediate_size": 1024, "hidden_act": "gelu", "hidden_dropout_prob": 0.0,
        "attention_probs_dropout_prob": 0.0, "max_position_embeddings": SEQ, "type_vocab_size": 2,
        "initializer_range": 0.02, "layer_norm_eps": 1e-7, "position_embedding_type": "absolute",
        "pad_token_id": 0, "torch_dtype": "float32",
    }


def parse_phases(spec):
    out = []
    for part in spec.split(","):
        step, lr, warmup = part.split(":")
        out.append({"from_step": int(step), "lr": float(lr), "warmup": int(warmup)})
    if out[0]["from_step"] != 0 or any(b["from_step"] <= a["from_step"] for a, b in zip(out, out[1:])):
        raise SystemExit("--phases: steps must start at 0 and increase")
    return out


def step_lr(phases, max_steps, step):
    """Peak lr × warmup ramp × linear decay to 0 at the phase's end, for a by-step schedule."""
    k = max(i for i, p in enumerate(phases) if p["from_step"] <= step)
    p = phases[k]
    end = phases[k + 1]["from_step"] if k + 1 < len(phases) else max_steps
    frac = (step - p["from_step"]) / (end - p["from_step"])
    return p["lr"] * min(1.0, (step - p["from_step"] + 1) / p["warmup"]) * max(0.0, 1.0 - frac)


def parse_deadline(s):
    d = dt.datetime.fromisoformat(s.replace("Z", "+00:00"))
    if d.tzinfo is None:
        d = d.replace(tzinfo=dt.timezone.utc)
    return d.timestamp()


class Batcher:
    """Seeded random windows + MLM masking; its generator state goes into the checkpoint."""

    def __init__(self, work, mask_id, tech_frac, seed):
        self.g = np.load(os.path.join(work, "g_train.npy"))
        self.t = np.load(os.path.join(work, "t_train.npy"))
        self.mask_id = mask_id
        self.tech_frac = tech_frac
        self.gen = torch.Generator().manual_seed(seed)
        self.n_mask = round(0.15 * (SEQ - 2))

    def windows(self, bs):
        n = SEQ - 2
        src = torch.rand(bs, generator=self.gen) < self.tech_frac
        u = torch.rand(bs, generator=self.gen)
        out = np.empty((bs, SEQ), dtype=np.int64)
        out[:, 0], out[:, -1] = CLS, SEP
        for b in range(bs):
            arr = self.t if src[b] else self.g
            start = int(u[b] * (arr.size - n))
            out[b, 1:-1] = arr[start:start + n]
        return torch.from_numpy(out)

    def batch(self, bs):
        ids = self.windows(bs)
        # Choose exactly n_mask content positions per row (columns 1..SEQ-2).
        keys = torch.rand(bs, SEQ - 2, generator=self.gen)
        cols = keys.topk(self.n_mask, dim=1).indices + 1
        rows = torch.arange(bs).unsqueeze(1).expand_as(cols)
        flat = (rows * SEQ + cols).reshape(-1)
        labels = ids.reshape(-1)[flat].clone()
        r = torch.rand(flat.numel(), generator=self.gen)
        rand_tok = torch.randint(4, self.mask_id, (flat.numel(),), generator=self.gen)
        new = torch.where(r < 0.8, torch.full_like(labels, self.mask_id), torch.where(r < 0.9, rand_tok, labels))
        inp = ids.reshape(-1).clone()
        inp[flat] = new
        return inp.view(bs, SEQ), flat, labels


def save_ckpt(path, state):
    tmp = path + ".tmp"
    torch.save(state, tmp)
    os.replace(tmp, path)
    # A small JSON twin for the model card (no need to unpickle the checkpoint).
    with open(os.path.join(os.path.dirname(path), "train_state.json"), "w") as f:
        json.dump({"state": state["state"], "args": state["args"], "saved_utc": dt.datetime.utcnow().isoformat()}, f,
                  indent=1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", default=os.path.join(HERE, "work"))
    ap.add_argument("--run-dir", default=None, help="checkpoint, log and config go here (default: --work)")
    ap.add_argument("--arch", default="deberta", choices=["deberta", "bert"])
    ap.add_argument("--phases", default=None, help="by-step schedule, e.g. 0:6e-4:150,8320:4e-4:200 (needs "
                                                   "--max-steps); the deadline then only stops the process")
    ap.add_argument("--deadline", required=True, help="UTC ISO time, e.g. 2026-11-30T09:00:00Z")
    ap.add_argument("--resume", action="store_true")
    ap.add_argument("--new-phase", action="store_true",
                    help="with --resume: keep weights, optimizer and counters, but start a fresh warmup + decay "
                         "schedule that ends at the new deadline (continued training after a finished run)")
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--lr", type=float, default=6e-4)
    ap.add_argument("--warmup", type=int, default=150)
    ap.add_argument("--wd", type=float, default=0.01)
    ap.add_argument("--tech-frac", type=float, default=0.2)
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--bf16", type=int, default=1, help="1 = torch.autocast(cpu, bfloat16)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--measure-seconds", type=float, default=60)
    ap.add_argument("--ckpt-minutes", type=float, default=5)
    ap.add_argument("--log-every", type=int, default=20)
    ap.add_argument("--max-steps", type=int, default=0, help="stop after this many steps (0 = deadline only)")
    args = ap.parse_args()

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    deadline = parse_deadline(args.deadline)
    phases = parse_phases(args.phases) if args.phases else None
    if phases and not args.max_steps:
        raise SystemExit("--phases needs --max-steps (where the last phase's decay ends)")
    run_dir = args.run_dir or args.work
    os.makedirs(run_dir, exist_ok=True)
    stats = json.load(open(os.path.join(args.work, "data_stats.json")))
    if args.arch == "bert":
        cfg = bert_config(stats["pieces"])
        model = BertForMaskedLM(cfg)
    else:
        cfg = default_config(stats["pieces"])
        model = DebertaV2ForMaskedLM(cfg)
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": args.wd}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=args.lr, betas=(0.9, 0.98), eps=1e-6)
    batcher = Batcher(args.work, stats["mask_id"], args.tech_frac, args.seed)
    ckpt_path = os.path.join(run_dir, "ckpt.pt")
    log_path = os.path.join(run_dir, "train_log.tsv")
    st = {"step": 0, "tokens": 0, "train_seconds": 0.0, "total_steps": None, "budget_seconds": None}
    if args.resume and os.path.exists(ckpt_path):
        ck = torch.load(ckpt_path)
        model.load_state_dict(ck["model"])
        opt.load_state_dict(ck["opt"])
        batcher.gen.set_state(ck["batch_rng"])
        torch.set_rng_state(ck["torch_rng"])
        st = ck["state"]
        cfg = ck["config"]
        print(f"resumed at step {st['step']}", flush=True)
    elif not os.path.exists(log_path) or not args.resume:
        with open(log_path, "w") as f:
            f.write("step\ttokens\tloss\tmlm_acc\tlr\ttokens_per_s\ttrain_seconds\tutc\n")
    json.dump(cfg, open(os.path.join(run_dir, "config.json"), "w"), indent=1)
    if phases:
        st["phases"] = [{**p, "to_step": (phases[i + 1]["from_step"] if i + 1 < len(phases) else args.max_steps)}
                        for i, p in enumerate(phases)]
        st["start_wall"], st["phase_step0"] = st.get("start_wall", time.time()), 0
        st.setdefault("start_utc", dt.datetime.utcnow().isoformat())
    elif st["budget_seconds"] is None or args.new_phase:
        st["start_wall"] = time.time()
        st["phase_step0"] = st["step"]
        st.setdefault("phases", []).append({"from_step": st["step"], "from_tokens": st["tokens"],
                                            "start_utc": dt.datetime.utcnow().isoformat(), "deadline": args.deadline,
                                            "lr": args.lr, "warmup": args.warmup})
        print(f"schedule phase {len(st['phases'])} from step {st['step']}", flush=True)
    elif st.get("phases"):
        # A plain --resume may move the deadline: the current phase now ends there.
        st["phases"][-1]["deadline"] = args.deadline
    # The time fraction runs from the first start to the (current) deadline, so a resume after a crash
    # still finishes the decay at the deadline.
    st["budget_seconds"] = deadline - st["start_wall"]
    print(f"params {count_params(model):,}  budget {st['budget_seconds']:.0f}s  args {vars(args)}", flush=True)

    model.train()
    last_ckpt = time.time()
    win_t, win_tok, win_loss, win_acc, win_n = time.time(), 0, 0.0, 0.0, 0
    seg_start, seg_train0 = time.time(), st["train_seconds"]
    while True:
        now = time.time()
        st["train_seconds"] = seg_train0 + (now - seg_start)
        if now >= deadline or (args.max_steps and st["step"] >= args.max_steps):
            break
        if st["total_steps"] is None and st["train_seconds"] >= args.measure_seconds and st["step"] > 0:
            rate = st["step"] / st["train_seconds"]
            st["total_steps"] = int(rate * (deadline - st["start_wall"]))
            print(f"measured {rate:.3f} steps/s = {rate * args.batch * SEQ:.0f} tokens/s -> total_steps "
                  f"{st['total_steps']}", flush=True)
        # Decay by wall-clock fraction only: under `nice 19` on shared CPUs the step rate swings several-fold,
        # so a step count fixed from the first minute would end the schedule far too early or too late.
        if phases:
            lr = step_lr(phases, args.max_steps, st["step"])
        else:
            frac = (now - st["start_wall"]) / st["budget_seconds"]
            lr = args.lr * min(1.0, (st["step"] - st.get("phase_step0", 0) + 1) / args.warmup) * max(0.0, 1.0 - frac)
        for gparam in opt.param_groups:
            gparam["lr"] = lr
        ids, pos, labels = batcher.batch(args.batch)
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bool(args.bf16)):
            logits = model(ids, positions=pos)
        loss = F.cross_entropy(logits.float(), labels)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        st["step"] += 1
        st["tokens"] += args.batch * SEQ
        win_tok += args.batch * SEQ
        win_loss += loss.item()
        win_acc += (logits.argmax(-1) == labels).float().mean().item()
        win_n += 1
        if st["step"] % args.log_every == 0:
            t = time.time()
            with open(log_path, "a") as f:
                f.write(f"{st['step']}\t{st['tokens']}\t{win_loss / win_n:.4f}\t{win_acc / win_n:.4f}\t{lr:.3e}\t"
                        f"{win_tok / (t - win_t):.0f}\t{st['train_seconds']:.0f}\t"
                        f"{dt.datetime.utcnow().strftime('%H:%M:%S')}\n")
            win_t, win_tok, win_loss, win_acc, win_n = t, 0, 0.0, 0.0, 0
        if time.time() - last_ckpt >= args.ckpt_minutes * 60:
            save_ckpt(ckpt_path, {"model": model.state_dict(), "opt": opt.state_dict(), "batch_rng": batcher.gen.get_state(),
                                  "torch_rng": torch.get_rng_state(), "state": st, "config": cfg, "args": vars(args)})
            last_ckpt = time.time()
            print(f"checkpoint step {st['step']} tokens {st['tokens']}", flush=True)
    save_ckpt(ckpt_path, {"model": model.state_dict(), "opt": opt.state_dict(), "batch_rng": batcher.gen.get_state(),
                          "torch_rng": torch.get_rng_state(), "state": st, "config": cfg, "args": vars(args)})
    print(f"done: step {st['step']} tokens {st['tokens']} train_seconds {st['train_seconds']:.0f}", flush=True)


if __name__ == "__main__":
    main()
