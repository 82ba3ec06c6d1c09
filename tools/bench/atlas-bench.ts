// `npm run bench:atlas`: the head atlas's throughput and memory. A corpus of --paragraphs paragraphs (default 2,000;
// sentences of samples/*.md in seeded random order, 30–120 words each, 100 per file) goes through `buildAtlas`
// (window 128) while the resident memory of this process and of the runtime process is sampled; its tokens/s is set
// against explain + every layer of 128-token inputs on the same model (what `bench` times), measured before and
// after the atlas in the same run. Targets: ≥ 60% of that rate, peak RSS (both processes) ≤ 800 MB for 2,000
// paragraphs. --model v3-base (a geometry of tools/bench/geometries.ts, random weights) with --tokens N stops after
// N tokens and prints the RSS every tenth of the way (flat is the target).
//   npm run bench:atlas -- [--model default|v3-base] [--paragraphs 2000] [--tokens N] [--threads N] [--ep cpu|webgpu|…]
// With --bad-input [files,paragraph,kill,lag] it measures the bad inputs instead (./atlas-bad-input.ts).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { buildAtlas } from '../../src/analysis/atlas/atlas';
import { badInputBench } from './atlas-bad-input';
import { defaultThreads, openModel, type ExecutionProviderSetting } from '../../src/engine';
import { flag, round } from './bench-model';
import { writeClassifier } from './occlusion-bench';

const REPO = path.resolve(__dirname, __dirname.includes(`${path.sep}out${path.sep}`) ? '../../..' : '../..');
const modelArg = flag('model', 'default');
const paragraphsWanted = Number(flag('paragraphs', '2000'));
const tokenLimit = Number(flag('tokens', '0'));
const threads = Number(flag('threads', String(defaultThreads())));
const executionProvider = flag('ep', 'cpu') as ExecutionProviderSetting;

function rssMb(pid: number | undefined): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** Seeded paragraphs of the samples' sentences, written as files of 100 paragraphs. */
function writeCorpus(dir: string, count: number): void {
  const text = fs
    .readdirSync(path.join(REPO, 'samples'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => fs.readFileSync(path.join(REPO, 'samples', f), 'utf8'))
    .join(' ')
    .replace(/\s+/g, ' ');
  const sentences = text.split(/(?<=[.!?])\s+/).filter((s) => s.length > 20);
  let x = 12345;
  const rand = (k: number) => (x = (Math.imul(x, 1664525) + 1013904223) >>> 0) % k;
  for (let f = 0; f * 100 < count; f++) {
    const paras: string[] = [];
    for (let p = 0; p < Math.min(100, count - f * 100); p++) {
      const words: string[] = [];
      const want = 30 + rand(90);
      while (words.length < want) words.push(...sentences[rand(sentences.length)]!.split(' '));
      paras.push(words.slice(0, want).join(' '));
    }
    fs.writeFileSync(path.join(dir, `part-${String(f).padStart(4, '0')}.md`), `${paras.join('\n\n')}\n`);
  }
}

async function main() {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'deberta-lens-atlas-bench-'));
  try {
    let dir = modelArg;
    if (modelArg !== 'default') {
      dir = path.join(tmp, `${modelArg}-model`);
      writeClassifier(dir, modelArg);
    }
    const corpus = path.join(tmp, 'corpus');
    fs.mkdirSync(corpus);
    writeCorpus(corpus, tokenLimit > 0 ? Math.max(paragraphsWanted, Math.ceil(tokenLimit / 40)) : paragraphsWanted);
    const model = await openModel(dir, { cacheDir: path.join(tmp, 'cache'), threads, executionProvider });
    try {
      const tok = model.tokenizer!;
      const body = (await tok.encode(fs.readFileSync(path.join(REPO, 'samples', 'sample.md'), 'utf8').repeat(4))).map((t) => t.id);
      const ids = [tok.special.cls, ...body.slice(0, 126), tok.special.sep];
      /** explain + every layer of a 128-token input, `runs` times: tokens/s. */
      const reference = async (runs: number) => {
        const t0 = performance.now();
        for (let r = 0; r < runs; r++) {
          const res = await model.explain({ ids });
          for (const l of res.layers) await res.load(l);
          res.release();
        }
        return (runs * ids.length) / ((performance.now() - t0) / 1000);
      };
      await reference(3); // warm-up
      const before = await reference(modelArg === 'default' ? 40 : 5);
      let peak = 0;
      const curve: { tokens: number; rss_mb: number }[] = [];
      let nextMark = tokenLimit / 10;
      const stop = new AbortController();
      const sample = setInterval(() => (peak = Math.max(peak, rssMb(process.pid) + rssMb(model.session.pid))), 200);
      const t0 = performance.now();
      let atlasTokens = 0;
      try {
        await buildAtlas(model, {
          corpus,
          signal: stop.signal,
          onProgress: ({ tokens }) => {
            atlasTokens = tokens;
            if (tokenLimit > 0 && tokens >= nextMark) {
              curve.push({ tokens, rss_mb: round(rssMb(process.pid) + rssMb(model.session.pid), 0) });
              // Logged as it comes: a run cut short keeps its curve.
              process.stderr.write(`bench:atlas: ${JSON.stringify({ ...curve.at(-1), s: round((performance.now() - t0) / 1000, 1) })}\n`);
              nextMark += tokenLimit / 10;
              if (tokens >= tokenLimit) stop.abort();
            }
          },
        }).catch((e: unknown) => {
          if (!stop.signal.aborted) throw e;
        });
      } finally {
        clearInterval(sample);
      }
      const atlasS = (performance.now() - t0) / 1000;
      const after = await reference(modelArg === 'default' ? 40 : 5);
      const referenceRate = (before + after) / 2;
      const rate = atlasTokens / atlasS;
      process.stdout.write(
        `${JSON.stringify(
          {
            date: new Date().toISOString(),
            model: modelArg === 'default' ? 'default (bundled)' : `${modelArg} (random weights)`,
            cpu: os.cpus()[0]?.model,
            cores: os.cpus().length,
            threads,
            provider: model.session.provider,
            provider_errors: model.session.providerErrors,
            load: os.loadavg(),
            tokens: atlasTokens,
            seconds: round(atlasS, 1),
            atlas_tokens_per_s: round(rate, 1),
            explain_all_layers_128_tokens_per_s: { before: round(before, 1), after: round(after, 1) },
            ratio: round(rate / referenceRate, 3),
            peak_rss_mb: round(peak, 0),
            ...(curve.length ? { rss_curve: curve } : {}),
            targets: { ratio: 0.6, peak_rss_mb: 800 },
          },
          null,
          2,
        )}\n`,
      );
    } finally {
      await model.dispose();
    }
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

if (require.main === module)
  (process.argv.includes('--bad-input') ? badInputBench() : main()).catch((e) => {
    process.stderr.write(`bench failed: ${(e as Error)?.message ?? String(e)}\n`);
    process.exit(1);
  });
