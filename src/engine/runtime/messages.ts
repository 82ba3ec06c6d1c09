// Messages between the engine and the runtime process. Feeds travel over IPC (small: token ids, one layer's
// input states); outputs are written by the runtime into a spill file on a RAM-backed folder and read back by
// the engine, which is several times faster than IPC serialisation for the [h, n, n] matrices.

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

/** The graphs a runtime process serves: the whole forward pass, one layer's attention and, for BERT, the layer-0
 *  score split by embedding part (the encoder's process), the prediction heads (added to the encoder's process on
 *  the first prediction; the heads with the KL output for interventions run in a process of their own), or the layers from one layer on with an intervention (one process per start layer,
 *  started on the first intervention there). */
export type GraphName = 'forward' | 'layer' | 'decomposition' | 'positions' | 'heads' | 'emd' | 'emd-passes' | 'emd-edit' | 'tail';

/** Rows [start, end) along the first axis of a tensor the runtime keeps (a range of heads of a layer's weights); all rows when absent. */
export interface KeptSlice {
  key: string;
  rows?: [number, number];
}

/**
 * An output of a run that the runtime keeps under `key`, as the tensor named `as` (a layer's input state from the
 * forward pass: the layer's later runs read it there instead of receiving it with each run).
 */
export interface KeptOutput {
  output: string;
  key: string;
  as: string;
}

/**
 * Tensors the runtime computes from kept tensors and keeps itself (a layer's position projections, which do not
 * depend on the text): when it holds nothing under `key`, it runs `graph` with `feeds` before the run and keeps
 * the outputs `fetches` under `key`.
 */
export interface DerivedTensors {
  key: string;
  graph: GraphName;
  feeds: Record<string, KeptSlice>;
  fetches: string[];
}

/**
 * A second graph run right after the first in the same message (the heads on the forward's last hidden state, or
 * the first layer's attention on its input state: no round trip for the state). Its feeds include the first run's
 * outputs by name (`from`: feed name → output name) and kept tensors (`kept`, derived first when `derive` says
 * so, as for a run). Only its own outputs `fetches` are spilled, unless `spillFirst`: then the first run's
 * `fetches` come before them in the same file.
 */
export interface ChainedRun {
  graph: GraphName;
  feeds: Record<string, FeedTensor>;
  fetches: string[];
  from: Record<string, string>;
  derive?: DerivedTensors[];
  kept?: Record<string, KeptSlice>;
  spillFirst?: boolean;
}

export type ToWorker =
  | { type: 'load'; graphs: Partial<Record<GraphName, string>>; providers: string[]; threads: number }
  /** More graphs for a loaded process, on the provider and settings it loaded with. */
  | { type: 'add'; id: number; graphs: Partial<Record<GraphName, string>> }
  | {
      type: 'run';
      id: number;
      graph: GraphName;
      feeds: Record<string, FeedTensor>;
      fetches: string[];
      spill: string;
      /** Tensors for the runtime to keep under `key` for this and later runs (a layer's weights, sent once). */
      keep?: { key: string; tensors: Record<string, FeedTensor> }[];
      /** Kept tensors the runtime derives before this run when it does not hold them yet. */
      derive?: DerivedTensors[];
      /** Feeds taken from kept tensors: feed name → which rows of the tensor of that name kept under `key`. */
      kept?: Record<string, KeptSlice>;
      /** Outputs of the (first) run to keep for later runs, fetched or not. */
      keepOutputs?: KeptOutput[];
      then?: ChainedRun;
    }
  /** Forget kept tensors (a released result's states); answered by nothing. */
  | { type: 'drop'; keys: string[] };

export type FromWorker =
  | { type: 'loaded'; provider: string; tried: { provider: string; error: string }[]; ms: number }
  | { type: 'added'; id: number }
  | { type: 'result'; id: number; spill: string; tensors: SpilledTensor[]; ms: number; spillMs: number; deriveMs: number; thenMs?: number }
  | { type: 'error'; id?: number; message: string };
