"""Write models/bert-twin/MODEL_CARD.md and loss.png from the twin's training log and state, and both models'
evaluate.py results; then put the same side-by-side accuracy table into models/default/MODEL_CARD.md (its section
"Beside its BERT twin", replaced on every run), so both cards report the comparison by the same protocol.

    /usr/bin/python3 make_twin_card.py   # after evaluate.py has written work/eval_results.json (default model)
                                          # and work/bert/eval_results.json (the twin)
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make_card import md_table, plot, read_log  # noqa: E402
from safetensors_io import read_safetensors  # noqa: E402

SECTION = "## Beside its BERT twin"
NAMES = {"g_heldout": "books (g_heldout)", "t_heldout": "technical (t_heldout)"}


def comparison(ev_default, ev_twin):
    rows = []
    for k, name in NAMES.items():
        a, b = ev_default["mlm"][k], ev_twin["mlm"][k]
        assert a["masked"] == b["masked"], "both models must be evaluated on the same masked positions"
        rows.append((name, a["masked"], f"{100 * a['accuracy']:.1f}%", f"{100 * b['accuracy']:.1f}%",
                     f"{100 * (a['accuracy'] - b['accuracy']):+.1f}", f"{100 * a['baseline_accuracy']:.1f}%",
                     f"{a['perplexity']:.1f}", f"{b['perplexity']:.1f}", f"{a['baseline_perplexity']:.0f}"))
    table = md_table(["held-out source", "masked tokens", "DeBERTa-v3 (default) acc.", "BERT twin acc.",
                      "difference (points)", "unigram baseline acc.", "DeBERTa-v3 ppl.", "BERT twin ppl.",
                      "unigram ppl."], rows)
    g = ev_default["mlm"]["g_heldout"]["accuracy"] - ev_twin["mlm"]["g_heldout"]["accuracy"]
    t = ev_default["mlm"]["t_heldout"]["accuracy"] - ev_twin["mlm"]["t_heldout"]["accuracy"]
    if g > 0 and t > 0:
        verdict = "The disentangled model is ahead on both sources"
    elif g < 0 and t < 0:
        verdict = "The BERT twin is ahead on both sources"
    else:
        verdict = "Neither model is ahead on both sources"
    text = (f"{verdict} ({100 * g:+.1f} and {100 * t:+.1f} points, DeBERTa minus BERT). One run each, one seed: "
            "differences of a point or less are within what another seed could change.")
    over = {k: ev_twin["mlm"][k]["accuracy"] - ev_twin["mlm"][k]["baseline_accuracy"] for k in NAMES}
    over_d = {k: ev_default["mlm"][k]["accuracy"] - ev_default["mlm"][k]["baseline_accuracy"] for k in NAMES}
    prev = {n: max(r["prev_share"] for r in ev["attention"]["rows"]) for n, ev in (("twin", ev_twin), ("default", ev_default))}
    budget = "one small batch of 16 × 128 tokens per step, 120.8 M tokens in all"
    why = ("The DeBERTa model, whose relative c2p/p2c terms give every layer position from the first step, had left "
           "the plateau well before step 5,920 (train loss 3.96 there, in its card's loss table). On this budget, "
           "then, relative position terms are what let the model use context early: the DeBERTa paper's comparison "
           "in miniature, more one-sided than at full scale, where BERT leaves the plateau with far more tokens per "
           "step and in all.")
    if max(over.values()) < 0.02:
        text += (f" **The BERT twin did not get past the unigram plateau**: its accuracy is within two points of always "
                 f"guessing the most frequent piece, so on this budget ({budget}) its learned absolute positions never "
                 f"became usable and its attention stays close to uniform (the twin card's attention structure). {why}")
    elif all(over[k] < over_d[k] / 2 for k in NAMES):
        text += (f" **The BERT twin is only just off the unigram plateau**: "
                 f"{100 * over['g_heldout']:.1f} / {100 * over['t_heldout']:.1f} points above always guessing the most "
                 f"frequent piece (books / technical), where the DeBERTa model is {100 * over_d['g_heldout']:.1f} / "
                 f"{100 * over_d['t_heldout']:.1f} points above it. On this budget ({budget}) its learned absolute "
                 f"positions barely became usable: no head attends to the neighbouring token (largest previous-token "
                 f"share {prev['twin']:.3f}, against {prev['default']:.2f} in the DeBERTa model) and nearly every head "
                 f"spreads its attention broadly (the twin card's attention structure). {why}")
    return table, text


def protocol_text():
    return ("Same protocol for both (`evaluate.py`, seed 4321): consecutive 128-token windows of the held-out text, the "
            "same 15% of positions replaced by `[MASK]` in both models' inputs, accuracy = top-1 equals the original "
            "piece, perplexity over the masked positions. The two models share the tokenizer, the training data, the "
            "batches, the masking, the optimizer, the seed and the step schedule; they differ only in how attention sees "
            "position (DeBERTa: relative c2p/p2c terms in every layer; BERT: absolute position embeddings added once).")


def twin_card(cfg, stats, st, targs, ev_default, ev_twin, rows, sizes, n_params):
    table, verdict = comparison(ev_default, ev_twin)
    pick = [rows[min(len(rows) - 1, round(k * (len(rows) - 1) / 10))] for k in range(11)] if rows else []
    loss_rows = [(r["step"], f"{int(r['tokens']) / 1e6:.2f}M", r["loss"], r["mlm_acc"], r["lr"], r["tokens_per_s"],
                  r["utc"]) for r in pick]
    phases = "; ".join(f"from step {p['from_step']:,}: {p['warmup']} warmup steps to {p['lr']}, linear decay to 0 at "
                       f"step {p['to_step']:,}" for p in st["phases"])
    fm_rows = [(f["text"], f["answer"], ", ".join(f"{t} ({p:.2f})" for t, p in f["top5"]))
               for f in ev_twin["fill_mask"] if "top5" in f]
    att = ev_twin["attention"]
    att_rows = [(r["layer"], r["head"], r["label"], f"{r['cls_share']:.2f}", f"{r['sep_share']:.2f}",
                 f"{r['punct_share']:.2f}", f"{r['prev_share']:.2f}", f"{r['self_share']:.2f}", f"{r['next_share']:.2f}",
                 f"{r['mean_abs_distance']:.1f}") for r in att["rows"]]
    labels = {}
    for r in att["rows"]:
        labels[r["label"]] = labels.get(r["label"], 0) + 1
    avg_tps = st["tokens"] / max(1.0, st["train_seconds"])

    def mean_loss(lo, hi):
        xs = [float(r["loss"]) for r in rows if lo <= int(r["step"]) < hi]
        return sum(xs) / max(1, len(xs))
    last = int(rows[-1]["step"]) if rows else 0
    spans = [(2000, 3000), (8000, 9000), (20000, 45000), (45000, 50000), (last - 1000, last + 1)]
    loss_path = "; ".join(f"steps {lo:,}–{min(hi - 1, last):,}: {mean_loss(lo, hi):.2f}" for lo, hi in spans)
    return f"""# DeBERTa Lens BERT twin (`models/bert-twin/`)

