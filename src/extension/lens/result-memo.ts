// Heavy per-result work (a layer's ablation, rollout, the share grid, the overview) is done once per result and
// kept in a small per-result LRU, so moving between heads of a 512-token result only copies out slices. The memo
// holds the analysis arrays (or the promise of them, so concurrent requests share one computation), never the
// response buffers: a posted ArrayBuffer may be transferred (detached).
import type { ExplainResult } from '../../engine';

const MEMO_LIMIT = 12;
const memos = new WeakMap<ExplainResult, Map<string, unknown>>();

/** Computes `make()` once per (result, key); least recently used entries drop out beyond MEMO_LIMIT. A failed computation is not kept. */
export function memo<T>(result: ExplainResult, key: string, make: () => T): T {
  let m = memos.get(result);
  if (!m) memos.set(result, (m = new Map<string, unknown>()));
  if (m.has(key)) {
    const v = m.get(key) as T;
    m.delete(key);
    m.set(key, v);
    return v;
  }
  const v = make();
  m.set(key, v);
  if (v instanceof Promise) v.catch(() => m.get(key) === v && m.delete(key));
  while (m.size > MEMO_LIMIT) m.delete(m.keys().next().value as string);
  return v;
}
