"""Write MODEL_CARD.md and loss.png of models/default-pairs and models/bert-twin-pairs from the pair data stats
(prepare_pairs.py), the two training runs (train_pairs.py), evaluate_pairs.py's results and the HF check
(make_pairs_reference.py's output in work/).

    /usr/bin/python3 make_pairs_card.py
"""
import json
import os

from make_card import read_log
from pairs_card_tables import head_table, layer_summary, md_table, pct

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
WORK = os.path.join(HERE, "work")
SPEC = {
    "deberta": {"folder": "default-pairs", "base": "default", "name": "DeBERTa-v3 (default model)",
                "hf": "DebertaV2ForSequenceClassification", "prefix": "deberta",
                "head": "the last layer's `[CLS]` vector → `pooler.dense` (256 → 256) → GELU (`pooler_hidden_act` "
                        "`gelu`) → `classifier` (256 → 2); Hugging Face's `ContextPooler`",
                "types": "none: the model has `type_vocab_size` 0, so A and B are told apart only by the `[SEP]` "
                         "between them and by position"},
    "bert": {"folder": "bert-twin-pairs", "base": "bert-twin", "name": "BERT twin",
             "hf": "BertForSequenceClassification", "prefix": "bert",
             "head": "the last layer's `[CLS]` vector → `bert.pooler.dense` (256 → 256) → tanh → `classifier` "
                     "(256 → 2); Hugging Face's `BertPooler`",
             "types": "0 for `[CLS]` A `[SEP]`, 1 for B `[SEP]` (`type_vocab_size` 2; pre-training used type 0 "
                      "only, so the type-1 row starts as it was initialised and is learnt here)"},
}
KIND_TEXT = {"next": "next (B is the sentence right after A)",
             "same_paragraph": "not_next: another sentence of A's paragraph",
             "nearby": "not_next: a sentence 2–30 paragraphs away",
             "random": "not_next: a sentence far away in the same source"}
SRC_TEXT = {"g_heldout": "books (g_heldout, 4 unseen books)", "t_heldout": "technical (t_heldout)",
            "all": "both"}


def plot(logs, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6, 3.2), dpi=80)
    colors = {"deberta": "tab:blue", "bert": "tab:orange"}
    for arch, rows in logs.items():
        steps = [int(r["step"]) for r in rows]
        acc = [float(r["acc"]) for r in rows]
        k = 5  # moving average over 5 log windows (100 steps)
        sm = [sum(acc[max(0, i - k + 1): i + 1]) / len(acc[max(0, i - k + 1): i + 1]) for i in range(len(acc))]
        ax.plot(steps, sm, lw=1.2, color=colors[arch], label=f"{SPEC[arch]['name']}: train accuracy")
        ax.plot(steps, [float(r["loss"]) for r in rows], lw=0.8, ls=":", color=colors[arch],
                label=f"{SPEC[arch]['name']}: train loss")
    ax.axhline(0.5, color="grey", lw=0.6)
    ax.set_xlabel("step (batch 32 pairs)")
    ax.set_ylabel("accuracy (100-step mean) / loss")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="lower left")
    fig.tight_layout()
    fig.savefig(out, dpi=80)
    plt.close(fig)


HISTORY = ("A first start at 16:27 planned 2,500 steps; under other people's load its first 20 steps took 1.8 s per "
           "step for BERT and longer for DeBERTa (2,500 steps would not have fitted the hour), so it was stopped after "
           "a minute and restarted at 16:28 with 1,500 planned steps. ")


def normalise(st):
    """train_pairs.py recorded a single --restart as `restart` (a dict) before it took a list."""
    if st.get("restart") and not st.get("restarts"):
        st["restarts"] = [st.pop("restart")]
    return st


def final_steps(st, a):
    if st.get("restarts"):
        return st["restarts"][-1]["to_steps"]
    return st["replan"]["to_steps"] if st.get("replan") else a["steps"]


def restarts_text(st):
    rs = st.get("restarts") or []
    if not rs:
        return ""
    parts = [f"from step {r['from_step']:,}: {r['warmup']} warmup steps to {r['lr']:g}, linear decay to 0 at step "
             f"{r['to_steps']:,}" for r in rs]
    return ("The load then fell again, so the rest of the hour was used for "
            + ("a second phase" if len(rs) == 1 else f"{len(rs)} further phases") + " on new pairs (weights and "
            "optimiser state kept, started when the first had decayed to 0; `--restart`): "
            + "; ".join(parts) + ". " + PHASE3)


