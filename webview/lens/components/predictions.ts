// The "Predictions" section under the token strip: the model's top tokens at every [MASK] of the text, "what would
// the model put here?" for the hovered or pinned token, and the replaced-token-detection band of v3
// discriminators. One summary line when collapsed; it starts collapsed when opening it would push the map down:
// when the text is long (the strip already takes its share of the window), or when the view below it would
// start too low to be seen. The heatmap stays above the fold.
import type { ProtocolToken, WebviewToHost, WordGroupInfo } from '../../../src/shared/protocol/lens';
import {
  type FillMask,
  formatProb,
  originalLine,
  type PositionPredictions,
  predictedLabel,
  type PredictionsToWebview,
  type TokenPrediction,
} from '../../../src/shared/predictions';
import { el } from '../../common/dom';
import { pieceOfRow, summaryLine, tokenName } from './predictions-model';

export { rowOfPiece, stripContext } from './predictions-model';

/** Opened by default only when this much of the window is left for the view below it. */
const VIEW_MIN_VISIBLE_PX = 200;

export interface PredictionsContext {
  post(m: WebviewToHost): void;
  /** Light up token `i` (the RTD band's hover), or nothing. */
  hover(i: number | null): void;
}

export class PredictionsPanel {
  private resultId: number | undefined;
  private tokens: ProtocolToken[] = [];
  private fillMask: FillMask = { state: 'pending' };
  private asked = new Map<number, TokenPrediction>();
  private latest: number | undefined;
  /** The token the button asks about: the pinned one, else the last one hovered. */
  private target: number | null = null;
  /** The piece the last focus() marked (undefined: none since the cards were drawn). */
  private focused: number | null | undefined;
  /** The person's own choice, kept across results; undefined until they toggle. */
  private userOpen: boolean | undefined;
  private open = false;
  private decided = false;
  private root: HTMLElement = el('section');

  constructor(private readonly ctx: PredictionsContext) {}

  /** A new result: a fresh, pending section to place under the strip. */
  mount(resultId: number, tokens: ProtocolToken[]): HTMLElement {
    if (resultId !== this.resultId) {
      this.asked.clear();
      this.fillMask = { state: 'pending' };
      this.latest = undefined;
      this.target = null;
      this.focused = undefined;
    }
    this.resultId = resultId;
    this.tokens = tokens;
    this.decided = false;
    this.open = false;
    const toggle = el(
      'button',
      { id: 'predictions-toggle', type: 'button', class: 'pred-toggle', 'aria-expanded': 'false', 'aria-controls': 'predictions-body' },
      ['Predictions'],
    );
    toggle.addEventListener('click', () => {
      this.userOpen = !this.open;
      this.setOpen(this.userOpen);
    });
    const ask = el('button', { id: 'predict-token', type: 'button', class: 'pred-ask', disabled: '' }, ['Predict a token']);
    ask.addEventListener('click', () => {
      if (this.target !== null) this.ask(this.target);
    });
    this.root = el(
      'section',
      { id: 'predictions', class: 'predictions', 'aria-label': 'Predictions', 'data-state': 'pending', 'data-open': 'false' },
      [
        el('div', { class: 'pred-head' }, [
          toggle,
          el('span', { id: 'predictions-summary', class: 'pred-summary', role: 'status' }, ['computing…']),
          ask,
        ]),
        el('div', { id: 'predictions-body', class: 'pred-body', hidden: '' }),
      ],
    );
    this.render();
    return this.root;
  }

  receive(m: PredictionsToWebview): void {
    if (m.resultId !== this.resultId) return;
    if (m.type === 'fillMask') {
      // A new run for this result (the top-k changed): the answers given before belong to the old one.
      if (m.fillMask.state === 'pending') {
        this.asked.clear();
        this.latest = undefined;
      }
      this.fillMask = m.fillMask;
    } else {
      this.asked.set(m.prediction.position, m.prediction);
      this.latest = m.prediction.position;
    }
    this.render();
    // An answer the person asked for is shown even where the section would start collapsed.
    if (m.type === 'tokenPrediction' && m.prediction.state !== 'error') this.setOpen(true);
    else if (!this.decided && this.fillMask.state === 'ready' && this.hasBody()) this.decideOpen();
    if (m.type === 'tokenPrediction' && m.prediction.state !== 'pending') {
      this.root.querySelector(`.pred-card[data-position="${m.prediction.position}"]`)?.scrollIntoView({ block: 'nearest' });
    }
  }

