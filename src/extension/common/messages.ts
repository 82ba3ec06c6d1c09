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
export type ErrorAction = 'Select Model…' | 'Open Model Setting' | 'Open Max Tokens Setting' | 'Select Text That Fits' | 'Show Log';

/** Whether the command that failed can select the part of its text the model reads (one text in an editor). */
export interface ErrorFixes {
  selectFits?: boolean;
}

/** A refusal set by an absolute-position table (BERT's 128 positions): no setting raises it, another model can. */
export function positionLimited(e: unknown): boolean {
  if (e instanceof InputTooLongError) return e.cut.limited_by === 'positions';
  return isLensError(e) && e.code === 'too-long' && e.message.includes('absolute positions for only');
}

export function errorActions(e: unknown, fixes: ErrorFixes = {}): ErrorAction[] {
  if (e instanceof ModelOpenError) return ['Select Model…', 'Open Model Setting', 'Show Log'];
  if (!isLensError(e)) return ['Show Log'];
  switch (e.code) {
    case 'too-long': {
      const fits: ErrorAction[] = fixes.selectFits && e instanceof InputTooLongError ? ['Select Text That Fits'] : [];
      // A position table is the model's own size: a model with relative positions (DeBERTa) reads longer texts.
      return [...fits, positionLimited(e) ? 'Select Model…' : 'Open Max Tokens Setting'];
    }
    case 'invalid-input': // nothing selected, no editor: the message says what to do
    case 'cancelled':
      return [];
    default:
      return ['Show Log'];
  }
}

/** An error while explaining: a too-long input names the maxTokens setting and its value. */
export function explainError(e: unknown, maxTokens: number): unknown {
  if (!isLensError(e) || e.code !== 'too-long' || e.message.includes('debertaLens.maxTokens') || positionLimited(e)) return e;
  const message = `${e.message} (setting debertaLens.maxTokens = ${maxTokens})`;
  // Where the cut would fall travels on with the message.
  return e instanceof InputTooLongError ? new InputTooLongError(message, e.cut) : new LensError(message, e.code);
}
