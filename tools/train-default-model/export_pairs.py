"""Export a train_pairs.py checkpoint as a Hugging Face sequence-classification folder.

    /usr/bin/python3 export_pairs.py --arch deberta --out ../../models/default-pairs
    /usr/bin/python3 export_pairs.py --arch bert --out ../../models/bert-twin-pairs

Writes config.json (`DebertaV2ForSequenceClassification` / `BertForSequenceClassification`, id2label / label2id,
problem_type, pooler fields), model.safetensors (float32, the keys HF's save_pretrained writes: `deberta.*` +
`pooler.dense.*` + `classifier.*`, or `bert.*` incl. `bert.pooler.dense.*` + `classifier.*`; no MLM head), and
copies spm.model, tokenizer_config.json and special_tokens_map.json from the model it was fine-tuned from.
Leaves MODEL_CARD.md / loss.png there alone.
"""
import argparse
import json
import os
import shutil
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from safetensors_io import write_safetensors  # noqa: E402
from train_pairs import ARCHS  # noqa: E402

KEY_ORDER = ["model_type", "architectures", "id2label", "label2id", "num_labels", "problem_type"]


def export(ckpt_path, arch, out):
    ck = torch.load(ckpt_path, map_location="cpu")
    sd = ck["models"][arch]
    cfg = dict(ck["configs"][arch])
    cfg["torch_dtype"] = "float32"
    cfg = {**{k: cfg[k] for k in KEY_ORDER}, **{k: v for k, v in cfg.items() if k not in KEY_ORDER}}
    bad = [k for k in sd if k.startswith(("cls.", "lm_predictions."))]
    assert not bad, bad
    os.makedirs(out, exist_ok=True)
    write_safetensors(os.path.join(out, "model.safetensors"), {k: v.float() for k, v in sd.items()}, {"format": "pt"})
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
        f.write("\n")
    for name in ("spm.model", "tokenizer_config.json", "special_tokens_map.json"):
        shutil.copyfile(os.path.join(ARCHS[arch], name), os.path.join(out, name))
    st = ck["state"]
    return {"arch": arch, "step": st["step"], "tensors": len(sd), "params": sum(v.numel() for v in sd.values()),
            "bytes": os.path.getsize(os.path.join(out, "model.safetensors"))}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--arch", required=True, choices=list(ARCHS))
    ap.add_argument("--run-dir", default=None, help="default: work/pairs_run/ARCH")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    run = args.run_dir or os.path.join(HERE, "work", "pairs_run", args.arch)
    print(json.dumps(export(os.path.join(run, "ckpt.pt"), args.arch, args.out)))


if __name__ == "__main__":
    main()
