// A text longer than the model can read is never cut silently: it is refused, and the refusal says where a cut
// would fall (the character offset in the text, or in the pair's second text) and what would be left out. The
// same facts travel on the error as `cut`, so a view can mark the place in the editor.
import { LensError } from '../errors';
import type { Token } from '../types';

/** Where the length limit falls in a tokenized text (or pair), and what lies past it. */
export interface InputCut {
  /** The most tokens the model reads, [CLS] and [SEP] included… */
  limit: number;
  /** …set by the maxTokens limit (the setting or flag), or by an absolute-position table. */
  limited_by: 'maxTokens' | 'positions';
  /** The input's length in tokens, [CLS] and [SEP] included. */
  tokens: number;
  /** The text the cut falls in: the first text, or a pair's second. */
  part: 'text' | 'pair';
  /** Offset in `part` (UTF-16 code units, as the tokens' offsets) where the left-out characters begin. */
  at_char: number;
  /** Characters [at_char, end) of `part` that would be left out… */
  dropped_chars: [number, number];
  /** …and their tokens (the text's own; [CLS]/[SEP] not counted). */
  dropped_tokens: number;
  /** A cut in the first text of a pair leaves out the whole second text too: its tokens. */
  pair_dropped_tokens?: number;
}

/** The LensError ('too-long') a text over the limit is refused with; `cut` says where the limit falls. */
export class InputTooLongError extends LensError {
  constructor(
    message: string,
    readonly cut: InputCut,
  ) {
    super(message, 'too-long');
  }
}

const filler = (t: Token) => t.special && t.start === t.end;

/** Where a cut to `limit` tokens would fall: the first `limit − 1` tokens kept, then a closing [SEP]. `types`
 *  marks the pair's tokens with 1; `lengths` are the texts' lengths. Undefined when the input fits. */
export function findCut(
  tokens: Token[],
  types: number[] | undefined,
  lengths: { text: number; pair?: number },
  limit: number,
  limitedBy: InputCut['limited_by'],
): InputCut | undefined {
  if (tokens.length <= limit) return undefined;
  const partOf = (k: number): InputCut['part'] => (types?.[k] === 1 ? 'pair' : 'text');
  let first = Math.max(limit - 1, 0);
  while (first < tokens.length && filler(tokens[first]!)) first++;
  const dropped = tokens.map((t, k) => k >= first && !filler(t));
  if (first >= tokens.length) {
    // Only specials past the limit (a limit of 1 or 2): the cut falls at the end of the last text.
    const part = partOf(tokens.length - 1);
    const end = (part === 'pair' ? lengths.pair : lengths.text) ?? 0;
    return { limit, limited_by: limitedBy, tokens: tokens.length, part, at_char: end, dropped_chars: [end, end], dropped_tokens: 0 };
  }
  const part = partOf(first);
  const end = (part === 'pair' ? lengths.pair : lengths.text) ?? 0;
  const at = tokens[first]!.start;
  const count = (p: InputCut['part']) => dropped.filter((d, k) => d && partOf(k) === p).length;
  const cut: InputCut = {
    limit,
    limited_by: limitedBy,
    tokens: tokens.length,
    part,
    at_char: at,
    dropped_chars: [at, end],
    dropped_tokens: count(part),
  };
  if (part === 'text' && lengths.pair !== undefined) cut.pair_dropped_tokens = count('pair');
  return cut;
}

/** One line: how long, which limit, where the cut would fall (with the words there) and what would be left out. */
export function cutMessage(cut: InputCut, partText: string, setting: string): string {
  const why =
    cut.limited_by === 'positions'
      ? `but this model has absolute positions for only ${cut.limit}`
      : `over the limit of ${cut.limit} (${setting})`;
  const where = cut.part === 'pair' ? 'the second text (the pair)' : 'the text';
  const words = partText
    .slice(cut.at_char, cut.at_char + 40)
    .replace(/\s+/g, ' ')
    .trim();
  const quote = words ? `, before ${JSON.stringify(words.length > 30 ? `${words.slice(0, 30)}…` : words)}` : '';
  const rest =
    cut.pair_dropped_tokens !== undefined
      ? `its ${cut.dropped_tokens} tokens from there on (characters ${cut.at_char}–${cut.dropped_chars[1]}) and all ${cut.pair_dropped_tokens} of the second text's`
      : `its ${cut.dropped_tokens} tokens from there on (characters ${cut.at_char}–${cut.dropped_chars[1]})`;
  const advice =
    cut.limited_by === 'positions' ? 'select less text' : `select less text (up to character ${cut.at_char}) or raise the limit`;
  return `the input is ${cut.tokens} tokens, ${why}, and is not cut: the limit falls at character ${cut.at_char} of ${cut.dropped_chars[1]} in ${where}${quote}, and ${rest} would be left out: ${advice}`;
}
