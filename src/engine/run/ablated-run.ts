// The attention of an intervened run, for the views: the same kind of result as explain's, whose layers come from
// the states of the run with the chosen terms removed. Layers before the first intervened one are the plain run's;
// an intervened layer shows its removed terms as the run used them (0, or each row's mean) and the softmax of that.
import type { AblatedRunInput, AblationMode } from '../api';
import { first } from '../../shared/checked';
import { LensError } from '../errors';
import { layerInputOutput, REL_OUTPUT, scaleOf } from '../graph/deberta-io';
import { graphInputs } from '../graph/graph-inputs';
import { ExplainResult, type LayerSource, type LayerTensors } from '../result/explain-result';
import { type AblationPlan, parseAblation } from './ablation-spec';
import { checkLength, int64Feeds, prepareInput } from './input';
import { LayerComputation } from './layer';
import type { RunContext } from './run-context';

/** A layer source that applies the plan's edits to the intervened layers' terms and recomputes their softmax. */
class EditedLayers implements LayerSource {
  constructor(
    private readonly base: LayerComputation,
    private readonly plan: AblationPlan,
    private readonly n: number,
    private readonly scale: number,
  ) {}

  /** The intervened run's last hidden state: fill-mask on this result reads what the intervention changed. */
  get lastHidden(): Float32Array | undefined {
    return this.base.lastHidden;
  }

  async compute(layer: number, signal?: AbortSignal): Promise<LayerTensors> {
    const t = await this.base.compute(layer, signal);
    const edits = this.plan.layers.get(layer);
    if (edits) editLayer(t, edits, this.plan.mode, this.n, this.scale);
    return t;
  }

  release(): void {
    this.base.release();
  }

  keepQuiet(): void {
    this.base.keepQuiet();
  }
}

/** Replaces the removed terms of the chosen heads (0, or each query row's mean) and recomputes those heads' probs. */
export function editLayer(
  t: LayerTensors,
  edits: Partial<Record<'c2c' | 'c2p' | 'p2c', number[]>>,
  mode: AblationMode,
  n: number,
  scale: number,
): void {
  const nn = n * n;
  const touched = new Set<number>();
  for (const [term, heads] of Object.entries(edits) as ['c2c' | 'c2p' | 'p2c', number[]][]) {
    const m = t[term];
    if (!m) continue;
    for (const h of heads) {
      touched.add(h);
      for (let i = 0; i < n; i++) {
        const row = m.subarray(h * nn + i * n, h * nn + (i + 1) * n);
        let mean = 0;
        if (mode === 'mean') for (let j = 0; j < n; j++) mean += row[j]! / n;
        row.fill(mode === 'mean' ? mean : 0);
      }
    }
  }
  const s = new Float64Array(n);
  for (const h of touched) {
    for (let i = 0; i < n; i++) {
      const at = h * nn + i * n;
      let max = -Infinity;
      for (let j = 0; j < n; j++) {
        s[j] = (t.c2c[at + j]! + (t.c2p ? t.c2p[at + j]! : 0) + (t.p2c ? t.p2c[at + j]! : 0)) / scale;
        if (s[j]! > max) max = s[j]!;
      }
      let sum = 0;
      for (let j = 0; j < n; j++) sum += s[j] = Math.exp(s[j]! - max);
      for (let j = 0; j < n; j++) t.probs[at + j] = s[j]! / sum;
    }
  }
}

/** The intervened run as an ExplainResult (every layer): the views and the Diff (against the plain run) read it. */
export async function explainAblatedWith(model: RunContext, input: AblatedRunInput, signal?: AbortSignal): Promise<ExplainResult> {
  const t0 = performance.now();
  const spec = model.checkpoint.spec;
  const plan = parseAblation(input.ablate, spec, input.mode ?? 'zero');
  const { ids, tokens, tokenTypes, pairOffset } = await prepareInput(
    model,
    { text: input.text, pair: input.pair, pairOffset: input.pairOffset, ids: input.ids },
    signal,
  );
  const n = ids.length,
    D = spec.hiddenSize,
    L = spec.numLayers;
  checkLength(model, n);
  const t1 = performance.now();
  const relative = spec.relativeAttention && spec.posAttType.length > 0;
  const start = plan.firstLayer;
  const before = Array.from({ length: start + 1 }, (_, l) => layerInputOutput(l));
  const fwd = await model.session.run(
    'forward',
    int64Feeds(graphInputs(spec, ids, tokenTypes)),
    [...before, ...(relative ? [REL_OUTPUT] : [])],
    signal,
  );
  const states = new Float32Array(L * n * D);
  let rel: Float32Array | undefined,
    relRows = 0;
  try {
    before.forEach((name, l) => fwd.outputs.read(name, states, l * n * D));
    if (relative) [rel, relRows] = [fwd.outputs.read(REL_OUTPUT), first(fwd.outputs.dims(REL_OUTPUT), 'the shape of the relative rows')];
  } finally {
    fwd.outputs.release();
  }
  const tail = await model.tails.run(plan, states.slice(start * n * D, (start + 1) * n * D), rel, relRows, n, signal, true);
  tail.states.forEach((s, k) => states.set(s, (start + 1 + k) * n * D));
  if (!states.every(Number.isFinite))
    throw new LensError(`${model.checkpoint.dir}: the run after the intervention gave non-finite states`, 'runtime');
  const layers = Array.from({ length: L }, (_, l) => l);
  const scale = scaleOf(spec);
  const base = new LayerComputation(model, n, layers, states);
  base.lastHidden = tail.hidden;
  const source = new EditedLayers(base, plan, n, scale);
  const info = { ...model.info, execution_provider: model.session.provider };
  const timings = { tokenize_ms: t1 - t0, run_ms: fwd.ms + tail.ms, spill_ms: 0, total_ms: performance.now() - t0 };
  return new ExplainResult(info, ids, tokens, scale, { layers, source }, input.text, timings, tokenTypes, input.pair, pairOffset);
}
