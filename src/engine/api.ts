// The engine's public types: what the extension and the CLI call (through ./index.ts), and what the verbs in run/
// take and give back. Types only; implemented by model/open-model.ts. Below run/: it imports the leaves and the
// result class's type, never a verb.
import type { ExplainResult } from './result/explain-result';
import type { PatchHeadsGrid, PatchResidGrid } from '../shared/patching';
import type { Architecture, ExecutionProviderSetting, ModelInfo, TermName, Token, TokenizerKind } from './types';

export interface EngineOptions {
  /** Preferred execution provider; falls back to CPU when it fails. Default 'auto'. */
  executionProvider?: ExecutionProviderSetting;
  /** Where built ONNX graphs are cached (keyed by checkpoint content). Default: ~/.cache/deberta-lens. */
  cacheDir?: string;
  /** Size limit of that cache in decimal GB: least recently used graphs beyond it are removed. Default 4. */
  cacheMaxGB?: number;
  /** Intra-op threads for onnxruntime (default: all cores). */
  threads?: number;
  /** Refuse inputs longer than this many tokens (specials included) with a clear error. Default 4096. */
  maxTokens?: number;
  /** How the caller names that limit in messages (the extension's setting, the CLI's flag). */
  maxTokensName?: string;
  /** The forward pass computes attention this many heads at a time (default 4): fewer, less working memory. */
  attentionHeadGroup?: number;
  /** Working memory of one one-layer run, in bytes (default 512 MiB): a layer's heads are computed in chunks that fit. */
  layerChunkBytes?: number;
  /** Progress / diagnostic lines (the extension's output channel, the CLI's --verbose). */
  log?: (line: string) => void;
  /**
   * Read the checkpoint (config, weight headers, pickle, shards, tokenizer, hashes) and build its graphs in a
   * child process with a memory and time budget (model/load-process.ts), so that a hostile or broken checkpoint
   * cannot exhaust or freeze the caller: what the VS Code extension host sets. Default false (the CLI is such a
   * process itself).
   */
  isolate?: boolean;
  /** With `isolate`: the budget of the processes that build graphs on first use (default: the load process's). */
  graphBuildBudget?: LoadBudgetSettings;
}

/** A load process's budget (model/isolated-load.ts, DEFAULT_LOAD_BUDGET); each field left out keeps its default. */
export interface LoadBudgetSettings {
  /** V8 heap of the process (--max-old-space-size), MB: parser state (pickle values, JSON) lives there. */
  heapMb?: number;
  /** RSS while the files' structure is read, MB; after that, this plus `perWeightByte` × the weights' bytes (a graph
   *  build widens float16 to float32 in memory). */
  rssMb?: number;
  perWeightByte?: number;
  /** Time to read every file's structure (config, index, headers, pickle), ms. */
  parseMs?: number;
  /** Time for the rest (hashing, tokenizer, graph build): this plus the weights' bytes at `bytesPerSecond`, ms. */
  restMs?: number;
  bytesPerSecond?: number;
  /** How often the RSS is read, ms: by the process itself on every platform (model/load-watchdog.ts), and by the
   *  caller from /proc/PID/status on Linux. */
  watchMs?: number;
  /** Whether the caller reads the process's RSS too (Linux; off only to test the process's own watch). */
  watchFromOutside?: boolean;
}

export interface ExplainInput {
  /** Text to tokenize; [CLS] … [SEP] are added. */
  text?: string;
  /** With text: a second text, for a sentence pair [CLS] text [SEP] pair [SEP] (token types 0, then 1 from the
   *  pair on); the pair's tokens have offsets into `pair`. */
  pair?: string;
  /** With pair: where the pair starts in the text the caller shows (an editor selection holding both texts): the
   *  pair's tokens get offsets from there instead of into `pair`. Default 0. */
  pairOffset?: number;
  /** Ids fed as given (no specials added). Exactly one of text/ids. */
  ids?: number[];
  /** Layers the result can give (default: all). Only these layers' input states are kept. */
  layers?: number[];
  /**
   * Heads of one layer (every term) to compute in the same runtime call, right after the forward pass: `heads`
   * heads from `head` on (default 1; fewer past the last head). The result's preview holds them on return, so a
   * view can show its first matrices without waiting for the whole layer (computed on demand as usual). Their
   * time is `timings.preview_ms`, not part of `total_ms`.
   */
  preview?: { layer: number; head: number; heads?: number };
}