**The BERT twin of the bundled DeBERTa-v3 demo model** (`models/default/`), shipped so that **Compare with Another
Model…** can put entangled attention (BERT: absolute positions added to the word embeddings once, so every score
mixes content and position) beside disentangled attention (DeBERTa: relative c2p/p2c terms in every layer) on the
same text, offline. It has the default model's size, tokenizer, data, batches, masking, optimizer, seed and step
schedule; only the attention's view of position differs. Like the default model it is small, trained from scratch on
two CPU cores, and not meant for downstream use. In VS Code pick **BERT twin of the default model** under *Embedded*
in Select Model / Compare, or set `debertaLens.modelPath` to `bert-twin`; on the CLI `--model bert-twin`.

## Architecture

`model_type: bert`, `BertForMaskedLM` in Hugging Face layout (`bert.` prefix; the MLM decoder tied to the word
embeddings and not stored, as `save_pretrained` writes it); the engine loads it through the same path as any BERT.

| field | value |
|---|---|
| layers × hidden × heads (head dim) | {cfg['num_hidden_layers']} × {cfg['hidden_size']} × {cfg['num_attention_heads']} ({cfg['hidden_size'] // cfg['num_attention_heads']}) |
| FFN size, activation | {cfg['intermediate_size']}, `{cfg['hidden_act']}` (exact erf GELU) |
| positions | absolute, `max_position_embeddings` {cfg['max_position_embeddings']} (the training length: longer inputs are refused with a message, since rows training never reached would give meaningless attention) |
| token types | `type_vocab_size` {cfg['type_vocab_size']} (training used type 0 only) |
| LayerNorm eps | {cfg['layer_norm_eps']} (as the default model) |
| vocabulary | {cfg['vocab_size']} = {stats['pieces']} SentencePiece pieces + `[MASK]` ({stats['mask_id']}) |
| parameters | {n_params:,} stored — the same count as the default model: its {cfg['max_position_embeddings']} × {cfg['hidden_size']} position table and 2 token types take the place of DeBERTa's 128 × 256 relative table and its LayerNorm |
| weights | `model.safetensors`, {cfg.get('torch_dtype', 'float32')} |

Files: {", ".join(f"`{k}` {v / 1e6:.2f} MB" for k, v in sizes.items())}; total {sum(sizes.values()) / 1e6:.2f} MB.

The torch implementation used for training (`tools/train-default-model/model_bert.py`) was checked against Hugging
Face's `BertForMaskedLM` on the `bert_tiny` fixture before training (scores, probs, last hidden state and MLM logits
within 7.7e-6).

## Tokenizer

The default model's `spm.model`, byte for byte (SentencePiece Unigram, {stats['pieces']} pieces; `[PAD]`=0,
`[CLS]`=1, `[SEP]`=2, `[UNK]`=3, `[MASK]`={stats['mask_id']}); `tokenizer_config.json` names `DebertaV2Tokenizer`,
which Hugging Face loads for any model type. The same text gives the same tokens in both models, so Compare's
Difference view works cell by cell.

