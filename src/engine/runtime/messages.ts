// Messages between the engine (caller's thread) and the runtime worker. Tensors travel as transferred buffers.

export interface FeedTensor {
  type: 'int64' | 'float32';
  data: BigInt64Array | Float32Array;
  dims: number[];
}

export interface OutTensor {
  data: Float32Array;
  dims: number[];
}

export type ToWorker =
  | { type: 'load'; modelPath: string; providers: string[]; threads: number }
  | { type: 'run'; id: number; feeds: Record<string, FeedTensor>; fetches: string[] };

export type FromWorker =
  | { type: 'loaded'; provider: string; tried: { provider: string; error: string }[]; ms: number; outputs: string[] }
  | { type: 'result'; id: number; outputs: Record<string, OutTensor>; ms: number }
  | { type: 'error'; id?: number; message: string };
