// The Head ranking tab: for one position, every head's term removed alone (the host reruns from that head's layer),
// shown as a layer × head grid per term (colour = drop in the followed token's log-probability) and as a ranked
// list; progress while it runs, Cancel, a cell click opens that head in the heatmap, export as JSON or CSV.
import type { TermName } from '../../../src/shared/kinds';
import type { RankingView, RemovalMode } from '../../../src/shared/interventions';
import { colorOf, cssRgb, makeLut, type Range } from '../../common/colors';
import { pieceLabel } from '../../../src/shared/token-layout';
import { el, themeKind } from '../../common/dom';
import { hasMask, NO_MASK, positionOptions } from './mask-position';
import { openHead } from '../state/actions';
import { cancelRun, sendRun, startRun } from '../state/run-channel';
import { onScreen } from '../state/selectors';
import { isBertModel, type ViewInit } from '../../../src/shared/protocol/lens';

/** BERT's score is one q·k product, which the engine removes under the name c2c: the ranking calls it the score. */
const BERT_TERMS: TermName[] = ['c2c'];
const termLabel = (init: ViewInit, t: TermName) => (isBertModel(init.model) ? 'score' : t);
/** What a run removes: the terms ticked, or for BERT each head's whole score. */
const runTerms = (init: ViewInit) => (isBertModel(init.model) ? BERT_TERMS : memo.terms);

const LISTED = 12;

/** Kept between renders: the choices, the last ranking (per text) and the run in progress. */
const memo: {
  text?: string;
  terms: TermName[];
  mode: RemovalMode;
  position: number | null;
  result?: RankingView;
  error?: string;
  running?: { id: number; done: number; total: number; layer: number };
} = { terms: ['c2p', 'p2c', 'c2c'], mode: 'zero', position: null };

const fmt = (x: number, digits = 3) => (Number.isFinite(x) ? x.toFixed(digits).replace('-', '−') : String(x));

export function renderRanking(body: HTMLElement): void {
  // Nothing here is hovered cell by cell: the analysis readout box stays out of the way.
  document.getElementById('analysis-readout')?.setAttribute('hidden', '');
  const init = onScreen()?.init;
  if (!init) return;
  const m = init.model;
  if (memo.text !== init.text) Object.assign(memo, { text: init.text, result: undefined, error: undefined });
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
  const position = positionOptions(init.tokens, 'rk-position', 'first [MASK]');
  position.value = memo.position === null ? '' : String(memo.position);
  position.addEventListener('change', () => (memo.position = position.value === '' ? null : Number(position.value)));
  const run = el('button', { id: 'rk-run', type: 'button', class: 'primary' }, ['Rank heads']);
  const cancel = el('button', { id: 'rk-cancel', type: 'button' }, ['Cancel']);
  const progress = el('progress', { id: 'rk-progress', max: '1', value: '0', 'aria-label': 'Cells done' });
  const status = el('p', { id: 'rk-status', class: 'meta', role: 'status' });
  const exportJson = el('button', { id: 'rk-export-json', type: 'button', title: 'Save the ranking as JSON' }, ['Export JSON']);
  const exportCsv = el('button', { id: 'rk-export-csv', type: 'button', title: 'Save the ranking as CSV' }, ['Export CSV']);
  exportJson.addEventListener('click', () => sendRun({ type: 'exportRanking', format: 'json' }));
  exportCsv.addEventListener('click', () => sendRun({ type: 'exportRanking', format: 'csv' }));
  const out = el('div', { id: 'rk-result' });

  const paintControls = () => {
    const r = memo.running;
    run.toggleAttribute('disabled', !!r || runTerms(init).length === 0);
    cancel.hidden = !r;
    progress.hidden = !r;
    if (r) {
      progress.max = Math.max(1, r.total);
      progress.value = r.done;
      status.textContent = `${r.done} of ${r.total} reruns (layer ${r.layer})…`;
    } else if (memo.error) status.textContent = memo.error;
    else if (memo.result) {
      const x = memo.result;
      status.textContent = `At ${x.position}: ${x.token} · followed “${pieceLabel(x.followed.token)}” (${x.followed.which === 'original' ? 'the original token' : 'the top prediction'}, log p ${fmt(x.followed.logprob)}, rank ${x.followed.rank}) · ${x.ranking.length} reruns, ${(x.ms / 1000).toFixed(1)} s`;
    } else
      status.textContent =
        'Each head’s term is removed alone and the model rerun from its layer; heads are ranked by how much the followed token’s log-probability drops.';
    exportJson.toggleAttribute('disabled', !memo.result);
    exportCsv.toggleAttribute('disabled', !memo.result);
  };

  run.addEventListener('click', () => {
    if (memo.running || runTerms(init).length === 0) return;
    if (memo.position === null && !hasMask(init.tokens)) {
      status.textContent = NO_MASK;
      return;
    }
    memo.error = undefined;
    const { id, done } = startRun(
      { type: 'sweep', resultId: init.resultId, terms: runTerms(init), mode: memo.mode, position: memo.position },
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
        drawRanking(out, init);
      });
  });
  cancel.addEventListener('click', () => {
    if (memo.running) cancelRun(memo.running.id);
  });

  body.replaceChildren(
    el('div', { class: 'iv-controls' }, [
      el('span', { class: 'group' }, ['Remove ', ...(isBertModel(m) ? ['each head’s score'] : termBoxes)]),
      el('span', { class: 'group' }, ['Replace by ', mode]),
      el('span', { class: 'group' }, ['At ', position]),
    ]),
    el('p', {}, [run, ' ', cancel, ' ', progress, ' ', exportJson, ' ', exportCsv]),
    status,
    out,
  );
  paintControls();
  drawRanking(out, init);
}