/** `deberta-lens info` and the extension's Select Model validation. Cheap: no graph build. */
export interface ModelSummary extends Pick<ModelInfo, 'path' | 'name' | 'type' | 'layers' | 'heads' | 'head_dim'> {
  architecture: Architecture;
  hidden_size: number;
  intermediate_size: number;
  vocab_size: number;
  parameters: number;
  terms: TermName[];
  position_buckets: number;
  max_relative_positions: number;
  tokenizer: TokenizerKind | 'none';
  weights: string[];
  is_default: boolean;
  /** Which bundled model this folder is (`default`, `bert-twin`), or null for any other folder. */
  bundled: string | null;
  /** The prediction heads stored with the encoder, by key prefix (cls.predictions, lm_predictions.lm_head, mask_predictions). */
  prediction_heads: string[];
  /** The fine-tuned task head that runs (sequence-classification, …, multiple-choice), or null. */
  task_head: TaskName | null;
  /**
   * How [MASK] predictions decode: `passes`, DeBERTa's Enhanced Mask Decoder as two more passes of the last layer
   * (`emd_rows`: the position table's rows, the longest input it decodes); `last-layer`, position_biased_input (the
   * EMD is the last layer itself); `plain`, no EMD (the head on the last hidden state).
   */
  emd: 'passes' | 'last-layer' | 'plain';
  emd_rows?: number;
}

export interface LensModel {
  readonly info: ModelInfo;
  readonly summary: ModelSummary;
  /**
   * One forward pass; the result computes a layer's matrices when asked (`result.load(layer)`).
   * Rejects with LensError('cancelled') when `signal` aborts.
   */
  explain(input: ExplainInput, signal?: AbortSignal): Promise<ExplainResult>;
  /** Fill-mask at every [MASK] (and at `positions`, masked first) and replaced-token detection, with the
   *  checkpoint's own heads. Rejects with a LensError naming what is missing when the checkpoint has no head. */
  predict(input: PredictInput, signal?: AbortSignal): Promise<PredictResult>;
  /** The same on the tokens of an explain result of this model: [MASK]s and RTD from the hidden state the explain
   *  kept (no second encoder run), each of `positions` masked and run once more. A task head (classification,
   *  token classification, question answering) reads that kept state too: no second forward pass. */
  predictExplained(result: ExplainResult, input: Pick<PredictInput, 'positions' | 'top'>, signal?: AbortSignal): Promise<PredictResult>;
  /** The Enhanced Mask Decoder's two passes (their outputs, c2c/c2p/p2c/probs with query I = H + absolute positions)
   *  on one input. Rejects with one line where the checkpoint has no EMD passes (no lm_predictions head or position
   *  table, position_biased_input, a text longer than the position table). */
  emdPasses(input: ExplainInput, signal?: AbortSignal): Promise<EmdPassesResult>;
  /** The same predictions before and after removing attention terms of chosen heads inside the forward pass
   *  (every later layer rerun), with KL and the followed token's log-probability and rank. The spec is checked
   *  against the model before anything runs. */
  ablate(input: AblateInput, signal?: AbortSignal): Promise<AblateResult>;
  /** The attention of the run with the intervention (every layer, computed on demand like explain's): intervened
   *  layers show the removed terms as the run used them and the softmax of that; later layers are the rerun's. */
  explainAblated(input: AblatedRunInput, signal?: AbortSignal): Promise<ExplainResult>;
  /** Head ranking at one position: each head's term removed alone (rerun from its layer), ranked by the drop in
   *  the followed token's log-probability. Cancelling kills the run in progress (`signal`). */
  sweep(input: SweepInput, signal?: AbortSignal): Promise<SweepResult>;
  /** Token attribution by occlusion: each non-special token masked, or removed, alone; scored by the drop in the
   *  followed value (a label's logit, a QA span, a masked token's log-probability). Variants run as batches. */
  occlude(input: OccludeInput, signal?: AbortSignal): Promise<OcclusionResult>;
  /** What explaining `input` costs, before it runs: tokens (the length limits checked), forward FLOPs, memory. */
  estimate(input: ExplainInput, signal?: AbortSignal): Promise<WorkEstimate>;
  /** Activation patching: the corrupted text rerun with pieces of the clean run put in, or a grid of such patches
   *  (causal trace, head terms, flow). Refusals come before anything runs; cancelling stops the reruns. */
  patch(input: PatchInput, signal?: AbortSignal): Promise<PatchResult>;
  dispose(): Promise<void>;
}

