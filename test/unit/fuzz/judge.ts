// What a fuzz case expects, and the outcome of one run against it. A case either expects a refusal (one clear line
// naming what to fix), a result (exit 0 with output its check accepts), or either; anything else is a finding.
import type { RawRun } from './run-case';

export const OUTCOMES = [
  'clear error',
  'correct result',
  // findings:
  'silent wrong',
  'false refusal',
  'unclear error',
  'internal error',
  'crash',
  'hang',
  'over memory',
] as const;
export type Outcome = (typeof OUTCOMES)[number];
export const FINDINGS: readonly Outcome[] = OUTCOMES.slice(2);

export interface FuzzCase {
  /** One line saying what the case did, enough to rebuild it by hand. */
  what: string;
  /** Arguments after `deberta-lens`. */
  args: string[];
  env?: Record<string, string>;
  stdout?: 'pipe' | 'close-early' | 'dev-full';
  expect: 'error' | 'result' | 'either';
  /** A refusal's line must match this (it names the file, flag or setting). */
  names?: RegExp;
  /** On exit 0: what is wrong with stdout, or undefined (default: a well-formed explain result). */
  check?: (stdout: string) => string | undefined;
}

/** Everything that is not one clear line. */
function stderrProblem(stderr: string): { outcome: Outcome; detail: string } | undefined {
  const lines = stderr.trimEnd().split('\n');
  const [line] = lines;
  if (lines.length !== 1 || line === undefined || line === '') return { outcome: 'crash', detail: `${lines.length} lines on stderr` };
  if (!line.startsWith('deberta-lens: ')) return { outcome: 'crash', detail: 'stderr does not start with deberta-lens:' };
  if (line.includes('internal error')) return { outcome: 'internal error', detail: line.slice(0, 300) };
  if (line.length > 800) return { outcome: 'unclear error', detail: `${line.length}-character message` };
  return undefined;
}

/** Exit 0 must mean a well-formed explain result: every matrix entry finite, every token in range. */
export function explainProblem(stdout: string, text: string): string | undefined {
  let json: { input_ids: number[]; tokens: { id: number; start: number; end: number }[]; layers: Record<string, unknown>[] };
  try {
    json = JSON.parse(stdout);
  } catch {
    return 'stdout is not JSON';
  }
  for (const t of json.tokens) {
    if (!Number.isInteger(t.id) || t.id < 0) return `token id ${t.id}`;
    if (!(t.start >= 0 && t.start <= t.end && t.end <= text.length)) return `token offsets ${t.start}..${t.end}`;
  }
  let bad: string | undefined;
  const walk = (v: unknown, where: string): void => {
    if (bad) return;
    if (Array.isArray(v)) v.forEach((x) => walk(x, where));
    else if (v === null || (typeof v === 'number' && !Number.isFinite(v))) bad = `non-finite value in ${where}`;
  };
  for (const layer of json.layers)
    for (const [k, v] of Object.entries(layer)) if (k !== 'layer') walk(v, `layer ${String(layer.layer)} ${k}`);
  return bad;
}

export function judge(c: FuzzCase, r: RawRun): { outcome: Outcome; detail: string } {
  const mb = Math.round(r.peakRss / 2 ** 20);
  if (r.stopped) return { outcome: r.stopped, detail: `stopped after ${Math.round(r.ms)} ms, ${mb} MB` };
  if (r.signal) return { outcome: 'crash', detail: `killed by ${r.signal}: ${r.stderr.slice(0, 300)}` };
  if (r.code === 0) {
    if (c.expect === 'error') return { outcome: 'silent wrong', detail: 'exit 0 where a refusal was due' };
    if (c.stdout === 'close-early' || c.stdout === 'dev-full') {
      return r.stderr === ''
        ? { outcome: 'correct result', detail: '' }
        : { outcome: 'crash', detail: `exit 0 with stderr: ${r.stderr.slice(0, 300)}` };
    }
    const problem = c.check ? c.check(r.stdout) : explainProblem(r.stdout, '');
    return problem ? { outcome: 'silent wrong', detail: problem } : { outcome: 'correct result', detail: '' };
  }
  if (r.code !== 1) return { outcome: 'crash', detail: `exit code ${r.code}: ${r.stderr.slice(0, 300)}` };
  const problem = stderrProblem(r.stderr);
  if (problem) return problem;
  const line = r.stderr.trim();
  if (c.expect === 'result') return { outcome: 'false refusal', detail: line.slice(0, 300) };
  if (c.names && !c.names.test(line))
    return { outcome: 'unclear error', detail: `does not match ${String(c.names)}: ${line.slice(0, 300)}` };
  return { outcome: 'clear error', detail: line.slice(0, 300) };
}
