// What the prediction heads give back: the `deberta-lens predict` JSON and what the views show. Types only.
import type { ModelInfo, Token } from './types';

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
