// The caller's half of the load process (load-process.ts): starts it with a heap limit, watches its RSS and its
// time, and turns every way it can end into a result or one line naming the model folder. The caller itself — the
// VS Code extension host — reads none of the folder's files and builds none of its graphs: a checkpoint that would
// exhaust or freeze a process takes down this child only, and a large model's graph build (seconds, hundreds of MB)
// happens there, not on the caller's main thread.
import { type ChildProcess, fork } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { LoadBudgetSettings, ModelSummary } from '../api';
import type { GraphRecipe } from '../graph/graph-recipes';
import { LensError, type LensErrorCode } from '../errors';
import type { WireCheckpoint } from './checkpoint-wire';
import type { FromLoader, ToLoader } from './load-messages';
import { limitAfterParse, overBudget, WATCHDOG_ENV, type WatchdogBudget } from './load-watchdog';

const MB = 2 ** 20;

/** Every field of LoadBudgetSettings (api.ts), where the fields are explained. */
export type LoadBudget = Required<LoadBudgetSettings>;

export const DEFAULT_LOAD_BUDGET: LoadBudget = {
  heapMb: 1024,
  rssMb: 1536,
  perWeightByte: 3,
  parseMs: 30_000,
  restMs: 60_000,
  bytesPerSecond: 5 * 1e6,
  watchMs: 100,
  watchFromOutside: true,
};

/** The default budget with the fields `settings` sets. */
export function loadBudget(settings: LoadBudgetSettings = {}): LoadBudget {
  const set = Object.entries(settings).filter(([, v]) => v !== undefined);
  return { ...DEFAULT_LOAD_BUDGET, ...(Object.fromEntries(set) as LoadBudgetSettings) };
}

/** The load script: beside the bundle (dist/load-process.js) or beside this file (tsc output), same name. */
function loadScript(): string {
  return path.join(__dirname, 'load-process.js');
}

