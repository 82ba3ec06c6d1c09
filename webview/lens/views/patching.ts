// The Patching tab: the explained (clean) text against a corrupted copy the reader edits (swap one word), and three
// runs of the engine's patching: the causal trace (every layer × position state put back alone), each head's term
// patched alone (a layer × head grid per term) and the flow (attention edges whose knockout moves the target). The
// target is picked as in the Head ranking; progress and Cancel while it runs; each trace's last result stays (also
// across tabs) and exports as JSON / CSV (host) and as a PNG / SVG figure (the toolbar's figure form).
import { firstWordPosition, nothingToFollow, ranksByLabel, type DecisionInfo } from '../../../src/shared/interventions';
import type { PatchTraceName, PatchView } from '../../../src/shared/patching';
import { el } from '../../common/dom';
import { $picture } from '../state/picture';
import { cancelRun, sendRun, startRun } from '../state/run-channel';
import { onScreen } from '../state/selectors';
import { decisionFor } from './decision';
import { hasMask, NO_MASK, positionOptions } from './mask-position';
import { drawTrace } from './patching-draw';
import { flowPicture, gridPicture } from './patching-picture';
import { readout } from './kit';
import { labelOptions } from './why-label-model';

/** Why the tab cannot run here, if it cannot. A multiple-choice head cannot be ranked (that would sweep every choice)
 *  but can be patched: a patch follows the choice on screen. */
const blocked = (info: DecisionInfo | undefined): string | undefined => info?.unpatchable;

const TRACES: { trace: PatchTraceName; label: string; what: string }[] = [
  { trace: 'resid', label: 'Causal trace', what: 'every layer × position state put back alone' },
  { trace: 'heads', label: 'Head terms', what: 'each head’s c2c / c2p / p2c patched alone' },
  { trace: 'flow', label: 'Flow', what: 'attention edges knocked out one at a time' },
];

/** Kept between renders (and tabs): the corrupted text, the target, each trace's last result, the run in flight. */
const memo: {
  key?: string;
  corrupt?: string;
  corruptPair?: string;
  /** The explained input has a second text (a sentence pair): its own field. */
  hasPair: boolean;
  trace: PatchTraceName;
  position: number | null;
  label: number | null;
  info?: DecisionInfo;
  results: Partial<Record<PatchTraceName, PatchView>>;
  /** Flow: the threshold typed ('' = the engine's default, 0.1 × |clean − corrupt|). */
  threshold: string;
  error?: string;
  running?: { id: number; trace: PatchTraceName; done: number; total: number; layer: number };
} = { hasPair: false, trace: 'resid', position: null, label: null, results: {}, threshold: '' };

/** Below this gap between the clean and corrupted target, restored fractions are warned about. */
const SMALL_GAP = 0.1;
const fmt = (x: number) => (Number.isFinite(x) ? x.toFixed(3).replace('-', '−') : '–');

