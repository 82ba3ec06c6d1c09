"""Build the "does B continue A?" sentence-pair task from the corpus (fine-tuning data for models/*-pairs).

Each paragraph (one line of the corpus) is split into sentences (a rule-based splitter: . ! ? followed by space and
an upper-case letter/digit/opening quote, with common abbreviations and initials kept together) and every sentence is
encoded with the default model's spm.model. A pair is (A, B, label):

* next (label 1): A = sentence i of a paragraph, B = sentence i+1 of the same paragraph.
* not_next (label 0), three kinds in equal shares:
  - same_paragraph: B = another sentence of A's paragraph, not i or i+1 (earlier, or two or more later);
  - nearby: B = a sentence of a paragraph 2–30 paragraphs away (the same book / documentation page in practice;
    the corpus has no document boundaries, so this is by distance in the file);
  - random: B = a sentence of a paragraph at least 2,000 paragraphs away in the same source (another book, or
    another part of the technical prose; a quarter of the file in t_heldout, whose 1,400 lines are blocks of 200
    from all over the technical prose), never from the other source.

Every B is a sentence that is not the first of its paragraph, and every A has a successor in its paragraph, so B's
and A's own position in their paragraph says nothing about the label. Each sentence is 4–60 pieces; [CLS] A [SEP] B
[SEP] is ≤ 128 tokens. Labels are balanced (exactly half next).

Training pairs come only from g_train / t_train (80% books, 20% technical, as the pre-training batches); the
evaluation pairs only from g_heldout / t_heldout, the files the default model never saw. Deterministic (--seed).
Writes WORK/pairs/{train.pt, heldout.json, stats.json}.
"""
import argparse
import gzip
import json
import os
import random
import re
import time

import sentencepiece as spm
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
MIN_LEN, MAX_LEN = 4, 60
NEG_KINDS = ("same_paragraph", "nearby", "random")
ABBREV = {"mr", "mrs", "ms", "dr", "st", "sr", "jr", "prof", "rev", "gen", "col", "capt", "lt", "sgt", "hon", "mt",
          "vs", "etc", "e.g", "i.e", "cf", "no", "vol", "ch", "fig", "pp", "p", "ed", "eds", "esq", "messrs", "viz",
          "approx", "dept", "inc", "ltd", "co", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct",
          "nov", "dec"}
BOUNDARY = re.compile(r"(?<=[.!?])[\"'”’)\]]*\s+(?=[\"'“‘(\[]*[A-Z0-9])")


def split_sentences(par):
    out, start = [], 0
    for m in BOUNDARY.finditer(par):
        head = par[start:m.start()]
        # the word right before the boundary punctuation: keep abbreviations and single initials together
        word = re.split(r"\s", head.rstrip(".!?\"'”’)]"))[-1].lower() if head.strip() else ""
        if head.endswith(".") and (word in ABBREV or (len(word) == 1 and word.isalpha())):
            continue
        cut = m.end()
        s = par[start:cut].strip()
        if s:
            out.append(s)
        start = cut
    tail = par[start:].strip()
    if tail:
        out.append(tail)
    return out


def read_source(corpus, name, sp):
    with gzip.open(os.path.join(corpus, f"{name}.txt.gz"), "rt", encoding="utf-8") as f:
        paras = [ln.strip() for ln in f if ln.strip()]
    sents = [split_sentences(p) for p in paras]
    flat = [s for ss in sents for s in ss]
    ids = sp.encode(flat)
    out, k = [], 0
    for ss in sents:
        out.append([(s, ids[k + j]) for j, s in enumerate(ss)])
        k += len(ss)
    return out


def ok(ids):
    return MIN_LEN <= len(ids) <= MAX_LEN


