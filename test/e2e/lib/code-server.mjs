// Starts and stops code-server (VS Code 1.100 web + a Node extension host) in a fresh temp root per run.
// Recipe: ../../../../shared/e2e-recipe.md. Only 127.0.0.1 works: webviews need a secure context.
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { E2EError } from './errors.mjs';
import { CODE_SERVER_BIN, RESULTS_DIR } from './paths.mjs';

/** Settings that keep the workbench quiet and deterministic (no welcome page, tips, updates, git). */
export const BASE_SETTINGS = {
  'workbench.startupEditor': 'none',
  'workbench.tips.enabled': false,
  'workbench.enableExperiments': false,
  'telemetry.telemetryLevel': 'off',
  'extensions.autoCheckUpdates': false,
  'extensions.autoUpdate': false,
  'update.mode': 'none',
  'git.enabled': false,
  'github.gitAuthentication': false,
  'workbench.colorTheme': 'Default Dark Modern',
  'editor.minimap.enabled': false,
  // Explorer clicks open real tabs, not one preview tab that the next file replaces.
  'workbench.editor.enablePreview': false,
  'chat.commandCenter.enabled': false,
  'window.commandCenter': false,
  'security.workspace.trust.enabled': false,
};

export function assertInstalled() {
  if (!fs.existsSync(CODE_SERVER_BIN)) {
    throw new E2EError(`code-server is not installed (${CODE_SERVER_BIN} missing): run tools/e2e-setup.sh as root`);
  }
}

/** A free TCP port on 127.0.0.1 (asks the kernel, then releases it). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/**
 * A fresh root with user-data/, extensions/, workspace/, xdg-config/, xdg-data/.
 * `files` maps workspace-relative paths to contents; `settings` is merged over BASE_SETTINGS.
 */
export function makeRoot({ files = {}, settings = {} } = {}) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'deberta-lens-e2e-'));
  const dirs = {
    root,
    userData: path.join(root, 'user-data'),
    extensions: path.join(root, 'extensions'),
    workspace: path.join(root, 'workspace'),
    xdgConfig: path.join(root, 'xdg-config'),
    xdgData: path.join(root, 'xdg-data'),
  };
  for (const d of Object.values(dirs)) fs.mkdirSync(d, { recursive: true });
  const userDir = path.join(dirs.userData, 'User');
  fs.mkdirSync(userDir, { recursive: true });
  fs.writeFileSync(path.join(userDir, 'settings.json'), JSON.stringify({ ...BASE_SETTINGS, ...settings }, null, 2));
  for (const [rel, text] of Object.entries(files)) {
    const p = path.join(dirs.workspace, rel);
    fs.mkdirSync(path.dirname(p), { recursive: true });
    fs.writeFileSync(p, text);
  }
  return dirs;
}

function childEnv(dirs) {
  return {
    ...process.env,
    XDG_CONFIG_HOME: dirs.xdgConfig,
    XDG_DATA_HOME: dirs.xdgData,
    XDG_CACHE_HOME: path.join(dirs.root, 'xdg-cache'),
    // code-server would otherwise read a password/config from the home directory.
    CODE_SERVER_CONFIG: path.join(dirs.xdgConfig, 'code-server', 'config.yaml'),
    PASSWORD: '',
  };
}

/** Installs a VSIX into this root's extensions dir (code-server's own CLI, offline). */
export function installVsix(dirs, vsixPath) {
  const r = spawnSync(
    process.execPath,
    [CODE_SERVER_BIN, '--user-data-dir', dirs.userData, '--extensions-dir', dirs.extensions, '--install-extension', vsixPath, '--force'],
    { env: childEnv(dirs), encoding: 'utf8', timeout: 120_000 },
  );
  if (r.status !== 0) {
    throw new E2EError(
      `code-server --install-extension ${vsixPath} failed (exit ${r.status}): ${(r.stderr || r.stdout || '').trim().split('\n').pop()}`,
    );
  }
  return r.stdout;
}

async function waitHealthy(url, child, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new E2EError(`code-server exited with code ${child.exitCode} before it was ready; see its log`);
    try {
      const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2000) });
      if (res.status === 200) return;
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new E2EError(`code-server did not answer ${url}/healthz with 200 within ${timeoutMs} ms`);
}