/** An explain's size before it runs (LensModel.estimate). */
export interface WorkEstimate {
  tokens: number;
  layers: number;
  /** Multiply-add FLOPs of the forward pass (graph/flops.ts). */
  flops: number;
  /** Bytes it needs at its peak (memory/estimate.ts). */
  bytes: number;
}

/** zero: a removed term is set to 0 before the softmax; mean: replaced by its mean over key positions (per query). */
export type AblationMode = 'zero' | 'mean';

/** The attention of an intervened run (`LensModel.explainAblated`). */
export interface AblatedRunInput {
  text?: string;
  /** A sentence pair's second text, and where it starts in the shown text (as ExplainInput's). */
  pair?: string;
  pairOffset?: number;
  ids?: number[];
  /** LAYER.HEAD:TERM entries, as for ablate. */
  ablate: string;
  mode?: AblationMode;
}

// What the prediction heads give back: the `deberta-lens predict` JSON and what the views show.

export interface PredictInput {
  /** Text to tokenize; [CLS] … [SEP] are added. Exactly one of text/ids. */
  text?: string;
  /** With text: a second text, [CLS] text [SEP] pair [SEP] (question answering: text = question, pair = context). */
  pair?: string;
  /** As ExplainInput's: the pair's token offsets from here (a QA answer's start/end too; its text stays the pair's). */
  pairOffset?: number;
  /** Multiple choice: with text (the prompt), one run per choice, each [CLS] text [SEP] choice [SEP]. */
  choices?: string[];
  /** Ids fed as given (no specials added). */
  ids?: number[];
  /** Token positions to predict besides every [MASK]: each is masked on its own, one more forward pass each. */
  positions?: number[];
  /** How many tokens per position (default 5). */
  top?: number;
  /**
   * Masked-LM predictions through DeBERTa's Enhanced Mask Decoder where the checkpoint has what it needs (microsoft's
   * `lm_predictions.lm_head.*` and the absolute position table): true by default; false gives the plain head on the
   * last hidden state (what Hugging Face computes).
   */
  emd?: boolean;
}

export interface TopToken {
  id: number;
  token: string;
  logit: number;
  /** Softmax over the whole vocabulary. */
  prob: number;
}

/** The token that stood at a masked position (for `positions`): how the model rates it. */
export interface OriginalToken extends TopToken {
  /** 1 = the model's first choice. */
  rank: number;
}

export interface PositionPrediction {
  position: number;
  /** "input": a [MASK] in the input; "masked": a position asked for, masked for this prediction. */
  source: 'input' | 'masked';
  top: TopToken[];
  original?: OriginalToken;
}

export interface RtdScore {
  position: number;
  token: string;
  /** Positive = "replaced". */
  logit: number;
  /** sigmoid(logit): the probability that this token was replaced. */
  prob: number;
}

export interface PredictTimings {
  tokenize_ms: number;
  /** Encoder runs (one, plus one per masked position). */
  forward_ms: number;
  /** Head runs. */
  head_ms: number;
  total_ms: number;
  /** The [MASK]s and RTD scores were read from an explain's last hidden state (no encoder run for them). */
  forward_reused?: boolean;
}

/** What a checkpoint's head predicts: the fine-tuned task, or the pretraining heads. */
export type TaskName =
  'sequence-classification' | 'token-classification' | 'question-answering' | 'multiple-choice' | 'masked-lm' | 'replaced-token-detection';

/** One label of a classifier: its logit and its score (softmax, sigmoid, or the logit itself for regression). */
export interface LabelScore {
  id: number;
  label: string;
  logit: number;
  score: number;
}