  /** The hovered or pinned token (a piece index), for the button and the card it lights. */
  focus(i: number | null, pinned: boolean, groups?: WordGroupInfo[]): void {
    const piece = pieceOfRow(i, groups);
    const target = piece !== null || pinned ? piece : this.target;
    // Called on every hover refresh: the DOM is touched only when the hovered piece or the target changes.
    if (piece === this.focused && target === this.target) return;
    this.focused = piece;
    this.target = target;
    for (const c of this.root.querySelectorAll<HTMLElement>('.pred-card'))
      c.classList.toggle('current', piece !== null && Number(c.dataset.position) === piece);
    this.renderButton();
  }

  /** Asks the host to mask token `i` and predict it. */
  ask(i: number): void {
    if (this.resultId === undefined) return;
    this.ctx.post({ type: 'predictToken', resultId: this.resultId, i });
  }

  private hasBody(): boolean {
    const fm = this.fillMask;
    return (fm.state === 'ready' && (fm.masks.length > 0 || !!fm.rtd)) || [...this.asked.values()].some((p) => p.state !== 'error');
  }

  /** Opens the section unless that would push the view below it down (see the top of this file). */
  private decideOpen(): void {
    this.decided = true;
    if (this.userOpen !== undefined) return this.setOpen(this.userOpen);
    const strip = document.querySelector<HTMLElement>('#tokens');
    if (strip && strip.scrollHeight > strip.clientHeight + 1) return this.setOpen(false);
    this.setOpen(true);
    const view = ['#heatmap-view', '#heads-view', '#analysis-view']
      .map((s) => document.querySelector<HTMLElement>(s))
      .find((v) => v && !v.hidden);
    const top = view ? view.getBoundingClientRect().top + window.scrollY : 0;
    if (top > window.innerHeight - VIEW_MIN_VISIBLE_PX) this.setOpen(false);
  }

  private setOpen(open: boolean): void {
    this.open = open && this.hasBody();
    this.root.dataset.open = String(this.open);
    this.root.querySelector('#predictions-toggle')?.setAttribute('aria-expanded', String(this.open));
    const body = this.root.querySelector<HTMLElement>('#predictions-body');
    if (body) body.hidden = !this.open;
  }

  private tokenName(i: number): string {
    return tokenName(this.tokens, i);
  }

  private render(): void {
    const fm = this.fillMask;
    this.root.dataset.state = fm.state;
    const summary = this.root.querySelector<HTMLElement>('#predictions-summary');
    if (summary) {
      summary.textContent = this.summaryText();
      summary.title = summary.textContent;
      summary.classList.toggle('error', fm.state === 'error');
    }
    const toggle = this.root.querySelector<HTMLButtonElement>('#predictions-toggle');
    if (toggle) toggle.disabled = !this.hasBody();
    const body = this.root.querySelector<HTMLElement>('#predictions-body');
    if (body) body.replaceChildren(...this.bodyParts());
    // New cards carry no 'current' mark yet: the next hover refresh sets it.
    this.focused = undefined;
    this.setOpen(this.open);
    this.renderButton();
  }

  private summaryText(): string {
    const error = this.latest !== undefined ? this.asked.get(this.latest) : undefined;
    return summaryLine(this.fillMask, [...this.asked.values()], this.tokens, error);
  }

