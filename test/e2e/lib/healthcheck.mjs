// Starts code-server in a throwaway root, checks GET /healthz answers 200 on 127.0.0.1, stops it.
// Used by tools/e2e-setup.sh as its last step. Exit code 0 = healthy.
import { startCodeServer } from './code-server.mjs';

const t0 = Date.now();
try {
  const server = await startCodeServer({ name: 'healthcheck', files: { 'hello.txt': 'hello\n' } });
  const res = await fetch(`${server.url}/healthz`);
  const body = await res.text();
  await server.stop();
  if (res.status !== 200) throw new Error(`/healthz answered ${res.status}`);
  console.log(`[e2e-setup] code-server healthy on ${server.url} in ${Date.now() - t0} ms: ${body.trim()}`);
} catch (e) {
  console.error(`[e2e-setup] error: code-server health check failed: ${e.message}`);
  process.exit(1);
}