export interface ClassificationOutput {
  /** config.json's problem_type, or the one Hugging Face infers without it (regression for one label). */
  problem_type: 'single_label_classification' | 'multi_label_classification' | 'regression';
  /** How scores follow from logits, as Hugging Face's text-classification pipeline decides. */
  score_function: 'softmax' | 'sigmoid' | 'none';
  /** Every label, in the checkpoint's id order. */
  labels: LabelScore[];
  /** The label with the largest logit (absent for one-label regression). */
  predicted?: LabelScore;
}

export interface TokenLabels {
  position: number;
  /** Every label (softmax over labels per token). */
  labels: LabelScore[];
  predicted: LabelScore;
}

export interface QuestionAnsweringOutput {
  start_logits: number[];
  end_logits: number[];
  /** The context: the second text's tokens [first, end) (the final [SEP] excluded). */
  context_tokens: [number, number];
  max_answer_len: number;
  /** The best span, start ≤ end < start + max_answer_len inside the context, by start + end logit. start/end are
   *  UTF-16 offsets into the context (the pair text); null without one (ids given). */
  answer: {
    start: number | null;
    end: number | null;
    text: string | null;
    /** start_logits[start_token] + end_logits[end_token]. */
    score: number;
    start_token: number;
    end_token: number;
  } | null;
}

export interface ChoiceScore {
  index: number;
  text: string;
  logit: number;
  /** Softmax over the choices. */
  score: number;
  input_ids: number[];
}

export interface MultipleChoiceOutput {
  choices: ChoiceScore[];
  predicted: number;
}

/** A task head's output for one input: exactly one field, by the head's kind (ablate's before and after too). */
export interface TaskOutput {
  classification?: ClassificationOutput;
  token_classification?: TokenLabels[];
  question_answering?: QuestionAnsweringOutput;
  multiple_choice?: MultipleChoiceOutput;
}

export interface PredictResult extends TaskOutput {
  /** The head that answered. */
  task: TaskName;
  model: ModelInfo;
  /** The masked-LM head's key layout, or null when the checkpoint has none. */
  mlm_head: 'cls.predictions' | 'lm_predictions.lm_head' | null;
  rtd_head: boolean;
  mask_id: number | null;
  input_ids: number[];
  tokens: Token[];
  predictions: PositionPrediction[];
  /** Every token's replaced-token-detection score, when the checkpoint has that head. */
  rtd?: RtdScore[];
  /**
   * What the masked-LM predictions read: `emd`, DeBERTa's Enhanced Mask Decoder as microsoft/DeBERTa runs it (with
   * position_biased_input that is the last layer itself); `plain`, the head on the last hidden state (Hugging Face's).
   */
  decoder: 'emd' | 'plain';
  /** One line on the decoder when there is something to say: why the EMD could not run, or what it is here. */
  decoder_note?: string;
  timings: PredictTimings;
}

/** One of the Enhanced Mask Decoder's two passes of the last layer (keys and values from the state entering it). */
export interface EmdPass {
  /** The pass's output `[n, D]` row-major (the second pass's query is the first's output). */
  hidden: Float32Array;
  /** Raw terms as explain gives them (unscaled) and the softmax, each `[heads][n][n]` row-major; a term the model
   *  does not have is absent. probs = softmax((c2c + c2p + p2c) / scale). */
  c2c: Float32Array;
  c2p?: Float32Array;
  p2c?: Float32Array;
  probs: Float32Array;
}

/** The Enhanced Mask Decoder's passes on one input, as microsoft/DeBERTa's MaskedLanguageModel runs them. */
export interface EmdPassesResult {
  model: ModelInfo;
  input_ids: number[];
  tokens: Token[];
  /** The encoder layer both passes run (the last). */
  layer: number;
  heads: number;
  hidden_size: number;
  scale: number;
  /** H, the state entering the last layer `[n, D]`: the passes' keys and values. */
  kv_hidden: Float32Array;
  /** The absolute position rows `[n, D]` added to H: the position part of the first pass's query. */
  position: Float32Array;
  /** I = H + position `[n, D]`: the first pass's query. */
  query: Float32Array;
  passes: [EmdPass, EmdPass];
  timings: { tokenize_ms: number; forward_ms: number; passes_ms: number; total_ms: number };
}