/** Resident memory of a process in bytes (Linux), or undefined where /proc is not there. */
async function rssOf(pid: number): Promise<number | undefined> {
  try {
    const m = /^VmRSS:\s+(\d+) kB/m.exec(await fs.promises.readFile(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** A deadline as the messages write it: whole seconds, or to two digits below ten. */
function formatSeconds(ms: number): number {
  return ms >= 10_000 ? Math.round(ms / 1000) : Number((ms / 1000).toPrecision(2));
}

/** What a memory budget the machine's free memory set asks of the user. */
const MACHINE_FULL = 'more than this machine has free: close other programs, or use a smaller model';

const ADVICE =
  'the files are damaged or were not written by Hugging Face or torch — re-download the model or convert it to model.safetensors from a trusted source.';

/** How one request's messages name what its process was doing. */
interface Job {
  /** While the files' structure is read ("reading the model's files"). */
  structure: string;
  /** While the bytes are read and the graphs built. */
  weights: string;
  /** The process ("the process that reads the model"). */
  process: string;
  advice: string;
  /** The code of a budget hit: a file that takes more than its budget to read is damaged or hostile ('corrupt'); a
   *  graph of a checkpoint that passed every check, too large for this machine ('runtime'). */
  code: LensErrorCode;
  /** The log line of a request answered, given the process's peak RSS in MB. */
  done: (peakMb: number, pid: number | undefined) => string;
}

const READ_JOB = (dir: string): Job => ({
  structure: "reading the model's files",
  weights: "reading the model's weights",
  process: 'the process that reads the model',
  advice: ADVICE,
  code: 'corrupt',
  done: (peak) => `read ${dir} in a separate process (peak ${peak} MB)`,
});

/** A graph built on first use: its checkpoint passed every check when it opened, so a budget hit is about size. */
const BUILD_JOB = (dir: string, what: string): Job => ({
  structure: `building its ${what}`,
  weights: `building its ${what}`,
  process: `the process that builds its ${what}`,
  advice: 'close other programs and try again, or use a smaller model (or one in float32, whose weights need no widening).',
  code: 'runtime',
  done: (peak, pid) => `built the ${what} of ${dir} in a separate process (pid ${pid}, peak ${peak} MB)`,
});

/** Runs one request in a fresh load process. */
function runLoader(
  dir: string,
  msg: ToLoader,
  log: ((line: string) => void) | undefined,
  budget: LoadBudget,
  job = READ_JOB(dir),
): Promise<FromLoader> {
  return new Promise<FromLoader>((resolve, reject) => {
    let child: ChildProcess;
    try {
      child = fork(loadScript(), [], {
        serialization: 'advanced',
        stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
        // Inside Electron (VS Code desktop) execPath is the app itself: run it as plain Node.
        env: {
          ...process.env,
          ELECTRON_RUN_AS_NODE: '1',
          [WATCHDOG_ENV]: JSON.stringify({
            rssMb: budget.rssMb,
            perWeightByte: budget.perWeightByte,
            watchMs: budget.watchMs,
          } satisfies WatchdogBudget),
        },
        execArgv: [`--max-old-space-size=${budget.heapMb}`],
      });
    } catch (e) {
      reject(new LensError(`${dir}: cannot start ${job.process} (${(e as Error).message}).`, 'runtime'));
      return;
    }
    let stderr = '';
    let settled = false;
    let rssLimit = budget.rssMb * MB;
    let overWhat = job.advice;
    let peak = 0;
    const finish = (r: FromLoader | Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearInterval(watch);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      if (r instanceof Error) reject(r);
      else resolve(r);
    };
    const stop = (e: LensError) => finish(e);
    let timer = setTimeout(
      () => stop(new LensError(`${dir}: ${job.structure} took longer than ${budget.parseMs / 1000} s; ${job.advice}`, job.code)),
      budget.parseMs,
    );
    let watching = false;
    const watch = setInterval(() => {
      if (watching || child.pid === undefined || budget.watchFromOutside === false) return;
      watching = true;
      void rssOf(child.pid).then((rss) => {
        watching = false;
        if (rss === undefined || settled) return;
        peak = Math.max(peak, rss);
        if (rss > rssLimit) {
          stop(new LensError(`${dir}: ${job.structure} took more than ${Math.round(rssLimit / MB)} MB of memory; ${overWhat}`, job.code));
        }
      });
    }, budget.watchMs);
    child.stderr?.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
    child.on('message', (m: FromLoader) => {
      if (m.type === 'log') return log?.(m.line);
      if (m.type === 'parsed') {
        // The structure is read; what is left is reading bytes, in time and memory proportional to them.
        clearTimeout(timer);
        const after = limitAfterParse(budget, m.weightBytes);
        rssLimit = after.bytes;
        overWhat = after.machine ? MACHINE_FULL : job.advice;
        const ms = budget.restMs + (m.weightBytes / budget.bytesPerSecond) * 1000;
        timer = setTimeout(
          () => stop(new LensError(`${dir}: ${job.weights} took longer than ${formatSeconds(ms)} s; ${job.advice}`, job.code)),
          ms,
        );
        return;
      }
      if (m.type !== 'error') log?.(job.done(Math.round(peak / MB), child.pid));
      finish(m);
    });
    child.on('error', (e) => stop(new LensError(`${dir}: ${job.process} failed (${e.message}).`, 'runtime')));
    // 'close', not 'exit': it comes after the IPC channel has delivered every message.
    child.on('close', (code, signal) => {
      if (settled) return;
      // V8 prints "Reached heap limit" / "heap out of memory" before it aborts.
      // The load process's own watchdog killed it (load-watchdog.ts): the same line as this process's watch.
      const over = overBudget(stderr);
      if (over) {
        const why = over.machine ? MACHINE_FULL : job.advice;
        return stop(new LensError(`${dir}: ${job.structure} took more than ${over.mb} MB of memory; ${why}`, job.code));
      }
      if (/heap limit|heap out of memory|Allocation failed/i.test(stderr)) {
        return stop(new LensError(`${dir}: ${job.structure} took more than ${budget.heapMb} MB of heap; ${job.advice}`, job.code));
      }
      stop(new LensError(`${dir}: ${job.process} stopped (${signal ?? `exit code ${code}`}) before it answered; ${job.advice}`, 'runtime'));
    });
    child.send(msg);
  });
}

function answer<T extends FromLoader['type']>(r: FromLoader, type: T): Extract<FromLoader, { type: T }> {
  if (r.type === 'error') throw r.code ? new LensError(r.message, r.code) : new Error(r.message);
  if (r.type !== type) throw new Error(`the load process answered '${r.type}' to a request for '${type}'`);
  return r as Extract<FromLoader, { type: T }>;
}

/** inspectModel's reading, in a load process. */
export async function inspectIsolated(dir: string, budget = DEFAULT_LOAD_BUDGET): Promise<ModelSummary> {
  return answer(await runLoader(dir, { type: 'inspect', dir }, undefined, budget), 'inspected').summary;
}

export interface IsolatedOpen {
  dir: string;
  cacheDir: string;
  hashStore: string;
  maxGB?: number;
  headGroup?: number;
  log?: (line: string) => void;
}

/** The checkpoint read, hashed and its graphs built in a load process; the caller gets byte ranges. */
export async function openIsolated(
  o: IsolatedOpen,
  budget = DEFAULT_LOAD_BUDGET,
): Promise<{ checkpoint: WireCheckpoint; graphBuilt: boolean }> {
  const msg: ToLoader = { type: 'open', dir: o.dir, cacheDir: o.cacheDir, hashStore: o.hashStore, maxGB: o.maxGB, headGroup: o.headGroup };
  const r = answer(await runLoader(o.dir, msg, o.log, budget), 'opened');
  return { checkpoint: r.checkpoint, graphBuilt: r.graphBuilt };
}

export interface IsolatedBuild {
  /** The checkpoint as openIsolated handed it over (with this process's tensors.bin). */
  checkpoint: WireCheckpoint;
  recipe: GraphRecipe;
  /** For messages: what the recipe builds ("graph of layers 2…5"). */
  what: string;
  cacheDir: string;
  maxGB?: number;
  log?: (line: string) => void;
}

/**
 * A graph built on first use, built into the cache by a load process from the checkpoint's byte ranges: the caller
 * then opens the entry. Resolves with the building process's id once the entry is written.
 */
export async function buildIsolated(o: IsolatedBuild, budget = DEFAULT_LOAD_BUDGET): Promise<{ built: boolean; pid: number }> {
  const msg: ToLoader = { type: 'build', checkpoint: o.checkpoint, recipe: o.recipe, cacheDir: o.cacheDir, maxGB: o.maxGB };
  const r = answer(await runLoader(o.checkpoint.dir, msg, o.log, budget, BUILD_JOB(o.checkpoint.dir, o.what)), 'built');
  return { built: r.built, pid: r.pid };
}
