// Which ids DeBERTa's specials have: names from special_tokens_map.json / tokenizer_config.json (defaults
// [PAD] [CLS] [SEP] [UNK] [MASK]), ids from added tokens or the vocabulary.
import * as path from 'node:path';
import { LensError } from '../errors';
import { exists, isRecord, readJsonOrThrow, tokenId } from './files';
import type { SpecialIds } from './types';

type Role = keyof SpecialIds;
const ROLES: Role[] = ['pad', 'cls', 'sep', 'unk', 'mask'];
const DEFAULT_NAMES: Record<Role, string> = { pad: '[PAD]', cls: '[CLS]', sep: '[SEP]', unk: '[UNK]', mask: '[MASK]' };

export interface SpecialInfo {
  names: Record<Role, string>;
  /** Added tokens (content → id) from added_tokens.json and tokenizer_config.json's added_tokens_decoder. */
  added: Map<string, number>;
  /** additional_special_tokens, which count as specials too. */
  additional: string[];
  /** Added tokens that are neither special nor normalized (added_tokens_decoder flags); the rest are. */
  unnormalized: Set<string>;
}

function tokenContent(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (isRecord(v) && typeof v.content === 'string') return v.content;
  return undefined;
}

export function readSpecialInfo(dir: string): SpecialInfo {
  const names = { ...DEFAULT_NAMES };
  const added = new Map<string, number>();
  const additional: string[] = [];
  const unnormalized = new Set<string>();
  for (const file of ['tokenizer_config.json', 'special_tokens_map.json']) {
    const p = path.join(dir, file);
    if (!exists(p)) continue;
    const json = readJsonOrThrow(p, file);
    if (!isRecord(json)) throw new LensError(`${p} must hold a JSON object — replace it with the model's original file.`, 'corrupt');
    for (const role of ROLES) {
      const c = tokenContent(json[`${role}_token`]);
      if (c !== undefined) names[role] = c;
    }
    if (Array.isArray(json.additional_special_tokens)) {
      for (const v of json.additional_special_tokens) {
        const c = tokenContent(v);
        if (c !== undefined && !additional.includes(c)) additional.push(c);
      }
    }
    const dec = json.added_tokens_decoder;
    if (isRecord(dec)) {
      for (const [id, v] of Object.entries(dec)) {
        const c = tokenContent(v);
        if (c !== undefined) added.set(c, tokenId(/^\d+$/.test(id) ? Number(id) : id, p, `added token ${JSON.stringify(c)}`));
        if (c !== undefined && isRecord(v) && v.special !== true && v.normalized === false) unnormalized.add(c);
      }
    }
  }
  const addedFile = path.join(dir, 'added_tokens.json');
  if (exists(addedFile)) {
    const json = readJsonOrThrow(addedFile, 'added_tokens.json');
    if (!isRecord(json))
      throw new LensError(`${addedFile} must map token strings to ids — replace it with the model's original file.`, 'corrupt');
    for (const [c, id] of Object.entries(json)) added.set(c, tokenId(id, addedFile, `added token ${JSON.stringify(c)}`));
  }
  return { names, added, additional, unnormalized };
}

/** The id of a [SEP] the tokenizer files do not have. Such a tokenizer still loads, so the encoder explains ids;
 *  text input needs [SEP] ([CLS] A [SEP], [CLS] A [SEP] B [SEP]) and is refused (run/input.ts). */
export const NO_SEP = -1;

/** Resolves every role; `fallback` may supply an id the vocabulary lacks (spm: [MASK] after the pieces). A missing
 *  [SEP] resolves to NO_SEP; any other missing role is refused. */
export function resolveSpecials(
  info: SpecialInfo,
  lookup: (piece: string) => number | undefined,
  fallback: Partial<Record<Role, number>>,
  file: string,
): SpecialIds {
  const out = {} as SpecialIds;
  for (const role of ROLES) {
    const name = info.names[role];
    const id = info.added.get(name) ?? lookup(name) ?? fallback[role];
    if (id === undefined && role === 'sep') {
      out.sep = NO_SEP;
      continue;
    }
    if (id === undefined) {
      throw new LensError(
        `${file} has no ${name} token (the ${role} token) — use the tokenizer files that came with the model.`,
        'invalid-input',
      );
    }
    out[role] = tokenId(id, file, `the ${role} token ${name}`);
  }
  return out;
}
