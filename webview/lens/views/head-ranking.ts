// The Head ranking tab: every head's term removed alone (the host reruns from that head's layer), shown as a
// layer × head grid per term (colour = drop in the followed value) and as a ranked list. A masked-LM checkpoint
// follows a token's log-probability at one position; a classifier one label's logit (picked by name, default the
// predicted label; token classification at one token), with "Why this label?" on top; a QA head its answer span.
// Progress while it runs, Cancel, a cell click opens that head in the heatmap, export as JSON or CSV.
import type { TermName } from '../../../src/shared/kinds';
import {
  firstWordPosition,
  nothingToFollow,
  ranksByLabel,
  type DecisionInfo,
  type RankingView,
  type RemovalMode,
} from '../../../src/shared/interventions';
import { colorOf, cssRgb, makeLut } from '../../common/colors';
import { type Range } from '../../../src/shared/value-range';
import { el, themeKind } from '../../common/dom';
import { pieceLabel } from '../../../src/shared/token-layout';
import { formatProb } from '../../../src/shared/predictions';
import { hasMask, NO_MASK, positionOptions } from './mask-position';
import { openHead } from '../state/actions';
import { cancelRun, sendRun, startRun } from '../state/run-channel';
import { onScreen } from '../state/selectors';
import { isBertModel, type ViewInit } from '../../../src/shared/protocol/lens';
import { layerLabel, layerShort } from '../../../src/shared/emd-layers';
import { decisionFor } from './decision';
import type { ViewContext } from './view-context';
import { requestWhy, takeAsk } from './why-label';
import { cellText, dropOf, gridDigits, labelOptions, targetText } from './why-label-model';
import { whySummary } from './why-summary';
import { fmtNum as fmt } from './task-scores-model';

/** BERT's score is one q·k product, which the engine removes under the name c2c: the ranking calls it the score. */
const BERT_TERMS: TermName[] = ['c2c'];
const termLabel = (init: ViewInit, t: string) => (isBertModel(init.model) ? 'score' : t);
/** What a run removes: the terms ticked, or for BERT each head's whole score. */
const runTerms = (init: ViewInit) => (isBertModel(init.model) ? BERT_TERMS : memo.terms);

const LISTED = 12;

/** Kept between renders: the choices, the last ranking (per text) and the run in progress. */
const memo: {
  text?: string;
  terms: TermName[];
  mode: RemovalMode;
  position: number | null;
  /** A classifier's label id followed; null = the predicted label. */
  label: number | null;
  info?: DecisionInfo;
  result?: RankingView;
  error?: string;
  running?: { id: number; done: number; total: number; layer: number };
  /** Rank the Enhanced Mask Decoder's heads (a masked-LM model with EMD passes) instead of the encoder's. */
  emd: boolean;
} = { terms: ['c2p', 'p2c', 'c2c'], mode: 'zero', position: null, label: null, emd: false };

