// The Intervention (rerun) tab: pick heads and terms to remove, run the model again from the first affected layer,
// and read the predictions before and after at each [MASK] (or a chosen token), the followed token's log-probability
// and rank, and KL — or, on a task head's checkpoint, its decision before and after (./task-scores.ts). "Show in all
// tabs" puts the intervened run's attention in every view (and the Diff).
import type { InterventionView, RemovalMode } from '../../../src/shared/interventions';
import { entryOf } from '../../../src/shared/interventions';
import { emdPassOf, entryLabel, layerLabel, layerShort, pickerLayers } from '../../../src/shared/emd-layers';
import type { ModelShape } from '../../../src/shared/protocol/lens';
import { pieceLabel } from '../../../src/shared/token-layout';
import { el } from '../../common/dom';
import { sendRun, startRun } from '../state/run-channel';
import { onScreen } from '../state/selectors';
import { hasMask, NO_MASK, positionOptions } from './mask-position';
import { decisionFor } from './decision';
import { taskScores } from './task-scores';

const TOP = 5;

/** What the tab keeps between renders (a new init for the intervened run rebuilds the DOM, not this). */
const memo: {
  text?: string;
  entries: string[];
  mode: RemovalMode;
  position: number | null;
  result?: InterventionView;
  error?: string;
  /** The checkpoint has a task head: no position to pick, the head's decision is compared. */
  taskHead?: boolean;
} = {
  entries: [],
  mode: 'zero',
  position: null,
};

/** A number with a typographic minus, as the other views print them. */
const fmt = (x: number, digits = 3) => (Number.isFinite(x) ? x.toFixed(digits).replace('-', '−') : String(x));
const pct = (p: number) => `${(100 * p).toFixed(1)}%`;

export function renderInterventions(body: HTMLElement): void {
  // Nothing here is hovered cell by cell: the analysis readout box stays out of the way.
  document.getElementById('analysis-readout')?.setAttribute('hidden', '');
  const init = onScreen()?.init;
  if (!init) return;
  const m = init.model;
  // Choices belong to one text on one model (another model may have other labels, layers or heads).
  const key = `${init.model.name}\n${init.text}`;
  if (memo.text !== key) Object.assign(memo, { text: key, entries: [], result: undefined, error: undefined, taskHead: undefined });
  const option = (value: string, label: string) => el('option', { value }, [label]);
  const layer = el(
    'select',
    { id: 'iv-layer', 'aria-label': 'Layer' },
    // The Enhanced Mask Decoder's passes too: removing a term there changes what the LM head reads.
    pickerLayers(m).map((l) => option(String(l), emdPassOf(m, l) === undefined ? `layer ${l}` : layerLabel(m, l))),
  );
  const head = el('select', { id: 'iv-head', 'aria-label': 'Head' }, [
    ...Array.from({ length: m.heads }, (_, h) => option(String(h), `head ${h}`)),
    option('*', 'every head'),
  ]);
  const term = el('select', { id: 'iv-term', 'aria-label': 'Term' }, [
    ...m.terms.map((t) => option(t, t)),
    option('all', 'all terms (whole head)'),
  ]);
  const add = el('button', { id: 'iv-add', type: 'button' }, ['Add']);
  const chips = el('span', { id: 'iv-entries', class: 'iv-entries' });
  const mode = el('select', { id: 'iv-mode', 'aria-label': 'How a removed term is replaced' }, [
    option('zero', 'zero it'),
    option('mean', 'its mean over keys'),
  ]);
  mode.value = memo.mode;
  const position = positionOptions(init.tokens, 'iv-position', 'every [MASK]');
  position.value = memo.position === null ? '' : String(memo.position);
  const run = el('button', { id: 'iv-run', type: 'button', class: 'primary' }, ['Run intervention']);
  const show = el(
    'button',
    { id: 'iv-show', type: 'button', title: 'Show the intervened run’s attention in every tab; Diff shows it minus the plain run' },
    ['Show intervened run in all tabs'],
  );
  const status = el('p', { id: 'iv-status', class: 'meta', role: 'status' });
  const out = el('div', { id: 'iv-result' });
  const drawChips = () => {
    chips.replaceChildren(
      ...(memo.entries.length === 0
        ? [el('span', { class: 'meta' }, ['nothing removed yet'])]
        : memo.entries.map((e) => {
            const x = el('button', { type: 'button', class: 'chip', title: `Remove ${e} from the list`, 'data-entry': e }, [
              `${entryLabel(m, e)} ×`,
            ]);
            x.addEventListener('click', () => {
              memo.entries = memo.entries.filter((y) => y !== e);
              drawChips();
            });
            return x;
          })),
    );
    run.toggleAttribute('disabled', memo.entries.length === 0);
    // The intervened run's attention is the encoder's: an intervention in the EMD has none to show there yet.
    const inEmd = memo.entries.some((e) => emdPassOf(m, Number(e.split('.')[0])) !== undefined);
    show.toggleAttribute('disabled', memo.entries.length === 0 || !memo.result || inEmd);
    show.title = inEmd
      ? 'An intervention in the EMD passes changes the predictions only: its attention is not shown in the tabs yet'
      : 'Show the intervened run’s attention in every tab; Diff shows it minus the plain run';
  };
  add.addEventListener('click', () => {
    const e = entryOf(Number(layer.value), head.value === '*' ? '*' : Number(head.value), term.value as 'c2c' | 'all');
    if (!memo.entries.includes(e)) memo.entries.push(e);
    memo.result = undefined;
    drawChips();
  });
  mode.addEventListener('change', () => (memo.mode = mode.value as RemovalMode));
  position.addEventListener('change', () => (memo.position = position.value === '' ? null : Number(position.value)));
  run.addEventListener('click', () => {
    if (memo.entries.length === 0) return;
    if (!memo.taskHead && memo.position === null && !hasMask(init.tokens)) {
      status.textContent = NO_MASK;
      return;
    }
    run.setAttribute('disabled', '');
    status.textContent = 'running…';
    const { done } = startRun({
      type: 'intervene',
      resultId: init.resultId,
      entries: memo.entries.join(','),
      mode: memo.mode,
      position: memo.taskHead ? null : memo.position,
      top: TOP,
    });
    done
      .then(
        (r) => {
          memo.result = r.intervention;
          memo.error = undefined;
        },
        (e: Error) => {
          memo.result = undefined;
          memo.error = e.message;
        },
      )
      .finally(() => {
        run.removeAttribute('disabled');
        drawResult(out, status, m);
        drawChips();
      });
  });
  show.addEventListener('click', () => {
    if (!memo.result) return;
    status.textContent = 'computing the intervened run…';
    sendRun({ type: 'showRun', resultId: init.resultId, run: 'ablated', entries: memo.result.entries.join(','), mode: memo.result.mode });
  });
  const at = el('span', { class: 'group', id: 'iv-at' }, ['At ', position]);
  at.hidden = !!memo.taskHead;
  // A task head reads the input as it is (no [MASK] to follow): its decision is compared instead.
  decisionFor(init.resultId).then(
    (info) => {
      memo.taskHead = info.task !== null && info.task !== 'masked-lm' && info.task !== 'replaced-token-detection';
      at.hidden = memo.taskHead;
    },
    () => undefined,
  );
  body.replaceChildren(
    el('div', { class: 'iv-controls' }, [
      el('span', { class: 'group' }, ['Remove ', term, ' of ', head, ' in ', layer, ' ', add]),
      el('span', { class: 'group' }, ['Replace by ', mode]),
      at,
    ]),
    el('p', { class: 'iv-list' }, ['Removed: ', chips]),
    el('p', {}, [run, ' ', show]),
    status,
    out,
  );
  drawChips();
  drawResult(out, status, m);
}

