// The Enhanced Mask Decoder's two passes as the panel shows them: two more "layers" after the encoder's, numbered
// on (a model of L layers shows them as L and L + 1) and labelled "EMD 1" / "EMD 2" wherever a layer is named.
// Both passes run the last encoder layer's weights with keys and values from the state entering it (H); the first
// pass's query is I = H + the absolute position embeddings P, the second's the first pass's output. Pure: the host
// and the webview import it.

/** Where a model's EMD passes sit among the layers the pickers list. */
export interface EmdShape {
  /** The picker ids of pass 1 and pass 2 (the encoder's layer count, and one more). */
  layers: [number, number];
  /** The encoder layer whose weights both passes run (the last). */
  encoderLayer: number;
  /** The absolute position table's rows: the longest text the EMD decodes. */
  rows: number;
}

/** The EMD's place for a model of `numLayers` encoder layers whose position table has `rows` rows. */
export function emdShape(numLayers: number, rows: number): EmdShape {
  return { layers: [numLayers, numLayers + 1], encoderLayer: numLayers - 1, rows };
}

interface WithEmd {
  layers: readonly number[];
  emd?: EmdShape;
}

/** Every layer the pickers list: the encoder's, then the EMD passes. */
export function pickerLayers(model: WithEmd): number[] {
  return [...model.layers, ...(model.emd?.layers ?? [])];
}

/** 0 for the EMD's first pass, 1 for its second; undefined for an encoder layer. */
export function emdPassOf(model: WithEmd, layer: number): 0 | 1 | undefined {
  const at = model.emd?.layers.indexOf(layer) ?? -1;
  return at === 0 || at === 1 ? at : undefined;
}

/** "Layer 3", or "EMD 1" / "EMD 2" for the decoder's passes (the pickers' labels). */
export function layerLabel(model: WithEmd, layer: number): string {
  const pass = emdPassOf(model, layer);
  return pass === undefined ? `Layer ${layer}` : `EMD ${pass + 1}`;
}

/** "L3", or "EMD 1": the short form captions and file names use. */
export function layerShort(model: WithEmd, layer: number): string {
  const pass = emdPassOf(model, layer);
  return pass === undefined ? `L${layer}` : `EMD ${pass + 1}`;
}

/** An intervention entry as the panel writes it ("2.1:c2p"), named for a person ("EMD 1 · 1:c2p" in the decoder). */
export function entryLabel(model: WithEmd, entry: string): string {
  const m = /^(\d+)\.(.+)$/.exec(entry);
  if (!m) return entry;
  const pass = emdPassOf(model, Number(m[1]));
  return pass === undefined ? entry : `EMD ${pass + 1} · ${m[2]}`;
}

/** What a pass's query is, for its caption. */
export function emdQueryText(model: WithEmd, layer: number): string | undefined {
  const pass = emdPassOf(model, layer);
  if (pass === undefined) return undefined;
  const last = model.emd!.encoderLayer;
  return pass === 0
    ? `EMD pass 1: layer ${last}'s weights, keys/values H (the state entering layer ${last}), query I = H + absolute positions P`
    : `EMD pass 2: layer ${last}'s weights, keys/values H, query = EMD 1's output`;
}

/**
 * How much of each query row of the EMD's first pass is absolute position: ‖P_i‖ / (‖H_i‖ + ‖P_i‖), from 0 (the
 * query is all content, H) to 1 (all position); 0.5 when the two vectors are equally long. A ratio of lengths, so it
 * does not depend on the angle between them (‖H_i + P_i‖ does). `h`, `p`: `[n, d]` row-major.
 */
export function queryPositionShare(
  h: ArrayLike<number>,
  p: ArrayLike<number>,
  n: number,
  d: number,
): {
  share: Float64Array;
  contentNorm: Float64Array;
  positionNorm: Float64Array;
} {
  if (h.length !== n * d || p.length !== n * d) throw new Error(`H and P must be [${n}, ${d}]`);
  const share = new Float64Array(n);
  const contentNorm = new Float64Array(n);
  const positionNorm = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    let hh = 0,
      pp = 0;
    for (let k = i * d; k < (i + 1) * d; k++) {
      hh += h[k]! * h[k]!;
      pp += p[k]! * p[k]!;
    }
    const hn = Math.sqrt(hh),
      pn = Math.sqrt(pp);
    contentNorm[i] = hn;
    positionNorm[i] = pn;
    share[i] = hn + pn > 0 ? pn / (hn + pn) : 0;
  }
  return { share, contentNorm, positionNorm };
}

/** The legend's and tooltip's words for the share. */
export const POSITION_SHARE_DEFINITION =
  'position part of the query: ‖P_i‖ / (‖H_i‖ + ‖P_i‖), the length of token i’s absolute position embedding next to its content vector H_i (0 = all content, 1 = all position; 50% = equally long)';
