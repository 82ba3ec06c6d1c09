// JSON from a model folder, parsed so that an error never quotes the file: V8's messages quote the text around the
// fault ("Unexpected token 'h', "hunter2..." is not valid JSON"), and a config.json symlinked to a secret would
// leak it into a notification or a log. Errors give the position (line and column) only. Numbers that overflow a
// double (1e999) keep the text they were written with, so a message says `got 1e999`, not `got null`.
import { LensError } from '../errors';
import { jsonFaultOffset } from './json-fault';
import { readRegularFile } from './regular-file';

/** A JSON number that does not fit a double, kept as written. It is not a number, so every numeric check refuses it. */
export class RawNumber {
  constructor(readonly text: string) {}
  toJSON(): string {
    return this.text;
  }
}

/** A value from a file for an error message: JSON, except that an overflowing number shows as written. */
export function quoteValue(v: unknown): string {
  if (v instanceof RawNumber) return v.text;
  return JSON.stringify(v) ?? String(v);
}

const RAW_KEY = '\u0000lens-raw-number';

/** Parses `text`; `fail(where)` builds the error from the fault's position only (never from the text). */
export function parseJsonText(text: string, fail: (where: string) => LensError): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw fail(faultPosition(text, e instanceof RangeError));
  }
  // Only a literal with a 3-digit exponent or 309 digits can overflow; most files skip the rescan.
  if (!/\d[eE]\+?\d{3}|\d{309}/.test(text)) return value;
  const marked = markOverflow(text);
  return marked === text ? value : JSON.parse(marked, (_k, v: unknown) => unmark(v));
}

/** Reads and parses `file` (a regular file of at most `maxBytes`), naming it and `what` in every error. */
export function readJsonFile(file: string, what: string, maxBytes: number, advice: string): unknown {
  const text = readRegularFile(file, what, maxBytes).toString('utf8');
  return parseJsonText(text, (where) => new LensError(`${file}: ${what} is not valid JSON (${where}); ${advice}`, 'corrupt'));
}

/** "line L, column C" of the fault, found by our own scan (V8's message quotes the text and often has no position). */
function faultPosition(text: string, tooDeep: boolean): string {
  if (tooDeep) return 'nested too deeply';
  const pos = jsonFaultOffset(text);
  if (pos < 0) return 'position unknown';
  if (pos >= text.length) return 'it ends too early';
  const before = text.slice(0, pos).split(/\r\n|\r|\n/);
  return `line ${before.length}, column ${(before[before.length - 1]?.length ?? 0) + 1}`;
}

/** Rewrites each overflowing number literal (outside strings) as {RAW_KEY: "its text"}. Only called on text
 *  that parsed, so the scan can assume valid JSON. */
function markOverflow(text: string): string {
  let out = '';
  let k = 0;
  const num = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
  while (k < text.length) {
    const c = text[k]!;
    if (c === '"') {
      let j = k + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      out += text.slice(k, j + 1);
      k = j + 1;
      continue;
    }
    if (c === '-' || (c >= '0' && c <= '9')) {
      num.lastIndex = k;
      const m = num.exec(text);
      const lit = m?.[0] ?? c;
      out += Number.isFinite(Number(lit)) ? lit : `{${JSON.stringify(RAW_KEY)}:${JSON.stringify(lit)}}`;
      k += lit.length;
      continue;
    }
    out += c;
    k++;
  }
  return out;
}

function unmark(v: unknown): unknown {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
  const keys = Object.keys(v);
  if (keys.length === 1 && keys[0] === RAW_KEY) return new RawNumber(String((v as Record<string, unknown>)[RAW_KEY]));
  return v;
}
