// `npm run fuzz -- --seed S --cases N [--jobs J] [--family NAME,…] [--only I,…] [--out FILE]`: a long fuzz run of
// every family (test/unit/fuzz/families/) through the built CLI. Prints a JSON summary (per family: clear errors,
// correct results, and the findings — silent wrong, false refusal, unclear error, internal error, crash, hang, over
// memory), writes each case as a JSON line to FILE.jsonl when --out is given, and exits 1 on any finding (their
// folders are kept; --only with the same seed makes a case again).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runFuzz } from '../../test/unit/fuzz/fuzz-run';

const REPO = path.resolve(__dirname, '..', '..', '..');

function flags(argv: string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (let k = 0; k < argv.length; k += 2) {
    const name = argv[k]!;
    const value = argv[k + 1];
    if (!name.startsWith('--') || value === undefined) throw new Error(`expected --flag value pairs, got ${argv.slice(k).join(' ')}`);
    out.set(name.slice(2), value);
  }
  return out;
}

function int(f: Map<string, string>, name: string, fallback: number): number {
  const v = f.get(name);
  if (v === undefined) return fallback;
  if (!/^\d+$/.test(v)) throw new Error(`--${name} must be a whole number, got ${v}`);
  return Number(v);
}

async function main(): Promise<void> {
  const f = flags(process.argv.slice(2));
  for (const k of f.keys()) if (!['seed', 'cases', 'jobs', 'family', 'only', 'out'].includes(k)) throw new Error(`unknown flag --${k}`);
  const cli = path.join(REPO, 'dist', 'cli.js');
  if (!fs.existsSync(cli)) throw new Error('dist/cli.js is missing: run npm run build first');
  const out = f.get('out');
  if (out) fs.writeFileSync(`${out}.jsonl`, '');
  const summary = await runFuzz({
    cli,
    seed: int(f, 'seed', 1),
    cases: int(f, 'cases', 300),
    jobs: int(f, 'jobs', Math.max(1, Math.min(4, os.availableParallelism()))),
    families: f.get('family')?.split(','),
    only: f.get('only')?.split(',').map(Number),
    log: out ? `${out}.jsonl` : undefined,
  });
  const text = JSON.stringify(summary, null, 2);
  if (out) fs.writeFileSync(out, `${text}\n`);
  process.stdout.write(`${text}\n`);
  process.exitCode = summary.findings.length === 0 ? 0 : 1;
}

main().catch((e: unknown) => {
  process.stderr.write(`fuzz: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exitCode = 2;
});