function drawResult(out: HTMLElement, status: HTMLElement, m: ModelShape): void {
  const r = memo.result;
  if (memo.error) {
    status.textContent = memo.error;
    out.replaceChildren();
    return;
  }
  if (!r) {
    status.textContent = 'Add what to remove, then run: the model is rerun from the first layer touched.';
    out.replaceChildren();
    return;
  }
  const last = r.firstLayer + r.layersRerun - 1;
  const rerun =
    emdPassOf(m, r.firstLayer) === undefined
      ? `layers ${r.firstLayer}–${last} rerun${m.emd ? ', predictions from the plain head (an encoder intervention does not rerun the EMD yet)' : ''}`
      : `${r.layersRerun === 1 ? layerShort(m, last) : `${layerShort(m, r.firstLayer)} and ${layerShort(m, last)}`} rerun, predictions through the EMD`;
  status.textContent = `${r.entries.map((e) => entryLabel(m, e)).join(', ')} ${r.mode === 'mean' ? 'replaced by their mean' : 'zeroed'}; ${rerun} · ${Math.round(r.ms)} ms`;
  if (r.task) return void out.replaceChildren(taskScores(r.taskBefore, r.taskAfter));
  const tops = (xs: { token: string; prob: number }[], followed: string) =>
    el(
      'ol',
      { class: 'iv-top' },
      xs.map((t) =>
        el('li', t.token === followed ? { class: 'followed' } : {}, [
          el('span', { class: 'tok-text' }, [pieceLabel(t.token)]),
          ' ',
          el('span', { class: 'meta' }, [pct(t.prob)]),
        ]),
      ),
    );
  const rows = r.rows.map((row) =>
    el('tr', { 'data-position': String(row.position) }, [
      el('th', { scope: 'row' }, [
        `${row.position}: ${row.token}`,
        row.source === 'masked' ? el('div', { class: 'meta' }, ['masked for this']) : '',
      ]),
      el('td', {}, [tops(row.before, row.followed.token)]),
      el('td', {}, [tops(row.after, row.followed.token)]),
      el('td', { class: 'iv-followed' }, [
        el('div', {}, [
          el('span', { class: 'tok-text' }, [pieceLabel(row.followed.token)]),
          el('span', { class: 'meta' }, [row.followed.which === 'original' ? ' (original)' : ' (top before)']),
        ]),
        el('div', { class: 'iv-logprob' }, [`log p ${fmt(row.followed.before.logprob)} → ${fmt(row.followed.after.logprob)}`]),
        el('div', { class: 'iv-rank' }, [`rank ${row.followed.before.rank} → ${row.followed.after.rank}`]),
      ]),
      el('td', { class: 'iv-kl' }, [fmt(row.kl, 4)]),
    ]),
  );
  out.replaceChildren(
    el('table', { id: 'iv-table', class: 'iv-table' }, [
      el('thead', {}, [
        el(
          'tr',
          {},
          ['Position', 'Before (top 5)', 'After (top 5)', 'Followed token', 'KL (nats)'].map((h) => el('th', { scope: 'col' }, [h])),
        ),
      ]),
      el('tbody', {}, rows),
    ]),
  );
}
