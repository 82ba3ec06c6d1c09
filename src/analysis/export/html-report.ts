// A self-contained HTML report of a result: every byte inline (data as base64 float32, script, CSS), a CSP
// that forbids any network fetch, so it opens from a file:// URL on an offline machine. The script and the
// stylesheet are the panel's own (dist/report.js and media/lens.css, see html-report-script.ts): the page draws
// the panel's heatmap, colours, legend, token strip and figures, in light or dark.
import { LensError } from '../../engine/errors';
import type { ExplainResult } from '../../engine/result/explain-result';
import { TERM_NAMES, type MatrixKind } from '../../engine/types';
import { reportScript, reportStyle } from './html-report-script';
import { HTML_REPORT_MAX_BYTES, reportDataBytes } from '../../shared/export-size';
import { markupText } from '../../shared/markup-text';
import type { ReportPayload } from '../../shared/protocol/report';
import type { ProtocolToken } from '../../shared/protocol/token';

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

/**
 * The page's own rules, after the panel's stylesheet: the VS Code theme variables it reads (light, and dark when
 * the body says so) and the two-column page.
 */
const CSS = `
body.vscode-light{--vscode-font-family:system-ui,sans-serif;--vscode-font-size:14px;--vscode-foreground:#1f1f1f;--vscode-editor-foreground:#1f1f1f;--vscode-editor-background:#ffffff;--vscode-descriptionForeground:#616161;--vscode-focusBorder:#005fb8;--vscode-editor-font-family:ui-monospace,Menlo,Consolas,monospace;--vscode-editor-font-size:13px;--vscode-panel-border:#d0d0d0;--vscode-widget-border:#d0d0d0;--vscode-editorWidget-background:#f8f8f8;--vscode-editorWhitespace-foreground:#bbbbbb;--vscode-button-background:#005fb8;--vscode-button-foreground:#ffffff;--vscode-button-secondaryBackground:#e5e5e5;--vscode-button-secondaryForeground:#1f1f1f;--vscode-dropdown-background:#ffffff;--vscode-dropdown-foreground:#1f1f1f;--vscode-dropdown-border:#cecece;--vscode-badge-background:#616161;--vscode-badge-foreground:#ffffff}
body.vscode-dark{--vscode-font-family:system-ui,sans-serif;--vscode-font-size:14px;--vscode-foreground:#cccccc;--vscode-editor-foreground:#d4d4d4;--vscode-editor-background:#1f1f1f;--vscode-descriptionForeground:#9d9d9d;--vscode-focusBorder:#0078d4;--vscode-editor-font-family:ui-monospace,Menlo,Consolas,monospace;--vscode-editor-font-size:13px;--vscode-panel-border:#3c3c3c;--vscode-widget-border:#3c3c3c;--vscode-editorWidget-background:#252526;--vscode-editorWhitespace-foreground:#555555;--vscode-button-background:#0078d4;--vscode-button-foreground:#ffffff;--vscode-button-secondaryBackground:#3a3d41;--vscode-button-secondaryForeground:#cccccc;--vscode-dropdown-background:#313131;--vscode-dropdown-foreground:#cccccc;--vscode-dropdown-border:#3c3c3c;--vscode-badge-background:#616161;--vscode-badge-foreground:#ffffff}
body{margin:0;padding:12px 20px 20px}
h1{font-size:1.25em;margin:0 0 2px}
input{color:var(--vscode-dropdown-foreground);background:var(--vscode-dropdown-background);border:1px solid var(--vscode-dropdown-border)}
input[type=number]{width:4.5em;padding:2px 4px}
.toolbar{display:flex;flex-wrap:wrap;gap:6px 14px;align-items:center;margin:8px 0}
.page{display:flex;flex-wrap:wrap;gap:8px 24px;align-items:flex-start}
.side{flex:1 1 320px;max-width:560px;min-width:280px}
#tokens{max-height:calc(100vh - 300px);min-height:6em;margin-top:0}
#map{flex:3 1 520px;min-width:320px}
#readout{min-height:3.6em;font-family:var(--vscode-editor-font-family);font-size:0.9em;overflow-wrap:anywhere;margin-top:6px}
.legend{display:flex;flex-wrap:wrap;gap:4px 8px;align-items:center}
.legend-scale{display:inline-flex;align-items:center;gap:6px}
#legend-bar{width:160px;height:10px;image-rendering:pixelated;border:1px solid var(--vscode-panel-border)}
#legend-label{display:block;width:100%;height:auto;-webkit-line-clamp:unset}
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
  const { text, tokens } = reportText(result);
  const meta: ReportPayload['meta'] = {
    n: result.n,
    heads: result.heads,
    layers,
    kinds,
    scale: result.scale,
    model: { name: result.model.name, type: result.model.type, checkpoint_hash: result.model.checkpoint_hash },
    text,
    tokens,
    initial: {
      layer: opts.initial?.layer !== undefined && layers.includes(opts.initial.layer) ? opts.initial.layer : (layers[0] ?? 0),
      head: Math.min(Math.max(opts.initial?.head ?? 0, 0), result.heads - 1),
      kind: initialKind ?? 'probs',
    },
  };
  const title = opts.title ?? `DeBERTa Lens — ${result.model.name}`;
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'">
<title>${escapeHtml(title)}</title>
<style>${reportStyle()}</style>
<style>${CSS}</style>
</head>
<body class="vscode-light">
<h1>${escapeHtml(title)}</h1>
<p class="meta">${escapeHtml(`${result.model.name} (${result.model.type}) · ${result.n} tokens · ${layers.length} of ${result.layers.length} layers · ${result.heads} heads · DeBERTa Lens report`)}</p>
<div class="toolbar">
<label>Term <select id="kind"></select></label>
<select id="layer" aria-label="Layer"></select>
<select id="head" aria-label="Head"></select>
<label>Colour <select id="scaling" aria-label="Colour mapping"></select></label>
<select id="colours" aria-label="Colour scale"><option value="diverging">Theme colours</option><option value="viridis">Viridis</option></select>
<select id="theme" aria-label="Page theme"><option value="auto">System theme</option><option value="light">Light</option><option value="dark">Dark</option></select>
<span>Figure <input id="fig-width" type="number" min="4" max="40" step="0.5" value="8" aria-label="Figure width (cm)"> cm
<input id="fig-dpi" type="number" min="72" max="1200" step="1" value="300" aria-label="PNG resolution (dpi)"> dpi
<button id="save-svg" type="button" title="The view as an SVG figure: title, word labels, colour bar, vector text">SVG</button>
<button id="save-png" type="button" title="The view as a PNG figure at the width and dpi given">PNG</button></span>
</div>
<div class="page">
<div class="side">
<div id="tokens" role="list" aria-label="The text's tokens; hover one to shade the others by its row"></div>
<div class="legend"><span class="legend-scale"><span id="legend-min"></span><canvas id="legend-bar" width="256" height="1" aria-hidden="true"></canvas><span id="legend-max"></span></span><span id="legend-label" class="meta"></span></div>
<div id="readout" aria-live="polite"></div>
</div>
<div id="map"></div>
</div>
<script type="application/json" id="lens-data">${scriptJson({ meta, data })}</script>
<script>${reportScript()}</script>
</body>
</html>
`;
}

/**
 * The text the report's strip lays out and the tokens' offsets into it: the result's own text, or for a result
 * explained from ids (no text) the pieces themselves, spaced.
 */
function reportText(result: ExplainResult): { text: string; tokens: ProtocolToken[] } {
  const all = result.tokens.map((t, i) => ({ i, text: t.text, start: t.start, end: t.end, special: t.special }));
  if (result.text !== undefined) return { text: result.text, tokens: all };
  let text = '';
  const tokens = all.map((t) => {
    if (t.special) return { ...t, start: text.length, end: text.length };
    if (text) text += ' ';
    const start = text.length;
    text += t.text;
    return { ...t, start, end: text.length };
  });
  return { text, tokens };
}
