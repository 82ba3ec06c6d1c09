"""DeBERTa-v2/v3 encoder + MLM head in plain torch, written from /work/shared/deberta-spec.md.

Parameter names match Hugging Face DebertaV2ForMaskedLM (`deberta.embeddings...`, `deberta.encoder...`,
`cls.predictions...`) so the exported safetensors loads wherever an HF checkpoint does. Only the features the
default model uses are implemented (share_att_key, layer-norm'd relative table, p2c|c2p, log buckets,
no absolute positions, no conv); `check_config` refuses anything else rather than computing something else.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class LayerNorm(nn.LayerNorm):
    """nn.LayerNorm computed in float32 (torch 1.13's CPU bf16 autocast rejects bf16 input + fp32 weights), or in
    float64 when the module is (reference checks)."""

    def forward(self, x):
        x = x.to(torch.promote_types(x.dtype, self.weight.dtype))
        return F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)


def check_config(cfg):
    want = {
        "model_type": "deberta-v2", "relative_attention": True, "share_att_key": True,
        "norm_rel_ebd": "layer_norm", "position_biased_input": False, "type_vocab_size": 0,
        "hidden_act": "gelu",
    }
    for k, v in want.items():
        if cfg.get(k) != v:
            raise ValueError(f"config {k}={cfg.get(k)!r}: this trainer only implements {k}={v!r}")
    if cfg.get("conv_kernel_size", 0) > 0:
        raise ValueError("config conv_kernel_size > 0 is not implemented")
    if sorted(s.strip() for s in cfg["pos_att_type"].lower().split("|")) != ["c2p", "p2c"]:
        raise ValueError("config pos_att_type must be 'p2c|c2p'")
    if cfg.get("position_buckets", -1) <= 0:
        raise ValueError("config position_buckets must be > 0")


def span_and_max(cfg):
    m = cfg["max_relative_positions"]
    if m < 1:
        m = cfg["max_position_embeddings"]
    return cfg["position_buckets"], m


def make_log_bucket_position(relative_pos, bucket_size, max_position):
    # Verbatim HF arithmetic (float32 division and logs), so bucket edges agree bit for bit.
    sign = torch.sign(relative_pos)
    mid = bucket_size // 2
    abs_pos = torch.where(
        (relative_pos < mid) & (relative_pos > -mid),
        torch.tensor(mid - 1).type_as(relative_pos),
        torch.abs(relative_pos),
    )
    log_pos = (
        torch.ceil(torch.log(abs_pos / mid) / torch.log(torch.tensor((max_position - 1) / mid)) * (mid - 1)) + mid
    )
    return torch.where(abs_pos <= mid, relative_pos.type_as(log_pos), log_pos * sign)


def position_index(n, cfg):
    """ι(i,j) = clamp(β(i−j) + S, 0, 2S−1) as an [n, n] int64 tensor."""
    S, M = span_and_max(cfg)
    ar = torch.arange(n, dtype=torch.long)
    rel = ar[:, None] - ar[None, :]
    beta = make_log_bucket_position(rel, S, M).to(torch.long)
    return torch.clamp(beta + S, 0, 2 * S - 1)


class Embeddings(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.word_embeddings = nn.Embedding(cfg["vocab_size"], cfg["hidden_size"], padding_idx=cfg["pad_token_id"])
        self.LayerNorm = LayerNorm(cfg["hidden_size"], eps=cfg["layer_norm_eps"])

    def forward(self, ids, mask):
        e = self.LayerNorm(self.word_embeddings(ids))
        return e * mask.unsqueeze(-1).to(e.dtype)


class SelfAttention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        D = cfg["hidden_size"]
        self.H = cfg["num_attention_heads"]
        self.d = cfg.get("attention_head_size", D // self.H)
        A = self.H * self.d
        self.query_proj = nn.Linear(D, A)
        self.key_proj = nn.Linear(D, A)
        self.value_proj = nn.Linear(D, A)
        # sf = 1 + [c2p] + [p2c] = 3; HF computes sqrt(float32(d) * sf).
        self.scale = float(torch.sqrt(torch.tensor(self.d, dtype=torch.float) * 3))

    def heads(self, x):  # [B, L, A] -> [B, H, L, d]
        B, L, _ = x.shape
        return x.view(B, L, self.H, self.d).transpose(1, 2)

    def forward(self, h, rel, idx, pair_mask, capture=None):
        q = self.heads(self.query_proj(h))
        k = self.heads(self.key_proj(h))
        v = self.heads(self.value_proj(h))
        R2 = rel.shape[0]
        # share_att_key: positions go through the content projections, biases included.
        pk = self.key_proj(rel).view(R2, self.H, self.d).transpose(0, 1)  # [H, 2S, d]
        pq = self.query_proj(rel).view(R2, self.H, self.d).transpose(0, 1)
        B, H, L, _ = q.shape
        c2c = q @ k.transpose(-1, -2)
        gi = idx.expand(B, H, L, L)
        c2p = torch.gather(q @ pk.transpose(-1, -2).unsqueeze(0), -1, gi)
        # p2c[i,j] = k_j · PQ[ι(i,j)]: gather key rows with ιᵀ, then transpose.
        p2c = torch.gather(k @ pq.transpose(-1, -2).unsqueeze(0), -1, idx.t().expand(B, H, L, L)).transpose(-1, -2)
        score = (c2c + c2p + p2c) / self.scale
        if pair_mask is not None:
            score = score.masked_fill(~pair_mask, torch.finfo(score.dtype).min)
        probs = F.softmax(score, dim=-1)
        if capture is not None:
            capture.append({"c2c": c2c, "c2p": c2p, "p2c": p2c, "scores": score, "probs": probs})
        ctx = (probs @ v).transpose(1, 2).reshape(B, L, H * self.d)
        return ctx


class DenseLN(nn.Module):
    def __init__(self, n_in, n_out, eps):
        super().__init__()
        self.dense = nn.Linear(n_in, n_out)
        self.LayerNorm = LayerNorm(n_out, eps=eps)

    def forward(self, x, residual):
        return self.LayerNorm(self.dense(x) + residual)


class Attention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.self = SelfAttention(cfg)
        A = self.self.H * self.self.d
        self.output = DenseLN(A, cfg["hidden_size"], cfg["layer_norm_eps"])


class Intermediate(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.dense = nn.Linear(cfg["hidden_size"], cfg["intermediate_size"])


class Layer(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.attention = Attention(cfg)
        self.intermediate = Intermediate(cfg)
        self.output = DenseLN(cfg["intermediate_size"], cfg["hidden_size"], cfg["layer_norm_eps"])
        self.p_drop = cfg.get("hidden_dropout_prob", 0.0)

    def forward(self, h, rel, idx, pair_mask, capture=None):
        a = self.attention.self(h, rel, idx, pair_mask, capture)
        a = F.dropout(self.attention.output.dense(a), self.p_drop, self.training)
        a = self.attention.output.LayerNorm(a + h)
        f = F.gelu(self.intermediate.dense(a))  # exact erf GELU
        f = F.dropout(self.output.dense(f), self.p_drop, self.training)
        return self.output.LayerNorm(f + a)


class Encoder(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        S, _ = span_and_max(cfg)
        self.layer = nn.ModuleList([Layer(cfg) for _ in range(cfg["num_hidden_layers"])])
        self.rel_embeddings = nn.Embedding(2 * S, cfg["hidden_size"])
        self.LayerNorm = LayerNorm(cfg["hidden_size"], eps=cfg["layer_norm_eps"])


class Backbone(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        check_config(cfg)
        self.cfg = cfg
        self.embeddings = Embeddings(cfg)
        self.encoder = Encoder(cfg)
        self._idx_cache = {}

    def forward(self, ids, mask=None, capture=None):
        if mask is None:
            mask = torch.ones_like(ids, dtype=torch.bool)
        mask = mask.bool()
        L = ids.shape[1]
        if L not in self._idx_cache:
            self._idx_cache[L] = position_index(L, self.cfg)
        idx = self._idx_cache[L]
        pair_mask = None if bool(mask.all()) else (mask[:, None, :, None] & mask[:, None, None, :])
        h = self.embeddings(ids, mask)
        rel = self.encoder.LayerNorm(self.encoder.rel_embeddings.weight)
        for layer in self.encoder.layer:
            h = layer(h, rel, idx, pair_mask, capture)
        return h


class Transform(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.dense = nn.Linear(cfg["hidden_size"], cfg["hidden_size"])
        self.LayerNorm = LayerNorm(cfg["hidden_size"], eps=cfg["layer_norm_eps"])


class Predictions(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.transform = Transform(cfg)
        self.bias = nn.Parameter(torch.zeros(cfg["vocab_size"]))


class Head(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.predictions = Predictions(cfg)


class MaskedLM(nn.Module):
    """An encoder under Hugging Face's key prefix (`PREFIX`: deberta, bert) + the HF MLM head, tied decoder."""

    PREFIX = ""

    def __init__(self, cfg, backbone):
        super().__init__()
        setattr(self, self.PREFIX, backbone)
        self.cls = Head(cfg)
        self.init_weights(cfg.get("initializer_range", 0.02))

    @property
    def backbone(self):
        return getattr(self, self.PREFIX)

    def init_weights(self, std):
        for m in self.modules():
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, 0.0, std)
                if isinstance(m, nn.Linear) and m.bias is not None:
                    nn.init.zeros_(m.bias)

    def mlm_logits(self, h):
        """HF head: dense → gelu → LN → decoder tied to the word embeddings, + bias."""
        t = self.cls.predictions.transform
        x = t.LayerNorm(F.gelu(t.dense(h)))
        return x @ self.backbone.embeddings.word_embeddings.weight.t() + self.cls.predictions.bias

    def forward(self, ids, mask=None, positions=None):
        """Logits at `positions` ([N] flat indices into B·L) or at every position when None."""
        h = self.backbone(ids, mask)
        if positions is not None:
            h = h.reshape(-1, h.shape[-1]).index_select(0, positions)
        return self.mlm_logits(h)


class DebertaV2ForMaskedLM(MaskedLM):
    PREFIX = "deberta"

    def __init__(self, cfg):
        super().__init__(cfg, Backbone(cfg))


def count_params(model):
    return sum(p.numel() for p in model.parameters())
