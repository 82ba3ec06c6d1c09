// The report page's inline script: dist/report.js, the browser bundle of webview/report/main.ts, which draws with
// the panel's own colour scales, limits and painter (webview/common). It is read from the dist folder beside the
// running bundle (dist/extension.js, dist/cli.js) or, when running compiled sources (out/, the unit tests), from
// the repository's dist/ found by walking up; `npm run build` writes it.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { LensError } from '../../engine/errors';

const BUNDLE = 'report.js';
let cached: string | undefined;

/** Where dist/report.js is: beside this code when bundled, else in the first dist/ above it. */
function bundlePath(): string | undefined {
  const beside = path.join(__dirname, BUNDLE);
  if (fs.existsSync(beside)) return beside;
  for (let dir = __dirname; path.dirname(dir) !== dir; dir = path.dirname(dir)) {
    const file = path.join(dir, 'dist', BUNDLE);
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
  const file = bundlePath();
  if (!file) throw new LensError(`report: the report script (dist/${BUNDLE}) is missing; run npm run build`);
  cached = fs.readFileSync(file, 'utf8').replace(/<\/(script)/gi, '<\\/$1');
  return cached;
}