  private bodyParts(): HTMLElement[] {
    const fm = this.fillMask;
    const parts: HTMLElement[] = [];
    if (fm.state === 'ready' && fm.rtd) parts.push(this.rtdBand(fm.rtd));
    const cards: HTMLElement[] = [];
    if (fm.state === 'ready') for (const m of fm.masks) cards.push(this.card(m));
    for (const a of [...this.asked.values()].sort((x, y) => x.position - y.position)) {
      if (a.state === 'ready' && a.prediction.source === 'input') continue; // the [MASK]'s card is there already
      if (a.state === 'ready') cards.push(this.card(a.prediction));
      else if (a.state === 'pending')
        cards.push(
          el('div', { class: 'pred-card pending', 'data-position': String(a.position) }, [
            el('div', { class: 'pred-title' }, [`${this.tokenName(a.position)} masked`]),
            el('div', { class: 'meta' }, ['one more forward pass…']),
          ]),
        );
    }
    if (cards.length) parts.push(el('div', { id: 'prediction-cards', class: 'pred-cards' }, cards));
    return parts;
  }

  private card(p: PositionPredictions): HTMLElement {
    const title = p.source === 'input' ? `#${p.position} [MASK]` : `${this.tokenName(p.position)} masked`;
    const rowsOf = (top: PositionPredictions['top'], cls: string) =>
      top.map((t, r) =>
        el('li', { class: cls, 'data-rank': String(r + 1), 'data-id': String(t.id), 'data-token': t.token, 'data-prob': String(t.prob) }, [
          el('span', { class: 'pred-tok', title: `${t.token} (id ${t.id}): ${formatProb(t.prob)}, logit ${t.logit.toFixed(3)}` }, [
            predictedLabel(t.token),
          ]),
          this.bar(t.prob),
          el('span', { class: 'pred-pct' }, [formatProb(t.prob)]),
        ]),
      );
    const rows = rowsOf(p.top, 'pred-row');
    // With the Enhanced Mask Decoder: its predictions, and the plain head's on the last hidden state beside them.
    const plain = p.plain;
    const lists = plain
      ? [
          el('div', { class: 'pred-columns' }, [
            el('div', { class: 'pred-column', 'data-decoder': 'emd' }, [
              el('div', { class: 'pred-column-title', title: 'DeBERTa’s Enhanced Mask Decoder, as microsoft/DeBERTa runs it' }, [
                'with EMD',
              ]),
              el('ol', { class: 'pred-rows' }, rows),
            ]),
            el('div', { class: 'pred-column', 'data-decoder': 'plain' }, [
              el(
                'div',
                { class: 'pred-column-title', title: 'The head on the last hidden state, without the EMD (what Hugging Face computes)' },
                ['without EMD'],
              ),
              el('ol', { class: 'pred-rows pred-rows-plain' }, rowsOf(plain.top, 'pred-plain-row')),
            ]),
          ]),
        ]
      : [el('ol', { class: 'pred-rows' }, rows)];
    const original = originalLine(p);
    const o = p.original;
    const card = el(
      'div',
      {
        class: `pred-card${plain ? ' emd' : ''}${p.position === this.latest ? ' latest' : ''}`,
        'data-position': String(p.position),
        'data-source': p.source,
        role: 'group',
        'aria-label': `Predictions at ${title}`,
      },
      [el('div', { class: 'pred-title' }, [title]), ...lists],
    );
    if (original && o) {
      card.append(
        el(
          'div',
          {
            class: 'pred-original meta',
            'data-id': String(o.id),
            'data-prob': String(o.prob),
            'data-rank': String(o.rank),
            title: `the token that stood there: ${original}`,
          },
          [`was ${original}`],
        ),
      );
    }
    const po = plain?.original;
    if (po) {
      const line = `“${predictedLabel(po.token)}” ${formatProb(po.prob)}, rank ${po.rank}`;
      card.append(
        el(
          'div',
          {
            class: 'pred-original-plain meta',
            'data-prob': String(po.prob),
            'data-rank': String(po.rank),
            title: `the token that stood there, rated by the plain head (no EMD): ${line}`,
          },
          [`without EMD: ${line}`],
        ),
      );
    }
    card.addEventListener('mouseenter', () => this.ctx.hover(p.position));
    card.addEventListener('mouseleave', () => this.ctx.hover(null));
    return card;
  }

