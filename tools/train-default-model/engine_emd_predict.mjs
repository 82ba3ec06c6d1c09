// The project's engine on held-out windows for evaluate_emd.py: fill-mask at every [MASK] of each window through the
// Enhanced Mask Decoder and with the plain head (predict's emd: true / false, as `predict` and `predict --no-emd`).
// Needs `npx tsc -p .` in the repository root first.
//   node engine_emd_predict.mjs MODEL_DIR INPUT.json OUTPUT.json
// INPUT: {"windows": [[ids...], ...]}; OUTPUT: per window and decoder, per [MASK] the top-5 ids and logits.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..', '..');
const { openModel } = require(path.join(ROOT, 'out', 'src', 'engine', 'model', 'open-model.js'));

const [modelDir, input, output] = process.argv.slice(2);
const { windows } = JSON.parse(fs.readFileSync(input, 'utf8'));
const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lens-emd-eval-'));
const model = await openModel(modelDir, { cacheDir });
const out = [];
try {
  for (const ids of windows) {
    const row = {};
    for (const emd of [true, false]) {
      const r = await model.predict({ ids, top: 5, emd });
      row[emd ? 'emd' : 'plain'] = {
        decoder: r.decoder,
        ...(r.decoder_note ? { note: r.decoder_note } : {}),
        predictions: r.predictions.map((p) => ({ position: p.position, ids: p.top.map((t) => t.id), logits: p.top.map((t) => t.logit) })),
      };
    }
    out.push(row);
  }
} finally {
  await model.dispose();
  fs.rmSync(cacheDir, { recursive: true, force: true });
}
fs.writeFileSync(output, JSON.stringify({ windows: out }));
console.log(`engine: ${out.length} windows, decoders ${out[0]?.emd.decoder} / ${out[0]?.plain.decoder}`);