PHASE3 = ("(A third phase, 1,800 → 2,600, was started too, and stopped at 17:14 for both models — BERT was at step "
          "~2,330, DeBERTa had not begun it — because the DeBERTa run, then at 1.7 s per step, could not have finished "
          "it within the hour; BERT's step-1,800 checkpoint, kept when its phase 2 ended, is the one exported, so both "
          "models have exactly the same 1,800 steps.) ")


def replan_text(st, a):
    r = st.get("replan")
    if not r:
        return HISTORY
    return (HISTORY + f"The load then grew (load average ≈ 12 on the 2 cores, up to 3 s per step), so at 16:49 both "
            f"runs were stopped right after their checkpoints (steps 508 and 551) and resumed with the schedule "
            f"shortened: the same warmup and decay as planned up to step {r['from_step']:,}, then a linear decay from "
            f"there to 0 at step {r['to_steps']:,} instead of {r['planned_steps']:,} (`--replan "
            f"{r['from_step']}:{r['to_steps']}`; both models get the same learning rate at every step). "
            + restarts_text(st))


def phase1_text(arch, other):
    """Held-out accuracy at the end of the first phase (step 1,100), when evaluate_pairs.py --accuracy-only has
    been run on that checkpoint (work/pairs_eval_phase1_ARCH.json)."""
    evs = {}
    for a in (arch, other):
        path = os.path.join(WORK, f"pairs_eval_phase1_{a}.json")
        if not os.path.exists(path):
            return ""
        evs[a] = json.load(open(path))["heldout"]
    fmt = lambda a: " / ".join(pct(evs[a][s]["accuracy"]) for s in ("g_heldout", "t_heldout", "all"))  # noqa: E731
    return (f"At the end of the first phase (step 1,100, learning rate decayed to 0) the same held-out pairs gave "
            f"{fmt(arch)} (books / technical / both) for this model and {fmt(other)} for the {SPEC[other]['name']}.")


