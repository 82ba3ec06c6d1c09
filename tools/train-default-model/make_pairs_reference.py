"""What Hugging Face's own code computes on the sentence-pair models, and a check of the trainer against it.

    /usr/bin/python3 tools/train-default-model/make_pairs_reference.py [/path/to/hf-reference]   # from the repo root

For models/default-pairs (DebertaV2ForSequenceClassification) and models/bert-twin-pairs
(BertForSequenceClassification): builds HF's class from config.json, loads model.safetensors with
load_state_dict(strict=True), float64, eager attention; tokenizes four sentence pairs with HF's DebertaV2Tokenizer
(both models share the default model's spm.model): [CLS] A [SEP] B [SEP], token types 0 / 1. Writes the ids,
logits, scores (softmax of the logits), predicted label and the pooled [CLS] vector (the classifier's input) to
test/data/fixtures/default-pairs/hf_reference.json and a copy to tools/train-default-model/work/.

Checks (exit 1 on failure): the tokenizer's ids equal the trainer's (SentencePiece encode + [CLS]/[SEP]); the
trainer's classifier (classifier.py, float64) gives HF's logits within 1e-5, one pair at a time and as one padded
batch; HF's padded batch gives its one-at-a-time logits.
"""
import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
HF = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(REPO, "..", "shared", "hf-reference"))
sys.path.insert(0, HF)
sys.path.insert(0, HERE)
torch.set_default_dtype(torch.float64)

import sentencepiece  # noqa: E402

from transformers.models.bert.configuration_bert import BertConfig  # noqa: E402
from transformers.models.bert.modeling_bert import BertForSequenceClassification  # noqa: E402
from transformers.models.deberta_v2.configuration_deberta_v2 import DebertaV2Config  # noqa: E402
from transformers.models.deberta_v2.modeling_deberta_v2 import DebertaV2ForSequenceClassification  # noqa: E402
from transformers.models.deberta_v2.tokenization_deberta_v2 import DebertaV2Tokenizer  # noqa: E402

import classifier as C  # noqa: E402
from safetensors_io import read_safetensors  # noqa: E402
from train_pairs import collate, encode_pair  # noqa: E402

MODELS = [("default-pairs", DebertaV2Config, DebertaV2ForSequenceClassification),
          ("bert-twin-pairs", BertConfig, BertForSequenceClassification)]
# Held-out pairs (G. K. Chesterton, Manalive; Alexandre Dumas, The War of Women; G. A. Henty, The Young Franc
# Tireurs; public domain) and one of the held-out technical prose (Python documentation, PSF-2.0); all in
# samples/pairs.md. Two next, two not_next (another book; an earlier sentence of A's own paragraph).
PAIRS = [
    {"name": "next_book", "expected_label": "next",
     "text": "While his brain accepted the black creed, his very body rebelled against it.",
     "text_pair": "As he put it, his right hand taught him terrible things."},
    {"name": "random_book", "expected_label": "not_next",
     "text": "\"To what end?\" said Canolles; \"have I not told you often enough, madame, that my resolution is "
             "immovable?",
     "text_pair": "It is our plain duty to go down, and report ourselves to General Pelissier."},
    {"name": "same_paragraph_book", "expected_label": "not_next",
     "text": "When you have put the bandage on, you must put wet cloths to his head, as long as he remains delirious.",
     "text_pair": "\"And now, watch attentively how I put this bandage on; and do it the same way, once a day."},
    {"name": "next_technical", "expected_label": "next",
     "text": "The constants in this section are only relevant for the C module.",
     "text_pair": "They are also included in the pure Python version for compatibility."},
]
OUT = os.path.join(REPO, "test", "data", "fixtures", "default-pairs", "hf_reference.json")
COPY = os.path.join(HERE, "work", "pairs_hf_reference.json")
TOL = 1e-5


def g12(x):
    if isinstance(x, torch.Tensor):
        x = x.tolist()
    if isinstance(x, list):
        return [g12(v) for v in x]
    return float(f"{x:.12g}")


def g9(x):
    if isinstance(x, torch.Tensor):
        x = x.tolist()
    if isinstance(x, list):
        return [g9(v) for v in x]
    return float(f"{x:.9g}")


