// The load process's own memory watchdog, on every platform: a worker thread reads the process's resident memory
// (process.memoryUsage.rss()) and kills the process when it passes its budget — while the main thread may be stuck
// in a parser and could not answer. The caller's watch from outside (isolated-load.ts) reads /proc, which only Linux
// has; this one is what guards macOS and Windows, and a second guard on Linux. The caller learns why from the
// line this writes to stderr before the kill.
import { Worker } from 'node:worker_threads';
import { availableMemory } from '../memory/available-memory';

/** The line's start on stderr; the limit in MB and, when the machine's free memory set it, " machine" follow. */
export const OVER_BUDGET = 'deberta-lens load process: over its memory budget of';
/** Where the caller puts the budget (JSON of WatchdogBudget) for the load process. */
export const WATCHDOG_ENV = 'DEBERTA_LENS_LOAD_WATCHDOG';

export interface WatchdogBudget {
  /** RSS while the files' structure is read; after that, plus `perWeightByte` × the weights' bytes. */
  rssMb: number;
  perWeightByte: number;
  /** How often the RSS is read. */
  watchMs: number;
}

const MB = 2 ** 20;

// Plain JavaScript run as the worker's source (eval), so that it needs no file of its own beside the bundle.
const WORKER = `
const { workerData } = require('node:worker_threads');
const fs = require('node:fs');
const limit = new Float64Array(workerData.shared);
const nap = new Int32Array(new SharedArrayBuffer(4));
for (;;) {
  if (process.memoryUsage.rss() > limit[0]) {
    fs.writeSync(2, ${JSON.stringify(OVER_BUDGET)} + ' ' + Math.round(limit[0] / ${MB}) + ' MB' + (limit[1] ? ' machine' : '') + '\\n');
    process.kill(process.pid, 'SIGKILL');
  }
  Atomics.wait(nap, 0, 0, workerData.watchMs);
}
`;

export interface Watchdog {
  /** The files' structure is read: the budget grows by the weights' bytes, within the machine's free memory. */
  parsed(weightBytes: number): void;
}

/** Starts the watchdog with the budget the caller put in the environment; undefined when there is none. */
export function startWatchdog(env: NodeJS.ProcessEnv = process.env): Watchdog | undefined {
  let budget: WatchdogBudget;
  try {
    budget = JSON.parse(env[WATCHDOG_ENV] ?? '') as WatchdogBudget;
  } catch {
    return undefined;
  }
  if (!(budget.rssMb > 0) || !(budget.watchMs > 0) || !(budget.perWeightByte >= 0)) return undefined;
  // [limit in bytes, 1 when the machine's free memory set it]: read by the worker on every look.
  const shared = new SharedArrayBuffer(16);
  const limit = new Float64Array(shared);
  limit[0] = budget.rssMb * MB;
  const worker = new Worker(WORKER, { eval: true, workerData: { shared, watchMs: budget.watchMs } });
  worker.unref();
  return {
    parsed(weightBytes) {
      const after = limitAfterParse(budget, weightBytes);
      limit[1] = after.machine ? 1 : 0;
      limit[0] = after.bytes;
    },
  };
}

/**
 * A load process's RSS limit once the files' structure is read: the budget plus `perWeightByte` × the weights'
 * bytes, but never more than the machine (or the container's cgroup) has free — a zip entry may claim gigabytes.
 * `machine`: the free memory set it.
 */
export function limitAfterParse(budget: Omit<WatchdogBudget, 'watchMs'>, weightBytes: number): { bytes: number; machine: boolean } {
  const wanted = budget.rssMb * MB + budget.perWeightByte * weightBytes;
  const room = budget.rssMb * MB + availableMemory();
  return { bytes: Math.min(wanted, room), machine: wanted > room };
}

/** The limit (MB) and whether the machine set it, from a load process's stderr; undefined when it did not say. */
export function overBudget(stderr: string): { mb: number; machine: boolean } | undefined {
  const at = stderr.lastIndexOf(OVER_BUDGET);
  if (at < 0) return undefined;
  const m = /^ (\d+) MB( machine)?/.exec(stderr.slice(at + OVER_BUDGET.length));
  return m ? { mb: Number(m[1]), machine: !!m[2] } : undefined;
}
