// Where the Intervention and Head ranking tabs read predictions: every [MASK] of the text, or one chosen token
// (masked first, the original token followed).
import type { ProtocolToken } from '../../../src/shared/protocol/lens';
import { el } from '../../common/dom';

/** Said instead of running when the text has no [MASK] and no token is chosen. */
export const NO_MASK =
  'The text has no [MASK]: choose a token under “At” (it is masked, and the original token is followed), or write [MASK] into the text and explain again.';

/** Whether the explained text has a [MASK] token. */
export function hasMask(tokens: readonly ProtocolToken[]): boolean {
  // Not only specials: BERT's WordPiece keeps a typed [MASK] as a token with its text offsets.
  return tokens.some((t) => t.text === '[MASK]');
}

/** The position picker: every [MASK], or one token (masked first, the original followed). */
export function positionOptions(tokens: readonly ProtocolToken[], id: string, everyMask: string): HTMLSelectElement {
  const sel = el('select', { id, 'aria-label': 'Position' }, [el('option', { value: '' }, [everyMask])]);
  for (const t of tokens) if (!t.special || t.text === '[MASK]') sel.append(el('option', { value: String(t.i) }, [`${t.i}: ${t.text}`]));
  return sel;
}
