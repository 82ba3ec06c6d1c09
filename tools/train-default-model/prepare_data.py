"""Train the SentencePiece Unigram tokenizer and encode the corpus into token streams.

Inputs: /work/shared/corpus/{g_train,t_train,g_heldout,t_heldout}.txt.gz (one paragraph per line).
Outputs in --work: spm.model / spm.vocab, {name}.npy (uint16 token ids, paragraphs concatenated in file
order, no separators), data_stats.json (line/char/token counts, tokenizer settings).

With --spm-model (e.g. ../../models/default/spm.model) the tokenizer is not trained again: the given model is
copied into --work and only the encoding runs, so a second model (the BERT twin) sees exactly the same ids.

Special ids follow DeBERTa-v3: [PAD]=0 [CLS]=1 [SEP]=2 [UNK]=3 are spm pieces 0..3; [MASK] = piece count.
"""
import argparse
import gzip
import json
import os
import random
import shutil
import time

import numpy as np
import sentencepiece as spm

SOURCES = ["g_train", "t_train", "g_heldout", "t_heldout"]


def read_lines(corpus, name):
    with gzip.open(os.path.join(corpus, f"{name}.txt.gz"), "rt", encoding="utf-8") as f:
        return [ln.rstrip("\n") for ln in f if ln.strip()]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default="/work/shared/corpus")
    ap.add_argument("--work", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "work"))
    ap.add_argument("--vocab", type=int, default=8000)
    ap.add_argument("--spm-sample", type=int, default=300000, help="paragraphs sampled to train spm")
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--spm-model", default=None, help="reuse this spm.model instead of training one")
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    t0 = time.time()
    lines = {n: read_lines(args.corpus, n) for n in SOURCES}
    print({n: len(v) for n, v in lines.items()}, f"{time.time() - t0:.1f}s", flush=True)

    if args.spm_model:
        shutil.copyfile(args.spm_model, os.path.join(args.work, "spm.model"))
        encode_all(args, lines, {"reused_spm_model": os.path.abspath(args.spm_model)}, None, t0)
        return

    # Tokenizer training text: a seeded sample of the training paragraphs (books + technical prose).
    rng = random.Random(args.seed)
    pool = lines["g_train"] + lines["t_train"]
    sample = rng.sample(pool, min(args.spm_sample, len(pool)))
    sample_path = os.path.join(args.work, "spm_input.txt")
    with open(sample_path, "w", encoding="utf-8") as f:
        f.write("\n".join(sample) + "\n")
    if hasattr(spm, "set_random_generator_seed"):
        spm.set_random_generator_seed(args.seed)
    spm_opts = dict(
        input=sample_path, model_prefix=os.path.join(args.work, "spm"), vocab_size=args.vocab,
        model_type="unigram", normalization_rule_name="nmt_nfkc", character_coverage=0.9995,
        pad_id=0, bos_id=1, eos_id=2, unk_id=3,
        pad_piece="[PAD]", bos_piece="[CLS]", eos_piece="[SEP]", unk_piece="[UNK]",
        max_sentence_length=8192, shuffle_input_sentence=False, num_threads=2,
        split_digits=True,
    )
    spm.SentencePieceTrainer.train(**spm_opts)
    print(f"spm trained, {time.time() - t0:.1f}s", flush=True)
    encode_all(args, lines, {"spm": {k: v for k, v in spm_opts.items() if k not in ("input", "model_prefix")},
                             "spm_sample_paragraphs": len(sample)}, sample_path, t0)


def encode_all(args, lines, about, sample_path, t0):
    sp = spm.SentencePieceProcessor(model_file=os.path.join(args.work, "spm.model"))
    assert [sp.id_to_piece(i) for i in range(4)] == ["[PAD]", "[CLS]", "[SEP]", "[UNK]"]
    stats = {"seed": args.seed, **about, "pieces": sp.get_piece_size(), "mask_id": sp.get_piece_size(),
             "sources": {}}
    for name in SOURCES:
        ids = sp.encode(lines[name])
        flat = np.fromiter((t for row in ids for t in row), dtype=np.uint16)
        np.save(os.path.join(args.work, f"{name}.npy"), flat)
        chars = sum(len(s) for s in lines[name])
        stats["sources"][name] = {"paragraphs": len(lines[name]), "chars": chars, "tokens": int(flat.size),
                                  "chars_per_token": round(chars / max(1, flat.size), 3)}
        print(name, stats["sources"][name], f"{time.time() - t0:.1f}s", flush=True)
    if sample_path:
        os.remove(sample_path)
    with open(os.path.join(args.work, "data_stats.json"), "w") as f:
        json.dump(stats, f, indent=1)


if __name__ == "__main__":
    main()
