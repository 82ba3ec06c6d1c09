// E2E only (test/e2e/isolation.test.mjs): runs in the same extension host as DeBERTa Lens and writes, every
// 50 ms, one JSON line to host-probe.jsonl beside the workspace folder: the time, the host's RSS, and the longest
// gap between two 5 ms timer ticks since the last line (how long the host's main thread was blocked). A blocked
// thread writes nothing while blocked; the line after it carries the gap.
const fs = require('node:fs');
const path = require('node:path');
const vscode = require('vscode');

const TICK_MS = 5;
const LINE_MS = 50;

function activate() {
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  if (!folder) return;
  const out = path.join(path.dirname(folder), 'host-probe.jsonl');
  fs.writeFileSync(out, `${JSON.stringify({ pid: process.pid, t: Date.now() })}\n`);
  let last = performance.now();
  let maxGap = 0;
  let lineAt = last;
  const timer = setInterval(() => {
    const now = performance.now();
    maxGap = Math.max(maxGap, now - last);
    last = now;
    if (now - lineAt >= LINE_MS) {
      lineAt = now;
      fs.appendFileSync(out, `${JSON.stringify({ t: Date.now(), rss: process.memoryUsage.rss(), gap: Math.round(maxGap) })}\n`);
      maxGap = 0;
    }
  }, TICK_MS);
  return { dispose: () => clearInterval(timer) };
}

module.exports = { activate, deactivate() {} };