export interface AblateInput extends PredictInput {
  /** LAYER.HEAD:TERM entries, comma-separated ("1.0:c2p,4.*:p2c,2.3:all"). */
  ablate: string;
  /** zero (default): a removed term is 0; mean: its mean over key positions, per query. */
  mode?: AblationMode;
}

/** How the model rates one token at a position, before or after the intervention. */
export interface TokenRating {
  logit: number;
  /** Natural log of its probability over the whole vocabulary. */
  logprob: number;
  /** 1 = the model's first choice. */
  rank: number;
}

/** The token followed at a position: the original token at a masked position, else the top token before. */
export interface TrackedToken {
  position: number;
  id: number;
  token: string;
  /** original: the token that stood at a position masked for the prediction; top1_before: an input [MASK]. */
  which: 'original' | 'top1_before';
  before: TokenRating;
  after: TokenRating;
}

export interface AblateResult {
  model: ModelInfo;
  /** The intervention as run. */
  ablation: { entries: string[]; mode: AblationMode; first_layer: number; layers_rerun: number; layers: number };
  mask_id: number | null;
  input_ids: number[];
  tokens: Token[];
  before: PositionPrediction[];
  after: PositionPrediction[];
  /** KL(before ‖ after) in nats over the whole vocabulary, per predicted position. */
  kl: { position: number; kl: number }[];
  tracked: TrackedToken[];
  /** A task-head checkpoint: its kind and its output before and after (then before/after/kl/tracked are empty). */
  task?: TaskName;
  task_before?: TaskOutput;
  task_after?: TaskOutput;
  timings: { tokenize_ms: number; forward_ms: number; rerun_ms: number; head_ms: number; total_ms: number };
}

export interface SweepInput {
  text?: string;
  ids?: number[];
  /** The terms to remove one head at a time: c2c, c2p, p2c, or "all" (every term the model has). */
  terms: string[];
  /** A task head's second text (question answering's context, a sentence pair). */
  pair?: string;
  /** The position followed: masked-LM (masked first unless it is a [MASK]; default the input's first [MASK]) or
   *  token classification (required); the other task heads read their own rows. */
  position?: number;
  /** What the ranking follows; default the model's own decision (see SweepTarget). */
  target?: SweepTarget;
  /** zero (default) or mean, as in an intervention. */
  mode?: AblationMode;
  /** Called after every cell (and once at the start). */
  onProgress?: (p: SweepProgress) => void;
  /** false: one rerun per cell instead of a layer's cells as one batched run (the same numbers; for tests). */
  batch?: boolean;
  /** Rank the Enhanced Mask Decoder's heads instead (masked-LM with EMD passes): each (pass, head, term) removed alone
   *  in the decoder, the followed token's log-probability read through the EMD; cells' layers are L (EMD 1) and L + 1. */
  emd?: boolean;
}

export interface SweepProgress {
  done: number;
  total: number;
  /** The layer being swept. */
  layer: number;
}

/**
 * What a head ranking follows, i.e. the decision each removal is measured against:
 *   - `{ label }` (a classification head): that label's logit — a number is a label id; a string is a label name, or
 *     an id when it is all digits and no label has that name. Default: the predicted label (token classification:
 *     at `position`).
 *   - `{ token }` (a masked-LM head): that token id's log-probability at the position. Default: the token there, or
 *     the first choice at an input [MASK].
 * A question-answering head always follows its predicted answer span (start logit + end logit).
 */
export type SweepTarget = { label: string | number } | { token: number };

/** A task-head ranking's target and its value without any intervention. */
export type SweepTargetInfo =
  | { kind: 'label'; id: number; label: string; position?: number; logit_before: number; score_before: number }
  | { kind: 'span'; start_token: number; end_token: number; logit_before: number };

