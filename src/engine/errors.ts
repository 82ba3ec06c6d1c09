/** An error the user can act on: one line naming the file, flag or setting and what to do.
 *  The CLI prints `message` alone (no stack); the extension shows it in a notification. */
export class LensError extends Error {
  constructor(
    message: string,
    readonly code: LensErrorCode = 'invalid-input',
  ) {
    super(oneLine(message));
    this.name = 'LensError';
  }
}

/** Longest message shown: values quoted from a hostile file (a 10,000-dimension shape, a whole JSON line) must
 *  not turn one line into a page. */
export const MAX_MESSAGE_CHARS = 600;

/** Newlines (JSON.parse errors quote the offending line) become spaces; an overlong middle is cut, keeping the
 *  file name at the start and the advice at the end. */
export function oneLine(message: string): string {
  const flat = message.replace(/\s*[\r\n\u2028\u2029]+\s*/g, ' ');
  if (flat.length <= MAX_MESSAGE_CHARS) return flat;
  const head = flat.slice(0, MAX_MESSAGE_CHARS - 160);
  const tail = flat.slice(flat.length - 120);
  return `${head} … (${flat.length - head.length - tail.length} characters cut) … ${tail}`;
}

export type LensErrorCode = 'not-found' | 'invalid-input' | 'unsupported' | 'corrupt' | 'unsafe' | 'too-long' | 'cancelled' | 'runtime';

export function isLensError(e: unknown): e is LensError {
  return e instanceof Error && e.name === 'LensError';
}
