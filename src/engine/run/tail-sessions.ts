// The tail graphs of one open model (layers l…L−1 with per-head term keep masks) as runtime sessions: what an
// intervention reruns. Below the verbs that intervene (ablate, the intervened run, sweep).
import { LAST_HIDDEN, LayerInput, layerInputOutput, TailInput } from '../graph/deberta-io';
import { relativeInputs } from '../graph/graph-inputs';
import { GraphSessions } from '../runtime/graph-sessions';
import type { FeedTensor } from '../runtime/messages';
import type { RuntimeSession } from '../runtime/session';
import { type AblationPlan, keepMasks, modelTerms } from './ablation-spec';
import { int64Feeds } from './input';
import { lazyGraph } from './lazy-graph';
import type { RunBase } from './run-base';

/**
 * The tail graphs' runtime sessions for one open model (layers l…L−1 with keep masks), one per start layer,
 * each started on its first intervention there and stopped with the model.
 */
export class TailSessions extends GraphSessions<number> {
  constructor(private readonly model: RunBase) {
    super();
  }

  start(layer: number): Promise<RuntimeSession> {
    const headGroup = this.model.graphCache.options.headGroup;
    const graph = () => lazyGraph(this.model, { graph: 'tail', start: layer, headGroup });
    // The encoder's process is idle while the tail runs: the same threads.
    return this.session(layer, 'tail', graph, this.model.executionProvider, this.model.threads);
  }

  /**
   * Layers plan.firstLayer… on `hidden` (that layer's input) with the plan's terms removed → the last hidden state,
   * and with `states` the input states of the later layers too (in that order).
   */
  async run(
    plan: AblationPlan,
    hidden: Float32Array,
    rel: Float32Array | undefined,
    relRows: number,
    n: number,
    signal?: AbortSignal,
    states = false,
  ) {
    const spec = this.model.checkpoint.spec;
    const session = await this.start(plan.firstLayer);
    const D = spec.hiddenSize,
      H = spec.numHeads,
      Lt = spec.numLayers - plan.firstLayer;
    const feeds: Record<string, FeedTensor> = { [LayerInput.hidden]: { type: 'float32', data: hidden, dims: [n, D] } };
    if (rel) feeds[LayerInput.rel] = { type: 'float32', data: rel, dims: [relRows, D] };
    Object.assign(feeds, int64Feeds(relativeInputs(spec, n)));
    for (const t of modelTerms(spec)) {
      const keep = new Float32Array(Lt * H);
      for (let l = plan.firstLayer; l < spec.numLayers; l++) keep.set(keepMasks(plan, l, spec)[t], (l - plan.firstLayer) * H);
      feeds[TailInput.keep(t)] = { type: 'float32', data: keep, dims: [Lt, H] };
    }
    feeds[TailInput.mean] = { type: 'float32', data: Float32Array.of(plan.mode === 'mean' ? 1 : 0), dims: [1] };
    const later = states ? Array.from({ length: Lt - 1 }, (_, k) => layerInputOutput(plan.firstLayer + 1 + k)) : [];
    const run = await session.run('tail', feeds, [LAST_HIDDEN, ...later], signal);
    try {
      return { ms: run.ms, hidden: run.outputs.read(LAST_HIDDEN), states: later.map((name) => run.outputs.read(name)) };
    } finally {
      run.outputs.release();
    }
  }
}
