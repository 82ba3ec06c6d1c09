// The decision card above the token strip: what a fine-tuned checkpoint decided about the text — every label's
// score with the predicted one marked (sequence classification), the entities and the hovered token's label scores
// (token classification), the answer (question answering), every choice (multiple choice, with Show to explain
// another) — and "Why this label?", which ranks the heads by how much removing each moves that decision. Hidden for
// a checkpoint without a task head.
import { answerText, type Decision, type DecisionTarget, decisionLine, tokenScoresLine } from '../../../src/shared/decision';
import { el } from '../../common/dom';
import { $attribution, $decision, $hover, $init, $merged, $viewState } from '../state/store';
import { askWhichWords, attributionRow } from './attribution';
import type { WebviewToHost } from '../../../src/shared/protocol/lens';
import { cardHeading, type CardRow, classificationRows, entityLegend } from './decision-model';
import { pieceOfRow, tokenName } from './predictions-model';

/** What "Why this label?" asks the Head ranking for. */
export type WhyTarget = DecisionTarget;

export interface DecisionContext {
  /** Opens the Head ranking aimed at `target`. */
  why(target: WhyTarget): void;
  post: (m: WebviewToHost) => void;
}

export class DecisionCard {
  private root: HTMLElement = el('section');
  /** The token the token-classification line describes (hovered, else pinned). */
  private focused: number | null = null;

  constructor(private readonly ctx: DecisionContext) {
    $decision.listen(() => this.render());
    $attribution.listen(() => this.root.querySelector('#attribution')?.replaceWith(attributionRow(this.ctx.post)));
    $hover.listen(({ i }) => this.focus(pieceOfRow($viewState.get()?.pinned ?? i, $merged.get())));
  }

  /** The card's place in a new result's shell (filled when the decision arrives). */
  mount(): HTMLElement {
    this.root = el('section', { id: 'decision', class: 'decision', 'aria-label': 'The model’s decision', hidden: '' });
    this.focused = null;
    this.render();
    return this.root;
  }

  private render(): void {
    const d = $decision.get();
    this.root.hidden = !d;
    if (!d) return this.root.replaceChildren();
    this.root.dataset.task = d.task;
    const head = el('div', { class: 'decision-head' }, [
      el('strong', { class: 'decision-title' }, ['Decision']),
      el('span', { id: 'decision-line', class: 'decision-line', role: 'status' }, [
        decisionLine(d, (p) => $init.get()?.tokens[p]?.special !== false),
      ]),
      el('span', { class: 'meta decision-kind' }, [cardHeading(d)]),
    ]);
    this.root.replaceChildren(head, this.body(d), attributionRow(this.ctx.post));
    // The UI bench reads when the card was drawn (command → decision).
    performance.mark('lens-decision');
  }

  /** "Why?" (the heads behind it) and "Words" (the tokens behind it) for one decision. */
  private buttons(target: WhyTarget, what: string): HTMLElement[] {
    const words = el(
      'button',
      {
        type: 'button',
        class: 'decision-why',
        title: `Which words made it say ${what}? Mask (and remove) each token and see how ${what} moves`,
      },
      ['Words'],
    );
    words.addEventListener('click', () => askWhichWords(this.ctx.post, target, what));
    return [this.whyButton(target, what), words];
  }

  private whyButton(target: WhyTarget, what: string): HTMLElement {
    const b = el(
      'button',
      { type: 'button', class: 'decision-why', title: `Why ${what}? Rank every head by how much removing it moves ${what}` },
      ['Why?'],
    );
    b.addEventListener('click', () => this.ctx.why(target));
    return b;
  }

