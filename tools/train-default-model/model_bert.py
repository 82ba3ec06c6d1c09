"""BERT encoder + MLM head in plain torch: the BERT twin of the default model.

Parameter names match Hugging Face BertForMaskedLM (`bert.embeddings...`, `bert.encoder...`, `cls.predictions...`)
so the exported safetensors loads wherever an HF BERT checkpoint does. Absolute position embeddings and token types
are added to the word embeddings once (entangled attention); the layers have no positional terms. The shared pieces
(float32 LayerNorm, dense + LayerNorm, MLM transform) come from model.py so both twins compute them the same way.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from model import DenseLN, Intermediate, LayerNorm, MaskedLM


def check_config(cfg):
    want = {"model_type": "bert", "hidden_act": "gelu", "position_embedding_type": "absolute"}
    for k, v in want.items():
        if cfg.get(k) != v:
            raise ValueError(f"config {k}={cfg.get(k)!r}: this trainer only implements {k}={v!r}")


class Embeddings(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        D = cfg["hidden_size"]
        self.word_embeddings = nn.Embedding(cfg["vocab_size"], D, padding_idx=cfg["pad_token_id"])
        self.position_embeddings = nn.Embedding(cfg["max_position_embeddings"], D)
        self.token_type_embeddings = nn.Embedding(cfg["type_vocab_size"], D)
        self.LayerNorm = LayerNorm(D, eps=cfg["layer_norm_eps"])

    def forward(self, ids, token_types=None):
        L = ids.shape[1]
        if L > self.position_embeddings.num_embeddings:
            raise ValueError(f"{L} tokens > max_position_embeddings {self.position_embeddings.num_embeddings}")
        if token_types is None:
            token_types = torch.zeros_like(ids)
        pos = torch.arange(L, device=ids.device).unsqueeze(0)
        e = self.word_embeddings(ids) + self.token_type_embeddings(token_types) + self.position_embeddings(pos)
        return self.LayerNorm(e)


class SelfAttention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        D = cfg["hidden_size"]
        self.H = cfg["num_attention_heads"]
        self.d = D // self.H
        self.query = nn.Linear(D, D)
        self.key = nn.Linear(D, D)
        self.value = nn.Linear(D, D)
        self.scale = math.sqrt(self.d)

    def heads(self, x):  # [B, L, D] -> [B, H, L, d]
        B, L, _ = x.shape
        return x.view(B, L, self.H, self.d).transpose(1, 2)

    def forward(self, h, pair_mask, capture=None):
        q, k, v = self.heads(self.query(h)), self.heads(self.key(h)), self.heads(self.value(h))
        score = (q @ k.transpose(-1, -2)) / self.scale
        if pair_mask is not None:
            score = score.masked_fill(~pair_mask, torch.finfo(score.dtype).min)
        probs = F.softmax(score, dim=-1)
        if capture is not None:
            capture.append({"scores": score, "probs": probs})
        B, H, L, _ = q.shape
        return (probs @ v).transpose(1, 2).reshape(B, L, H * self.d)


class Attention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.self = SelfAttention(cfg)
        self.output = DenseLN(cfg["hidden_size"], cfg["hidden_size"], cfg["layer_norm_eps"])


class Layer(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.attention = Attention(cfg)
        self.intermediate = Intermediate(cfg)
        self.output = DenseLN(cfg["intermediate_size"], cfg["hidden_size"], cfg["layer_norm_eps"])

    def forward(self, h, pair_mask, capture=None):
        a = self.attention.output(self.attention.self(h, pair_mask, capture), h)
        return self.output(F.gelu(self.intermediate.dense(a)), a)  # exact erf GELU


class Encoder(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.layer = nn.ModuleList([Layer(cfg) for _ in range(cfg["num_hidden_layers"])])


class Backbone(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        check_config(cfg)
        self.cfg = cfg
        self.embeddings = Embeddings(cfg)
        self.encoder = Encoder(cfg)

    def forward(self, ids, mask=None, capture=None, token_types=None):
        pair_mask = None
        if mask is not None and not bool(mask.bool().all()):
            m = mask.bool()
            pair_mask = m[:, None, :, None] & m[:, None, None, :]
        h = self.embeddings(ids, token_types)
        for layer in self.encoder.layer:
            h = layer(h, pair_mask, capture)
        return h


class BertForMaskedLM(MaskedLM):
    PREFIX = "bert"

    def __init__(self, cfg):
        super().__init__(cfg, Backbone(cfg))
