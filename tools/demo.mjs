// npm run demo: the extension in a browser, without desktop VS Code. Starts code-server on 127.0.0.1 with the
// extension loaded from this checkout (linked into a throwaway extensions folder, so a rebuild and a window
// reload show your changes), the bundled model, and samples/ open on samples/demo.md; prints the URL; Ctrl+C stops
// code-server and removes the throwaway folder.
//
//   npm run demo                     # http://127.0.0.1:8765 (or a free port when 8765 is taken)
//   npm run demo -- --port 9000      # DEMO_PORT=9000 works too
//
// The first run installs what is missing: the npm packages (npm ci), the bundles (always rebuilt, ~1 s), and
// code-server with tools/e2e-setup.sh (Debian packages and test/e2e/code-server; as root, a few minutes).
// Only Node built-ins are imported here, so it runs before `npm ci`.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SAMPLES = path.join(ROOT, 'samples');
const OPEN_FILE = path.join(SAMPLES, 'demo.md');
const CS_DIR = path.join(ROOT, 'test', 'e2e', 'code-server');
const DEFAULT_PORT = 8765;
const t0 = Date.now();

const say = (line) => console.log(`[demo] ${line}`);
function fail(line) {
  console.error(`[demo] error: ${line}`);
  process.exit(1);
}
/** Runs a set-up step with its output shown; a failure ends the demo with one line naming the step. */
function step(what, cmd, args, env = {}) {
  say(what);
  const r = spawnSync(cmd, args, { cwd: ROOT, stdio: 'inherit', env: { ...process.env, ...env } });
  if (r.status !== 0) fail(`${what} failed (${[cmd, ...args].join(' ')} exited with ${r.status ?? r.signal}); see the output above`);
}

function wantedPort() {
  const i = process.argv.indexOf('--port');
  const raw = i > 0 ? process.argv[i + 1] : process.env.DEMO_PORT;
  if (raw === undefined) return DEFAULT_PORT;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 1 || port > 65535) fail(`--port/DEMO_PORT must be a port number (1-65535), got '${raw}'`);
  return port;
}

function portFree(port) {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

/** tools/e2e-setup.sh writes this stamp (the lockfile's hash) once code-server's install has completed. */
function codeServerInstalled() {
  const stamp = path.join(CS_DIR, 'node_modules', '.e2e-setup-stamp');
  if (!fs.existsSync(stamp)) return false;
  const hash = createHash('sha256')
    .update(fs.readFileSync(path.join(CS_DIR, 'package-lock.json')))
    .digest('hex');
  return fs.readFileSync(stamp, 'utf8').trim() === hash;
}

// --- 1. install and build what is missing ---------------------------------------------------------------------
if (!fs.existsSync(path.join(ROOT, 'node_modules', '.package-lock.json'))) {
  // onnxruntime-node's install script would download CUDA files; its CPU binaries ship in the package.
  step('npm ci (first run)', 'npm', ['ci', '--no-audit', '--no-fund'], { ONNXRUNTIME_NODE_INSTALL: 'skip' });
}
step('building the extension (esbuild)', process.execPath, ['esbuild.mjs']);
if (!codeServerInstalled()) {
  step('installing code-server with tools/e2e-setup.sh (first run, a few minutes)', 'bash', [path.join(ROOT, 'tools', 'e2e-setup.sh')]);
}

// --- 2. start code-server -------------------------------------------------------------------------------------
// Imported only now: the E2E helpers are plain Node too, but they read package.json and expect the install above.
const { startCodeServer } = await import('../test/e2e/lib/code-server.mjs');
const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
let port = wantedPort();
if (!(await portFree(port))) {
  say(`port ${port} is taken; using a free one (choose with --port N)`);
  port = 0;
}
let server;
try {
  server = await startCodeServer({
    name: 'demo',
    workspace: SAMPLES,
    port,
    logDir: path.join(ROOT, 'test-results', 'demo'),
    linkExtension: { dir: ROOT, id: `${manifest.publisher}.${manifest.name}-${manifest.version}` },
    hookSignals: false,
    // The bundled model, whatever the machine has: modelPath empty; provider auto (falls back to CPU).
    settings: { 'debertaLens.modelPath': '' },
  });
} catch (e) {
  fail(`code-server did not start: ${e instanceof Error ? e.message : String(e)} (log: test-results/demo/demo-code-server.log)`);
}

let stopping = false;
async function stop(signal) {
  if (stopping) return;
  stopping = true;
  say(`stopping code-server (${signal})`);
  await server.stop();
  say('stopped');
  process.exit(0);
}
// Ctrl+C in the terminal signals this process (and npm); code-server runs in its own process group, which
// stop() ends and whose throwaway folder it removes.
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(sig, () => void stop(sig));
void server.exited.then((code) => {
  if (!stopping) fail(`code-server exited on its own (${code}); see ${path.relative(ROOT, server.logPath)}`);
});

// The workbench opens the folder from ?folder= and the file from the payload's openFile (a vscode-remote URI on
// this server); without the payload the same URL shows the folder only.
const remote = `vscode-remote://127.0.0.1:${server.port}${OPEN_FILE}`;
const url = `${server.url}/?folder=${encodeURIComponent(SAMPLES)}&payload=${encodeURIComponent(
  JSON.stringify([
    ['openFile', remote],
    ['skipWelcome', 'true'],
  ]),
)}`;
say(`ready in ${((Date.now() - t0) / 1000).toFixed(1)} s (code-server log: ${path.relative(ROOT, server.logPath)})`);
console.log(`\n  DeBERTa Lens demo: ${url}\n`);
say('open it in a browser on this machine (or forward the port); put the cursor in a paragraph and press Ctrl+Alt+E. Ctrl+C stops.');