  private body(d: Decision): HTMLElement {
    switch (d.task) {
      case 'sequence-classification':
        return this.rows(d, (r) => this.buttons({ label: r.id }, `“${r.name}”`));
      case 'multiple-choice': {
        const resultId = $init.get()?.resultId;
        return this.rows(d, (r) => {
          if (r.id === d.shown)
            return [el('span', { class: 'meta decision-shown', title: 'The run the heatmap and the strip show' }, ['shown'])];
          const show = el(
            'button',
            { type: 'button', class: 'decision-why', title: `Explain the prompt with choice ${r.id + 1}: [CLS] prompt [SEP] choice [SEP]` },
            ['Show'],
          );
          show.addEventListener('click', () => resultId !== undefined && this.ctx.post({ type: 'showChoice', resultId, index: r.id }));
          return [show];
        });
      }
      case 'token-classification': {
        const tokens = $init.get()?.tokens ?? [];
        const legend = entityLegend(d, (p) => tokens[p]?.special !== false).map((e) => {
          const swatch = el('span', { class: 'decision-swatch' });
          swatch.style.backgroundColor = e.colour;
          return el('span', { class: 'decision-entity', 'data-entity': e.entity, title: `${e.count} tokens labelled ${e.entity}` }, [
            swatch,
            `${e.entity} ${e.count}`,
          ]);
        });
        return el('div', { class: 'decision-tokens' }, [
          el('div', { id: 'decision-legend', class: 'decision-legend' }, legend.length ? legend : ['this checkpoint names no entity']),
          el('div', { id: 'decision-token', class: 'decision-token meta' }, ['Hover or pin a token for its label scores.']),
        ]);
      }
      case 'question-answering': {
        const a = d.answer;
        return el('div', { class: 'decision-answer' }, [
          a
            ? el('span', { id: 'decision-answer' }, [
                `“${answerText(a)}” · tokens #${a.startToken}–#${a.endToken} · start + end logit ${a.score.toFixed(3)} `,
                ...this.buttons({ span: true }, 'this answer'),
              ])
            : el('span', { class: 'meta' }, ['No context to answer from: give the question, [SEP], then the context.']),
        ]);
      }
    }
  }

  /** Every label (or choice) with its bar, score and logit, the predicted one marked, and the row's buttons. */
  private rows(
    d: Extract<Decision, { task: 'sequence-classification' | 'multiple-choice' }>,
    buttons: (r: CardRow) => HTMLElement[],
  ): HTMLElement {
    const rows = classificationRows(d).map((r) => {
      const bar = el('span', { class: 'pred-bar', 'aria-hidden': 'true' });
      if (r.bar !== null) {
        const fill = el('span', { class: 'pred-fill' });
        fill.style.width = `${r.bar * 100}%`;
        bar.append(fill);
      }
      const shown = d.task === 'multiple-choice' && r.id === d.shown;
      return el(
        'li',
        {
          class: `decision-row${r.predicted ? ' predicted' : ''}${shown ? ' shown' : ''}`,
          'data-id': String(r.id),
          'data-label': r.name,
          'data-score': r.text,
          title: `${d.task === 'multiple-choice' ? (d.choices[r.id]?.label ?? r.name) : `${r.name} (id ${r.id})`}: ${r.text}, logit ${r.logit.toFixed(4)}`,
        },
        [
          el('span', { class: 'decision-mark', 'aria-label': r.predicted ? 'predicted' : '' }, [r.predicted ? '▶' : '']),
          el('span', { class: 'decision-label' }, [r.name]),
          bar,
          el('span', { class: 'pred-pct' }, [r.text]),
          el('span', { class: 'meta decision-logit' }, [`logit ${r.logit.toFixed(3)}`]),
          el('span', { class: 'decision-buttons' }, buttons(r)),
        ],
      );
    });
    return el('ol', { id: 'decision-labels', class: 'decision-labels' }, rows);
  }

  /** Token classification: the focused token's label scores, with "Why?" for its label there. */
  private focus(piece: number | null): void {
    const d = $decision.get();
    if (piece === this.focused || d?.task !== 'token-classification') return;
    this.focused = piece;
    const line = this.root.querySelector<HTMLElement>('#decision-token');
    if (!line) return;
    const t = piece === null ? undefined : d.tokens.find((x) => x.position === piece);
    if (!t || piece === null) return void line.replaceChildren('Hover or pin a token for its label scores.');
    const name = d.names[t.predicted] ?? `LABEL_${t.predicted}`;
    line.replaceChildren(
      `${tokenName($init.get()?.tokens ?? [], piece)}: ${tokenScoresLine(d, piece)} `,
      ...this.buttons({ label: t.predicted, position: piece }, `“${name}” here`),
    );
  }
}