  private bar(prob: number): HTMLElement {
    const fill = el('span', { class: 'pred-fill' });
    // CSSOM, not a style attribute: the page's CSP allows no inline styles.
    fill.style.width = `${Math.max(0, Math.min(1, prob)) * 100}%`;
    return el('span', { class: 'pred-bar', 'aria-hidden': 'true' }, [fill]);
  }

  /** One cell per token, shaded by P(replaced); hovering a cell names the token and lights it in the strip. */
  private rtdBand(rtd: number[]): HTMLElement {
    const n = rtd.length;
    const canvas = el('canvas', {
      id: 'rtd-band',
      class: 'rtd-canvas',
      role: 'img',
      'aria-label': 'Replaced-token detection: P(replaced) per token, left to right',
    });
    canvas.width = n;
    canvas.height = 1;
    const g = canvas.getContext('2d');
    if (g) {
      const img = g.createImageData(n, 1);
      // Transparent to the theme's error red: the page shows through where the model sees nothing replaced.
      const red = getComputedStyle(document.body).getPropertyValue('--vscode-errorForeground').trim() || '#e51400';
      const [r, gr, b] = hexRgb(red);
      rtd.forEach((p, i) => img.data.set([r, gr, b, Math.round(255 * Math.max(0, Math.min(1, p)))], i * 4));
      g.putImageData(img, 0, 0);
    }
    const readout = el('span', { id: 'rtd-readout', class: 'meta' }, ['hover the band']);
    const at = (e: MouseEvent) => {
      const box = canvas.getBoundingClientRect();
      const i = Math.min(n - 1, Math.max(0, Math.floor(((e.clientX - box.left) / box.width) * n)));
      return i;
    };
    canvas.addEventListener('mousemove', (e) => {
      const i = at(e);
      readout.textContent = `${this.tokenName(i)}: P(replaced) = ${formatProb(rtd[i] ?? NaN)}`;
      this.ctx.hover(i);
    });
    canvas.addEventListener('mouseleave', () => {
      readout.textContent = 'hover the band';
      this.ctx.hover(null);
    });
    return el('div', { class: 'rtd', 'data-n': String(n) }, [
      el(
        'span',
        {
          class: 'rtd-label',
          title: 'Replaced-token detection head: the probability that each token was replaced (page colour 0%, full red 100%)',
        },
        ['replaced?'],
      ),
      canvas,
      readout,
    ]);
  }

  private renderButton(): void {
    const b = this.root.querySelector<HTMLButtonElement>('#predict-token');
    if (!b) return;
    const fm = this.fillMask;
    const i = this.target;
    const t = i !== null ? this.tokens[i] : undefined;
    const noHead = fm.state === 'none' || (fm.state === 'ready' && fm.mlmHead === null);
    const special = !!t && t.special && t.text !== '[MASK]';
    const intervened = fm.state === 'ready' && !!fm.intervened;
    // Nothing to ask a checkpoint without a masked-LM head: the summary says why.
    b.hidden = noHead;
    b.disabled = !t || noHead || special || intervened || fm.state === 'pending';
    b.dataset.target = t ? String(i) : '';
    b.textContent = t ? `Predict ${this.tokenName(i!)}` : 'Predict a token';
    b.title = noHead
      ? 'This checkpoint has no masked-LM head'
      : intervened
        ? 'This is an intervened run: go back to the plain run to ask what the model would put at a token'
        : !t
          ? 'What would the model put here? Hover or pin a token of the strip first (or right-click a token)'
          : special
            ? `${t.text} is a special token the model adds: pick a token of the text`
            : `What would the model put at ${this.tokenName(i!)}? Masks it and runs the model once more`;
  }
}

function hexRgb(colour: string): [number, number, number] {
  const [, r, g, b] = /^#?([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})/i.exec(colour) ?? [];
  if (r && g && b) return [parseInt(r, 16), parseInt(g, 16), parseInt(b, 16)];
  const rgb = colour.match(/\d+/g);
  return rgb && rgb.length >= 3 ? [Number(rgb[0]), Number(rgb[1]), Number(rgb[2])] : [229, 20, 0];
}
