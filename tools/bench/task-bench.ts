// `npm run bench:task`: sequence classifiers, side by side in one run, each measurement in its own process
// (./task-bench-run.ts) on random-weight checkpoints written here:
//   - predict on v3-base's geometry with a three-label classifier at 128 tokens against a plain forward of the
//     same ids (target: ratio ≤ 1.05; the pooler and classifier are two small products in JS);
//   - the head ranking aimed at a label on the same model at 128 tokens, c2p over all 144 heads (target ≤ 30 s);
//   - explain + predict at 512 tokens on v3-base and on Prompt-Guard's shape (mDeBERTa-v3-base: the same encoder,
//     a 251,000-row embedding and a 250,104-piece SentencePiece model): peak memory of each, and how much more
//     the big vocabulary costs against the extra embedding's size (≈ 1 copy: it is not duplicated).
//   - with --parts …,mlm-sweep, bench:sweep's masked-LM ranking (every term) right after the label-aimed one, and
//     the ratio of the two: a busy machine's figure then reads against bench:sweep's quiet one.
// Flags: --threads N, --runs N (the ratio's), --parts ratio,sweep,memory[,mlm-sweep], --lengths 128,512 (ratio and
// sweeps, memory).
// Prints one JSON object.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { defaultThreads } from '../../src/engine';
import { flag, round } from './bench-model';
import { V3_GEOMETRIES, writeV3Checkpoint } from './geometries';
import { REPO, writeMdebertaClassifier, writeV3BaseClassifier } from './task-checkpoints';

const threads = flag('threads', String(defaultThreads()));
const runs = flag('runs', '20');
const parts = flag('parts', 'ratio,sweep,memory').split(',');
const [short, long] = flag('lengths', '128,512').split(',');

function measure(measure: string, model: string, length: string, extra: string[] = []): Record<string, unknown> {
  process.stderr.write(`task bench: ${measure} on ${path.basename(model)} at ${length} tokens…\n`);
  const args = [path.join(__dirname, 'task-bench-run.js'), '--measure', measure, '--model', model, '--length', length];
  const child = spawnSync(process.execPath, [...args, '--threads', threads, ...extra], { encoding: 'utf8', maxBuffer: 1 << 24 });
  if (child.status !== 0) throw new Error(child.stderr.trim() || `${measure} exited with ${child.status ?? child.signal}`);
  return JSON.parse(child.stdout) as Record<string, unknown>;
}

function main(): void {
  const loadBefore = os.loadavg();
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'deberta-lens-task-bench-'));
  const results: Record<string, unknown> = {};
  try {
    const base = path.join(root, 'v3-base-seqcls');
    process.stderr.write('task bench: writing a random v3-base classifier…\n');
    writeV3BaseClassifier(base);
    if (parts.includes('ratio')) results.predict_vs_forward = measure('ratio', base, short!, ['--runs', runs]);
    if (parts.includes('sweep')) results.sweep_label = measure('sweep', base, short!, ['--label', 'INJECTION']);
    if (parts.includes('mlm-sweep')) {
      // Off by default (minutes under load): bench:sweep's masked-LM ranking right after the label-aimed one, so
      // that a busy machine's figure can be read against bench:sweep's from a quiet one.
      const mlm = path.join(root, 'v3-base-mlm');
      writeV3Checkpoint(mlm, V3_GEOMETRIES['v3-base']!, true);
      for (const f of ['spm.model', 'tokenizer_config.json', 'special_tokens_map.json'])
        fs.copyFileSync(path.join(REPO, 'models', 'default', f), path.join(mlm, f));
      const row = measure('mlm-sweep', mlm, short!);
      const label = results.sweep_label as { wall_s?: number } | undefined;
      results.sweep_mlm_all_terms = {
        ...row,
        ...(label?.wall_s ? { label_c2p_over_mlm_all: round(label.wall_s / (row.wall_s as number), 3) } : {}),
      };
      fs.rmSync(mlm, { recursive: true, force: true });
    }
    if (parts.includes('memory')) {
      const mdeberta = path.join(root, 'mdeberta-v3-base-seqcls');
      process.stderr.write("task bench: writing a random classifier of Prompt-Guard's shape (mDeBERTa-v3-base)…\n");
      const spm = writeMdebertaClassifier(mdeberta);
      const v3 = measure('memory', base, long!);
      const md: Record<string, unknown> = {
        ...measure('memory', mdeberta, long!),
        spm_pieces: spm.pieces,
        spm_mb: round(spm.spm_bytes / 2 ** 20, 1),
      };
      const extraEmbedding = (md.embedding_mb as number) - (v3.embedding_mb as number);
      const extraPeak = (md.peak_rss_mb as number) - (v3.peak_rss_mb as number);
      results.memory = {
        v3_base: v3,
        mdeberta_v3_base: md,
        extra_embedding_mb: extraEmbedding,
        extra_peak_rss_mb: extraPeak,
        extra_caller_peak_rss_mb: (md.caller_peak_rss_mb as number) - (v3.caller_peak_rss_mb as number),
        extra_runtime_peak_rss_mb: (md.runtime_peak_rss_mb as number) - (v3.runtime_peak_rss_mb as number),
        // ≈ 1: the bigger vocabulary costs its embedding once; 2 or more would mean a copy.
        extra_peak_over_extra_embedding: round(extraPeak / extraEmbedding, 2),
      };
    }
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
  const out = {
    date: new Date().toISOString(),
    cpu: os.cpus()[0]?.model,
    cores: os.cpus().length,
    threads: Number(threads),
    load: { before: loadBefore.map((v) => round(v)), after: os.loadavg().map((v) => round(v)) },
    results,
  };
  process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
}

try {
  main();
} catch (e) {
  process.stderr.write(`bench failed: ${(e as Error)?.message ?? String(e)}\n`);
  process.exit(1);
}