// Servers still up; stopped on SIGTERM/SIGINT (a global timeout), since code-server runs in its own group.
const running = new Set();
let signalsHooked = false;
function hookSignals() {
  if (signalsHooked) return;
  signalsHooked = true;
  for (const sig of ['SIGTERM', 'SIGINT']) {
    process.once(sig, async () => {
      await Promise.allSettled([...running].map((s) => s()));
      process.exit(sig === 'SIGINT' ? 130 : 143);
    });
  }
}

/**
 * Starts code-server on 127.0.0.1 in its own process group. Returns { url, port, dirs, logPath, stop, exited }.
 * The log (stdout+stderr) goes to <logDir>/<name>-code-server.log (default test-results/e2e/).
 * `workspace`: a folder to open instead of the root's own workspace/;
 * `port`: 0 for any free port; `linkExtension`: a folder linked into the extensions dir as an installed
 * extension (`publisher.name-version`), so it loads without a VSIX or the development-host payload;
 * `hookSignals: false` when the caller handles SIGINT/SIGTERM itself.
 */
export async function startCodeServer({
  name = 'code-server',
  files,
  settings,
  vsix,
  timeoutMs = 60_000,
  workspace,
  port: wantedPort = 0,
  logDir = RESULTS_DIR,
  linkExtension,
  hookSignals: hook = true,
} = {}) {
  assertInstalled();
  const dirs = makeRoot({ files, settings });
  if (workspace) dirs.workspace = workspace;
  if (vsix) installVsix(dirs, vsix);
  if (linkExtension) fs.symlinkSync(linkExtension.dir, path.join(dirs.extensions, linkExtension.id), 'dir');
  const port = wantedPort || (await freePort());
  const url = `http://127.0.0.1:${port}`;
  fs.mkdirSync(logDir, { recursive: true });
  const logPath = path.join(logDir, `${name}-code-server.log`);
  const logFd = fs.openSync(logPath, 'w');
  const child = spawn(
    process.execPath,
    [
      CODE_SERVER_BIN,
      '--bind-addr',
      `127.0.0.1:${port}`,
      '--auth',
      'none',
      '--disable-telemetry',
      '--disable-update-check',
      '--disable-workspace-trust',
      '--disable-getting-started-override',
      '--user-data-dir',
      dirs.userData,
      '--extensions-dir',
      dirs.extensions,
      dirs.workspace,
    ],
    { env: childEnv(dirs), detached: true, stdio: ['ignore', logFd, logFd] },
  );
  fs.closeSync(logFd);
  // run.sh kills these groups if a global timeout cuts the run short (SIGKILL skips our cleanup).
  if (process.env.E2E_PID_FILE) fs.appendFileSync(process.env.E2E_PID_FILE, `${child.pid}\n`);
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    running.delete(stop);
    await killGroup(child);
    // Unlink a linked extension first: removing the root must never reach into the folder it points to.
    if (linkExtension) fs.rmSync(path.join(dirs.extensions, linkExtension.id), { force: true });
    if (!process.env.E2E_KEEP_ROOT) fs.rmSync(dirs.root, { recursive: true, force: true, maxRetries: 3 });
  };
  running.add(stop);
  if (hook) hookSignals();
  try {
    await waitHealthy(url, child, timeoutMs);
  } catch (e) {
    await stop();
    throw e;
  }
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
  return { url, port, dirs, logPath, stop, exited, pid: child.pid };
}

/** SIGTERM the whole process group (code-server forks its extension host and file watchers), then SIGKILL. */
export async function killGroup(child, graceMs = 3000) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  try {
    process.kill(-child.pid, 'SIGTERM');
  } catch {
    return;
  }
  const timer = new Promise((r) => setTimeout(r, graceMs, 'timeout'));
  if ((await Promise.race([exited, timer])) === 'timeout') {
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      /* already gone */
    }
    await exited;
  }
  // Stragglers in the group (extension host, watchers) must not outlive the run.
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    /* group already empty */
  }
}