/** The grids (one per term, same colour limits) and the top of the ranking. */
function drawRanking(out: HTMLElement, init: ViewInit): void {
  const r = memo.result;
  if (!r) return void out.replaceChildren();
  const all = r.ranking.map((c) => Math.abs(c.drop));
  const m = Math.max(1e-6, ...all);
  const range: Range = { min: -m, max: m, signed: true };
  const lut = makeLut('diverging', true, themeKind());
  const open = openHead;
  const grids = r.terms.map((t) => {
    const g = r.grid[t]!;
    const head = el('tr', {}, [el('th', {}, ['']), ...Array.from({ length: r.heads }, (_, h) => el('th', { scope: 'col' }, [`h${h}`]))]);
    const rows = g.map((row, l) =>
      el('tr', {}, [
        el('th', { scope: 'row' }, [`L${l}`]),
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
              title: `layer ${l}, head ${h}, ${termLabel(init, t)}: log p drops by ${fmt(drop)} — click to open this head`,
            },
            [fmt(drop, 2)],
          );
          cell.style.background = cssRgb([cr, cg, cb]);
          cell.style.color = dark ? '#fff' : '#000';
          cell.addEventListener('click', () => open(l, h));
          cell.addEventListener('keydown', (e) => {
            if (e.key === 'Enter' || e.key === ' ') open(l, h);
          });
          return cell;
        }),
      ]),
    );
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
          el('button', { type: 'button', class: 'link', 'data-layer': String(c.layer), 'data-head': String(c.head) }, [
            `layer ${c.layer} head ${c.head} ${termLabel(init, c.term)}`,
          ]),
          ` drop ${fmt(c.drop)} (log p ${fmt(c.logprobAfter)}, rank ${c.rankAfter}, top “${c.top1After}”)`,
        ]),
      ),
  );
  for (const b of list.querySelectorAll<HTMLButtonElement>('button'))
    b.addEventListener('click', () => open(Number(b.dataset.layer), Number(b.dataset.head)));
  out.replaceChildren(
    el('p', { class: 'meta' }, [
      `Colour: drop in log p of “${pieceLabel(r.followed.token)}” when the term is removed (red: the head helped it, blue: it hindered), limits ±${fmt(m)}.`,
    ]),
    el('div', { class: 'rk-grids' }, grids),
    el('h3', {}, [`Largest drops (of ${r.ranking.length})`]),
    list,
  );
}
