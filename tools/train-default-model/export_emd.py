"""Write the bundled model with its Enhanced Mask Decoder: the model folder's weights unchanged, the MLM head under
microsoft's key names (`lm_predictions.lm_head.*`: the head microsoft's MaskedLanguageModel reads behind the EMD, and
the one Hugging Face's DebertaV2ForMaskedLM reads with `legacy: false`), plus the trained absolute position table
`deberta.embeddings.position_embeddings.weight` from train_emd.py's checkpoint. config.json gains `"legacy": false` and
`"tie_word_embeddings": false` (else HF's legacy=false class ties the head's dense layer to the word embeddings);
the tokenizer files, card and loss curve are left alone. Idempotent: a folder already in this layout is rewritten
from its own weights (its old position table replaced).

    /usr/bin/python3 export_emd.py [--model ../../models/default] [--ckpt work/emd/ckpt.pt]
"""
import argparse
import collections
import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from emd import POSITION_TABLE, from_microsoft_keys, to_microsoft_keys  # noqa: E402
from safetensors_io import read_safetensors, write_safetensors  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default=os.path.join(HERE, "..", "..", "models", "default"))
    ap.add_argument("--ckpt", default=os.path.join(HERE, "work", "emd", "ckpt.pt"))
    args = ap.parse_args()
    path = os.path.join(args.model, "model.safetensors")
    sd = from_microsoft_keys(read_safetensors(path))
    sd.pop(POSITION_TABLE, None)
    ck = torch.load(args.ckpt, map_location="cpu")
    table = ck["position_table"].float().contiguous()
    cfg = json.load(open(os.path.join(args.model, "config.json")), object_pairs_hook=collections.OrderedDict)
    assert list(table.shape) == [cfg["max_position_embeddings"], cfg["hidden_size"]], table.shape
    out = to_microsoft_keys({k: v.float() for k, v in sd.items()})
    out[POSITION_TABLE] = table
    write_safetensors(path, out, {"format": "pt"})
    cfg["legacy"] = False
    # Hugging Face's legacy=false DebertaV2ForMaskedLM would otherwise tie lm_predictions.lm_head.dense (its "output
    # embeddings") to the word embeddings on load; its forward multiplies by the word embeddings itself.
    cfg["tie_word_embeddings"] = False
    with open(os.path.join(args.model, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
        f.write("\n")
    print(json.dumps({"step": ck["state"]["step"], "tensors": len(out), "bytes": os.path.getsize(path)}))


if __name__ == "__main__":
    main()