export function renderRanking(body: HTMLElement, ctx: Pick<ViewContext, 'request'>): void {
  // Nothing here is hovered cell by cell: the analysis readout box stays out of the way.
  document.getElementById('analysis-readout')?.setAttribute('hidden', '');
  const init = onScreen()?.init;
  if (!init) return;
  const m = init.model;
  // Choices belong to one text on one model (another model may have other labels, layers or heads).
  const key = `${init.model.name}\n${init.text}`;
  if (memo.text !== key) Object.assign(memo, { text: key, result: undefined, error: undefined, position: null, label: null });
  // "Why this label?" from elsewhere: that target, every term, started once the decision is known.
  memo.info = undefined;
  const ask = takeAsk();
  if (ask) Object.assign(memo, { label: ask.labelId, position: ask.position, terms: [...m.terms], error: undefined });
  const termBoxes = m.terms.map((t) => {
    const box = el('input', { type: 'checkbox', id: `rk-term-${t}`, value: t });
    box.checked = memo.terms.includes(t);
    box.addEventListener('change', () => {
      memo.terms = m.terms.filter((x) => (document.getElementById(`rk-term-${x}`) as HTMLInputElement | null)?.checked);
      paintControls();
    });
    return el('label', { class: 'rk-term' }, [box, ` ${t}`]);
  });
  const mode = el('select', { id: 'rk-mode', 'aria-label': 'How a removed term is replaced' }, [
    el('option', { value: 'zero' }, ['zero it']),
    el('option', { value: 'mean' }, ['its mean over keys']),
  ]);
  mode.value = memo.mode;
  mode.addEventListener('change', () => (memo.mode = mode.value as RemovalMode));
  const target = el('span', { class: 'group', id: 'rk-target' }, ['…']);
  // Where to rank: the encoder's layers, or the Enhanced Mask Decoder's two passes (read through the decoder).
  const where = el('select', { id: 'rk-where', 'aria-label': 'Heads ranked' }, [
    el('option', { value: 'encoder' }, ['encoder layers']),
    el('option', { value: 'emd' }, ['EMD passes']),
  ]);
  where.value = memo.emd ? 'emd' : 'encoder';
  where.addEventListener('change', () => (memo.emd = where.value === 'emd'));
  const whereGroup = el('span', { class: 'group', id: 'rk-where-group', hidden: '' }, ['In ', where]);
  const run = el('button', { id: 'rk-run', type: 'button', class: 'primary' }, ['Rank heads']);
  const why = el(
    'button',
    { id: 'rk-why', type: 'button', hidden: '', title: 'Rank every head and term by this target, then read the heads that move it most' },
    ['Why this label?'],
  );
  const cancel = el('button', { id: 'rk-cancel', type: 'button' }, ['Cancel']);
  const progress = el('progress', { id: 'rk-progress', max: '1', value: '0', 'aria-label': 'Cells done' });
  const status = el('p', { id: 'rk-status', class: 'meta', role: 'status' });
  const exportJson = el('button', { id: 'rk-export-json', type: 'button', title: 'Save the ranking as JSON' }, ['Export JSON']);
  const exportCsv = el('button', { id: 'rk-export-csv', type: 'button', title: 'Save the ranking as CSV' }, ['Export CSV']);
  exportJson.addEventListener('click', () => sendRun({ type: 'exportRanking', format: 'json' }));
  exportCsv.addEventListener('click', () => sendRun({ type: 'exportRanking', format: 'csv' }));
  const out = el('div', { id: 'rk-result' });
  const task = () => memo.info?.task;

  const paintControls = () => {
    const r = memo.running;
    const blocked = memo.info?.unrankable;
    run.toggleAttribute('disabled', !!r || runTerms(init).length === 0 || !memo.info || !!blocked);
    why.toggleAttribute('disabled', !!r || !!blocked);
    cancel.hidden = !r;
    progress.hidden = !r;
    if (r) {
      progress.max = Math.max(1, r.total);
      progress.value = r.done;
      status.textContent = `${r.done} of ${r.total} reruns (${layerLabel(m, r.layer).toLowerCase().replace('emd', 'EMD')})…`;
    } else if (blocked) status.textContent = blocked;
    else if (memo.error) status.textContent = memo.error;
    else if (memo.result) {
      const x = memo.result;
      const what = x.target
        ? `Following ${targetText(x)}`
        : `At ${x.position}: ${x.token} · followed “${pieceLabel(x.followed?.token ?? '')}” (${x.followed?.which === 'original' ? 'the original token' : 'the top prediction'}, log p ${fmt(x.followed?.logprob ?? NaN)}, rank ${x.followed?.rank ?? '–'})`;
      const inEmd = x.firstLayer !== undefined ? ' in the EMD passes (read through the EMD)' : '';
      status.textContent = `${what} · ${x.ranking.length} reruns${inEmd}, ${(x.ms / 1000).toFixed(1)} s`;
    } else if (!memo.info) status.textContent = 'Reading what this model decides…';
    else
      status.textContent = `Each head’s term is removed alone and the model rerun from its layer; heads are ranked by how much ${
        task() === 'masked-lm'
          ? 'the followed token’s log-probability'
          : task() === 'question-answering'
            ? 'the answer span’s logit'
            : 'the chosen label’s logit'
      } drops.`;
    exportJson.toggleAttribute('disabled', !memo.result);
    exportCsv.toggleAttribute('disabled', !memo.result);
  };

  /** The target controls for the checkpoint's head (known once the host answered `decision`). */
  const paintTarget = () => {
    const info = memo.info;
    if (!info) return;
    why.hidden = !ranksByLabel(info.task) && info.task !== 'question-answering';
    why.textContent = info.task === 'question-answering' ? 'Why this answer?' : 'Why this label?';
    if (info.unrankable) return void target.replaceChildren();
    whereGroup.hidden = !(info.task === 'masked-lm' && m.emd);
    if (whereGroup.hidden) memo.emd = false;
    if (info.task === 'masked-lm') {
      const position = positionOptions(init.tokens, 'rk-position', 'first [MASK]');
      position.value = memo.position === null ? '' : String(memo.position);
      position.addEventListener('change', () => (memo.position = position.value === '' ? null : Number(position.value)));
      return void target.replaceChildren('At ', position);
    }
    if (info.decision?.kind === 'span') {
      const a = info.decision.answer;
      return void target.replaceChildren(`Follows the answer span “${a?.text ?? ''}” (start + end logit)`);
    }
    const label = el('select', { id: 'rk-label', 'aria-label': 'Label followed' });
    const fillLabels = () => {
      label.replaceChildren(...labelOptions(info, memo.position).map((o) => el('option', { value: o.value }, [o.text])));
      label.value = memo.label === null ? '' : String(memo.label);
    };
    label.addEventListener('change', () => (memo.label = label.value === '' ? null : Number(label.value)));
    fillLabels();
    if (info.task !== 'token-classification') return void target.replaceChildren('Follow ', label);
    memo.position ??= firstWordPosition(init.tokens);
    const position = el('select', { id: 'rk-position', 'aria-label': 'Token' });
    for (const t of init.tokens) if (!t.special) position.append(el('option', { value: String(t.i) }, [`${t.i}: ${t.text}`]));
    position.value = String(memo.position);
    position.addEventListener('change', () => {
      memo.position = Number(position.value);
      fillLabels();
    });
    target.replaceChildren('At ', position, ' follow ', label);
  };

  const start = (terms: TermName[]) => {
    if (memo.running || terms.length === 0 || !memo.info || memo.info.unrankable) return;
    if (task() === 'masked-lm' && memo.position === null && !hasMask(init.tokens)) {
      status.textContent = NO_MASK;
      return;
    }
    memo.error = undefined;
    const label = ranksByLabel(task()) && memo.label !== null ? { label: memo.label } : {};
    const { id, done } = startRun(
      {
        type: 'sweep',
        resultId: init.resultId,
        terms,
        mode: memo.mode,
        position: memo.position,
        ...label,
        ...(memo.emd && task() === 'masked-lm' ? { emd: true } : {}),
      },
      (p) => {
        if (memo.running?.id !== id) return;
        memo.running = { id, ...p };
        if (document.body.contains(progress)) paintControls();
      },
    );
    memo.running = { id, done: 0, total: 0, layer: 0 };
    paintControls();
    done
      .then(
        (r) => {
          memo.result = r.ranking;
        },
        (e: Error & { cancelled?: boolean }) => {
          memo.error = e.cancelled ? 'Cancelled.' : e.message;
        },
      )
      .finally(() => {
        memo.running = undefined;
        if (!document.body.contains(progress)) return;
        paintControls();
        drawRanking(out, init, ctx);
      });
  };
  run.addEventListener('click', () => start(runTerms(init)));
  // The same path as askWhy from elsewhere: the tab draws again with that target and starts the ranking.
  why.addEventListener('click', () => requestWhy({ labelId: memo.label, position: memo.position }));
  cancel.addEventListener('click', () => {
    if (memo.running) cancelRun(memo.running.id);
  });

  body.replaceChildren(
    el('div', { class: 'iv-controls' }, [
      el('span', { class: 'group' }, ['Remove ', ...(isBertModel(m) ? ['each head’s score'] : termBoxes)]),
      el('span', { class: 'group' }, ['Replace by ', mode]),
      target,
      whereGroup,
    ]),
    el('p', {}, [run, ' ', why, ' ', cancel, ' ', progress, ' ', exportJson, ' ', exportCsv]),
    status,
    out,
  );
  paintControls();
  drawRanking(out, init, ctx);
  decisionFor(init.resultId).then(
    (info) => {
      memo.info = info;
      if (!document.body.contains(target)) return;
      paintTarget();
      paintControls();
      if (ask) start(isBertModel(m) ? BERT_TERMS : [...m.terms]);
    },
    (e: Error) => {
      memo.info = nothingToFollow(`Could not read what this model decides: ${e.message}`);
      if (document.body.contains(target)) paintControls();
    },
  );
}

