// Typed, validated access to config.json fields, shared by the DeBERTa and BERT config readers. Every error names
// the file and the key.
import { LensError } from '../errors';
import { quoteValue } from './json-file';
import { own } from './own';
import type { ModelSpec } from '../types';

type Act = ModelSpec['hiddenAct'];

// HF's ACT2FN names that have an implementation in the graph; aliases map onto the same function.
const ACTIVATIONS: Record<string, Act> = {
  gelu: 'gelu',
  gelu_python: 'gelu', // the same exact erf GELU, written in Python
  gelu_new: 'gelu_new',
  gelu_pytorch_tanh: 'gelu_new', // the tanh approximation, fused
  gelu_fast: 'gelu_fast',
  quick_gelu: 'quick_gelu',
  relu: 'relu',
  tanh: 'tanh',
  silu: 'silu',
  swish: 'silu',
};

/** Typed access to config fields; `null` counts as absent (HF configs write null for unset options). */
export class FieldReader {
  constructor(
    private readonly json: Record<string, unknown>,
    private readonly file: string,
  ) {}

  raw(key: string): unknown {
    const v = this.json[key];
    return v === null ? undefined : v;
  }

  private bad(key: string, value: unknown, want: string): LensError {
    return new LensError(`${this.file}: ${key} must be ${want}, got ${quoteValue(value)}; fix the config.`);
  }

  int(key: string, dflt: number): number {
    const v = this.raw(key);
    if (v === undefined) return dflt;
    if (typeof v !== 'number' || !Number.isSafeInteger(v)) throw this.bad(key, v, 'an integer');
    return v;
  }

  positiveInt(key: string, dflt: number): number {
    const v = this.int(key, dflt);
    if (v < 1) throw this.bad(key, v, 'a positive integer');
    return v;
  }

  nonNegativeInt(key: string, dflt: number): number {
    const v = this.int(key, dflt);
    if (v < 0) throw this.bad(key, v, 'a non-negative integer');
    return v;
  }

  positiveNumber(key: string, dflt: number): number {
    const v = this.raw(key);
    if (v === undefined) return dflt;
    if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) throw this.bad(key, v, 'a positive number');
    return v;
  }

  bool(key: string, dflt: boolean): boolean {
    const v = this.raw(key);
    if (v === undefined) return dflt;
    if (typeof v === 'boolean') return v;
    // Python truthiness of 0/1, which configs written by hand sometimes use.
    if (v === 0 || v === 1) return v === 1;
    throw this.bad(key, v, 'true or false');
  }

  activation(key: string, dflt: Act): Act {
    const v = this.raw(key);
    if (v === undefined) return dflt;
    const act = typeof v === 'string' ? own(ACTIVATIONS, v.toLowerCase()) : undefined;
    if (act === undefined) {
      throw new LensError(
        `${this.file}: ${key} ${quoteValue(v)} is not supported; use one of ${Object.keys(ACTIVATIONS).join(', ')}.`,
        'unsupported',
      );
    }
    return act;
  }

  /** HF: a string is lower-cased, split on "|" and stripped; a list is taken as is; None → []. */
  posAttType(): string[] {
    const v = this.raw('pos_att_type');
    if (v === undefined) return [];
    if (typeof v === 'string')
      return v
        .toLowerCase()
        .split('|')
        .map((s) => s.trim());
    if (Array.isArray(v) && v.every((s) => typeof s === 'string')) return v;
    throw this.bad('pos_att_type', v, 'a string like "p2c|c2p" or a list of strings');
  }

  /** HF v2: `"layer_norm" in [x.strip() for x in norm_rel_ebd.lower().split("|")]`. */
  normRelEbd(): boolean {
    const v = this.raw('norm_rel_ebd');
    if (v === undefined) return false;
    if (typeof v !== 'string') throw this.bad('norm_rel_ebd', v, 'a string like "layer_norm" or "none"');
    return v
      .toLowerCase()
      .split('|')
      .map((s) => s.trim())
      .includes('layer_norm');
  }
}
