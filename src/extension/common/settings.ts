// The extension's settings: their types, defaults and validation, defined once. `readSettings` is the one
// place that reads them (extension.ts passes VS Code's configuration getter).
import { DEFAULT_CACHE_MAX_GB, DEFAULT_MAX_TOKENS, type ExecutionProviderSetting, type MatrixKind } from '../../engine';
import { MATRIX_KINDS } from '../../shared/kinds';
import { EXECUTION_PROVIDERS } from '../../shared/providers';
import type { ColorScaleName, ViewName } from '../../shared/protocol/lens';

export const SECTION = 'debertaLens';

export interface LensSettings {
  /** Empty = the embedded default model. */
  modelPath: string;
  executionProvider: ExecutionProviderSetting;
  maxTokens: number;
  defaultTerm: MatrixKind;
  defaultView: ViewName;
  colorScale: ColorScaleName;
  /** Size limit of the graph cache (decimal GB); applied whenever a graph is built. */
  cacheMaxGB: number;
  /** Tokens listed per predicted position (fill-mask in the panel and the editor hover). */
  predictionTopK: number;
}

export const DEFAULTS: LensSettings = {
  modelPath: '',
  executionProvider: 'auto',
  maxTokens: DEFAULT_MAX_TOKENS,
  defaultTerm: 'probs',
  defaultView: 'heatmap',
  colorScale: 'diverging',
  cacheMaxGB: DEFAULT_CACHE_MAX_GB,
  predictionTopK: 5,
};

/** The largest predictionTopK: a longer list would not fit the panel's prediction cards. */
export const MAX_PREDICTION_TOP_K = 20;

const VIEWS: readonly ViewName[] = ['heatmap', 'heads'];
const SCALES: readonly ColorScaleName[] = ['diverging', 'viridis'];

/** Settings that, when changed, invalidate the open model. */
export const MODEL_KEYS = ['modelPath', 'executionProvider', 'maxTokens'] as const;

function oneOf<T extends string>(v: unknown, allowed: readonly T[], fallback: T): T {
  return typeof v === 'string' && (allowed as readonly string[]).includes(v) ? (v as T) : fallback;
}

/** Reads and sanitises the settings; a malformed value falls back to its default rather than throwing. */
export function readSettings(get: (key: keyof LensSettings) => unknown): LensSettings {
  const path = get('modelPath');
  const max = get('maxTokens');
  const cacheMax = get('cacheMaxGB');
  const topK = get('predictionTopK');
  return {
    modelPath: typeof path === 'string' ? path.trim() : DEFAULTS.modelPath,
    executionProvider: oneOf(get('executionProvider'), EXECUTION_PROVIDERS, DEFAULTS.executionProvider),
    maxTokens: typeof max === 'number' && Number.isInteger(max) && max >= 3 ? max : DEFAULTS.maxTokens,
    defaultTerm: oneOf(get('defaultTerm'), MATRIX_KINDS, DEFAULTS.defaultTerm),
    defaultView: oneOf(get('defaultView'), VIEWS, DEFAULTS.defaultView),
    colorScale: oneOf(get('colorScale'), SCALES, DEFAULTS.colorScale),
    cacheMaxGB: typeof cacheMax === 'number' && Number.isFinite(cacheMax) && cacheMax >= 0 ? cacheMax : DEFAULTS.cacheMaxGB,
    predictionTopK:
      typeof topK === 'number' && Number.isInteger(topK) && topK >= 1 && topK <= MAX_PREDICTION_TOP_K ? topK : DEFAULTS.predictionTopK,
  };
}

/** The key that a model is opened with: a change of any of these means reopening. */
export function modelKey(s: LensSettings): string {
  return JSON.stringify([s.modelPath, s.executionProvider, s.maxTokens]);
}
