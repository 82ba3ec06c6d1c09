// One message handler for both ends of a webview panel (the host's panel and the page in it): it wraps the side's
// postMessage, numbers the requests it sends and settles each with the reply carrying its id, hands the
// requests it receives to the answer typed by the protocol's request map and posts the reply, and sends plain
// one-way messages. It imports neither `vscode` nor the DOM: each side passes its own `post`.
//
// What travels: every message is cloned, never shared. Matrices ride in a message as ArrayBuffers, which VS Code
// copies across to the other side as binary (not as JSON arrays of numbers); nothing is transferred, because the
// host's `webview.postMessage` takes no transfer list. Senders therefore copy exactly the values they mean to
// send (../protocol/matrix-buffer.ts). `post` still takes a transfer list for a channel that can move buffers.
//
// The wire shape of a request and a reply belongs to each protocol (field names are part of it, and the E2E tests
// drive it): an Asking / Answering envelope writes and reads them, and the handler deals only in ids and bodies.

/** A protocol's requests by name: [what is asked, what it is answered with]. */
export type RequestMap = Record<string, [request: unknown, reply: unknown]>;
export type RequestOf<M extends RequestMap> = M[keyof M][0];
export type ReplyOf<M extends RequestMap> = M[keyof M][1];
/** The reply to request body B: the map's entry whose request B is (so a reply's type follows from the request). */
export type ReplyTo<M extends RequestMap, B> = { [K in keyof M]: B extends M[K][0] ? M[K][1] : never }[keyof M];
/** Every request of the map, each with its own answer. */
export type RequestHandlers<M extends RequestMap, Ctx = void> = { [K in keyof M]: (body: M[K][0], ctx: Ctx) => Promise<M[K][1]> | M[K][1] };

/** How a request ended: its reply, or one line saying why not (`cancelled` when it was stopped on request). */
export type Outcome<R> = { ok: true; reply: R } | { ok: false; error: string; cancelled?: boolean };

export type Post<Out> = (message: Out, transfer?: readonly ArrayBuffer[]) => void;

/** The asking side's wire format: the message for request `id`, and what a message says about a request sent. */
export interface Asking<M extends RequestMap, Scope, Out, In, Progress = never> {
  request(id: number, body: RequestOf<M>, scope: Scope): Out;
  readReply(message: In): { id: number; outcome: Outcome<ReplyOf<M>> } | { id: number; progress: Progress } | undefined;
}

/** The answering side's wire format: the request a message carries, and the message that answers it. */
export interface Answering<M extends RequestMap, Scope, Out, In> {
  readRequest(message: In): { id: number; body: RequestOf<M>; scope: Scope } | undefined;
  reply(id: number, scope: Scope, outcome: Outcome<ReplyOf<M>>): Out;
}

export interface MessageHandlerOptions<M extends RequestMap, Scope, Out, In, Progress> {
  post: Post<Out>;
  /** Set on the side that sends requests. */
  asks?: Asking<M, Scope, Out, In, Progress>;
  /** Set on the side that answers them, with the answer (a rejection becomes an error reply). */
  answers?: Answering<M, Scope, Out, In>;
  answer?: (body: RequestOf<M>, scope: Scope) => Promise<ReplyOf<M>> | ReplyOf<M>;
}

/** A rejected request's error; `cancelled` is set when the other side reports whether it was stopped on request. */
export type RequestError = Error & { cancelled?: boolean };

interface Pending<R, Progress> {
  resolve(reply: R): void;
  reject(e: RequestError): void;
  progress?: (p: Progress) => void;
}

export class MessageHandler<M extends RequestMap, Scope, Out, In, Progress = never> {
  private nextId = 1;
  private readonly pending = new Map<number, Pending<ReplyOf<M>, Progress>>();

  constructor(private readonly options: MessageHandlerOptions<M, Scope, Out, In, Progress>) {}

  /** A plain one-way message. */
  send(message: Out, transfer?: readonly ArrayBuffer[]): void {
    this.options.post(message, transfer);
  }

  /** Sends a request; the promise settles with its reply, typed by the request map. */
  request<B extends RequestOf<M>>(body: B, scope: Scope, progress?: (p: Progress) => void): Promise<ReplyTo<M, B>> {
    return this.start(body, scope, progress).reply;
  }

  /** Like `request`, with the request's id (to cancel it by a message of the protocol's own). */
  start<B extends RequestOf<M>>(body: B, scope: Scope, progress?: (p: Progress) => void): { id: number; reply: Promise<ReplyTo<M, B>> } {
    const asks = this.options.asks;
    if (!asks) throw new Error('this side of the protocol sends no requests');
    const id = this.nextId++;
    // The answering side replies to a request with that request's reply (the map's pairing): trusted, as the
    // host trusts its page's bundle and the page its host.
    const reply = new Promise<ReplyTo<M, B>>((resolve, reject) => {
      this.pending.set(id, { resolve, reject, progress });
    });
    this.options.post(asks.request(id, body, scope));
    return { id, reply };
  }

  /** Rejects every request in flight (what they asked about was replaced); their late replies are ignored. */
  rejectAll(reason: string): void {
    const waiting = [...this.pending.values()];
    this.pending.clear();
    for (const p of waiting) p.reject(new Error(reason));
  }

  /** Gives up on one request (it timed out): rejects it, and a late reply to it is no longer matched. */
  reject(id: number, reason: string): void {
    const p = this.pending.get(id);
    this.pending.delete(id);
    p?.reject(new Error(reason));
  }

  /** Requests sent and not yet settled. */
  get inFlight(): number {
    return this.pending.size;
  }

  /**
   * Takes a message from the other side: a reply (or progress) settles its request, a request is answered.
   * Returns false for anything else: a one-way message, or a reply to no request in flight (settled already,
   * let go by rejectAll or reject), which is the caller's to handle or drop.
   */
  receive(message: In): boolean {
    const { asks, answers } = this.options;
    const got = asks?.readReply(message);
    if (got) return this.settle(got);
    const req = answers?.readRequest(message);
    if (!req || !answers) return false;
    void this.answer(req.id, req.body, req.scope, answers);
    return true;
  }

  private settle(got: { id: number; outcome: Outcome<ReplyOf<M>> } | { id: number; progress: Progress }): boolean {
    const p = this.pending.get(got.id);
    if (!p) return false;
    if ('progress' in got) {
      p.progress?.(got.progress);
      return true;
    }
    this.pending.delete(got.id);
    const o = got.outcome;
    if (o.ok) p.resolve(o.reply);
    else p.reject(Object.assign(new Error(o.error), o.cancelled === undefined ? {} : { cancelled: o.cancelled }));
    return true;
  }

  private async answer(id: number, body: RequestOf<M>, scope: Scope, answers: Answering<M, Scope, Out, In>): Promise<void> {
    const answer = this.options.answer;
    let outcome: Outcome<ReplyOf<M>>;
    try {
      if (!answer) throw new Error('this side of the protocol answers no requests');
      outcome = { ok: true, reply: await answer(body, scope) };
    } catch (e) {
      outcome = { ok: false, error: e instanceof Error ? e.message : String(e) };
    }
    this.options.post(answers.reply(id, scope, outcome));
  }
}

/** Hands a request to its own handler in an exhaustive table (`name`: the request's name in the map). */
export function dispatchRequest<M extends RequestMap, K extends keyof M, Ctx>(
  table: RequestHandlers<M, Ctx>,
  name: K,
  body: M[K][0],
  ctx: Ctx,
): Promise<M[K][1]> | M[K][1] {
  return table[name](body, ctx);
}
