// npm run test:vscode: the integration suite (test/suite, compiled to out/test/suite) in desktop VS Code, through
// @vscode/test-electron, which downloads VS Code into .vscode-test/ on the first run. Where VS Code cannot be
// downloaded it stops with one line saying so; CI runs the same suite in code-server (test/e2e/integration.mjs).
//
//   npm run test:vscode                                    # latest stable VS Code
//   VSCODE_VERSION=1.90.0 npm run test:vscode              # the oldest version package.json's engines allows
//   VSCODE_EXECUTABLE=/path/to/code npm run test:vscode    # an installed VS Code: no download
// Linux without a display: xvfb-run -a npm run test:vscode
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { downloadAndUnzipVSCode, runTests } from '@vscode/test-electron';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const SUITE = path.join(ROOT, 'out', 'test', 'suite', 'index.js');
const version = process.env.VSCODE_VERSION || 'stable';

function fail(line) {
  console.error(`[test:vscode] error: ${line}`);
  process.exit(1);
}
const reason = (e) => (e instanceof Error ? e.message : String(e)).split('\n')[0];

if (!fs.existsSync(SUITE)) fail('out/test/suite/index.js missing: run npm run compile first (npm run test:vscode does)');
if (!fs.existsSync(path.join(ROOT, 'dist', 'extension.js'))) fail('dist/extension.js missing: run npm run build first');

let executable = process.env.VSCODE_EXECUTABLE;
if (executable) {
  if (!fs.existsSync(executable)) fail(`VSCODE_EXECUTABLE=${executable} does not exist`);
} else {
  try {
    // A 20 s idle timeout: offline, the download fails with one line here instead of hanging.
    executable = await downloadAndUnzipVSCode({ version, cachePath: path.join(ROOT, '.vscode-test'), timeout: 20_000 });
  } catch (e) {
    fail(
      `cannot download VS Code ${version} (${reason(e)}). test:vscode needs the internet once (VS Code is kept in ` +
        '.vscode-test/), or VSCODE_EXECUTABLE=/path/to/code. Without either, run the same suite in code-server: ' +
        'node test/e2e/integration.mjs (after tools/e2e-setup.sh), as CI does.',
    );
  }
}
if (process.platform === 'linux' && !process.env.DISPLAY && !process.env.WAYLAND_DISPLAY) {
  fail('desktop VS Code needs a display and none is set (DISPLAY): run it as xvfb-run -a npm run test:vscode');
}

// A throwaway folder to open, user data and extensions: the suite changes debertaLens.* settings globally.
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'deberta-lens-vscode-'));
try {
  const code = await runTests({
    vscodeExecutablePath: executable,
    extensionDevelopmentPath: ROOT,
    extensionTestsPath: SUITE,
    launchArgs: [
      path.join(ROOT, 'samples'),
      '--disable-extensions',
      '--disable-workspace-trust',
      '--user-data-dir',
      path.join(tmp, 'user-data'),
      '--extensions-dir',
      path.join(tmp, 'extensions'),
    ],
  });
  process.exitCode = code;
} catch (e) {
  console.error(`[test:vscode] the suite failed in VS Code ${version}: ${reason(e)}`);
  process.exitCode = 1;
} finally {
  fs.rmSync(tmp, { recursive: true, force: true });
}
