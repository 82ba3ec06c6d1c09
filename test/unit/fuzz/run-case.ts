// Runs the real CLI on one fuzz case in a child process, under a time limit and a memory limit on the whole
// process tree (the CLI and its runtime process), and returns what it did. Memory is read from /proc (Linux, where
// CI runs); elsewhere only the time limit applies. Sorting what it did into outcomes is judge.ts's job.
import { spawn, type StdioOptions } from 'node:child_process';
import * as fs from 'node:fs';

export interface Limits {
  ms: number;
  rssBytes: number;
}

export interface RunSpec {
  args: string[];
  /** Added to this process's environment. */
  env?: Record<string, string>;
  /** 'close-early': the reader closes stdout after the first chunk (| head); 'dev-full': stdout is /dev/full. */
  stdout?: 'pipe' | 'close-early' | 'dev-full';
}

export interface RawRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  ms: number;
  /** Peak resident memory of the process tree, in bytes (sum of each process's high-water mark). */
  peakRss: number;
  /** Set when the runner stopped it. */
  stopped?: 'hang' | 'over memory';
}

function kbField(pid: number, field: string): number {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

function tree(pid: number): number[] {
  const out = [pid];
  for (let k = 0; k < out.length; k++) {
    try {
      for (const t of fs.readdirSync(`/proc/${out[k]}/task`)) {
        const kids = fs.readFileSync(`/proc/${out[k]}/task/${t}/children`, 'utf8').trim();
        if (kids) out.push(...kids.split(/\s+/).map(Number));
      }
    } catch {
      // the process exited between the listing and the read
    }
  }
  return out;
}

export function runCli(cli: string, spec: RunSpec, limits: Limits): Promise<RawRun> {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const full = spec.stdout === 'dev-full' ? fs.openSync('/dev/full', 'w') : undefined;
    const stdio: StdioOptions = ['ignore', full ?? 'pipe', 'pipe'];
    const child = spawn(process.execPath, [cli, ...spec.args], { stdio, env: { ...process.env, ...spec.env } });
    if (full !== undefined) fs.closeSync(full);
    const out: Buffer[] = [];
    let err = '';
    if (child.stdout) {
      const stdout = child.stdout;
      if (spec.stdout === 'close-early') stdout.once('data', () => stdout.destroy());
      stdout.on('data', (d: Buffer) => out.push(d));
    }
    child.stderr!.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-100_000)));
    let peak = 0;
    let stopped: RawRun['stopped'];
    const kill = (why: NonNullable<RawRun['stopped']>) => {
      stopped ??= why;
      for (const pid of tree(child.pid!).reverse()) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
    };
    const poll = setInterval(() => {
      const hwm = tree(child.pid!).reduce((a, p) => a + kbField(p, 'VmHWM'), 0);
      peak = Math.max(peak, hwm);
      if (hwm > limits.rssBytes) kill('over memory');
      if (performance.now() - t0 > limits.ms) kill('hang');
    }, 20);
    child.on('close', (code, signal) => {
      clearInterval(poll);
      const ms = performance.now() - t0;
      resolve({ code, signal, stdout: Buffer.concat(out).toString('utf8'), stderr: err, ms, peakRss: peak, stopped });
    });
  });
}
