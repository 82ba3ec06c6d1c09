// The caller's half of the load process (load-process.ts): starts it with a heap limit, watches its RSS and its
// time, and turns every way it can end into a result or one line naming the model folder. The caller itself — the
// VS Code extension host — reads none of the folder's files: a checkpoint that would exhaust or freeze a process
// takes down this child only.
import { type ChildProcess, fork } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ModelSummary } from '../api';
import { LensError } from '../errors';
import { availableMemory } from '../memory/available-memory';
import type { WireCheckpoint } from './checkpoint-wire';
import type { FromLoader, ToLoader } from './load-messages';
import { overBudget, WATCHDOG_ENV, type WatchdogBudget } from './load-watchdog';

const MB = 2 ** 20;

export interface LoadBudget {
  /** V8 heap of the load process (--max-old-space-size): parser state (pickle values, JSON) lives here. */
  heapMb: number;
  /** RSS while the files' structure is read; after that, this plus `perWeightByte` × the weights' bytes (the graph
   *  build widens float16 to float32 in memory). */
  rssMb: number;
  perWeightByte: number;
  /** Time to read every file's structure (config, index, headers, pickle). */
  parseMs: number;
  /** Time for the rest (hashing, tokenizer, graph build): this plus the weights' bytes at `bytesPerSecond`. */
  restMs: number;
  bytesPerSecond: number;
  /** How often the RSS is read (by this process on Linux, from /proc/PID/status; by the load process itself on
   *  every platform, load-watchdog.ts). */
  watchMs: number;
  /** Whether this process reads the load process's RSS too (Linux; off only to test the load process's own watch). */
  watchFromOutside?: boolean;
}

export const DEFAULT_LOAD_BUDGET: LoadBudget = {
  heapMb: 1024,
  rssMb: 1536,
  perWeightByte: 3,
  parseMs: 30_000,
  restMs: 60_000,
  bytesPerSecond: 5 * 1e6,
  watchMs: 100,
};

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

const ADVICE =
  'the files are damaged or were not written by Hugging Face or torch — re-download the model or convert it to model.safetensors from a trusted source.';

/** Runs one request in a fresh load process. */
function runLoader(dir: string, msg: ToLoader, log: ((line: string) => void) | undefined, budget: LoadBudget): Promise<FromLoader> {
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
      reject(new LensError(`${dir}: cannot start the process that reads the model (${(e as Error).message}).`, 'runtime'));
      return;
    }
    let stderr = '';
    let settled = false;
    let rssLimit = budget.rssMb * MB;
    let overWhat = ADVICE;
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
      () => stop(new LensError(`${dir}: reading the model's files took longer than ${budget.parseMs / 1000} s; ${ADVICE}`, 'corrupt')),
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
          stop(
            new LensError(
              `${dir}: reading the model's files took more than ${Math.round(rssLimit / MB)} MB of memory; ${overWhat}`,
              'corrupt',
            ),
          );
        }
      });
    }, budget.watchMs);
    child.stderr?.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
    child.on('message', (m: FromLoader) => {
      if (m.type === 'log') return log?.(m.line);
      if (m.type === 'parsed') {
        // The structure is read; what is left is reading bytes, in time and memory proportional to them.
        clearTimeout(timer);
        // Never more than the machine (or the container's cgroup) has free: a zip entry may claim gigabytes.
        const wanted = budget.rssMb * MB + budget.perWeightByte * m.weightBytes;
        const room = budget.rssMb * MB + availableMemory();
        rssLimit = Math.min(wanted, room);
        overWhat = wanted > room ? 'more than this machine has free: close other programs, or use a smaller model' : ADVICE;
        const ms = budget.restMs + (m.weightBytes / budget.bytesPerSecond) * 1000;
        timer = setTimeout(
          () =>
            stop(new LensError(`${dir}: reading the model's weights took longer than ${Math.round(ms / 1000)} s; ${ADVICE}`, 'corrupt')),
          ms,
        );
        return;
      }
      log?.(`read ${dir} in a separate process (peak ${Math.round(peak / MB)} MB)`);
      finish(m);
    });
    child.on('error', (e) => stop(new LensError(`${dir}: the process that reads the model failed (${e.message}).`, 'runtime')));
    // 'close', not 'exit': it comes after the IPC channel has delivered every message.
    child.on('close', (code, signal) => {
      if (settled) return;
      // V8 prints "Reached heap limit" / "heap out of memory" before it aborts.
      // The load process's own watchdog killed it (load-watchdog.ts): the same line as this process's watch.
      const over = overBudget(stderr);
      if (over) {
        const why = over.machine ? 'more than this machine has free: close other programs, or use a smaller model' : ADVICE;
        return stop(new LensError(`${dir}: reading the model's files took more than ${over.mb} MB of memory; ${why}`, 'corrupt'));
      }
      if (/heap limit|heap out of memory|Allocation failed/i.test(stderr)) {
        return stop(new LensError(`${dir}: reading the model's files took more than ${budget.heapMb} MB of heap; ${ADVICE}`, 'corrupt'));
      }
      stop(
        new LensError(
          `${dir}: the process that reads the model stopped (${signal ?? `exit code ${code}`}) before it answered; ${ADVICE}`,
          'runtime',
        ),
      );
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
