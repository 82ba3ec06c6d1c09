"""Export a training checkpoint as a Hugging Face DebertaV2ForMaskedLM folder.

Writes config.json, model.safetensors (float16 by default, own writer), spm.model, tokenizer_config.json and
special_tokens_map.json into --out. The decoder is tied to the word embeddings, so only `cls.predictions.bias`
and the transform are stored for the head (HF re-ties on load). Leaves any MODEL_CARD.md / loss.png there alone.
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

SPECIALS = {"bos_token": "[CLS]", "eos_token": "[SEP]", "unk_token": "[UNK]", "sep_token": "[SEP]",
            "pad_token": "[PAD]", "cls_token": "[CLS]", "mask_token": "[MASK]"}


def export(ckpt_path, work, out, dtype="float32"):
    ck = torch.load(ckpt_path, map_location="cpu")
    cfg = dict(ck["config"])
    cfg["torch_dtype"] = dtype
    os.makedirs(out, exist_ok=True)
    tdt = {"float16": torch.float16, "float32": torch.float32}[dtype]
    tensors = {k: v.to(tdt) for k, v in ck["model"].items()}
    write_safetensors(os.path.join(out, "model.safetensors"), tensors, {"format": "pt"})
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
        f.write("\n")
    shutil.copyfile(os.path.join(work, "spm.model"), os.path.join(out, "spm.model"))
    tok = {"tokenizer_class": "DebertaV2Tokenizer", "vocab_type": "spm", "do_lower_case": False,
           "split_by_punct": False, "model_max_length": 512, **SPECIALS}
    with open(os.path.join(out, "tokenizer_config.json"), "w") as f:
        json.dump(tok, f, indent=2)
        f.write("\n")
    with open(os.path.join(out, "special_tokens_map.json"), "w") as f:
        json.dump(SPECIALS, f, indent=2)
        f.write("\n")
    st = ck["state"]
    return {"step": st["step"], "tokens": st["tokens"], "tensors": len(tensors),
            "bytes": os.path.getsize(os.path.join(out, "model.safetensors"))}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", default=os.path.join(HERE, "work"))
    ap.add_argument("--ckpt", default=None, help="default: WORK/ckpt.pt")
    ap.add_argument("--out", default=os.path.join(HERE, "..", "..", "models", "default"))
    ap.add_argument("--dtype", default="float32", choices=["float16", "float32"])
    args = ap.parse_args()
    info = export(args.ckpt or os.path.join(args.work, "ckpt.pt"), args.work, args.out, args.dtype)
    print(json.dumps(info))


if __name__ == "__main__":
    main()
