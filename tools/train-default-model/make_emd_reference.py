"""What microsoft/DeBERTa's own code computes with the bundled model's Enhanced Mask Decoder, for the unit tests.

    /usr/bin/python3 tools/train-default-model/make_emd_reference.py [/path/to/hf-reference]   # from the repo root

Loads models/default into microsoft's MaskedLanguageModel (hf-reference/microsoft_deberta, load_state_dict
strict=True, float64 with its `.float()` casts kept at float64) and into Hugging Face's DebertaV2ForMaskedLM
(legacy=false: the same lm_predictions.lm_head.* head; the position table is its one unexpected key), tokenizes the
texts with HF's DebertaV2Tokenizer, and writes per [MASK] the top-5 ids, logits and probabilities through the EMD
(microsoft) and of the plain head on the last hidden state (HF; microsoft's head on its last encoder layer must give
the same to 1e-6: HF rounds its attention scale to float32) to test/data/fixtures/default-model/emd_reference.json. Also checks emd.py (the trainer's
EMD, float64) against microsoft's logits (1e-6: model.py keeps HF's float32-rounded attention scale).
"""
import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(REPO, "tools", "fixtures"))
from hf_loading import FIXTURES, HF_REFERENCE, use_hf_reference  # noqa: E402

MS = os.path.join(HF_REFERENCE, "microsoft_deberta")
use_hf_reference(os.path.join(MS, "stubs"), HF_REFERENCE, MS)  # float64 default dtype from here on

from emd_models import hf_model, hf_run, ms_model, ms_run  # noqa: E402
from json_out import g12  # noqa: E402
from transformers.models.deberta_v2.tokenization_deberta_v2 import DebertaV2Tokenizer  # noqa: E402

from emd import add_position_table, emd_rows, from_microsoft_keys  # noqa: E402
from model import DebertaV2ForMaskedLM  # noqa: E402
from safetensors_io import read_safetensors  # noqa: E402

MODEL = os.path.join(REPO, "models", "default")
OUT = os.path.join(FIXTURES, "default-model", "emd_reference.json")
# Seed 003's sentence (both masks follow "new": only absolute position tells them apart) and samples/fill-mask.md as
# `predict --file` reads it (three sentences, one [MASK] each).
TEXTS = ["a new [MASK] opened beside the new [MASK]", open(os.path.join(REPO, "samples", "fill-mask.md"), encoding="utf-8").read()]


def top5(row):
    probs = torch.softmax(row, -1)
    t = torch.topk(row, 5)
    return {"top5_ids": t.indices.tolist(), "top5_logits": g12(t.values), "top5_probs": g12(probs[t.indices])}


def main():
    cfg = json.load(open(os.path.join(MODEL, "config.json")))
    sd = {k: v.double() for k, v in read_safetensors(os.path.join(MODEL, "model.safetensors")).items()}
    ms = ms_model(cfg, sd, hooked=False)
    hf = hf_model(cfg, sd)
    mine = DebertaV2ForMaskedLM(cfg).double().eval()
    add_position_table(mine, cfg["max_position_embeddings"]).double()
    mine.load_state_dict(from_microsoft_keys(sd), strict=True)
    tok = DebertaV2Tokenizer(os.path.join(MODEL, "spm.model"), do_lower_case=False, split_by_punct=False)
    mask_id = tok.convert_tokens_to_ids("[MASK]")
    assert mask_id == cfg["vocab_size"] - 1, mask_id
    cases = []
    for text in TEXTS:
        ids = tok.build_inputs_with_special_tokens(tok.convert_tokens_to_ids(tok.tokenize(text)))
        masks = [i for i, t in enumerate(ids) if t == mask_id]
        out, enc, _, _ = ms_run(ms, ids, masks)
        emd = out["logits"]
        with torch.no_grad():
            ms_plain = ms.lm_predictions.lm_head(enc["hidden_states"][-1][0, masks], ms.deberta.embeddings.word_embeddings.weight)
            mine_emd = mine.mlm_logits(emd_rows(mine, torch.tensor([ids]), torch.tensor([masks]))[0])
        hf_logits, _ = hf_run(hf, ids)
        plain = hf_logits[masks]
        d_plain = float((plain - ms_plain).abs().max())
        d_mine = float((mine_emd - emd).abs().max())
        print(f"{text!r}: masks {masks}; HF plain vs microsoft's head {d_plain:.1e}; emd.py vs microsoft EMD {d_mine:.1e}")
        # HF and model.py scale attention by a float32-rounded sqrt(d * 3), microsoft by the float64 one: ~1e-7 here.
        assert d_plain <= 1e-6 and d_mine <= 1e-6, (d_plain, d_mine)
        cases.append({"text": text, "input_ids": ids, "tokens": tok.convert_ids_to_tokens(ids), "mask_positions": masks,
                      "emd": [{"position": p, **top5(emd[k])} for k, p in enumerate(masks)],
                      "plain": [{"position": p, **top5(plain[k])} for k, p in enumerate(masks)]})
        for k, p in enumerate(masks):
            show = lambda r: [tok.convert_ids_to_tokens(i) for i in torch.topk(r, 5).indices.tolist()]  # noqa: E731
            print(f"  [MASK] at {p}: EMD {show(emd[k])}  plain {show(plain[k])}")
    ref = {"about": "models/default through microsoft/DeBERTa's MaskedLanguageModel (EnhancedMaskDecoder, float64) and "
                    "Hugging Face's DebertaV2ForMaskedLM (legacy=false, float64: the plain head on the last hidden "
                    "state); tools/train-default-model/make_emd_reference.py",
           "cases": cases}
    with open(OUT, "w") as f:
        json.dump(ref, f, indent=1)
        f.write("\n")
    print("wrote", os.path.relpath(OUT, REPO))


if __name__ == "__main__":
    main()
