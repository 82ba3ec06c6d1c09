// A fuzz run: case i of seed S belongs to family i mod F (of the families chosen) and is made from Rng(S·1000003 + i),
// so any case can be made again alone. Each runs the real CLI (dist/cli.js) in a child process under the limits,
// and is judged against what its family expects. Shared by the fixed-seed slice in `npm test` and `npm run fuzz`.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MEMORY_ROOT_ENV } from '../../../src/engine/memory/available-memory';
import { makeBases } from './cases';
import { writeFakeTree } from './fake-cgroup';
import { FAMILIES } from './families';
import type { Family } from './families/family';
import { FINDINGS, type FuzzCase, judge, OUTCOMES, type Outcome } from './judge';
import { Rng } from './mutate';
import { type Limits, runCli } from './run-case';

export interface FuzzOptions {
  cli: string;
  seed: number;
  cases: number;
  jobs: number;
  /** Only families whose name contains one of these (all when empty). */
  families?: string[];
  /** Only these case indices (to make a finding again). */
  only?: number[];
  limits?: Limits;
  /** Each case, as it ends, appended here as a JSON line. */
  log?: string;
  /** Called with each case as it ends. */
  onCase?: (row: CaseRow) => void;
}

export interface CaseRow {
  index: number;
  family: string;
  what: string;
  outcome: Outcome;
  detail: string;
  ms: number;
  peak_rss_mb: number;
  /** Set when the case was stopped as a hang and run again alone (see below). */
  retried?: boolean;
}

export interface FuzzSummary {
  seed: number;
  cases: number;
  seconds: number;
  limits: Limits;
  totals: Record<Outcome, number>;
  families: ({ family: string; cases: number; worst_peak_rss_mb: number; worst_ms: number } & Record<Outcome, number>)[];
  /** Every case that ended in a finding; their folders are kept under `folder`. */
  findings: CaseRow[];
  /** Cases stopped at the time limit among the jobs that ended as expected when run again alone. */
  slow_under_load: number;
  folder: string;
}

export const DEFAULT_LIMITS: Limits = { ms: 30_000, rssBytes: 1.5 * 2 ** 30 };
/** The CLI's and the runtime process's own resident memory before any input (each ~100–160 MB), with room to spare. */
const BASELINE_BYTES = 512 * 2 ** 20;

export function chosenFamilies(names: string[] = []): Family[] {
  const chosen = names.length === 0 ? FAMILIES : FAMILIES.filter((f) => names.some((n) => f.name.includes(n)));
  if (chosen.length === 0) throw new Error(`no family matches ${names.join(', ')}; families: ${FAMILIES.map((f) => f.name).join(', ')}`);
  return chosen;
}

function counts(rows: CaseRow[]): Record<Outcome, number> {
  return Object.fromEntries(OUTCOMES.map((o) => [o, rows.filter((r) => r.outcome === o).length])) as Record<Outcome, number>;
}

export async function runFuzz(o: FuzzOptions): Promise<FuzzSummary> {
  const families = chosenFamilies(o.families);
  const limits = o.limits ?? DEFAULT_LIMITS;
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'lens-fuzz-'));
  const cache = path.join(root, 'cache');
  const rows: CaseRow[] = [];
  const t0 = performance.now();
  const indices = o.only ?? Array.from({ length: o.cases }, (_, i) => i);
  const stoppedCases = new Map<number, FuzzCase>();
  try {
    const bases = await makeBases(path.join(root, 'bases'));
    // The engine is told the memory the limit leaves (less a margin for the two processes' own baselines), so an
    // input too long for it is refused by the length check, and "over memory" means the estimate let through more
    // than it said. A case with a memory tree of its own (the cgroup family) keeps it.
    const memoryRoot = writeFakeTree(path.join(root, 'memory'), {
      memAvailable: limits.rssBytes - BASELINE_BYTES,
      version: 2,
      cgroupPath: '/',
      mountPoint: '/sys/fs/cgroup',
      mountRoot: '/',
      groups: {},
    });
    let next = 0;
    const worker = async () => {
      for (let k = next++; k < indices.length; k = next++) {
        const index = indices[k]!;
        const family = families[index % families.length]!;
        const rng = new Rng((o.seed * 1_000_003 + index) >>> 0);
        const dir = path.join(root, `case-${index}`);
        fs.mkdirSync(dir, { recursive: true });
        let c;
        try {
          c = family.make({ rng, dir, cache, bases });
        } catch (e) {
          throw new Error(`making case ${index} (${family.name}) failed: ${(e as Error).stack}`, { cause: e });
        }
        c.env = { [MEMORY_ROOT_ENV]: memoryRoot, ...c.env };
        const raw = await runCli(o.cli, { args: c.args, env: c.env, stdout: c.stdout }, limits);
        const { outcome, detail } = judge(c, raw);
        const row: CaseRow = {
          index,
          family: family.name,
          what: c.what,
          outcome,
          detail,
          ms: Math.round(raw.ms),
          peak_rss_mb: Math.round(raw.peakRss / 2 ** 20),
        };
        rows.push(row);
        if (outcome === 'hang') stoppedCases.set(index, c);
        if (o.log) fs.appendFileSync(o.log, `${JSON.stringify(row)}\n`);
        o.onCase?.(row);
        if (!FINDINGS.includes(outcome)) fs.rmSync(dir, { recursive: true, force: true });
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, o.jobs) }, worker));
    // On a busy machine a case can pass the time limit without hanging: a stopped case runs again alone, and is a
    // hang only if it is stopped again. (A real hang — a blocking open — uses no CPU, so a CPU-time limit would miss it.)
    for (const [index, c] of stoppedCases) {
      const row = rows.find((r) => r.index === index)!;
      const raw = await runCli(o.cli, { args: c.args, env: c.env, stdout: c.stdout }, limits);
      const again = judge(c, raw);
      Object.assign(row, {
        outcome: again.outcome,
        detail: `stopped after ${row.ms} ms among ${o.jobs} jobs; alone: ${again.outcome} in ${Math.round(raw.ms)} ms${again.detail ? `: ${again.detail}` : ''}`,
        retried: true,
      });
      if (o.log) fs.appendFileSync(o.log, `${JSON.stringify(row)}\n`);
      if (!FINDINGS.includes(again.outcome)) fs.rmSync(path.join(root, `case-${index}`), { recursive: true, force: true });
    }
  } finally {
    fs.rmSync(cache, { recursive: true, force: true });
    fs.rmSync(path.join(root, 'bases'), { recursive: true, force: true });
  }
  const findings = rows.filter((r) => FINDINGS.includes(r.outcome)).sort((a, b) => a.index - b.index);
  if (findings.length === 0) fs.rmSync(root, { recursive: true, force: true });
  return {
    seed: o.seed,
    cases: rows.length,
    seconds: Math.round((performance.now() - t0) / 100) / 10,
    limits,
    totals: counts(rows),
    families: families.map((f) => {
      const mine = rows.filter((r) => r.family === f.name);
      return {
        family: f.name,
        cases: mine.length,
        ...counts(mine),
        worst_peak_rss_mb: Math.max(0, ...mine.map((r) => r.peak_rss_mb)),
        worst_ms: Math.max(0, ...mine.map((r) => r.ms)),
      };
    }),
    findings,
    slow_under_load: rows.filter((r) => r.retried && !FINDINGS.includes(r.outcome)).length,
    folder: root,
  };
}
