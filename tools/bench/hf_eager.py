#!/usr/bin/python3
"""Hugging Face's eager DebertaV2 forward, re-created op for op in torch (transformers cannot be installed on these
machines), for the side-by-side benchmark. It follows modeling_deberta_v2.py (v4.47+/v5): the whole relative
table (2·buckets rows) is LayerNorm'd and projected through query_proj and key_proj in every layer, c2p/p2c
are gathered from [B·H, L, 2S] products, scores are masked_fill + softmax, output_attentions keeps every
layer's probabilities. `--terms` also keeps c2c, c2p and p2c per layer, as a user hooking HF would.
Build-time tool only: needs Debian's python3-torch under /usr/bin/python3.

usage: hf_eager.py --model DIR --lengths 32,128,512 --runs 5 [--threads 2]
prints one JSON object. `hf_eager.py --check test/data/fixtures/deberta/v3_tiny` first proves the re-creation
matches Hugging Face's own outputs for a fixture (max |diff| of probs, c2p and the last hidden state).
"""
import argparse, json, math, os, struct, time

import torch


def read_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        a, b = meta["data_offsets"]
        assert meta["dtype"] == "F32"
        out[name.removeprefix("deberta.")] = torch.frombuffer(bytearray(data[a:b]), dtype=torch.float32).reshape(meta["shape"])
    return out


def make_log_bucket_position(rel, bucket_size, max_position):
    sign = torch.sign(rel)
    mid = bucket_size // 2
    abs_pos = torch.where((rel < mid) & (rel > -mid), torch.tensor(mid - 1).type_as(rel), torch.abs(rel))
    log_pos = torch.ceil(torch.log(abs_pos / mid) / torch.log(torch.tensor((max_position - 1) / mid)) * (mid - 1)) + mid
    return torch.where(abs_pos <= mid, rel.type_as(log_pos), log_pos * sign)


def build_relative_position(L, bucket_size, max_position):
    q = torch.arange(0, L)
    rel = q[:, None] - q[None, :]
    rel = make_log_bucket_position(rel, bucket_size, max_position).to(torch.long)
    return rel[:L, :].unsqueeze(0)


class HFEager:
    def __init__(self, cfg, w):
        self.cfg, self.w = cfg, w
        self.H = cfg["num_attention_heads"]
        self.D = cfg["hidden_size"]
        self.d = self.D // self.H
        self.eps = cfg.get("layer_norm_eps", 1e-7)
        self.span = cfg["position_buckets"]
        self.maxrel = cfg.get("max_relative_positions", -1)
        if self.maxrel < 1:
            self.maxrel = cfg.get("max_position_embeddings", 512)

    def lin(self, x, p):
        return torch.nn.functional.linear(x, self.w[p + ".weight"], self.w.get(p + ".bias"))

    def ln(self, x, p):
        return torch.nn.functional.layer_norm(x, (self.D,), self.w[p + ".weight"], self.w[p + ".bias"], self.eps)

    def heads(self, x):  # [B, L, A] -> [B*H, L, d]
        B, L, _ = x.shape
        return x.view(B, L, self.H, self.d).permute(0, 2, 1, 3).contiguous().view(-1, L, self.d)

    def forward(self, ids, keep_terms=False):
        B, L = ids.shape
        mask = torch.ones(B, L)
        h = self.ln(self.w["embeddings.word_embeddings.weight"][ids], "embeddings.LayerNorm") * mask.unsqueeze(-1)
        rel_pos = build_relative_position(L, self.span, self.maxrel)
        rel_emb = self.ln(self.w["encoder.rel_embeddings.weight"], "encoder.LayerNorm")
        att_mask = (mask.unsqueeze(1).unsqueeze(2) * mask.unsqueeze(1).unsqueeze(-1)).bool()
        attentions, terms = [], []
        for l in range(self.cfg["num_hidden_layers"]):
            p = f"encoder.layer.{l}"
            q = self.heads(self.lin(h, p + ".attention.self.query_proj"))
            k = self.heads(self.lin(h, p + ".attention.self.key_proj"))
            v = self.heads(self.lin(h, p + ".attention.self.value_proj"))
            scale = math.sqrt(self.d * 3)
            scores = torch.bmm(q, k.transpose(-1, -2) / torch.tensor(scale, dtype=q.dtype))
            re = rel_emb[0 : 2 * self.span].unsqueeze(0)
            pq = self.heads(self.lin(re, p + ".attention.self.query_proj")).repeat(B, 1, 1)
            pk = self.heads(self.lin(re, p + ".attention.self.key_proj")).repeat(B, 1, 1)
            c2p_pos = torch.clamp(rel_pos + self.span, 0, 2 * self.span - 1)
            c2p = torch.gather(torch.bmm(q, pk.transpose(-1, -2)), -1, c2p_pos.squeeze(0).expand([q.size(0), L, L]))
            p2c_pos = torch.clamp(-rel_pos + self.span, 0, 2 * self.span - 1)
            p2c = torch.gather(torch.bmm(k, pq.transpose(-1, -2)), -1, p2c_pos.squeeze(0).expand([q.size(0), L, L])).transpose(-1, -2)
            scores = scores + c2p / scale + p2c / scale
            if keep_terms:  # raw terms, as a user hooking HF would collect them
                terms.append(((scores - (c2p + p2c) / scale) * scale, c2p.clone(), p2c.clone()))
            scores = scores.view(-1, self.H, L, L).masked_fill(~att_mask, torch.finfo(scores.dtype).min)
            probs = torch.softmax(scores, -1)
            attentions.append(probs)
            ctx = torch.bmm(probs.view(-1, L, L), v).view(B, self.H, L, self.d).permute(0, 2, 1, 3).reshape(B, L, self.D)
            a = self.ln(self.lin(ctx, p + ".attention.output.dense") + h, p + ".attention.output.LayerNorm")
            f = torch.nn.functional.gelu(self.lin(a, p + ".intermediate.dense"))
            h = self.ln(self.lin(f, p + ".output.dense") + a, p + ".output.LayerNorm")
        return h, attentions, terms


