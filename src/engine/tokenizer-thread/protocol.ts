// Messages between the extension host (or CLI) and the tokenizer thread.
import type { LensErrorCode } from '../errors';
import type { ModelInput } from '../tokenizer/types';
import type { SpecialIds } from '../tokenizer/types';
import type { Token, TokenizerKind } from '../types';

export interface ThreadData {
  dir: string;
  /** One Int32 cell: the stage the thread is in (see tokenizer/stages.ts). */
  stage: Int32Array;
}

export type ToThread =
  | { type: 'encode'; id: number; text: string }
  | { type: 'input'; id: number; text: string; pair?: string }
  | { type: 'pieces'; id: number; ids: number[] };

export interface ThreadFailure {
  message: string;
  code?: LensErrorCode;
  lens: boolean;
}

export type FromThread =
  | { type: 'opened'; kind: TokenizerKind; special: SpecialIds; vocabSize: number; stages: readonly string[] }
  | { type: 'encoded'; id: number; tokens: Token[] }
  | { type: 'input'; id: number; input: ModelInput }
  | { type: 'pieces'; id: number; pieces: (string | undefined)[] }
  | { type: 'failed'; id?: number; error: ThreadFailure };