## Training

Exactly the default model's recipe (see its card): the same token streams (the corpus encoded with its `spm.model`),
random 126-token windows (books {1 - targs['tech_frac']:.1f}, technical prose {targs['tech_frac']:.1f}) wrapped as
`[CLS] … [SEP]`, MLM 15% (80/10/10), batch {targs['batch']}, AdamW (β 0.9/0.98, ε 1e-6, weight decay {targs['wd']}),
clipping 1.0, no dropout, bf16 autocast, seed {targs['seed']}. Learning rate by step, following the default model's
three recorded phases: {phases}. (The default model decayed by wall-clock fraction at a near-constant step rate;
by step, the machine's load changes only this run's duration.) Hardware: the same 2 shared vCPUs at `nice -n 19`
beside other work, {avg_tps:.0f} tokens/s on average.

**{st['step']:,} steps, {st['tokens'] / 1e6:.1f} M tokens seen, {st['train_seconds'] / 60:.0f} minutes of wall-clock time.**

Mean train loss by span of steps ({loss_path}): the default model's loss was 3.96 by step 5,920; the twin sits on
the unigram plateau (about 5.8) for most of the run and moves off it only in the last phase.

![loss curve](loss.png)

{md_table(["step", "tokens", "loss", "masked acc. (train, 80/10/10)", "lr", "tokens/s", "UTC"], loss_rows)}

## Evaluation beside the default model

{protocol_text()}

{table}

{verdict}

### Fill-mask (top 5)

{md_table(["input", "answer", "top 5 (probability)"], fm_rows)}

### Attention structure

On {att['windows']} held-out windows of 128 tokens, by the default card's definitions (shares of attention
probability per query row; BERT has no separate c2p term in its layers, so no c2p peak column — its layer-0 score
splits into c2c, c2p, p2c, p2p and the rest only through the embeddings, which the extension's Compare view shows).
Counts: {", ".join(f"{k} {v}" for k, v in sorted(labels.items(), key=lambda kv: -kv[1]))}.

{md_table(["layer", "head", "label", "[CLS]", "[SEP]", "punct.", "prev", "self", "next", "mean abs δ"], att_rows)}

## Reproduce

`tools/train-default-model/README.md`, section "The BERT twin" (exact commands).
"""


def default_section(ev_default, ev_twin):
    table, verdict = comparison(ev_default, ev_twin)
    return f"""{SECTION}

`models/bert-twin/` is this model's BERT twin: the same size, tokenizer, data and training, with absolute positions
added once instead of relative attention terms (its card has the details). {protocol_text()}

{table}

{verdict}
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", default=os.path.join(HERE, "work"))
    ap.add_argument("--run-dir", default=os.path.join(HERE, "work", "bert"))
    ap.add_argument("--twin", default=os.path.join(HERE, "..", "..", "models", "bert-twin"))
    ap.add_argument("--default", default=os.path.join(HERE, "..", "..", "models", "default"))
    args = ap.parse_args()
    cfg = json.load(open(os.path.join(args.twin, "config.json")))
    stats = json.load(open(os.path.join(args.work, "data_stats.json")))
    tstate = json.load(open(os.path.join(args.run_dir, "train_state.json")))
    ev_default = json.load(open(os.path.join(args.work, "eval_results.json")))
    ev_twin = json.load(open(os.path.join(args.run_dir, "eval_results.json")))
    rows = read_log(os.path.join(args.run_dir, "train_log.tsv"))
    plot(rows, os.path.join(args.twin, "loss.png"))
    n_params = sum(v.numel() for v in read_safetensors(os.path.join(args.twin, "model.safetensors")).values())
    card_path = os.path.join(args.twin, "MODEL_CARD.md")
    for _ in range(2):  # the card lists its own size: the second pass sees the first one's
        sizes = {f: os.path.getsize(os.path.join(args.twin, f)) for f in sorted(os.listdir(args.twin))}
        sizes.setdefault("MODEL_CARD.md", 0)
        card = twin_card(cfg, stats, tstate["state"], tstate["args"], ev_default, ev_twin, rows, sizes, n_params)
        with open(card_path, "w") as f:
            f.write(card)
    dpath = os.path.join(args.default, "MODEL_CARD.md")
    text = open(dpath).read()
    section = default_section(ev_default, ev_twin)
    if SECTION in text:
        start = text.index(SECTION)
        nxt = text.find("\n## ", start + len(SECTION))
        text = text[:start] + section + ("\n" + text[nxt + 1:] if nxt >= 0 else "")
    else:
        anchor = text.index("## Reproduce")
        text = text[:anchor] + section + "\n" + text[anchor:]
    with open(dpath, "w") as f:
        f.write(text)
    print("wrote", card_path, "and the section in", dpath)


if __name__ == "__main__":
    main()
