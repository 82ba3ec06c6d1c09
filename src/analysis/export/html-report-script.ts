// The report page's inline script and style: dist/report.js, the browser bundle of webview/report/main.ts, which
// draws with the panel's own components (webview/common), and the panel's own stylesheet, media/lens.css. Each is
// read from beside the running bundle (dist/extension.js, dist/cli.js: dist/ and media/ sit side by side) or, when
// running compiled sources (out/, the unit tests), from the repository's dist/ and media/ found by walking up;
// `npm run build` writes dist/report.js.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { LensError } from '../../engine/errors';

const BUNDLE = 'report.js';
const STYLE = 'lens.css';
let cached: string | undefined;
let cachedStyle: string | undefined;

/** Where `folder/name` is: beside this code's folder when bundled (dist/ next to media/), else in the first
 *  `folder` above it. */
function findFile(folder: 'dist' | 'media', name: string): string | undefined {
  const beside = folder === 'dist' ? path.join(__dirname, name) : path.join(__dirname, '..', folder, name);
  if (fs.existsSync(beside)) return beside;
  for (let dir = __dirname; path.dirname(dir) !== dir; dir = path.dirname(dir)) {
    const file = path.join(dir, folder, name);
    if (fs.existsSync(file)) return file;
  }
  return undefined;
}

/**
 * The script's text, safe inside an inline <script>: no "</script" can end the element (in a JavaScript string,
 * regular expression or comment "<\/" reads as "</"). esbuild.mjs builds it without a source map, so the page
 * points at no file it does not have.
 */
export function reportScript(): string {
  if (cached !== undefined) return cached;
  const file = findFile('dist', BUNDLE);
  if (!file) throw new LensError(`report: the report script (dist/${BUNDLE}) is missing; run npm run build`);
  cached = fs.readFileSync(file, 'utf8').replace(/<\/(script)/gi, '<\\/$1');
  return cached;
}

/** The panel's stylesheet, safe inside an inline <style> (no "</style" can end it). */
export function reportStyle(): string {
  if (cachedStyle !== undefined) return cachedStyle;
  const file = findFile('media', STYLE);
  if (!file) throw new LensError(`report: the panel's stylesheet (media/${STYLE}) is missing; reinstall the extension`);
  cachedStyle = fs.readFileSync(file, 'utf8').replace(/<\/(style)/gi, '<\\/$1');
  return cachedStyle;
}
