"""Write models/default/loss.png and models/default/MODEL_CARD.md from the training log, the data stats, the
training state and evaluate.py's results."""
import argparse
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))

LICENCES = {
    "g": "Project Gutenberg books, public domain in the US (authors/illustrators who died after 1954 excluded, "
         "so also public domain under life+70); header/footer stripped",
    "t": "Python 3.11 documentation (PSF-2.0) and Markdown/JSDoc prose of npm packages under MIT / ISC / "
         "Apache-2.0 / BSD / 0BSD / CC0 / Unlicense",
}


# The first start of the recorded run (before train.py recorded phases): its defaults and deadline.
PHASE1 = {"lr": 6e-4, "warmup": 150, "deadline": "2026-11-30T09:00:00Z"}


def read_log(path):
    rows = []
    with open(path) as f:
        head = f.readline().rstrip("\n").split("\t")
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) == len(head):
                rows.append(dict(zip(head, parts)))
    # A resume from the last checkpoint repeats the steps logged after it: keep the later record of each step.
    last = {r["step"]: r for r in rows}
    return sorted(last.values(), key=lambda r: int(r["step"]))


def plot(rows, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    tok = [int(r["tokens"]) / 1e6 for r in rows]
    fig, ax = plt.subplots(figsize=(6, 3.2), dpi=80)
    ax.plot(tok, [float(r["loss"]) for r in rows], lw=1, label="train MLM loss")
    ax.set_xlabel("tokens seen (millions)")
    ax.set_ylabel("cross-entropy (nats)")
    ax2 = ax.twinx()
    ax2.plot(tok, [float(r["mlm_acc"]) for r in rows], lw=1, color="tab:orange", label="train masked acc.")
    ax2.set_ylabel("masked-token accuracy")
    ax.grid(alpha=0.3)
    fig.legend(loc="upper center", ncol=2, fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=80)


def md_table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", default=os.path.join(HERE, "work"))
    ap.add_argument("--model", default=os.path.join(HERE, "..", "..", "models", "default"))
    args = ap.parse_args()
    cfg = json.load(open(os.path.join(args.model, "config.json")))
    stats = json.load(open(os.path.join(args.work, "data_stats.json")))
    tstate = json.load(open(os.path.join(args.work, "train_state.json")))
    ev = json.load(open(os.path.join(args.work, "eval_results.json")))
    rows = read_log(os.path.join(args.work, "train_log.tsv"))
    plot(rows, os.path.join(args.model, "loss.png"))
    st, targs = tstate["state"], tstate["args"]

    import sys
    sys.path.insert(0, HERE)
    from safetensors_io import read_safetensors
    sd = read_safetensors(os.path.join(args.model, "model.safetensors"))
    n_params = sum(v.numel() for v in sd.values())
    n_emb = sd["deberta.embeddings.word_embeddings.weight"].numel()
    sizes = {f: os.path.getsize(os.path.join(args.model, f)) for f in sorted(os.listdir(args.model))}
    # Since the Enhanced Mask Decoder (train_emd.py, export_emd.py): microsoft's head names and a position table.
    head = "lm_predictions.lm_head" if "lm_predictions.lm_head.bias" in sd else "cls.predictions"
    table = sd.get("deberta.embeddings.position_embeddings.weight")
    absolute = ("none (`position_biased_input` false, `type_vocab_size` 0, no conv)" if table is None else
                f"not in the input (`position_biased_input` false): a {table.shape[0]} × {table.shape[1]} table used "
                "only by the Enhanced Mask Decoder (below); `type_vocab_size` 0, no conv")
    emd_note = "" if table is None else f" and the EMD's {table.numel():,}-parameter position table"

    tps = sorted(float(r["tokens_per_s"]) for r in rows)
    avg_tps = st["tokens"] / max(1.0, st["train_seconds"])
    notes_path = os.path.join(args.work, "run_notes.md")
    notes = open(notes_path).read().strip() if os.path.exists(notes_path) else ""
    pick = [rows[min(len(rows) - 1, round(k * (len(rows) - 1) / 10))] for k in range(11)] if rows else []
    loss_rows = [(r["step"], f"{int(r['tokens']) / 1e6:.2f}M", r["loss"], r["mlm_acc"], r["lr"], r["tokens_per_s"],
                  r["utc"]) for r in pick]

    mlm = ev["mlm"]
    names = {"g_heldout": "books (g_heldout, 4 unseen books)", "t_heldout": "technical (t_heldout)"}
    acc_rows = [(names[k], v["masked"], f"{100 * v['accuracy']:.1f}%", f"{v['perplexity']:.1f}",
                 f"{100 * v['baseline_accuracy']:.1f}%", f"{v['baseline_perplexity']:.0f}") for k, v in mlm.items()]
    fm_rows = []
    for f in ev["fill_mask"]:
        if "top5" in f:
            fm_rows.append((f["text"], f["answer"], ", ".join(f"{t} ({p:.2f})" for t, p in f["top5"])))
    att = ev["attention"]
    att_rows = [(r["layer"], r["head"], r["label"], r["c2p_peak_delta_mode"], r["c2p_peak_delta_mean"],
                 f"{r['cls_share']:.2f}", f"{r['sep_share']:.2f}", f"{r['punct_share']:.2f}", f"{r['prev_share']:.2f}",
                 f"{r['self_share']:.2f}", f"{r['next_share']:.2f}", f"{r['mean_abs_distance']:.1f}")
                for r in att["rows"]]
    labels = {}
    for r in att["rows"]:
        labels[r["label"]] = labels.get(r["label"], 0) + 1
    src = stats["sources"]
    data_rows = [(k, LICENCES[k[0]], src[k]["paragraphs"], f"{src[k]['chars'] / 1e6:.1f}M", f"{src[k]['tokens'] / 1e6:.2f}M",
                  "training" if k.endswith("train") else "evaluation only") for k in ("g_train", "t_train", "g_heldout", "t_heldout")]
    hours = st["train_seconds"] / 3600
    # train.py records each phase with the deadline it ends at; the recorded run's first start predates that.
    recorded = st.get("phases", [])
    if not recorded or recorded[0]["from_step"] > 0:
        recorded = [{"from_step": 0, **PHASE1}] + recorded
    phases = []
    for k, ph in enumerate(recorded, start=1):
        start = "from step 0:" if ph["from_step"] == 0 else (
            f"from step {ph['from_step']:,} ({ph['from_tokens'] / 1e6:.1f} M tokens, {ph['start_utc'][11:16]} UTC): "
            "weights and optimizer kept,")
        phases.append(f"phase {k} {start} {ph['warmup']} warmup steps to "
                      f"{ph['lr']}, linear decay to 0 at {ph['deadline']}")
    schedule = "; ".join(phases) + " (decay by wall-clock fraction)"

    card = f"""# DeBERTa Lens default model (`models/default/`)

**This is a small demo model**, trained from scratch on two CPU cores in about {hours:.1f} hours so that the
extension works out of the box and its attention views show real structure. It is far weaker than any released
DeBERTa and is not meant for downstream use. To inspect a real model, point DeBERTa Lens at a folder holding
`config.json` + weights (`model.safetensors` or `pytorch_model.bin`) + `spm.model`, for example
`microsoft/deberta-v3-base` downloaded from the Hugging Face hub (`huggingface-cli download microsoft/deberta-v3-base
--local-dir ./deberta-v3-base`), then use `--model ./deberta-v3-base` on the CLI or the model-path setting in VS Code.

## Architecture

A standard DeBERTa-v3 (`model_type: deberta-v2`, `DebertaV2ForMaskedLM`) with the v3 attention options, in
Hugging Face layout{" (the MLM head under microsoft's names, which HF reads with `legacy: false`)" if table is not None else ""}; the engine loads it through the same path as any user checkpoint.

| field | value |
|---|---|
| layers × hidden × heads (head dim) | {cfg['num_hidden_layers']} × {cfg['hidden_size']} × {cfg['num_attention_heads']} ({cfg['hidden_size'] // cfg['num_attention_heads']}) |
| FFN size, activation | {cfg['intermediate_size']}, `{cfg['hidden_act']}` (exact erf GELU) |
| relative attention | `pos_att_type` `{cfg['pos_att_type']}`, `share_att_key` {str(cfg['share_att_key']).lower()}, `norm_rel_ebd` `{cfg['norm_rel_ebd']}`, `position_buckets` {cfg['position_buckets']}, `max_relative_positions` {cfg['max_relative_positions']} (|δ| ≤ {cfg['position_buckets'] // 2} exact, log buckets beyond) |
| absolute positions / token types / conv | {absolute} |
| LayerNorm eps | {cfg['layer_norm_eps']} |
| vocabulary | {cfg['vocab_size']} = {stats['pieces']} SentencePiece pieces + `[MASK]` ({stats['mask_id']}) |
| parameters | {n_params:,} stored ({n_emb:,} in the tied word embedding; MLM head `{head}.*` included{emd_note}) |
| weights | `model.safetensors`, {cfg.get('torch_dtype', 'float32')} |

Files: {", ".join(f"`{k}` {v / 1e6:.2f} MB" for k, v in sizes.items())}; total {sum(sizes.values()) / 1e6:.2f} MB.

The torch implementation used for training (`tools/train-default-model/model.py`) was checked against the
Hugging Face outputs of the `v3_tiny` fixture before training (c2c, c2p, p2c, scores, probs and the last hidden
state agree to ≤ 6e-6).

## Tokenizer

SentencePiece Unigram, {stats['pieces']} pieces, trained here on {stats['spm_sample_paragraphs']:,} training paragraphs
(seed {stats['seed']}), normalization `nmt_nfkc` (as DeBERTa-v3), character coverage
{stats['spm']['character_coverage']}, digits split. `[PAD]`=0, `[CLS]`=1, `[SEP]`=2, `[UNK]`=3 are pieces 0–3;
`[MASK]` = {stats['mask_id']}, right after the last piece. `DebertaV2Tokenizer`, `do_lower_case` false. A small
vocabulary keeps the tied embedding (which is also the output layer) at a reasonable share of a small model and
gives each piece many training occurrences.

## Data

From `/work/shared/corpus` (see its MANIFEST.md for the book list), used exactly as shipped:

{md_table(["file", "content / licence", "paragraphs", "chars", "tokens", "use"], data_rows)}

Training batches are random 126-token windows of the concatenated paragraphs (books with probability
{1 - targs['tech_frac']:.1f}, technical prose {targs['tech_frac']:.1f}), wrapped as `[CLS] … [SEP]` (length 128).

## Training

MLM, 15% of positions (80% `[MASK]` / 10% random / 10% kept), sequence length 128, batch {targs['batch']}
sequences, AdamW (β 0.9/0.98, ε 1e-6, weight decay {targs['wd']}), gradient clipping 1.0, no dropout, bf16 autocast
on CPU, seed {targs['seed']}. Learning-rate schedule: {schedule}. Hardware: 2 shared vCPUs (AMD EPYC, AVX-512),
torch 1.13 (Debian), run at `nice -n 19` beside other people's builds, tests and benchmarks, so the throughput
followed their load: {avg_tps:.0f} tokens/s on average over the wall-clock time, {tps[0]:.0f}–{tps[-1]:.0f} tokens/s per
20-step log window (~7–9k when the machine was otherwise idle).

**{st['step']:,} steps, {st['tokens'] / 1e6:.1f} M tokens seen, {st['train_seconds'] / 60:.0f} minutes of wall-clock time.**

{notes}

![loss curve](loss.png)

{md_table(["step", "tokens", "loss", "masked acc. (train, 80/10/10)", "lr", "tokens/s", "UTC"], loss_rows)}

## Evaluation (held-out text)

Every chosen position (15%, seeded) replaced by `[MASK]`; consecutive 128-token windows. Baseline: always predict
the most frequent training token / unigram-frequency perplexity.

{md_table(["source", "masked tokens", "accuracy", "perplexity", "baseline accuracy", "baseline perplexity"], acc_rows)}

{"The project's target was ≥ 40% on held-out books; this run reaches " + f"{100 * mlm['g_heldout']['accuracy']:.1f}%" + f" — short of it ({st['tokens'] / 1e6:.0f} M tokens seen)." if mlm['g_heldout']['accuracy'] < 0.4 else "The project's target (≥ 40% on held-out books) is met."}

### Fill-mask (top 5)

{md_table(["input", "answer", "top 5 (probability)"], fm_rows)}

### Attention structure

On {att['windows']} held-out windows of 128 tokens (half books, half technical). `c2p peak δ`: for each query i the
key j where the c2p term is largest, as δ = i − j (positive = to the left); mode and mean over queries. Shares
are the mean attention probability per query row on `[CLS]`, `[SEP]`, punctuation pieces and the previous /
same / next token; `mean |δ|` is the probability-weighted distance. Label rule: special share ≥ 0.5 → sink;
previous / next / self ≥ 0.4; punctuation ≥ 0.4; |δ| ≤ 2 share ≥ 0.6 → local; else broad.
Counts: {", ".join(f"{k} {v}" for k, v in sorted(labels.items(), key=lambda kv: -kv[1]))}.

{md_table(["layer", "head", "label", "c2p peak δ (mode)", "c2p peak δ (mean)", "[CLS]", "[SEP]", "punct.", "prev", "self", "next", "mean abs δ"], att_rows)}

## Reproduce

See `tools/train-default-model/README.md` (data → tokenizer → training → export → evaluation, exact commands).
"""
    with open(os.path.join(args.model, "MODEL_CARD.md"), "w") as f:
        f.write(card)
    print("wrote", os.path.join(args.model, "MODEL_CARD.md"), "loss.png",
          os.path.getsize(os.path.join(args.model, "loss.png")), "bytes")


if __name__ == "__main__":
    main()