/** One head's term removed alone. Masked-LM rankings fill the log-prob fields, task-head rankings the logit ones. */
export interface SweepCell {
  layer: number;
  head: number;
  term: TermName;
  /** Followed value before − after (log p, or the target's logit): positive = the head's term helped it. */
  drop: number;
  logprob_after?: number;
  rank_after?: number;
  /** The first choice after the intervention. */
  top1_after?: { id: number; token: string };
  /** Task heads: the target's logit (QA: start + end logit) after the intervention… */
  logit_after?: number;
  /** …and its score (the head's score function over all labels; absent for QA). */
  score_after?: number;
}

export interface SweepResult {
  model: ModelInfo;
  mode: AblationMode;
  terms: TermName[];
  position: number;
  /** input: a [MASK] of the input; masked: the position's token was masked for the sweep. */
  source: 'input' | 'masked';
  input_ids: number[];
  tokens: Token[];
  /** Masked-LM: the token whose log-probability is followed, and how the model rates it without any intervention. */
  followed?: { id: number; token: string; which: 'original' | 'top1_before' | 'asked'; before: TokenRating };
  /** Task heads: the head's kind and the decision followed. */
  task?: TaskName;
  target?: SweepTargetInfo;
  /** Per term: drop as [layers][heads] (with `emd`: [passes][heads], rows EMD 1 and EMD 2). */
  grid: Partial<Record<TermName, number[][]>>;
  /** Every cell, largest drop first. */
  ranking: SweepCell[];
  /** The cells are the Enhanced Mask Decoder's (layers L and L + 1), the followed value read through it. */
  emd?: boolean;
  timings: { forward_ms: number; rerun_ms: number; head_ms: number; cells: number; total_ms: number };
}

/** How a token is taken out of the input: replaced by [MASK] (same length), or deleted (one token shorter). */
export type OcclusionMethod = 'mask' | 'remove';

export interface OccludeInput {
  text?: string;
  ids?: number[];
  /** A second text (a sentence pair; question answering's context). */
  pair?: string;
  /** Masked-LM: the position followed (masked first unless it is a [MASK]; default the input's first [MASK]); token
   *  classification: the token whose label is followed (required). Other heads read their own rows. */
  position?: number;
  /** What is followed, as for sweep (SweepTarget); default the model's own decision. */
  target?: SweepTarget;
  /** Default both (only 'remove' when the mask token is unknown: ids without a tokenizer). */
  methods?: OcclusionMethod[];
  /** Token positions taken out together, a group per variant (a word's pieces); default every token alone. A group
   *  holding a special token (or the followed masked-LM position) is left out, as such tokens are. A function is
   *  given the input's tokens once they are known (the command line groups them into words). */
  groups?: number[][] | ((tokens: readonly Token[]) => number[][]);
  /** false: one forward pass per variant instead of batched runs (the same numbers; for tests and benchmarks). */
  batch?: boolean;
  /** Called after every batch (and once at the start). */
  onProgress?: (p: OcclusionProgress) => void;
}

export interface OcclusionProgress {
  done: number;
  total: number;
  method: OcclusionMethod;
}

/** What an occlusion follows: a task head's label or answer span (as a sweep's), or a masked-LM token's log-probability. */
export type OcclusionTargetInfo =
  | SweepTargetInfo
  | { kind: 'token'; id: number; token: string; position: number; which: 'original' | 'top1_before' | 'asked'; logprob_before: number };

export interface OcclusionScores {
  /** Per input position: the followed value before − after the token is taken out (positive = the token supported
   *  the target); null for special tokens, the followed masked-LM position, and a followed row that a removal deletes. */
  scores: (number | null)[];
  /** The followed value after, per position (null where scores is). */
  after: (number | null)[];
}

export interface OcclusionResult {
  model: ModelInfo;
  task: TaskName;
  input_ids: number[];
  tokens: Token[];
  mask_id: number | null;
  target: OcclusionTargetInfo;
  /** The followed value of the input as given (after masking the followed masked-LM position). */
  before: number;
  methods: Partial<Record<OcclusionMethod, OcclusionScores>>;
  /** The groups taken out together when some were given (sorted positions); each position of a group holds the
   *  group's score. */
  groups?: number[][];
  /** Why a method was left out of the default ones. */
  notes?: string[];
  timings: {
    tokenize_ms: number;
    /** Every encoder run's time in the runtime (the input, and the variants'). */
    forward_ms: number;
    head_ms: number;
    /** Starting the batched graph's process (building its graph on first use). */
    start_ms: number;
    total_ms: number;
    /** Encoder runs of variants, how many variants, and the most one run took. */
    variants: number;
    runs: number;
    batch_size: number;
    batched: boolean;
  };
}