def card(arch, ev, other_ev, stats, tstate, ref, sizes):
    sp = SPEC[arch]
    other = "bert" if arch == "deberta" else "deberta"
    a = tstate["args"]
    st = tstate["state"]
    minutes = st["train_seconds"] / 60
    h = ev["heldout"]
    ob = ev["overlap_baseline"]
    lines = [f"# DeBERTa Lens sentence-pair demo: {sp['name']} (`models/{sp['folder']}/`)", ""]
    lines += [
        f"**A small demo classifier**: `models/{sp['base']}/` fine-tuned to answer *does B continue A?* for a pair of "
        f"sentences, so that the extension's task-head views (explaining the model's decision) work offline at once. "
        f"Labels: `0` = `not_next`, `1` = `next`. It is as small and weak as the model it starts from, trained on two "
        f"shared CPU cores for {minutes:.0f} minutes; it is not meant for downstream use."
        + (" Its twin for **Compare** is `models/bert-twin-pairs/`, fine-tuned the same way from the BERT twin."
           if arch == "deberta" else
           " It is the Compare twin of `models/default-pairs/` (the DeBERTa-v3 default model fine-tuned the same "
           "way): the same data, batches, steps, schedule and seed."),
        "",
        "Input: `[CLS] A [SEP] B [SEP]`, as Hugging Face's tokenizer builds a pair, at most 128 tokens. In an editor, "
        "write the pair as one paragraph `A [SEP] B` (see `samples/pairs.md`).",
        "",
        "## Architecture",
        "",
        f"`{sp['hf']}` in Hugging Face layout (the keys `save_pretrained` writes: `{sp['prefix']}.*`"
        + (", `pooler.dense.*`, `classifier.*`" if arch == "deberta" else " including `bert.pooler.dense.*`, "
                                                                          "`classifier.*`")
        + "; no MLM head). The encoder is the one of "
        f"`models/{sp['base']}/` (its card describes it: 4 layers × 256, 8 heads of 32, FFN 1024, vocabulary 8001).",
        "",
        md_table(["field", "value"], [
            ["task head", sp["head"]],
            ["labels", "`id2label` {0: `not_next`, 1: `next`}, `problem_type` `single_label_classification`"],
            ["token types", sp["types"]],
            ["dropout", "none (all dropout fields 0, as in pre-training)"],
            ["parameters", f"{ev['params']:,} stored"],
            ["weights", "`model.safetensors`, float32"],
        ]),
        "",
        "Files: " + ", ".join(f"`{n}` {b / 1e6:.2f} MB" for n, b in sizes) + f"; total {sum(b for _, b in sizes) / 1e6:.2f} MB.",
        "",
        f"Checked against Hugging Face's own `{sp['hf']}` (hf-reference, float64, eager attention; the exported "
        f"state dict loaded with `strict=True`): on {len(ref['cases'])} pairs the trainer's classifier "
        f"(`tools/train-default-model/classifier.py`) gives the same logits within "
        f"{max(c['trainer_max_abs_diff'] for c in ref['cases']):.1e}; HF's logits for them are in "
        "`test/data/fixtures/default-pairs/hf_reference.json`.",
        "",
        "## Task and data",
        "",
        "Built from the corpus of the default model (`tools/train-default-model/prepare_pairs.py`, seed "
        f"{stats['seed']}). Each paragraph is split into sentences (a rule-based splitter) and encoded with the shared "
        f"`spm.model`; sentences of {stats['sentence_pieces'][0]}–{stats['sentence_pieces'][1]} pieces are used. "
        "Half of the pairs are **next**: A = a sentence, B = the sentence right after it in the same paragraph. The "
        "other half are **not_next**, in three equal shares: B = another sentence of A's own paragraph (an earlier "
        "one, or two or more later), B = a sentence 2–30 paragraphs away (in practice the same book or documentation "
        "page; the corpus has no document boundaries), and B = a sentence far away in the same source (another book; "
        "another part of the technical prose), never from the other source. Every A has a next sentence and every B is "
        "a non-first sentence of its paragraph, in both labels, so the position of a sentence in its paragraph says "
        "nothing about the label.",
        "",
        md_table(["split", "from", "pairs", "next", "same paragraph", "nearby", "random"], [
            ["training", "g_train (books) 80% + t_train (technical) 20%", f"{stats['train']['pairs']:,}",
             f"{stats['train']['by_kind']['next']:,}", f"{stats['train']['by_kind']['same_paragraph']:,}",
             f"{stats['train']['by_kind']['nearby']:,}", f"{stats['train']['by_kind']['random']:,}"],
        ] + [[f"held-out", SRC_TEXT[s], f"{v['pairs']:,}", f"{v['by_kind']['next']:,}",
              f"{v['by_kind']['same_paragraph']:,}", f"{v['by_kind']['nearby']:,}", f"{v['by_kind']['random']:,}"]
             for s, v in stats["heldout"].items()]),
        "",
        f"The held-out pairs come only from `g_heldout` / `t_heldout`, the files the default model and its twin never "
        f"saw in pre-training, and no training pair comes from them. Each held-out A sentence is used once. "
        f"Training used {st['step'] * a['batch']:,} of the {stats['train']['pairs']:,} training pairs "
        f"({st['step']:,} steps × {a['batch']}, each pair at most once). Mean pair length in training "
        f"{stats['train']['mean_tokens']:.1f} tokens with `[CLS]`/`[SEP]`.",
        "",
        "## Training",
        "",
        f"`tools/train-default-model/train_pairs.py`: from the `models/{sp['base']}/` weights (MLM head dropped; "
        f"pooler and classifier new, normal(0, 0.02), zero biases, seed {a['seed']}), all weights trained. Cross-entropy, "
        f"batch {a['batch']} pairs padded to the longest in the batch (length-bucketed), AdamW (β 0.9/0.999, ε 1e-6, "
        f"weight decay {a['wd']} except biases and LayerNorm), peak learning rate {a['lr']:g} after "
        f"{round(a['warmup_frac'] * a['steps'])} warmup steps, linear decay (planned to 0 at step {a['steps']:,}); gradient "
        f"clipping 1.0; no dropout; bf16 autocast on CPU (weights, optimiser, LayerNorm and loss in float32); "
        f"seed {a['seed']}. " + replan_text(st, a) + f"**{st['step']:,} steps"
        + ("" if st["step"] >= final_steps(st, a) else f" of the {final_steps(st, a):,} planned (stopped at the deadline)")
        + f", {minutes:.0f} minutes of training** ({st['start_utc'][:16].replace('T', ' ')}–"
          f"{st.get('end_utc', '')[11:16]} UTC wall clock, with the restart) "
        f"at `nice -n 19` with one thread on 2 shared vCPUs beside other people's builds and tests, "
        f"{st['seconds_per_arch'][arch] / st['step']:.2f} s per step on average. The {SPEC[other]['name']} was "
        "fine-tuned at the same time in a second process with exactly the same data, batch order, schedule, steps "
        "and seed.",
        "",
        "![training curves](loss.png)",
        "",
        "## Held-out accuracy",
        "",
        f"Baselines: the majority label (the pairs are balanced), and a word-overlap rule: *next* when A and B share "
        f"at least {ob['min_shared_words']} lower-cased word{'s' if ob['min_shared_words'] > 1 else ''} of four or more letters (the threshold that does best on "
        f"20,000 training pairs, {pct(ob['train_accuracy'])} there).",
        "",
        md_table(["held-out source", "pairs", f"{sp['name']}", f"{SPEC[other]['name']} (`models/{SPEC[other]['folder']}`)",
                  "majority baseline", "word-overlap baseline"],
                 [[SRC_TEXT[s], f"{h[s]['n']:,}", f"**{pct(h[s]['accuracy'])}**", pct(other_ev["heldout"][s]["accuracy"]),
                   pct(h[s]["majority"]), pct(ob["heldout"][s]["accuracy"])] for s in ("g_heldout", "t_heldout", "all")]),
        "",
        "By kind of pair (accuracy = the share labelled correctly; for the three not_next kinds that is the share "
        "rejected):",
        "",
        md_table(["held-out source", "kind", "pairs", sp["name"], SPEC[other]["name"], "word-overlap baseline"],
                 [[SRC_TEXT[s], KIND_TEXT[k], f"{v['n']:,}", pct(v["accuracy"]),
                   pct(other_ev["heldout"][s]["by_kind"][k]["accuracy"]),
                   pct(ob["heldout"][s]["by_kind"][k]["accuracy"])]
                  for s in ("g_heldout", "t_heldout") for k, v in h[s]["by_kind"].items()]),
        "",
        behaviour(arch, ev),
        "",
        phase1_text(arch, other),
        "",
        "One run, one seed; with n ≈ 2,000 pairs a difference of about 3 points or less is within sampling noise "
        "(95% interval of a single accuracy ≈ ±2 points).",
        "",
        "## What its heads do",
        "",
        f"`tools/train-default-model/evaluate_pairs.py` on {ev['probe_pairs']:,} held-out pairs (half books, half "
        "technical), for this model and for the model it was fine-tuned from (the same encoder before fine-tuning, "
        "given the same inputs). The classifier reads only the last layer's `[CLS]` vector, so the last layer's "
        "`[CLS]` row is where the decision is gathered. Shares are mean attention probabilities; `[SEP]s` = the "
        "middle and the final `[SEP]` together; B→A = the mean share of B's rows on A's tokens (attention across the "
        "`[SEP]`).",
        "",
        "Per layer, mean over the 8 heads (before fine-tuning in brackets):",
        "",
        layer_summary(ev),
        "",
        f"Last layer (layer {ev['ablation']['layer']}), per head. *Ablation*: that head's output at `[CLS]` replaced "
        f"by its mean over these pairs (the rest unchanged); the change in accuracy on these "
        f"{ev['probe_pairs']:,} pairs (base {pct(ev['ablation']['base_accuracy'])}) says how much the decision "
        "goes through the head.",
        "",
        head_table(ev, ev["ablation"]["layer"]),
        "",
    ]
    lines += observations(arch, ev)
    lines += [
        "",
        "## Reproduce",
        "",
        "`tools/train-default-model/README.md`, section *Sentence-pair demo models* (data → fine-tuning → export → "
        "HF check → evaluation → cards, exact commands).",
        "",
    ]
    return "\n".join(lines)


