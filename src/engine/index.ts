// The engine's one front door: the extension, the CLI and the benchmarks import from here only.
export type { EngineOptions, ExplainInput, LensModel, ModelSummary } from './api';
export { DEFAULT_MAX_TOKENS, DEFAULT_MODEL, inspectModel, openModel, resolveModelDir, type LoadTimings } from './model';
export type { OpenModel } from './model';
export { forwardOnly } from './explain';
export type { AblateInput, AblateResult, TokenRating, TrackedToken, OriginalToken, PositionPrediction, PredictInput, PredictResult, PredictTimings, RtdScore, SweepCell, SweepInput, SweepProgress, SweepResult, TopToken } from './prediction';
export { DEFAULT_TOP } from './predict';
export { checkAblation } from './ablate';
export { checkSweep } from './sweep';
export type { AblatedRunInput } from './ablated-run';
export { ExplainResult, type ExplainTimings, type LayerPreview, type LayerTensors } from './result';
export { layerCache, DEFAULT_LAYER_CACHE_BYTES } from './layer-cache';
export { estimateMemory, formatBytes, type MemoryEstimate } from './memory';
export { DEFAULT_CACHE_MAX_GB, defaultCacheDir, formatBytes as formatDiskBytes } from './cache/cache-layout';
export { clearCache, type EntryInfo, listEntries } from './cache/cache-usage';
export { isLensError, LensError, type LensErrorCode, oneLine } from './errors';
export { EXECUTION_PROVIDERS } from './runtime/execution-providers';
export type { ExecutionProviderSetting, MatrixKind, ModelInfo, TermName, Token } from './types';
export { TERM_NAMES } from './types';