class Source:
    """One corpus file as paragraphs of (text, ids) sentences, with the index lists the sampler draws from."""

    def __init__(self, name, paras):
        self.name, self.paras = name, paras
        # A positions: (p, i) with sentence i+1 present and both usable
        self.a_pos = [(p, i) for p, ss in enumerate(paras) for i in range(len(ss) - 1)
                      if ok(ss[i][1]) and ok(ss[i + 1][1])]
        # B candidates: non-first usable sentences, per paragraph
        self.b_of = {p: [j for j in range(1, len(ss)) if ok(ss[j][1])] for p, ss in enumerate(paras)}
        self.b_paras = [p for p, js in self.b_of.items() if js]
        self.b_index = {p: k for k, p in enumerate(self.b_paras)}

    def negative(self, rng, kind, p, i):
        if kind == "same_paragraph":
            js = [j for j in self.b_of[p] if j not in (i, i + 1)]
            return (p, rng.choice(js)) if js else None
        if kind == "nearby":
            lo, hi = p - 30, p + 30
            cands = [q for q in range(max(0, lo), min(len(self.paras), hi + 1)) if abs(q - p) >= 2 and self.b_of[q]]
            if not cands:
                return None
            q = rng.choice(cands)
            return q, rng.choice(self.b_of[q])
        far = min(2000, len(self.paras) // 4)
        for _ in range(50):  # random: far away in the same source
            q = rng.choice(self.b_paras)
            if abs(q - p) >= far:
                return q, rng.choice(self.b_of[q])
        return None


def make_pair(src, rng, label, kind, p, i):
    if label == 1:
        q, j = p, i + 1
    else:
        nb = src.negative(rng, kind, p, i)
        if nb is None:
            return None
        q, j = nb
    a_text, a_ids = src.paras[p][i]
    b_text, b_ids = src.paras[q][j]
    return {"source": src.name, "label": label, "kind": "next" if label == 1 else kind, "a": a_text, "b": b_text,
            "a_ids": list(a_ids), "b_ids": list(b_ids), "a_at": [p, i], "b_at": [q, j]}


def sample_pairs(src, rng, n, distinct_a=False):
    """n pairs, half next; negatives cycle through the three kinds. With distinct_a each A sentence is used once."""
    out = []
    order = list(range(len(src.a_pos)))
    rng.shuffle(order)
    it = iter(order)
    k = 0
    while len(out) < n:
        if distinct_a:
            try:
                p, i = src.a_pos[next(it)]
            except StopIteration:
                break
        else:
            p, i = src.a_pos[rng.randrange(len(src.a_pos))]
        label = 1 if k % 2 == 0 else 0
        kind = NEG_KINDS[(k // 2) % 3]
        pr = make_pair(src, rng, label, kind, p, i)
        if pr is not None:
            out.append(pr)
            k += 1
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default="/work/shared/corpus")
    ap.add_argument("--spm-model", default=os.path.join(HERE, "..", "..", "models", "default", "spm.model"))
    ap.add_argument("--out", default=os.path.join(HERE, "work", "pairs"))
    ap.add_argument("--train-pairs", type=int, default=160000)
    ap.add_argument("--tech-frac", type=float, default=0.2)
    ap.add_argument("--heldout-pairs", type=int, default=2400, help="per held-out source (fewer if it runs out)")
    ap.add_argument("--seed", type=int, default=1234)
    args = ap.parse_args()
    t0 = time.time()
    os.makedirs(args.out, exist_ok=True)
    sp = spm.SentencePieceProcessor(model_file=args.spm_model)
    srcs = {n: Source(n, read_source(args.corpus, n, sp)) for n in ("g_train", "t_train", "g_heldout", "t_heldout")}
    stats = {"seed": args.seed, "sentence_pieces": [MIN_LEN, MAX_LEN], "sources": {}}
    for n, s in srcs.items():
        stats["sources"][n] = {"paragraphs": len(s.paras), "sentences": sum(len(x) for x in s.paras),
                               "a_positions": len(s.a_pos)}
        print(n, stats["sources"][n], f"{time.time() - t0:.0f}s", flush=True)

    rng = random.Random(args.seed)
    n_t = round(args.train_pairs * args.tech_frac)
    train = sample_pairs(srcs["g_train"], rng, args.train_pairs - n_t) + sample_pairs(srcs["t_train"], rng, n_t)
    rng.shuffle(train)
    torch.save({"a": [p["a_ids"] for p in train], "b": [p["b_ids"] for p in train],
                "label": [p["label"] for p in train], "kind": [p["kind"] for p in train],
                "source": [p["source"] for p in train]}, os.path.join(args.out, "train.pt"))
    heldout = []
    for n in ("g_heldout", "t_heldout"):
        hrng = random.Random(f"{args.seed}-{n}")
        ps = sample_pairs(srcs[n], hrng, args.heldout_pairs, distinct_a=True)
        ps = ps[: len(ps) // 2 * 2]
        heldout += ps
    with open(os.path.join(args.out, "heldout.json"), "w") as f:
        json.dump(heldout, f, ensure_ascii=False)
    # a few training pairs as text, for the card
    stats["train"] = {"pairs": len(train), "next": sum(p["label"] for p in train),
                      "by_source": {n: sum(p["source"] == n for p in train) for n in ("g_train", "t_train")},
                      "by_kind": {k: sum(p["kind"] == k for p in train) for k in ("next",) + NEG_KINDS},
                      "mean_tokens": sum(len(p["a_ids"]) + len(p["b_ids"]) + 3 for p in train) / len(train)}
    stats["heldout"] = {n: {"pairs": sum(p["source"] == n for p in heldout),
                            "by_kind": {k: sum(p["source"] == n and p["kind"] == k for p in heldout)
                                        for k in ("next",) + NEG_KINDS}} for n in ("g_heldout", "t_heldout")}
    stats["train_examples"] = [{k: p[k] for k in ("source", "kind", "a", "b")} for p in train[:3]]
    stats["seconds"] = round(time.time() - t0, 1)
    with open(os.path.join(args.out, "stats.json"), "w") as f:
        json.dump(stats, f, indent=1, ensure_ascii=False)
    print(json.dumps({k: v for k, v in stats.items() if k != "train_examples"}, indent=1))


if __name__ == "__main__":
    main()