def observations(arch, ev):
    """Factual sentences computed from the numbers (no hand-written claims)."""
    L = ev["ablation"]["layer"]
    abl = sorted(ev["ablation"]["heads"], key=lambda r: -abs(r["change_points"]))
    fin = [r for r in ev["heads_finetuned"] if r["layer"] == L]
    start = {r["head"]: r for r in ev["heads_start"] if r["layer"] == L}
    both = lambda d, k: (d[f"{k}.next"] + d[f"{k}.not_next"]) / 2  # noqa: E731
    out = ["Read from the tables:", ""]
    worst = abl[0]
    if abs(worst["change_points"]) < 1.0:
        out.append(f"- No last-layer head matters on its own: mean-ablating any one of them at `[CLS]` changes the "
                   f"accuracy by {abs(worst['change_points']):.1f} points or less, within the noise of "
                   f"{ev['probe_pairs']:,} pairs.")
    else:
        out.append(f"- The largest single-head effect on the decision: layer {L} head {worst['head']} "
                   f"({worst['change_points']:+.1f} points when mean-ablated at `[CLS]`); "
                   + ", ".join(f"head {r['head']} {r['change_points']:+.1f}" for r in abl[1:4]) + " next. "
                   + f"{sum(1 for r in abl if abs(r['change_points']) < 1.0)} of {len(abl)} heads change it by less "
                     "than a point on their own.")
    top_b = max(fin, key=lambda r: both(r, "cls_to_b"))
    top_a = max(fin, key=lambda r: both(r, "cls_to_a"))
    top_sep = max(fin, key=lambda r: both(r, "cls_to_sep1") + both(r, "cls_to_sep2"))
    out.append(f"- In the last layer's `[CLS]` row, head {top_b['head']} puts the most weight on B "
               f"({both(top_b, 'cls_to_b'):.2f}; {both(start[top_b['head']], 'cls_to_b'):.2f} before fine-tuning), head "
               f"{top_a['head']} on A ({both(top_a, 'cls_to_a'):.2f}; before {both(start[top_a['head']], 'cls_to_a'):.2f}), "
               f"head {top_sep['head']} on the `[SEP]`s ({both(top_sep, 'cls_to_sep1') + both(top_sep, 'cls_to_sep2'):.2f}; "
               f"before {both(start[top_sep['head']], 'cls_to_sep1') + both(start[top_sep['head']], 'cls_to_sep2'):.2f}).")
    diffs = sorted(fin, key=lambda r: -abs(r["cls_to_b.next"] - r["cls_to_b.not_next"]))
    d0 = diffs[0]
    out.append(f"- The `[CLS]` row's share on B hardly depends on the label: the largest next/not_next gap is head "
               f"{d0['head']} ({d0['cls_to_b.next']:.2f} vs {d0['cls_to_b.not_next']:.2f})."
               if abs(d0["cls_to_b.next"] - d0["cls_to_b.not_next"]) < 0.05 else
               f"- The `[CLS]` row's share on B depends on the label most in head {d0['head']} "
               f"({d0['cls_to_b.next']:.2f} for next vs {d0['cls_to_b.not_next']:.2f} for not_next pairs).")
    if ev["heldout"]["all"]["accuracy"] < 0.55:
        out.append("- This model is only just above chance on the held-out pairs, so these tables show where its "
                   "attention moved during fine-tuning rather than a working decision procedure."
                   + (" B's tokens are the ones with token type 1, whose embedding row pre-training never used; in "
                      "layers 1–3 the `[CLS]` row now goes mostly to them." if arch == "bert" else ""))
    return out


