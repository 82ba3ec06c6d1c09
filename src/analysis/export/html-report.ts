// A self-contained HTML report of a result: every byte inline (data as base64 float32, script, CSS), a CSP
// that forbids any network fetch, so it opens from a file:// URL on an offline machine. The script is the
// panel's own drawing code (dist/report.js, see html-report-script.ts), so the page's colours are the panel's.
import { LensError } from '../../engine/errors';
import type { ExplainResult } from '../../engine/result/explain-result';
import { TERM_NAMES, type MatrixKind } from '../../engine/types';
import { reportScript } from './html-report-script';
import { HTML_REPORT_MAX_BYTES, reportDataBytes } from '../../shared/export-size';
import { markupText } from '../../shared/markup-text';

export interface HtmlReportOptions {
  title?: string;
  /** Layers to embed (default: all in the result). */
  layers?: number[];
  /** Kinds to embed (default: the model's terms and probs). */
  kinds?: MatrixKind[];
  /** What the page shows first. */
  initial?: { layer?: number; head?: number; kind?: MatrixKind };
  /** Refuse to build a page whose embedded data exceeds this (default 64 MiB of float32). */
  maxDataBytes?: number;
}

const CSS = `
body{font:14px/1.4 system-ui,sans-serif;margin:16px;color:#222;background:#fff}
h1{font-size:18px;margin:0 0 8px}
.controls select{margin-right:8px}
#strip{margin:12px 0;line-height:2;max-width:960px}
.tok{padding:2px 3px;margin:1px;border:1px solid #ccc;border-radius:3px;white-space:pre;cursor:default}
.tok.special{color:#777;font-style:italic}
.tok.query{outline:2px solid #333}
#heat{image-rendering:pixelated;border:1px solid #999;max-width:100%}
#readout{min-height:2.8em;font-family:ui-monospace,monospace;font-size:13px}
#legend-bar{display:block;width:256px;height:10px;margin-top:6px;image-rendering:pixelated;border:1px solid #999}
#legend{color:#555;font-size:12px}
`;

/** The title and text may hold controls and non-characters (HTML parse errors); markupText replaces them visibly. */
const escapeHtml = markupText;

/** JSON that is safe inside <script>: no "</script>", no "<!--". */
function scriptJson(v: unknown): string {
  return JSON.stringify(v)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

function base64(t: Float32Array): string {
  return Buffer.from(t.buffer, t.byteOffset, t.byteLength).toString('base64');
}

/**
 * The layers and kinds a report of `result` embeds, checked before anything is written (or any save dialog
 * opens): known layers and kinds, at least one of each, within the size ceiling.
 */
export function reportPlan(result: ExplainResult, opts: HtmlReportOptions = {}): { layers: number[]; kinds: MatrixKind[] } {
  const layers = opts.layers ?? result.layers;
  const kinds = opts.kinds ?? [...TERM_NAMES.filter((t) => result.has(t)), 'probs'];
  for (const l of layers) {
    if (!result.layers.includes(l))
      throw new LensError(`report: layer ${l} is not in this result (have ${result.layers.join(',')}); pick from those`);
  }
  for (const k of kinds) if (!result.has(k)) throw new LensError(`report: this model has no ${k} term; leave it out of kinds`);
  if (layers.length === 0 || kinds.length === 0) throw new LensError('report: nothing to show; pick at least one layer and one kind');
  const bytes = reportDataBytes(layers.length, kinds.length, result.heads, result.n);
  const max = opts.maxDataBytes ?? HTML_REPORT_MAX_BYTES;
  if (bytes > max) {
    throw new LensError(
      `report: ${(bytes / 2 ** 20).toFixed(0)} MiB of matrices is too much for one HTML page (limit ${(max / 2 ** 20).toFixed(0)} MiB); choose fewer layers or kinds (or export .npz, which has no limit)`,
    );
  }
  return { layers, kinds };
}

export async function toHtmlReport(result: ExplainResult, opts: HtmlReportOptions = {}): Promise<string> {
  const { layers, kinds } = reportPlan(result, opts);
  const data: Record<string, string> = {};
  for (const l of layers) {
    await result.load(l);
    for (const k of kinds) data[`${l}/${k}`] = base64(result.tensor(l, k));
  }
  const initialKind =
    opts.initial?.kind && kinds.includes(opts.initial.kind) ? opts.initial.kind : kinds.includes('probs') ? 'probs' : kinds[0];
  const meta = {
    n: result.n,
    heads: result.heads,
    layers,
    kinds,
    scale: result.scale,
    model: { name: result.model.name, type: result.model.type, checkpoint_hash: result.model.checkpoint_hash },
    tokens: result.tokens.map((t) => ({ text: t.text, start: t.start, end: t.end, special: t.special })),
    initial: {
      layer: opts.initial?.layer !== undefined && layers.includes(opts.initial.layer) ? opts.initial.layer : layers[0],
      head: Math.min(Math.max(opts.initial?.head ?? 0, 0), result.heads - 1),
      kind: initialKind,
    },
  };
  const title = opts.title ?? `DeBERTa Lens — ${result.model.name}`;
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'">
<title>${escapeHtml(title)}</title>
<style>${CSS}</style>
</head>
<body>
<h1>${escapeHtml(title)}</h1>
<p>${escapeHtml(`${result.model.name} (${result.model.type}), ${result.n} tokens, ${result.heads} heads, scale ${result.scale}`)}</p>
${result.text !== undefined ? `<p><code>${escapeHtml(result.text)}</code></p>` : ''}
<div class="controls"><label>Layer <select id="layer"></select></label><label>Head <select id="head"></select></label><label>Term <select id="kind"></select></label></div>
<div id="strip" aria-label="tokens; focus or hover one to shade the others by its attention"></div>
<canvas id="heat" aria-label="heatmap: rows are query tokens, columns are key tokens"></canvas>
<canvas id="legend-bar" width="256" height="1" aria-hidden="true"></canvas>
<div id="legend"></div>
<div id="readout" aria-live="polite"></div>
<script type="application/json" id="lens-data">${scriptJson({ meta, data })}</script>
<script>${reportScript()}</script>
</body>
</html>
`;
}
