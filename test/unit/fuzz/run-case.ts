// Runs the real CLI on one fuzz case in a child process, under a time limit and a memory limit on the whole
// process tree (the CLI and its runtime process), and sorts the outcome. Memory is read from /proc (Linux, where
// CI runs); elsewhere only the time limit applies.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';

export type Outcome = 'clear error' | 'correct result' | 'wrong' | 'hang' | 'crash' | 'over memory';

export interface CaseResult {
  outcome: Outcome;
  ms: number;
  /** Peak resident memory of the process tree, in bytes (sum of each process's high-water mark). */
  peakRss: number;
  detail: string;
}

export interface Limits {
  ms: number;
  rssBytes: number;
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

/** Everything that is not one clear line naming what to fix. */
function stderrProblem(stderr: string): string | undefined {
  const lines = stderr.trimEnd().split('\n');
  const [line] = lines;
  if (lines.length !== 1 || line === undefined) return `${lines.length} lines on stderr`;
  if (!line.startsWith('deberta-lens: ')) return 'stderr does not start with deberta-lens:';
  if (line.includes('internal error')) return 'internal error';
  if (line.length > 800) return `${line.length}-character message`;
  return undefined;
}

/** Exit 0 must mean a well-formed result: every matrix entry finite, every token in range. */
function resultProblem(stdout: string, text: string): string | undefined {
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

export function runCase(cli: string, args: string[], text: string, limits: Limits): Promise<CaseResult> {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, [cli, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let err = '';
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-100_000)));
    let peak = 0;
    let stopped: Outcome | undefined;
    const kill = (why: Outcome) => {
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
      const pids = tree(child.pid!);
      const hwm = pids.reduce((a, p) => a + kbField(p, 'VmHWM'), 0);
      peak = Math.max(peak, hwm);
      if (hwm > limits.rssBytes) kill('over memory');
      if (performance.now() - t0 > limits.ms) kill('hang');
    }, 20);
    child.on('close', (code, signal) => {
      clearInterval(poll);
      const ms = performance.now() - t0;
      const done = (outcome: Outcome, detail: string) => resolve({ outcome, ms, peakRss: peak, detail });
      if (stopped) return done(stopped, `stopped after ${Math.round(ms)} ms, ${Math.round(peak / 2 ** 20)} MB`);
      if (signal) return done('crash', `killed by ${signal}`);
      if (code === 0) {
        const problem = resultProblem(Buffer.concat(out).toString('utf8'), text);
        return problem ? done('wrong', problem) : done('correct result', '');
      }
      if (code !== 1) return done('crash', `exit code ${code}: ${err.slice(0, 300)}`);
      const problem = stderrProblem(err);
      return problem ? done('crash', `${problem}: ${err.slice(0, 300)}`) : done('clear error', err.trim());
    });
  });
}
