// Whether a checkpoint's masked-LM head can decode through DeBERTa's Enhanced Mask Decoder (EMD), as
// microsoft/DeBERTa's MaskedLanguageModel runs it: without absolute positions in the input, the last encoder layer
// runs twice more with keys/values from the hidden state H entering it and the query H + the absolute position
// embeddings (then the first pass's output); the LM head reads the second pass. With `position_biased_input` the EMD
// is the last layer itself. Hugging Face never implemented it, so only microsoft's `lm_predictions.lm_head.*` head
// (the one microsoft trained behind the EMD) decodes through it.
import * as path from 'node:path';
import type { Heads } from './heads';
import type { Checkpoint } from './index';

/** The checkpoint tensor (without the `deberta.` prefix) the EMD's query adds to H. */
export const EMD_POSITION_TABLE = 'embeddings.position_embeddings.weight';

/**
 * How predictions at [MASK] are decoded for this checkpoint:
 * - `passes`: the EMD's two extra passes of the last layer (`rows`: the position table's rows, the longest input);
 * - `last-layer`: position_biased_input, so the EMD is the last layer itself: the head reads the last hidden state;
 * - `plain`: no EMD for this head (`note`, when set, is the one line saying why it cannot run).
 */
export type EmdPlan = { kind: 'passes'; rows: number } | { kind: 'last-layer'; note: string } | { kind: 'plain'; note?: string };

export function emdPlan(ck: Checkpoint, heads: Heads): EmdPlan {
  const s = ck.spec;
  if (heads.mlm?.layout !== 'lm_predictions.lm_head' || s.architecture === 'bert') return { kind: 'plain' };
  if (s.positionBiasedInput)
    return {
      kind: 'last-layer',
      note: 'position_biased_input is true: the Enhanced Mask Decoder is the last layer itself, so the head reads the last hidden state',
    };
  const files = ck.weightFiles.map((f) => path.basename(f)).join(', ');
  const table = ck.weights.get(EMD_POSITION_TABLE);
  const fallback = 'predictions come from the plain head on the last hidden state (as --no-emd)';
  if (!table)
    return {
      kind: 'plain',
      note:
        `${ck.name}: ${files} has no absolute position embeddings (deberta.${EMD_POSITION_TABLE}), so the Enhanced Mask ` +
        `Decoder cannot run (its query is the hidden state plus those embeddings): ${fallback}; use the checkpoint saved ` +
        `with its position table to decode as microsoft/DeBERTa does`,
    };
  const D = s.hiddenSize;
  if (table.shape.length !== 2 || table.shape[1] !== D || (table.shape[0] ?? 0) < 1)
    return {
      kind: 'plain',
      note:
        `${ck.name}: deberta.${EMD_POSITION_TABLE} in ${files} is [${table.shape.join(', ')}], not [rows, ${D}] ` +
        `(hidden_size ${D}), so the Enhanced Mask Decoder cannot add it to the hidden state: ${fallback}`,
    };
  return { kind: 'passes', rows: table.shape[0]! };
}

/** Why the EMD cannot decode an input of n tokens (the position table is shorter), or undefined when it can. */
export function emdLengthProblem(ck: Checkpoint, rows: number, n: number): string | undefined {
  if (n <= rows) return undefined;
  return (
    `the input has ${n} tokens but deberta.${EMD_POSITION_TABLE} of ${ck.name} has only ${rows} rows, so the Enhanced ` +
    `Mask Decoder cannot give every token an absolute position: predictions come from the plain head on the last ` +
    `hidden state (as --no-emd); shorten the text to at most ${rows} tokens to decode through the EMD`
  );
}
