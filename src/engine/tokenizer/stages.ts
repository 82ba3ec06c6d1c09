// Which construct of a tokenizer is running (a normalizer, a pre-tokenizer, the model), published to a shared
// cell so the thread that set a time budget can name the construct when it stops a tokenization that ran over.
// Labels are registered when a tokenizer is built; entering a stage is one store.

const labels: string[] = [];
let cell: Int32Array | undefined;

/** Registers a label (built from the file's own words: "normalizer Replace /(a+)+$/") and returns its number. */
export function stageId(label: string): number {
  const short = label.length > 100 ? `${label.slice(0, 97)}...` : label;
  const at = labels.indexOf(short);
  if (at >= 0) return at;
  labels.push(short);
  return labels.length - 1;
}

export function enterStage(id: number): void {
  if (cell !== undefined) Atomics.store(cell, 0, id);
}

/** Publishes stages to `shared` (an Int32Array over a SharedArrayBuffer) from now on. */
export function publishStages(shared: Int32Array): void {
  cell = shared;
}

export function stageLabels(): readonly string[] {
  return labels;
}
