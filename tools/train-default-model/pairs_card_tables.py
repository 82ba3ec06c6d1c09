"""Markdown tables of the pair classifiers' cards (make_pairs_card.py): generic table and percentage formatting,
and the per-head attention tables."""


def md_table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def pct(x):
    return f"{100 * x:.1f}%"


def head_table(res, layer):
    fin = [r for r in res["heads_finetuned"] if r["layer"] == layer]
    start = {r["head"]: r for r in res["heads_start"] if r["layer"] == layer}
    abl = {h["head"]: h for h in res["ablation"]["heads"]} if res["ablation"]["layer"] == layer else {}
    rows = []
    for r in fin:
        s = start[r["head"]]
        both = lambda d, k: (d[f"{k}.next"] + d[f"{k}.not_next"]) / 2  # noqa: E731 (balanced pairs)
        rows.append([r["head"], f"{both(r, 'cls_to_cls'):.2f}", f"{both(r, 'cls_to_a'):.2f}",
                     f"{both(r, 'cls_to_sep1') + both(r, 'cls_to_sep2'):.2f}", f"{both(r, 'cls_to_b'):.2f}",
                     f"{r['cls_to_b.next']:.2f} / {r['cls_to_b.not_next']:.2f}",
                     f"{both(s, 'cls_to_a'):.2f} / {both(s, 'cls_to_sep1') + both(s, 'cls_to_sep2'):.2f} / "
                     f"{both(s, 'cls_to_b'):.2f}",
                     f"{both(r, 'b_to_a'):.2f} ({both(s, 'b_to_a'):.2f})",
                     f"{abl[r['head']]['change_points']:+.1f}" if abl else "–"])
    return md_table(["head", "[CLS]→[CLS]", "[CLS]→A", "[CLS]→[SEP]s", "[CLS]→B", "[CLS]→B next / not_next",
                     "before fine-tuning: [CLS]→A / [SEP]s / B", "B→A (before)", "ablation Δ acc. (points)"], rows)


def layer_summary(res):
    rows = []
    layers = sorted({r["layer"] for r in res["heads_finetuned"]})
    for li in layers:
        vals = {}
        for which in ("heads_finetuned", "heads_start"):
            rs = [r for r in res[which] if r["layer"] == li]
            m = lambda k: sum((r[f"{k}.next"] + r[f"{k}.not_next"]) / 2 for r in rs) / len(rs)  # noqa: E731
            vals[which] = (m("cls_to_a"), m("cls_to_sep1") + m("cls_to_sep2"), m("cls_to_b"), m("b_to_a"), m("a_to_b"))
        f, s = vals["heads_finetuned"], vals["heads_start"]
        rows.append([li] + [f"{f[i]:.2f} ({s[i]:.2f})" for i in range(5)])
    return md_table(["layer", "[CLS]→A", "[CLS]→[SEP]s", "[CLS]→B", "B→A", "A→B"], rows)


# This run's history (UTC, 2026-12-03), for the card.
