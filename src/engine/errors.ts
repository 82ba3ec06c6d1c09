/** An error the user can act on: one line naming the file, flag or setting and what to do.
 *  The CLI prints `message` alone (no stack); the extension shows it in a notification. */
export class LensError extends Error {
  constructor(message: string, readonly code: LensErrorCode = 'invalid-input') {
    super(message);
    this.name = 'LensError';
  }
}

export type LensErrorCode =
  | 'not-found'
  | 'invalid-input'
  | 'unsupported'
  | 'corrupt'
  | 'unsafe'
  | 'too-long'
  | 'cancelled'
  | 'runtime';

export function isLensError(e: unknown): e is LensError {
  return e instanceof Error && e.name === 'LensError';
}
