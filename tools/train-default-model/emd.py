"""DeBERTa's Enhanced Mask Decoder (EMD) on model.py's DeBERTa, as microsoft/DeBERTa's MaskedLanguageModel runs it
(DeBERTa/apps/models/masked_language_model.py, EnhancedMaskDecoder, position_biased_input false): H = the hidden state
entering the last layer; the last layer runs twice more with keys and values from H, the first time with the query
I = H + P (P: raw rows of the absolute position table, no LayerNorm), the second time with the first pass's output
as the query (the residuals are the query's); the LM head reads the second pass.

Query rows are independent given the keys and values (attention over H's keys, then per-row dense/LayerNorm/FFN),
so the passes are computed only at the rows the loss or the prediction needs (`emd_rows`); emd_check.py compares
them with microsoft's own MaskedLanguageModel in float64.

Checkpoint layout for the engine and for Hugging Face: microsoft's head keys (`lm_predictions.lm_head.*`, which HF
reads with config `legacy: false`) and `deberta.embeddings.position_embeddings.weight`; `to_microsoft_keys` /
`from_microsoft_keys` map model.py's HF-legacy head keys (`cls.predictions.*`) to them and back, the weights unchanged.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

POSITION_TABLE = "deberta.embeddings.position_embeddings.weight"
HEAD_KEYS = {  # model.py (HF legacy) -> microsoft / HF legacy=false
    "cls.predictions.transform.dense.weight": "lm_predictions.lm_head.dense.weight",
    "cls.predictions.transform.dense.bias": "lm_predictions.lm_head.dense.bias",
    "cls.predictions.transform.LayerNorm.weight": "lm_predictions.lm_head.LayerNorm.weight",
    "cls.predictions.transform.LayerNorm.bias": "lm_predictions.lm_head.LayerNorm.bias",
    "cls.predictions.bias": "lm_predictions.lm_head.bias",
}


def to_microsoft_keys(sd):
    return {HEAD_KEYS.get(k, k): v for k, v in sd.items()}


def from_microsoft_keys(sd):
    back = {v: k for k, v in HEAD_KEYS.items()}
    return {back.get(k, k): v for k, v in sd.items()}


def add_position_table(model, rows):
    """Give model.py's DeBERTa the absolute position table the EMD's query adds (zeros: with P = 0 the first pass is
    exactly the plain last layer, so training starts from the plain decoder's first pass)."""
    D = model.deberta.embeddings.word_embeddings.weight.shape[1]
    model.deberta.embeddings.position_embeddings = nn.Embedding(rows, D)
    nn.init.zeros_(model.deberta.embeddings.position_embeddings.weight)
    return model.deberta.embeddings.position_embeddings


def hidden_before_last(model, ids, mask=None):
    """H: the output of the second-to-last layer (microsoft's encoder_layers[-2]), plus the rel table and ι."""
    bb = model.deberta
    if mask is None:
        mask = torch.ones_like(ids, dtype=torch.bool)
    L = ids.shape[1]
    if L not in bb._idx_cache:
        from model import position_index
        bb._idx_cache[L] = position_index(L, bb.cfg)
    idx = bb._idx_cache[L]
    h = bb.embeddings(ids, mask.bool())
    rel = bb.encoder.LayerNorm(bb.encoder.rel_embeddings.weight)
    for layer in bb.encoder.layer[:-1]:
        h = layer(h, rel, idx, None)
    return h, rel, idx


def _layer_rows(layer, q_in, pos, kv, rel, idx):
    """model.py's Layer with query rows q_in [B, m, D] at sequence positions pos [B, m], keys/values from kv [B, L, D]."""
    att = layer.attention.self
    B, m, _ = q_in.shape
    L = kv.shape[1]
    q = att.query_proj(q_in).view(B, m, att.H, att.d).transpose(1, 2)  # [B, H, m, d]
    k = att.heads(att.key_proj(kv))  # [B, H, L, d]
    v = att.heads(att.value_proj(kv))
    R2 = rel.shape[0]
    pk = att.key_proj(rel).view(R2, att.H, att.d).transpose(0, 1)  # [H, 2S, d]
    pq = att.query_proj(rel).view(R2, att.H, att.d).transpose(0, 1)
    I = idx[pos]  # [B, m, L]: ι(p_r, j)
    c2c = q @ k.transpose(-1, -2)
    c2p = torch.gather(q @ pk.transpose(-1, -2).unsqueeze(0), -1, I.unsqueeze(1).expand(B, att.H, m, L))
    # p2c[r, j] = k_j · PQ[ι(p_r, j)] (model.py's full-matrix p2c restricted to rows p_r)
    kpq = k @ pq.transpose(-1, -2).unsqueeze(0)  # [B, H, L, 2S]
    p2c = torch.gather(kpq, -1, I.transpose(1, 2).unsqueeze(1).expand(B, att.H, L, m)).transpose(-1, -2)
    probs = F.softmax((c2c + c2p + p2c) / att.scale, dim=-1)
    ctx = (probs @ v).transpose(1, 2).reshape(B, m, att.H * att.d)
    a = layer.attention.output.LayerNorm(layer.attention.output.dense(ctx) + q_in)
    f = layer.output.dense(F.gelu(layer.intermediate.dense(a)))
    return layer.output.LayerNorm(f + a)


def emd_rows(model, ids, pos, mask=None, with_plain=False):
    """The EMD's second-pass output at rows pos [B, m] (sequence positions); with_plain: (the plain last hidden state
    at those rows, the EMD's), from one encoder run."""
    H, rel, idx = hidden_before_last(model, ids, mask)
    last = model.deberta.encoder.layer[-1]
    Hq = torch.gather(H, 1, pos.unsqueeze(-1).expand(-1, -1, H.shape[-1]))
    P = model.deberta.embeddings.position_embeddings(pos)
    first = _layer_rows(last, Hq + P, pos, H, rel, idx)
    second = _layer_rows(last, first, pos, H, rel, idx)
    return (_layer_rows(last, Hq, pos, H, rel, idx), second) if with_plain else second
