// The engine's one front door: the extension, the CLI and the benchmarks import from here only.
//
// Layers inside src/engine, bottom to top; a file imports only from its own layer or those below it, never above:
//   1. errors.ts, types.ts                     leaves: the error type and the model/token/tensor types
//   2. checkpoint/, tokenizer/, zip/            reading a model folder (weights, config, heads; the tokenizers)
//   3. cache/ (→ checkpoint), tokenizer-thread/ (→ tokenizer)
//   4. graph/                                   the ONNX graphs built from a checkpoint, and their cache entries
//   5. runtime/, memory/                        onnxruntime in a child process; memory estimates, the layer cache
//   6. result/                                  ExplainResult: a result whose layers are computed on demand
//   7. api.ts                                   the public types (inputs, results, LensModel); types only
//   8. run/                                     the verbs (explain, predict, ablate, ablated-run, sweep, occlusion), each on
//                                               the RunContext interface (run/run-context.ts); their helpers
//                                               (input, layer, head-session, tail-sessions, prediction-read)
//                                               sit below them in run/ and import no verb
//   9. model/                                   OpenModel (implements RunContext and calls the verbs), model
//                                               folders, bundled models, the CLI's spec checks
//  10. index.ts                                 this file
// src/shared is below all of them (the host and the webview share it); src/analysis sits above the engine.
export type {
  ChoiceScore,
  ClassificationOutput,
  LabelScore,
  MultipleChoiceOutput,
  QuestionAnsweringOutput,
  TaskName,
  TaskOutput,
  TokenLabels,
  AblateInput,
  AblateResult,
  AblatedRunInput,
  AblationMode,
  EmdPass,
  EmdPassesResult,
  EngineOptions,
  ExplainInput,
  LensModel,
  LoadBudgetSettings,
  ModelSummary,
  OriginalToken,
  PositionPrediction,
  PredictInput,
  PredictResult,
  PredictTimings,
  RtdScore,
  SweepCell,
  SweepInput,
  SweepProgress,
  SweepResult,
  SweepTarget,
  SweepTargetInfo,
  TokenRating,
  TopToken,
  TrackedToken,
  OccludeInput,
  OcclusionMethod,
  OcclusionProgress,
  OcclusionResult,
  OcclusionScores,
  OcclusionTargetInfo,
  WorkEstimate,
} from './api';
export { DEFAULT_MAX_TOKENS, DEFAULT_MODEL, inspectModel, openModel, resolveModelDir, type LoadTimings } from './model/open-model';
export type { OpenModel } from './model/open-model';
export { checkAblation, checkPatch, checkSweep } from './model/checks';
export { BUNDLED_MODELS, bundledModel, type BundledModel } from './model/bundled-models';
export { forwardOnly } from './run/input';
export { InputTooLongError, type InputCut } from './run/input-cut';
export { DEFAULT_TOP } from './run/prediction-read';
export { ExplainResult, type ExplainTimings, type LayerPreview, type LayerTensors } from './result/explain-result';
export { layerCache, DEFAULT_LAYER_CACHE_BYTES } from './memory/layer-cache';
export { estimateMemory, type MemoryEstimate } from './memory/estimate';
export { DEFAULT_CACHE_MAX_GB, defaultCacheDir } from './cache/cache-layout';
export { clearCache, type EntryInfo, listEntries } from './cache/cache-usage';
export { isLensError, LensError, type LensErrorCode, oneLine } from './errors';
export { EXECUTION_PROVIDERS } from './runtime/execution-providers';
export { defaultThreads, maxThreads } from './runtime/threads';
export type { ExecutionProviderSetting, MatrixKind, ModelInfo, TermName, Token } from './types';
export { TERM_NAMES } from './types';
export type { PatchGrid, PatchInput, PatchResult, PatchTargetInfo, PatchTrace } from './api';
export { parsePatch, type PatchPlan } from './run/patch-spec';