/** The "Why" summary (task heads), the grids (one per term, same colour limits) and the top of the ranking. */
function drawRanking(out: HTMLElement, init: ViewInit, ctx: Pick<ViewContext, 'request'>): void {
  const r = memo.result;
  if (!r) return void out.replaceChildren();
  const all = r.ranking.map((c) => Math.abs(c.drop));
  const m = Math.max(1e-6, ...all);
  const range: Range = { min: -m, max: m, signed: true };
  const lut = makeLut('diverging', true, themeKind());
  const open = openHead;
  const what = dropOf(r);
  const digits = gridDigits(m);
  // A task-head cell's title also gives the target's score after the removal.
  const scoreAfter = new Map(r.ranking.map((c) => [`${c.layer}.${c.head}.${c.term}`, c.scoreAfter]));
  const after = (l: number, h: number, t: string) => {
    const x = scoreAfter.get(`${l}.${h}.${t}`);
    return x === undefined ? '' : ` (score after ${formatProb(x)})`;
  };
  const grids = r.terms.map((t) => {
    const g = r.grid[t]!;
    const head = el('tr', {}, [el('th', {}, ['']), ...Array.from({ length: r.heads }, (_, h) => el('th', { scope: 'col' }, [`h${h}`]))]);
    // Rows are layers from firstLayer on: the encoder's from 0, or the EMD's passes (EMD 1, EMD 2).
    const rows = g.map((row, k) => {
      const l = (r.firstLayer ?? 0) + k;
      return el('tr', {}, [
        el('th', { scope: 'row' }, [layerShort(init.model, l)]),
        ...row.map((drop, h) => {
          const [cr, cg, cb] = colorOf(drop, range, lut);
          const dark = 0.299 * cr + 0.587 * cg + 0.114 * cb < 140;
          const cell = el(
            'td',
            {
              class: 'rk-cell',
              tabindex: '0',
              'data-layer': String(l),
              'data-head': String(h),
              'data-term': t,
              title: `${layerLabel(init.model, l)}, head ${h}, ${termLabel(init, t)}: ${what} drops by ${fmt(drop)}${after(l, h, t)} — click to open this head`,
            },
            [fmt(drop, digits)],
          );
          cell.style.background = cssRgb([cr, cg, cb]);
          cell.style.color = dark ? '#fff' : '#000';
          cell.addEventListener('click', () => open(l, h, t));
          cell.addEventListener('keydown', (e) => {
            if (e.key === 'Enter' || e.key === ' ') open(l, h, t);
          });
          return cell;
        }),
      ]);
    });
    return el('figure', { class: 'rk-grid' }, [
      el('figcaption', {}, [`${termLabel(init, t)} removed`]),
      el('table', { id: `rk-grid-${t}` }, [el('thead', {}, [head]), el('tbody', {}, rows)]),
    ]);
  });
  const list = el(
    'ol',
    { id: 'rk-list', class: 'rk-list' },
    r.ranking
      .slice(0, LISTED)
      .map((c) =>
        el('li', {}, [
          el('button', { type: 'button', class: 'link', 'data-layer': String(c.layer), 'data-head': String(c.head), 'data-term': c.term }, [
            `${layerLabel(init.model, c.layer).replace('Layer', 'layer')} head ${c.head} ${termLabel(init, c.term)}`,
          ]),
          cellText(c, r),
        ]),
      ),
  );
  for (const b of list.querySelectorAll<HTMLButtonElement>('button'))
    b.addEventListener('click', () => open(Number(b.dataset.layer), Number(b.dataset.head), b.dataset.term as TermName));
  out.replaceChildren(
    ...(r.target ? [whySummary(r, init, ctx, (t) => termLabel(init, t))] : []),
    el('p', { class: 'meta' }, [
      `Colour: drop in ${what} when the term is removed (red: the head helped it, blue: it hindered), limits ±${fmt(m)}.`,
    ]),
    el('div', { class: 'rk-grids' }, grids),
    el('h3', {}, [`Largest drops (of ${r.ranking.length})`]),
    list,
  );
}
