// Packages the extension into a VSIX with the pinned vsce (offline) and lists what went in.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { E2EError } from './errors.mjs';
import { REPO_ROOT, TOOLS_MODULES } from './paths.mjs';

const VSCE = path.join(TOOLS_MODULES, '@vscode', 'vsce', 'vsce');
const require = createRequire(path.join(TOOLS_MODULES, 'noop.js'));

/**
 * The VSIX for this machine's platform, built by the project's own packaging tool (`npm run package`), which
 * runs `vsce package --target` with the per-target file selection. Returns the VSIX path (in a fresh temp dir).
 */
export function packageVsix() {
  if (!fs.existsSync(VSCE)) throw new E2EError('@vscode/vsce is not installed in test/e2e/code-server: run tools/e2e-setup.sh');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'deberta-lens-vsix-'));
  const target = `${process.platform}-${process.arch}`;
  const r = spawnSync(process.execPath, [path.join(REPO_ROOT, 'tools', 'package-vsix.mjs'), '--target', target, '--out', dir], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    timeout: 300_000,
  });
  if (r.status !== 0)
    throw new E2EError(`npm run package failed (exit ${r.status}): ${(r.stderr || r.stdout).trim().split('\n').slice(-3).join(' / ')}`);
  const vsix = fs.readdirSync(dir).find((f) => f.endsWith('.vsix'));
  if (!vsix) throw new E2EError(`npm run package wrote no .vsix into ${dir}`);
  return path.join(dir, vsix);
}

/** Entry names and uncompressed sizes of a VSIX (a zip), read with vsce's own yauzl. */
export function vsixEntries(vsix) {
  const yauzl = require('yauzl');
  return new Promise((resolve, reject) => {
    yauzl.open(vsix, { lazyEntries: true }, (err, zip) => {
      if (err) return reject(err);
      const entries = [];
      zip.on('entry', (e) => {
        entries.push({ name: e.fileName, size: e.uncompressedSize });
        zip.readEntry();
      });
      zip.on('end', () => resolve(entries));
      zip.on('error', reject);
      zip.readEntry();
    });
  });
}