def main():
    failures = []
    out = {"about": "Hugging Face transformers (hf-reference, 4.48.0.dev0 @ 919220da) DebertaV2ForSequenceClassification "
                    "/ BertForSequenceClassification, float64, eager attention, on the float32 weights of "
                    "models/default-pairs and models/bert-twin-pairs loaded with strict=True; ids from "
                    "DebertaV2Tokenizer (spm.model of each folder): [CLS] A [SEP] B [SEP], token types 0 then 1 "
                    "(BERT uses them; the DeBERTa-v3 model has type_vocab_size 0 and ignores them), one pair per "
                    "forward, no padding. scores = softmax(logits); pooled = the classifier's input (pooler output). "
                    "Made by tools/train-default-model/make_pairs_reference.py.",
           "models": []}
    for folder, Cfg, Cls in MODELS:
        path = os.path.join(REPO, "models", folder)
        cfg = json.load(open(os.path.join(path, "config.json")))
        hcfg = Cfg(**cfg)
        hcfg._attn_implementation = "eager"
        hf = Cls(hcfg)
        sd = {k: v.double() for k, v in read_safetensors(os.path.join(path, "model.safetensors")).items()}
        hf.load_state_dict(sd, strict=True)
        hf.eval()
        ours = C.build(cfg)
        ours.load_state_dict(sd, strict=True)
        ours = ours.double().eval()
        tok = DebertaV2Tokenizer(os.path.join(path, "spm.model"), do_lower_case=False, split_by_punct=False)
        sp = sentencepiece.SentencePieceProcessor(model_file=os.path.join(path, "spm.model"))
        id2label = {int(k): v for k, v in cfg["id2label"].items()}
        cases, singles, encs = [], [], []
        for p in PAIRS:
            a = tok.convert_tokens_to_ids(tok.tokenize(p["text"]))
            b = tok.convert_tokens_to_ids(tok.tokenize(p["text_pair"]))
            ids = tok.build_inputs_with_special_tokens(a, b)
            types = tok.create_token_type_ids_from_sequences(a, b)
            mine_ids, mine_types = encode_pair(sp.encode(p["text"]), sp.encode(p["text_pair"]))
            if (ids, types) != (mine_ids, mine_types):
                failures.append(f"{folder} {p['name']}: tokenizer ids differ from the trainer's")
            x, tt = torch.tensor([ids]), torch.tensor([types])
            with torch.no_grad():
                o = hf(x, attention_mask=torch.ones_like(x), token_type_ids=tt, output_hidden_states=True)
                pooled = (hf.pooler(o.hidden_states[-1]) if folder == "default-pairs"
                          else hf.bert.pooler(o.hidden_states[-1]))
                mine = ours(x, torch.ones_like(x), tt)
            logits = o.logits[0]
            assert torch.allclose(hf.classifier(pooled)[0], logits, atol=1e-12)
            diff = float((mine[0] - logits).abs().max())
            if diff > TOL:
                failures.append(f"{folder} {p['name']}: trainer vs HF logits differ by {diff:.2e}")
            singles.append(logits)
            encs.append((sp.encode(p["text"]), sp.encode(p["text_pair"])))
            scores = torch.softmax(logits, -1)
            cases.append({"name": p["name"], "text": p["text"], "text_pair": p["text_pair"],
                          "tokens": tok.convert_ids_to_tokens(ids), "input_ids": ids, "token_type_ids": types,
                          "attention_mask": [1] * len(ids),
                          "expected": {"logits": g12(logits), "scores": g12(scores),
                                       "label": id2label[int(logits.argmax())], "pooled": g9(pooled[0])},
                          "task_label": p["expected_label"], "trainer_max_abs_diff": float(f"{diff:.3g}")})
            print(f"{folder:16s} {p['name']:15s} n={len(ids):3d} logits {[round(v, 5) for v in logits.tolist()]} "
                  f"-> {id2label[int(logits.argmax())]:8s} (task: {p['expected_label']}) trainer diff {diff:.1e}")
        # one padded batch: HF and the trainer both give the one-at-a-time logits
        ids, mask, types = collate(encs)
        with torch.no_grad():
            hb = hf(ids, attention_mask=mask, token_type_ids=types).logits
            mb = ours(ids, mask, types)
        single = torch.stack(singles)
        db, dm = float((hb - single).abs().max()), float((mb - single).abs().max())
        print(f"{folder:16s} padded batch: HF vs single {db:.1e}, trainer vs HF single {dm:.1e}")
        if db > TOL or dm > TOL:
            failures.append(f"{folder}: padded batch differs ({db:.2e}, {dm:.2e})")
        out["models"].append({"model": f"models/{folder}", "architecture": cfg["architectures"][0],
                              "id2label": cfg["id2label"], "cases": cases})
    # The fixture holds only HF's numbers (the same on every run); the copy in work/ also the trainer's differences
    # (float64 rounding noise, ~1e-16, that varies from run to run), which the model cards quote.
    fixture = json.loads(json.dumps(out))
    for m in fixture["models"]:
        for c in m["cases"]:
            c.pop("trainer_max_abs_diff")
    for path, obj in ((OUT, fixture), (COPY, out)):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            json.dump(obj, f, indent=1, ensure_ascii=False)
            f.write("\n")
    print("wrote", OUT, "and", COPY)
    if failures:
        print("FAILED:\n  " + "\n  ".join(failures))
        sys.exit(1)
    print(f"OK (trainer within {TOL:g} of HF on every pair)")


if __name__ == "__main__":
    main()