def behaviour(arch, ev):
    """What the accuracy-by-kind table says about the decisions, in numbers."""
    g = ev["heldout"]["g_heldout"]["by_kind"]
    return (f"On the books, the model calls {pct(g['next']['accuracy'])} of the true next pairs *next*, and also "
            f"{pct(1 - g['same_paragraph']['accuracy'])} of the pairs from the same paragraph, "
            f"{pct(1 - g['nearby']['accuracy'])} of those from a few paragraphs away and "
            f"{pct(1 - g['random']['accuracy'])} of those from another book (the word-overlap rule: "
            f"{pct(1 - ev['overlap_baseline']['heldout']['g_heldout']['by_kind']['random']['accuracy'])} of those "
            f"from another book).")


def main():
    stats = json.load(open(os.path.join(WORK, "pairs", "stats.json")))
    ref = json.load(open(os.path.join(WORK, "pairs_hf_reference.json")))
    evs = {a: json.load(open(os.path.join(WORK, f"pairs_eval_{a}.json"))) for a in SPEC}
    logs = {a: read_log(os.path.join(WORK, "pairs_run", a, "train_log.tsv")) for a in SPEC}
    for arch, sp in SPEC.items():
        out = os.path.join(REPO, "models", sp["folder"])
        plot(logs, os.path.join(out, "loss.png"))
        tstate = json.load(open(os.path.join(WORK, "pairs_run", arch, "train_state.json")))
        normalise(tstate["state"])
        ev = evs[arch]
        from safetensors_io import read_safetensors
        ev["params"] = sum(v.numel() for v in read_safetensors(os.path.join(out, "model.safetensors")).values())
        r = next(m for m in ref["models"] if m["model"] == f"models/{sp['folder']}")
        open(os.path.join(out, "MODEL_CARD.md"), "w").write("")  # so its own size is listed (rewritten below)
        text = None
        for _ in range(2):  # the card lists its own size: write twice
            sizes = [(n, os.path.getsize(os.path.join(out, n))) for n in sorted(os.listdir(out))]
            text = card(arch, ev, evs["bert" if arch == "deberta" else "deberta"], stats, tstate, r, sizes)
            with open(os.path.join(out, "MODEL_CARD.md"), "w") as f:
                f.write(text)
        print("wrote", os.path.join(out, "MODEL_CARD.md"), len(text), "chars")


if __name__ == "__main__":
    import sys
    sys.path.insert(0, HERE)
    main()
