// Messages between the engine and the runtime process. Feeds travel over IPC (small); outputs (up to GBs) are
// written by the runtime into one spill file on a RAM-backed folder and read back by the engine: two copies,
// where IPC serialisation took four.

export interface FeedTensor {
  type: 'int64' | 'float32';
  data: BigInt64Array | Float32Array;
  dims: number[];
}

/** Where an output lies in the spill file (bytes). */
export interface SpilledTensor {
  name: string;
  dims: number[];
  offset: number;
  length: number;
}

export type ToWorker =
  | { type: 'load'; modelPath: string; providers: string[]; threads: number }
  | { type: 'run'; id: number; feeds: Record<string, FeedTensor>; fetches: string[]; spill: string };

export type FromWorker =
  | { type: 'loaded'; provider: string; tried: { provider: string; error: string }[]; ms: number; outputs: string[] }
  | { type: 'result'; id: number; spill: string; tensors: SpilledTensor[]; ms: number; spillMs: number }
  | { type: 'error'; id?: number; message: string };
