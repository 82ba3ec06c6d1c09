// Checks that test/e2e/code-server/node_modules is complete: npm 11 may skip dependency install scripts,
// and code-server is unusable without its postinstall (which installs and compiles its bundled VS Code
// server's native modules). Exit 1 with the missing files listed.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { TOOLS_MODULES } from './paths.mjs';

const vscode = path.join(TOOLS_MODULES, 'code-server', 'lib', 'vscode');
const required = {
  'code-server entry': path.join(TOOLS_MODULES, 'code-server', 'out', 'node', 'entry.js'),
  'code-server postinstall: node-pty': path.join(vscode, 'node_modules', 'node-pty', 'build', 'Release', 'pty.node'),
  'code-server postinstall: kerberos': path.join(vscode, 'node_modules', 'kerberos', 'build', 'Release', 'kerberos.node'),
  'code-server postinstall: spdlog': path.join(vscode, 'node_modules', '@vscode', 'spdlog', 'build', 'Release', 'spdlog.node'),
  'code-server postinstall: native-watchdog': path.join(vscode, 'node_modules', 'native-watchdog', 'build', 'Release', 'watchdog.node'),
  'code-server postinstall: ripgrep': path.join(vscode, 'node_modules', '@vscode', 'ripgrep', 'bin', 'rg'),
  'code-server postinstall: built-in extensions': path.join(vscode, 'extensions', 'node_modules'),
  'argon2 install script': path.join(TOOLS_MODULES, 'argon2', 'lib', 'binding', 'napi-v3', 'argon2.node'),
  'playwright-core': path.join(TOOLS_MODULES, 'playwright-core', 'package.json'),
  '@vscode/vsce': path.join(TOOLS_MODULES, '@vscode', 'vsce', 'vsce'),
};
const missing = Object.entries(required).filter(([, p]) => !fs.existsSync(p));
if (missing.length) {
  for (const [what, p] of missing) console.error(`[e2e-setup] missing (${what}): ${p}`);
  console.error(
    '[e2e-setup] install scripts did not run: rerun tools/e2e-setup.sh; with npm >= 12 approve them in test/e2e/code-server/package.json "allowScripts" (npm approve-scripts --all)',
  );
  process.exit(1);
}
console.log('[e2e-setup] code-server install complete (postinstall ran, native modules built)');