export function renderPatching(body: HTMLElement): void {
  const init = onScreen()?.init;
  if (!init) return;
  const key = `${init.model.name}\n${init.text}`;
  if (memo.key !== key) {
    if (memo.running) cancelRun(memo.running.id);
    Object.assign(memo, {
      key,
      corrupt: undefined,
      corruptPair: undefined,
      hasPair: false,
      results: {},
      error: undefined,
      position: null,
      label: null,
      running: undefined,
    });
  }
  memo.info = undefined;
  const corrupt = el('textarea', { id: 'pt-corrupt', rows: '2', 'aria-label': 'Corrupted text', spellcheck: 'false' });
  const corruptPair = el('textarea', { id: 'pt-corrupt-pair', rows: '2', 'aria-label': 'Corrupted second text', spellcheck: 'false' });
  const pairBox = el('label', { class: 'pt-field' }, ['Corrupted second text ', corruptPair]);
  corrupt.addEventListener('input', () => (memo.corrupt = corrupt.value));
  corruptPair.addEventListener('input', () => (memo.corruptPair = corruptPair.value));
  const trace = el(
    'select',
    { id: 'pt-trace', 'aria-label': 'Which run' },
    TRACES.map((t) => el('option', { value: t.trace, title: t.what }, [t.label])),
  );
  trace.value = memo.trace;
  const target = el('span', { class: 'group', id: 'pt-target' }, ['…']);
  const threshold = el('input', {
    id: 'pt-threshold',
    type: 'number',
    min: '0',
    step: 'any',
    placeholder: '0.1 × |clean − corrupt|',
    'aria-label': 'Flow threshold',
  });
  threshold.value = memo.threshold;
  threshold.addEventListener('input', () => (memo.threshold = threshold.value));
  const thresholdBox = el('label', { class: 'group', title: 'Keep an edge whose knockout moves the target by more than this' }, [
    'Edge threshold ',
    threshold,
  ]);
  const run = el('button', { id: 'pt-run', type: 'button', class: 'primary' }, ['Run']);
  const cancel = el('button', { id: 'pt-cancel', type: 'button' }, ['Cancel']);
  const progress = el('progress', { id: 'pt-progress', max: '1', value: '0', 'aria-label': 'Reruns done' });
  const status = el('p', { id: 'pt-status', class: 'meta', role: 'status' });
  const values = el('div', { id: 'pt-values', class: 'pt-values' });
  const out = el('div', { id: 'pt-result' });
  const exports = (['json', 'csv', 'png', 'svg'] as const).map((f) =>
    el(
      'button',
      {
        id: `pt-export-${f}`,
        type: 'button',
        title: `Save this grid as ${f.toUpperCase()}${f === 'png' || f === 'svg' ? ' (a figure: labels, title, colour bar)' : ' (axes named)'}`,
      },
      [f.toUpperCase()],
    ),
  );
  for (const b of exports) {
    const f = b.id.replace('pt-export-', '') as 'json' | 'csv' | 'png' | 'svg';
    b.addEventListener('click', () => {
      if (f === 'json' || f === 'csv') return sendRun({ type: 'exportPatch', format: f, trace: memo.trace });
      // The toolbar's figure form (width, dpi) exports the picture this tab put up.
      document.getElementById(`export-${f}`)?.click();
    });
  }

  const paint = () => {
    const r = memo.running;
    const shown = memo.results[memo.trace];
    run.toggleAttribute('disabled', !!r || !!blocked(memo.info) || !memo.corrupt);
    trace.toggleAttribute('disabled', !!r);
    cancel.hidden = !r;
    progress.hidden = !r;
    pairBox.hidden = !memo.hasPair;
    thresholdBox.hidden = memo.trace !== 'flow';
    for (const b of exports) b.toggleAttribute('disabled', !shown || !!r);
    if (r) {
      progress.max = Math.max(1, r.total);
      progress.value = r.done;
      const L = init.model.layers.length;
      const name = TRACES.find((t) => t.trace === r.trace)?.label;
      if (r.trace === 'flow')
        // The flow walks back from the last layer and reports layers, not reruns (its knockouts grow with the rows
        // reached); its first report comes after the last layer's knockouts.
        status.textContent = `Flow: knocking out edges, ${r.done} of ${L} layers done (walking back from layer ${L - 1})…`;
      // Before its first report the engine runs the clean and corrupted texts once each.
      else if (r.total === 0) status.textContent = `${name}: running the clean and corrupted texts…`;
      // As the progress notification counts: layer 1 of L (the causal trace's final state counts as the last).
      else status.textContent = `${name}: layer ${Math.min(r.layer + 1, L)} of ${L}, ${r.done} of ${r.total} reruns…`;
    } else if (blocked(memo.info)) status.textContent = blocked(memo.info)!;
    else if (memo.error) status.textContent = memo.error;
    else if (shown)
      status.textContent = `${TRACES.find((t) => t.trace === shown.trace)?.label} of ${shown.target}: ${shown.reruns} reruns, ${(shown.ms / 1000).toFixed(1)} s`;
    else
      status.textContent = `Edit the corrupted text (swap a word), pick the run, then Run: ${TRACES.find((t) => t.trace === memo.trace)?.what}.`;
  };
  const drawResult = () => {
    const v = memo.results[memo.trace];
    $picture.set(undefined);
    readout('Hover a cell (or an edge) for its numbers.');
    if (!v) {
      values.replaceChildren();
      out.replaceChildren();
      return;
    }
    const diff = v.differing.length
      ? v.differing.map((i) => `${i} “${v.tokens[i]}” → “${v.corruptTokens[i]}”`).join(', ')
      : 'none (the same tokens)';
    values.replaceChildren(
      el('div', {}, [el('strong', {}, ['Target: ']), v.target, ` · differing tokens: ${diff}`]),
      ...(Math.abs(v.clean - v.corrupt) < SMALL_GAP && v.trace !== 'flow'
        ? [
            el('p', { id: 'pt-small-gap', class: 'pt-warn' }, [
              `Clean and corrupt differ by only ${fmt(Math.abs(v.clean - v.corrupt))} ${v.unit}: restored fractions divide by that and are mostly noise. Corrupt a word the target depends on.`,
            ]),
          ]
        : []),
      el('table', { class: 'pt-runs' }, [
        el('tr', {}, [
          el('th', { scope: 'row' }, ['clean']),
          el('td', { class: 'pt-raw' }, [`${v.unit} ${fmt(v.clean)}`]),
          el('td', {}, [v.predictions.clean]),
        ]),
        el('tr', {}, [
          el('th', { scope: 'row' }, ['corrupt']),
          el('td', { class: 'pt-raw' }, [`${v.unit} ${fmt(v.corrupt)}`]),
          el('td', {}, [v.predictions.corrupt]),
        ]),
      ]),
    );
    drawTrace(out, v, () => $picture.set(flowPicture(v, out)));
    $picture.set(v.trace === 'flow' ? flowPicture(v, out) : gridPicture(v));
  };

  const paintTarget = () => {
    const info = memo.info;
    if (!info || blocked(info)) return void target.replaceChildren();
    if (info.task === 'multiple-choice') return void target.replaceChildren('Follows the score of the choice on screen');
    if (info.task === 'masked-lm') {
      const position = positionOptions(init.tokens, 'pt-position', 'first [MASK]');
      position.value = memo.position === null ? '' : String(memo.position);
      position.addEventListener('change', () => (memo.position = position.value === '' ? null : Number(position.value)));
      return void target.replaceChildren('At ', position);
    }
    if (!ranksByLabel(info.task)) return void target.replaceChildren(info.task === 'question-answering' ? 'Follows the answer span' : '');
    const label = el('select', { id: 'pt-label', 'aria-label': 'Label followed' });
    const fill = () => {
      label.replaceChildren(...labelOptions(info, memo.position).map((o) => el('option', { value: o.value }, [o.text])));
      label.value = memo.label === null ? '' : String(memo.label);
    };
    label.addEventListener('change', () => (memo.label = label.value === '' ? null : Number(label.value)));
    fill();
    if (info.task !== 'token-classification') return void target.replaceChildren('Follow ', label);
    memo.position ??= firstWordPosition(init.tokens);
    const position = el('select', { id: 'pt-position', 'aria-label': 'Token' });
    for (const t of init.tokens) if (!t.special) position.append(el('option', { value: String(t.i) }, [`${t.i}: ${t.text}`]));
    position.value = String(memo.position);
    position.addEventListener('change', () => {
      memo.position = Number(position.value);
      fill();
    });
    target.replaceChildren('At ', position, ' follow ', label);
  };

  const start = () => {
    const info = memo.info;
    if (memo.running || !info || blocked(info) || !memo.corrupt) return;
    if (info.task === 'masked-lm' && memo.position === null && !hasMask(init.tokens)) return void (status.textContent = NO_MASK);
    memo.error = undefined;
    const which = memo.trace;
    const { id, done } = startRun(
      {
        type: 'patch',
        resultId: init.resultId,
        trace: which,
        corrupt: memo.corrupt,
        ...(memo.hasPair && memo.corruptPair ? { corruptPair: memo.corruptPair } : {}),
        ...(ranksByLabel(info.task) && memo.label !== null ? { label: memo.label } : {}),
        position: info.task === 'masked-lm' || info.task === 'token-classification' ? memo.position : null,
        ...(which === 'flow' && memo.threshold !== '' && Number(memo.threshold) >= 0 ? { threshold: Number(memo.threshold) } : {}),
      },
      (p) => {
        if (memo.running?.id !== id) return;
        memo.running = { id, trace: which, ...p };
        if (document.body.contains(progress)) paint();
      },
    );
    memo.running = { id, trace: which, done: 0, total: 0, layer: 0 };
    paint();
    done
      .then(
        (r) => {
          if (r.patching) memo.results[which] = r.patching;
        },
        (e: Error & { cancelled?: boolean }) => (memo.error = e.cancelled ? 'Cancelled.' : e.message),
      )
      .finally(() => {
        if (memo.running?.id === id) memo.running = undefined;
        if (!document.body.contains(progress)) return;
        paint();
        if (memo.trace === which) drawResult();
      });
  };
  run.addEventListener('click', start);
  cancel.addEventListener('click', () => {
    if (memo.running) cancelRun(memo.running.id);
  });
  trace.addEventListener('change', () => {
    memo.trace = trace.value as PatchTraceName;
    memo.error = undefined;
    paint();
    drawResult();
  });

  body.replaceChildren(
    el('div', { class: 'pt-inputs' }, [el('label', { class: 'pt-field' }, ['Corrupted text ', corrupt]), pairBox]),
    el('div', { class: 'iv-controls' }, [el('span', { class: 'group' }, ['Run ', trace]), target, thresholdBox]),
    el('p', {}, [run, ' ', cancel, ' ', progress, ' ', el('span', { class: 'pt-exports' }, ['Export ', ...exports])]),
    status,
    values,
    out,
  );
  const fillTexts = () => {
    corrupt.value = memo.corrupt ?? '';
    corruptPair.value = memo.corruptPair ?? '';
  };
  fillTexts();
  paint();
  drawResult();
  if (memo.corrupt === undefined)
    startRun({ type: 'patchSetup', resultId: init.resultId }).done.then(
      (r) => {
        if (!r.patchSetup || memo.key !== key) return;
        memo.corrupt ??= r.patchSetup.text;
        memo.hasPair = r.patchSetup.pair !== undefined;
        memo.corruptPair ??= r.patchSetup.pair;
        if (!document.body.contains(corrupt)) return;
        fillTexts();
        paint();
      },
      (e: Error) => {
        memo.error = e.message;
        if (document.body.contains(status)) paint();
      },
    );
  decisionFor(init.resultId).then(
    (info) => {
      memo.info = info;
      if (!document.body.contains(target)) return;
      paintTarget();
      paint();
    },
    (e: Error) => {
      memo.info = nothingToFollow(`Could not read what this model decides: ${e.message}`);
      if (document.body.contains(target)) paint();
    },
  );
}
