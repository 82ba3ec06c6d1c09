// Matrices asked of the host for the result on screen: one answer per distinct request (cached, and shared by
// a prefetch and the reader's own request for the same matrix), rows for the hover readout, and prefetching of
// what the reader most likely opens next.
import type { MatrixKind } from '../../../src/shared/kinds';
import { MessageHandler } from '../../../src/shared/messaging/message-handler';
import {
  fromBuffer,
  lensAsking,
  type LensReply,
  type LensResponseMessage,
  type RequestBody,
  type ResponseBody,
  type ViewInit,
} from '../../../src/shared/protocol/lens';
import { LruCache } from '../../common/cache';
import { paintRequest, prefetchPlan, type At, type MatrixRequestMaker } from '../state/slice-fetch';
import { $current, $init, shownKey, type BucketRows, type Rows } from '../state/store';
import { $kinds } from '../state/selectors';
import { post } from './host';

const PREFETCH_AFTER_MS = 400;

function keyOf(b: RequestBody): string {
  return JSON.stringify(b);
}

export class MatrixRequests {
  /** Numbers the requests and settles each with the host's reply to it. */
  private readonly messages = new MessageHandler({ post, asks: lensAsking });
  private readonly cache = new LruCache<string, ResponseBody>(48);
  /** Requests in flight by key: a prefetch and the user's own request for the same matrix share one answer. */
  private readonly inflight = new Map<string, Promise<ResponseBody>>();
  private readonly rows = new LruCache<string, Rows>(256);
  private prefetchGen = 0;
  /** The matrix painted last: the direction a reader steps in is the first thing fetched ahead. */
  private lastPainted: At | undefined;

  /** A new result: everything in flight is dropped, and the matrix the host sent along is the first answer. */
  reset(next: ViewInit): void {
    this.messages.rejectAll('superseded');
    this.inflight.clear();
    this.cache.clear();
    this.rows.clear();
    // The host sent the matrix the view showed last along with the result: the first paint needs no request.
    if (next.first) this.cache.set(keyOf(paintRequest(next.first.layer, next.first.head, next.first.kind)), next.first);
  }

  /** Whether a request other than a fetch ahead is waiting for the host's answer. */
  get busy(): boolean {
    for (const k of this.inflight.keys()) if (!this.fetchingAhead.has(k)) return true;
    return false;
  }

  /**
   * Each row's hover neighbours for the picture on screen (layer, head, kind), kept with it in $current once they
   * come: the strip then lights without the matrix. Asked once per picture (the answer is cached).
   */
  hoverTops(layer: number, head: number, kind: MatrixKind, k: number): void {
    const key = shownKey(layer, head, kind);
    void this.request({ type: 'tops', layer, head, kind, k })
      .then((t) => {
        const cur = $current.get();
        if (cur?.key === key && !cur.values && !cur.tops)
          $current.set({ ...cur, tops: { m: t.m, idx: new Int32Array(t.idx), val: new Float32Array(t.val) } });
      })
      .catch(() => undefined);
  }

  /** Keys of the requests in flight that fetch ahead (prefetchAround), not for something on screen. */
  private readonly fetchingAhead = new Set<string>();

  /** `request`, marked as a fetch ahead while it is in flight. */
  private requestAhead(body: RequestBody): Promise<ResponseBody> {
    const k = keyOf(body);
    this.fetchingAhead.add(k);
    const p = this.request(body);
    const done = () => void this.fetchingAhead.delete(k);
    p.then(done, done);
    return p;
  }

  /** The host's reply to one of the requests (for the result on screen). */
  receive(m: LensResponseMessage): void {
    this.messages.receive(m);
  }

  /** The host's answer to `body`, typed by the request (a SliceRequest gets a SliceResponse). */
  readonly request = async <B extends RequestBody>(body: B): Promise<LensReply<B>> => {
    const k = keyOf(body);
    // Both maps are keyed by the request body, so an entry is the reply to `body`.
    const hit = this.cache.get(k) as LensReply<B> | undefined;
    if (hit) return hit;
    const init = $init.get();
    if (!init) throw new Error('no result');
    const pending = this.inflight.get(k) as Promise<LensReply<B>> | undefined;
    if (pending) return await pending;
    const promise = this.messages.request(body, { resultId: init.resultId });
    this.inflight.set(k, promise);
    try {
      const res = await promise;
      this.cache.set(k, res);
      return res;
    } finally {
      this.inflight.delete(k);
    }
  };

  async slice(layer: number, head: number, kind: MatrixKind): Promise<Float32Array> {
    const r = await this.request({ type: 'slice', layer, head, kind });
    return fromBuffer(r.data, r.n * r.n);
  }

  /** Query row i of every term of one head (exact, for the readout). */
  async row(layer: number, head: number, i: number): Promise<Rows> {
    const r = await this.request({ type: 'row', layer, head, i });
    const out: Rows = {};
    for (const [k, buf] of Object.entries(r.rows)) if (buf) out[k as MatrixKind] = fromBuffer(buf, r.n);
    this.rows.set(`${layer}/${head}/${i}`, out);
    return out;
  }

  cachedRow(layer: number, head: number, i: number): Rows | undefined {
    return this.rows.get(`${layer}/${head}/${i}`);
  }

  /** Relative-position table row of every (query, key) pair, when the model has relative attention (log buckets). */
  async bucketRows(): Promise<BucketRows | undefined> {
    const init = $init.get();
    if (!init || !init.model.terms.some((t) => t === 'c2p' || t === 'p2c')) return undefined;
    const r = await this.request({ type: 'buckets' });
    return { rowOf: fromBuffer(r.rowOf, r.n * r.n), zoneOf: fromBuffer(r.zoneOf, r.n * r.n), zones: r.zones, n: r.n };
  }

  /**
   * Once a heatmap has been on screen for a moment, fetch what a person most likely opens next (the neighbouring
   * heads, the next term, the next layer) while nothing else is asked: switching to them is then a repaint, not
   * a round trip. The pause keeps prefetches out of the way of someone stepping quickly (the host answers one
   * request at a time, so a prefetch in flight would delay the next real one).
   */
  prefetchAround(layer: number, head: number, term: MatrixKind, make: MatrixRequestMaker = paintRequest): void {
    const init = $init.get();
    if (!init) return;
    const at = { layer, head, term };
    const next = prefetchPlan(at, this.lastPainted, $kinds.get(), init.model.layers, init.model.heads, make);
    this.lastPainted = at;
    // Only the latest paint fetches ahead: chains around matrices a quick reader has left would hold up the host.
    const gen = ++this.prefetchGen;
    const [ahead, ...rest] = next;
    let k = 0;
    const step = () => {
      const body = rest[k];
      if (gen !== this.prefetchGen || $init.get() !== init || body === undefined) return;
      if (this.inflight.size > 0) return void setTimeout(step, PREFETCH_AFTER_MS);
      k++;
      void this.requestAhead(body).then(step, () => undefined);
    };
    // One more step the way the reader is going, at once (their next request then shares it); the rest when idle.
    const first = ahead ? this.requestAhead(ahead) : Promise.resolve();
    first.then(
      () => setTimeout(step, PREFETCH_AFTER_MS),
      () => undefined,
    );
  }
}
