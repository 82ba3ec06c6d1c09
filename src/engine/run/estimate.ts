// How much work explaining an input is, before any of it runs: its length in tokens (tokenized and checked against
// the limits, so a refusal comes here, not after a wait), the forward pass's FLOPs and its memory. The extension
// scales the FLOPs by a rate it measured on this machine to say how long the wait will be.
import type { ExplainInput, WorkEstimate } from '../api';
import { graphFlops } from '../graph/flops';
import { estimateMemory } from '../memory/estimate';
import { checkLength, prepareInput } from './input';
import type { RunBase } from './run-base';

export async function estimateWith(model: RunBase, input: ExplainInput, signal?: AbortSignal): Promise<WorkEstimate> {
  const { ids } = await prepareInput(model, input, signal);
  checkLength(model, ids.length);
  const spec = model.checkpoint.spec;
  const n = ids.length;
  return { tokens: n, layers: spec.numLayers, flops: graphFlops(spec, n), bytes: estimateMemory(spec, n).total };
}
