// Turns engine errors into messages that name the VS Code setting to change (the engine only knows flags).
import { isLensError, LensError } from '../engine';

/** An error while opening the model: point at the modelPath setting (or the default model). */
export function modelOpenError(e: unknown, modelPath: string): unknown {
  if (!isLensError(e) || e.code === 'cancelled') return e;
  const where = modelPath
    ? 'check the setting debertaLens.modelPath or run “DeBERTa Lens: Select Model…”'
    : 'the bundled default model failed; run “DeBERTa Lens: Select Model…” to use another';
  return e.message.includes('debertaLens.modelPath') ? e : new LensError(`${e.message} (${where})`, e.code);
}

/** An error while explaining: a too-long input names the maxTokens setting and its value. */
export function explainError(e: unknown, maxTokens: number): unknown {
  if (!isLensError(e) || e.code !== 'too-long' || e.message.includes('debertaLens.maxTokens')) return e;
  return new LensError(`${e.message} (setting debertaLens.maxTokens = ${maxTokens})`, e.code);
}
