// What the prediction heads give back: the `deberta-lens predict` JSON and what the views show. Types only.
import type { ModelInfo, TermName, Token } from './types';

export interface PredictInput {
  /** Text to tokenize; [CLS] … [SEP] are added. Exactly one of text/ids. */
  text?: string;
  /** Ids fed as given (no specials added). */
  ids?: number[];
  /** Token positions to predict besides every [MASK]: each is masked on its own, one more forward pass each. */
  positions?: number[];
  /** How many tokens per position (default 5). */
  top?: number;
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

export interface PredictResult {
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
  timings: PredictTimings;
}

export interface AblateInput extends PredictInput {
  /** LAYER.HEAD:TERM entries, comma-separated ("1.0:c2p,4.*:p2c,2.3:all"). */
  ablate: string;
  /** zero (default): a removed term is 0; mean: its mean over key positions, per query. */
  mode?: 'zero' | 'mean';
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
  ablation: { entries: string[]; mode: 'zero' | 'mean'; first_layer: number; layers_rerun: number; layers: number };
  mask_id: number | null;
  input_ids: number[];
  tokens: Token[];
  before: PositionPrediction[];
  after: PositionPrediction[];
  /** KL(before ‖ after) in nats over the whole vocabulary, per predicted position. */
  kl: { position: number; kl: number }[];
  tracked: TrackedToken[];
  timings: { tokenize_ms: number; forward_ms: number; rerun_ms: number; head_ms: number; total_ms: number };
}

export interface SweepInput {
  text?: string;
  ids?: number[];
  /** The terms to remove one head at a time: c2c, c2p, p2c, or "all" (every term the model has). */
  terms: string[];
  /** The position followed (masked first unless it is a [MASK]); default the input's first [MASK]. */
  position?: number;
  /** zero (default) or mean, as in an intervention. */
  mode?: 'zero' | 'mean';
  /** Called after every cell (and once at the start). */
  onProgress?: (p: SweepProgress) => void;
  /** false: one rerun per cell instead of a layer's cells as one batched run (the same numbers; for tests). */
  batch?: boolean;
}

export interface SweepProgress {
  done: number;
  total: number;
  /** The layer being swept. */
  layer: number;
}

/** One head's term removed alone. */
export interface SweepCell {
  layer: number;
  head: number;
  term: TermName;
  /** log p(followed) before − after: positive = the head's term helped the followed token. */
  drop: number;
  logprob_after: number;
  rank_after: number;
  /** The first choice after the intervention. */
  top1_after: { id: number; token: string };
}

export interface SweepResult {
  model: ModelInfo;
  mode: 'zero' | 'mean';
  terms: TermName[];
  position: number;
  /** input: a [MASK] of the input; masked: the position's token was masked for the sweep. */
  source: 'input' | 'masked';
  input_ids: number[];
  tokens: Token[];
  /** The token whose log-probability is followed, and how the model rates it without any intervention. */
  followed: { id: number; token: string; which: 'original' | 'top1_before'; before: TokenRating };
  /** Per term: drop as [layers][heads]. */
  grid: Partial<Record<TermName, number[][]>>;
  /** Every cell, largest drop first. */
  ranking: SweepCell[];
  timings: { forward_ms: number; rerun_ms: number; head_ms: number; cells: number; total_ms: number };
}