// Activation patching (LensModel.patch; run/patch.ts).

export interface FlowEdge {
  layer: number;
  /** The query row (the edge's head) and the key it reads (its tail): information flows from `from` to `to`. */
  to: number;
  from: number;
  /** Target after the knockout − clean target. */
  change: number;
  term: TermName;
}

export interface FlowGrid {
  kind: 'flow';
  axes: ['layer', 'to', 'from'];
  threshold: number;
  /** The rows the target reads (the flow's sinks) and every row reached, per layer. */
  target_rows: number[];
  edges: FlowEdge[];
  knockouts: number;
}

/** A grid instead of one patch: every head's term alone (layer × head per term), every state row alone (layer ×
 *  position, the causal trace), or the attention edges that carry the target (./patch-flow.ts). */
export type PatchTrace = 'heads' | 'resid' | 'flow';

export interface PatchInput {
  /** The clean text (and its pair), or ids fed as given. */
  text?: string;
  pair?: string;
  ids?: number[];
  /** The corrupted text (and its pair), or ids. Of another length, its tokens pair with the clean ones
   *  (./patch-align.ts) and only states and knockouts can be put in. */
  corrupt?: string;
  corruptPair?: string;
  corruptIds?: number[];
  /** What is put in (./patch-spec.ts): "1.0:c2p,resid:3@5,…"; empty = nothing (the corrupted run). */
  patch?: string;
  trace?: PatchTrace;
  /** The flow trace keeps an edge whose knockout moves the target by more than this; default 0.1 × |clean −
   *  corrupt| (0.01 when they are equal; the flow needs no corrupted text). */
  threshold?: number;
  /** What is measured, as for sweep and occlusion; default the clean run's own decision. */
  target?: SweepTarget;
  /** Masked-LM: the followed position (default the first [MASK]); token classification and RTD: the token. */
  position?: number;
  /** false: one rerun per cell instead of a start layer's cells as batched runs (the same numbers; benchmarks). */
  batch?: boolean;
  onProgress?: (p: { done: number; total: number; layer: number }) => void;
}

/** `choice`: a multiple-choice head's score of the one choice the run holds (the prompt is the text, the choice its pair). */
export type PatchTargetInfo =
  OcclusionTargetInfo | { kind: 'rtd'; position: number; logit_before: number } | { kind: 'choice'; choice: string; logit_before: number };

/** A trace's grid, axes named (the two grids' shapes are the Patching tab's too: src/shared/patching.ts). */
export type PatchGrid = PatchHeadsGrid | PatchResidGrid | FlowGrid;

export interface PatchResult {
  model: ModelInfo;
  input_ids: number[];
  tokens: Token[];
  corrupt_ids: number[];
  corrupt_tokens: Token[];
  target: PatchTargetInfo;
  /** The target's value on the clean and on the corrupted run. */
  clean_value: number;
  corrupt_value: number;
  /** What predict gives on each run (the patched one: when a patch spec was given). */
  clean: PredictResult;
  corrupt: PredictResult;
  patched?: PredictResult;
  /** The patch as run: its parts, the first layer rerun, the target's value and (patched − corrupt) / (clean −
   *  corrupt), null when clean and corrupt give the same value. */
  patch?: { entries: string[]; first_layer: number; value: number; restored: number | null };
  grid?: PatchGrid;
  /** When the texts tokenize to different lengths: for each clean position, the corrupted position its values go
   *  to, or null (no counterpart; its cells are null). Positions everywhere else are the clean text's. */
  paired?: (number | null)[];
  /** rerun_provider: the execution provider the reruns ran on (a GPU provider that failed falls back to cpu). */
  timings: {
    forward_ms: number;
    rerun_ms: number;
    head_ms: number;
    reruns: number;
    runs: number;
    batch_size: number;
    rerun_provider?: string;
    total_ms: number;
  };
}
