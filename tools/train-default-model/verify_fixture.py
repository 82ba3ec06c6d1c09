"""Check model.py against Hugging Face's outputs for the v3_tiny fixture (c2c, c2p, p2c, scores, probs,
last_hidden_state), or with --fixture pointing at a BERT fixture (bert_tiny), model_bert.py (scores, probs,
last_hidden_state, MLM logits at the masks). Exit code 1 if any max abs difference exceeds --tol (default 1e-4)."""
import argparse
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from model import Backbone  # noqa: E402
from model_bert import BertForMaskedLM  # noqa: E402
from safetensors_io import read_safetensors  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT = os.path.join(HERE, "..", "..", "test", "data", "fixtures", "deberta", "v3_tiny")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fixture", default=DEFAULT)
    ap.add_argument("--tol", type=float, default=1e-4)
    args = ap.parse_args()
    cfg = json.load(open(os.path.join(args.fixture, "config.json")))
    if cfg["model_type"] == "bert":
        sys.exit(verify_bert(args.fixture, cfg, args.tol))
    sd = read_safetensors(os.path.join(args.fixture, "model.safetensors"))
    enc = {k[len("deberta."):]: v for k, v in sd.items() if k.startswith("deberta.") and "position_embeddings" not in k}
    net = Backbone(cfg).eval()
    missing, unexpected = net.load_state_dict(enc, strict=False)
    if missing or unexpected:
        sys.exit(f"fixture weights do not fit: missing {missing}, unexpected {unexpected}")
    exp = json.load(open(os.path.join(args.fixture, "expected_outputs.json")))
    worst = 0.0
    for case in exp["cases"]:
        ids = torch.tensor([case["input_ids"]])
        cap = []
        with torch.no_grad():
            h = net(ids, capture=cap)
        e = case["expected"]
        diffs = {"last_hidden_state": (h[0] - torch.tensor(e["last_hidden_state"])).abs().max().item()}
        for li, layer in enumerate(e["layers"]):
            for term in ("c2c", "c2p", "p2c", "scores", "probs"):
                d = (cap[li][term][0].double() - torch.tensor(layer[term], dtype=torch.double)).abs().max().item()
                diffs[f"L{li}.{term}"] = d
        scale = net.encoder.layer[0].attention.self.scale
        diffs["scale"] = abs(scale - e["scale"])
        m = max(diffs.values())
        worst = max(worst, m)
        print(f"{case['name']:8s} n={ids.shape[1]:3d} max|diff|={m:.2e}  " +
              " ".join(f"{k}={v:.1e}" for k, v in diffs.items()))
    print(f"worst {worst:.2e} (tol {args.tol:g}) -> {'OK' if worst <= args.tol else 'FAIL'}")
    sys.exit(0 if worst <= args.tol else 1)


def verify_bert(fixture, cfg, tol):
    sd = read_safetensors(os.path.join(fixture, "model.safetensors"))
    net = BertForMaskedLM(cfg).eval()
    missing, unexpected = net.load_state_dict(sd, strict=False)
    if missing or unexpected:
        return f"fixture weights do not fit: missing {missing}, unexpected {unexpected}"
    exp = json.load(open(os.path.join(fixture, "expected_outputs.json")))
    worst = 0.0
    for case in exp["cases"]:
        ids = torch.tensor([case["input_ids"]])
        types = torch.tensor([case["token_type_ids"]])
        cap = []
        with torch.no_grad():
            h = net.bert(ids, capture=cap, token_types=types)
            logits = net.mlm_logits(h[0])
        e = case["expected"]
        diffs = {"last_hidden_state": (h[0] - torch.tensor(e["last_hidden_state"])).abs().max().item()}
        for li, layer in enumerate(e["layers"]):
            for term in ("scores", "probs"):
                d = (cap[li][term][0].double() - torch.tensor(layer[term], dtype=torch.double)).abs().max().item()
                diffs[f"L{li}.{term}"] = d
        for pos, want in e["mlm_logits_at_mask"].items():
            got = logits[int(pos)].double()
            diffs[f"mlm@{pos}"] = (got - torch.tensor(want, dtype=torch.double)).abs().max().item()
        diffs["scale"] = abs(net.bert.encoder.layer[0].attention.self.scale - e["scale"])
        m = max(diffs.values())
        worst = max(worst, m)
        print(f"{case['name']:8s} n={ids.shape[1]:3d} max|diff|={m:.2e}  " +
              " ".join(f"{k}={v:.1e}" for k, v in diffs.items()))
    print(f"worst {worst:.2e} (tol {tol:g}) -> {'OK' if worst <= tol else 'FAIL'}")
    return 0 if worst <= tol else 1


if __name__ == "__main__":
    main()
