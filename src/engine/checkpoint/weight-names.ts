// Checkpoint tensor names → the names the engine looks up: without the base-model prefix Hugging Face's task
// classes add ("deberta.", "bert."), and with the LayerNorm "gamma"/"beta" of TensorFlow-converted BERT
// checkpoints (bert-base-uncased's own files) called "weight"/"bias", as Hugging Face renames them on load.
import type { ModelSpec } from '../types';

export function basePrefix(spec: Pick<ModelSpec, 'architecture'>): string {
  return spec.architecture === 'bert' ? 'bert.' : 'deberta.';
}

export function canonicalWeightName(name: string, prefix: string): string {
  const n = name.startsWith(prefix) ? name.slice(prefix.length) : name;
  if (n.endsWith('.gamma')) return `${n.slice(0, -'gamma'.length)}weight`;
  if (n.endsWith('.beta')) return `${n.slice(0, -'beta'.length)}bias`;
  return n;
}
