"""Sequence-pair classifiers on top of the trainer's encoders, parameter names as Hugging Face's save_pretrained writes
them for `DebertaV2ForSequenceClassification` and `BertForSequenceClassification`.

DeBERTa (HF `ContextPooler`): the last layer's [CLS] row → `pooler.dense` → ACT2FN[pooler_hidden_act] (gelu) →
`classifier`. Keys: `deberta.*`, `pooler.dense.*`, `classifier.*`.
BERT (HF `BertPooler`): the last layer's [CLS] row → `bert.pooler.dense` → tanh → `classifier`. Keys: `bert.*`
(the pooler lives inside the encoder, as in HF), `classifier.*`.

The encoders are model.py's and model_bert.py's own (no copy); no dropout (pooler_dropout, cls_dropout /
classifier_dropout and hidden_dropout_prob are 0 in the configs these models are trained with, so HF's modules are
identities there too). `from_mlm_state` starts a classifier from an MLM checkpoint's encoder weights (the MLM head
`cls.*` is dropped; pooler and classifier are new, HF's init: normal(0, initializer_range), zero biases).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

import model as deberta_model
import model_bert

LABELS = {0: "not_next", 1: "next"}


def classifier_config(mlm_cfg, id2label=None):
    """The MLM config turned into a sequence-classification config (the fields HF's classes read)."""
    id2label = id2label or LABELS
    # `legacy` names the MLM head's layout (the default model's is microsoft's since its Enhanced Mask Decoder); a
    # classifier has no MLM head.
    cfg = {k: v for k, v in mlm_cfg.items() if k not in ("architectures", "legacy")}
    is_bert = cfg["model_type"] == "bert"
    cfg["architectures"] = ["BertForSequenceClassification" if is_bert else "DebertaV2ForSequenceClassification"]
    cfg["id2label"] = {str(k): v for k, v in id2label.items()}
    cfg["label2id"] = {v: int(k) for k, v in id2label.items()}
    cfg["num_labels"] = len(id2label)
    cfg["problem_type"] = "single_label_classification"
    cfg["hidden_dropout_prob"] = 0.0
    cfg["attention_probs_dropout_prob"] = 0.0
    if is_bert:
        cfg["classifier_dropout"] = 0.0
    else:
        cfg["pooler_hidden_size"] = cfg["hidden_size"]
        cfg["pooler_hidden_act"] = "gelu"
        cfg["pooler_dropout"] = 0.0
        cfg["cls_dropout"] = 0.0
    return cfg


class Pooler(nn.Module):
    def __init__(self, n, act):
        super().__init__()
        self.dense = nn.Linear(n, n)
        self.act = act

    def forward(self, h):
        return self.act(self.dense(h[:, 0]))


class SequenceClassifier(nn.Module):
    PREFIX = ""

    def backbone_forward(self, ids, mask, token_types, capture):
        raise NotImplementedError

    @property
    def backbone(self):
        return getattr(self, self.PREFIX)

    def init_head(self, std, gen=None):
        for lin in (self.pooler_module.dense, self.classifier):
            with torch.no_grad():
                lin.weight.copy_(torch.randn(lin.weight.shape, generator=gen) * std)
                lin.bias.zero_()

    def forward(self, ids, mask=None, token_types=None, capture=None):
        h = self.backbone_forward(ids, mask, token_types, capture)
        return self.classifier(self.pooler_module(h))


class DebertaV2ForSequenceClassification(SequenceClassifier):
    PREFIX = "deberta"

    def __init__(self, cfg):
        super().__init__()
        if cfg.get("pooler_hidden_act", "gelu") != "gelu" or cfg.get("pooler_hidden_size", cfg["hidden_size"]) != cfg[
                "hidden_size"]:
            raise ValueError("this trainer implements pooler_hidden_act gelu with pooler_hidden_size = hidden_size")
        self.cfg = cfg
        self.deberta = deberta_model.Backbone(cfg)
        self.pooler = Pooler(cfg["hidden_size"], F.gelu)  # exact erf GELU, HF ACT2FN["gelu"]
        self.classifier = nn.Linear(cfg["hidden_size"], cfg["num_labels"])

    @property
    def pooler_module(self):
        return self.pooler

    def backbone_forward(self, ids, mask, token_types, capture):
        # DeBERTa-v3 here has type_vocab_size 0: token types are not an input.
        return self.deberta(ids, mask, capture=capture)


class BertForSequenceClassification(SequenceClassifier):
    PREFIX = "bert"

    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.bert = model_bert.Backbone(cfg)
        self.bert.pooler = Pooler(cfg["hidden_size"], torch.tanh)  # HF BertPooler: bert.pooler.dense, tanh
        self.classifier = nn.Linear(cfg["hidden_size"], cfg["num_labels"])

    @property
    def pooler_module(self):
        return self.bert.pooler

    def backbone_forward(self, ids, mask, token_types, capture):
        return self.bert(ids, mask, capture=capture, token_types=token_types)


def build(cfg):
    return BertForSequenceClassification(cfg) if cfg["model_type"] == "bert" else DebertaV2ForSequenceClassification(cfg)


def from_mlm_state(mlm_cfg, mlm_state, seed):
    """A classifier whose encoder is the MLM checkpoint's; new pooler + classifier drawn with `seed`."""
    cfg = classifier_config(mlm_cfg)
    m = build(cfg)
    prefix = m.PREFIX + "."
    # The EMD's absolute position table (models/default since train_emd.py) is not part of the encoder's forward.
    enc = {k: v.float() for k, v in mlm_state.items() if k.startswith(prefix) and k != "deberta.embeddings.position_embeddings.weight"}
    missing, unexpected = m.load_state_dict(enc, strict=False)
    new = {k for k in missing if k.startswith(("pooler.", "classifier.", "bert.pooler."))}
    if set(missing) != new or unexpected:
        raise SystemExit(f"MLM weights do not fit: missing {sorted(set(missing) - new)}, unexpected {unexpected}")
    m.init_head(cfg.get("initializer_range", 0.02), torch.Generator().manual_seed(seed))
    return m, cfg