def check(d):
    cfg = json.load(open(os.path.join(d, "config.json")))
    m = HFEager(cfg, read_safetensors(os.path.join(d, "model.safetensors")))
    H = cfg["num_attention_heads"]
    for c in json.load(open(os.path.join(d, "expected_outputs.json")))["cases"]:
        with torch.no_grad():
            hid, att, terms = m.forward(torch.tensor([c["input_ids"]]), True)
        e = c["expected"]["layers"]
        dp = max(float((att[l][0] - torch.tensor(e[l]["probs"])).abs().max()) for l in range(len(e)))
        dc = max(float((terms[l][1].view(H, *terms[l][1].shape[1:]) - torch.tensor(e[l]["c2p"])).abs().max()) for l in range(len(e)))
        dh = float((hid[0] - torch.tensor(c["expected"]["last_hidden_state"])).abs().max())
        print(json.dumps({"case": c["name"], "probs_max_diff": dp, "c2p_max_diff": dc, "hidden_max_diff": dh}))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--check")
    ap.add_argument("--model")
    ap.add_argument("--lengths", default="32,128,512")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    if args.check:
        return check(args.check)
    cfg = json.load(open(os.path.join(args.model, "config.json")))
    model = HFEager(cfg, read_safetensors(os.path.join(args.model, "model.safetensors")))
    out = {"torch": torch.__version__, "threads": torch.get_num_threads(), "openblas_coretype": os.environ.get("OPENBLAS_CORETYPE"), "lengths": []}
    g = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for n in [int(x) for x in args.lengths.split(",")]:
            ids = torch.randint(5, cfg["vocab_size"] - 100, (1, n), generator=g)
            row = {"tokens": n}
            for key, keep in (("forward_attn", False), ("forward_terms", True)):
                model.forward(ids, keep)  # warm-up
                ts = []
                for _ in range(args.runs):
                    t0 = time.perf_counter()
                    model.forward(ids, keep)
                    ts.append((time.perf_counter() - t0) * 1000)
                ts.sort()
                row[f"{key}_ms_median"] = round(ts[len(ts) // 2] if len(ts) % 2 else (ts[len(ts) // 2 - 1] + ts[len(ts) // 2]) / 2, 1)
                row[f"{key}_ms_min"] = round(ts[0], 1)
            out["lengths"].append(row)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
