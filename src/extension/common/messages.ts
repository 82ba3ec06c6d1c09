// Turns engine errors into messages that name the VS Code setting to change (the engine only knows flags).
import { InputTooLongError, isLensError, LensError } from '../../engine';

/** A failure to open the model: the only kind whose notification offers Select Model and the model setting. */
export class ModelOpenError extends LensError {}

/** An error while opening the model: point at the modelPath setting (or the default model). */
export function modelOpenError(e: unknown, modelPath: string): unknown {
  if (isLensError(e) && e.code === 'cancelled') return e;
  const message = e instanceof Error ? e.message : String(e);
  const where = modelPath
    ? 'check the setting debertaLens.modelPath or run “DeBERTa Lens: Select Model…”'
    : 'the bundled default model failed; run “DeBERTa Lens: Select Model…” to use another';
  return new ModelOpenError(
    message.includes('debertaLens.modelPath') ? message : `${message} (${where})`,
    isLensError(e) ? e.code : 'runtime',
  );
}

/** The buttons of an error notification: only those that can fix what went wrong. */
export type ErrorAction = 'Select Model…' | 'Open Model Setting' | 'Open Max Tokens Setting' | 'Show Log';

export function errorActions(e: unknown): ErrorAction[] {
  if (e instanceof ModelOpenError) return ['Select Model…', 'Open Model Setting', 'Show Log'];
  if (!isLensError(e)) return ['Show Log'];
  switch (e.code) {
    case 'too-long':
      return ['Open Max Tokens Setting'];
    case 'invalid-input': // nothing selected, no editor: the message says what to do
    case 'cancelled':
      return [];
    default:
      return ['Show Log'];
  }
}

/** An error while explaining: a too-long input names the maxTokens setting and its value. */
export function explainError(e: unknown, maxTokens: number): unknown {
  if (!isLensError(e) || e.code !== 'too-long' || e.message.includes('debertaLens.maxTokens')) return e;
  const message = `${e.message} (setting debertaLens.maxTokens = ${maxTokens})`;
  // Where the cut would fall travels on with the message.
  return e instanceof InputTooLongError ? new InputTooLongError(message, e.cut) : new LensError(message, e.code);
}
