// Runtime sessions of extra graphs of an open model (the heads' compare graph, the reruns of interventions): each in
// its own runtime process, started on first use, stopped with the model, its cache entry released then.
import type { CachedModelGraph } from '../graph/graph-cache';
import { providerOrder } from './execution-providers';
import type { GraphName } from './messages';
import { RuntimeSession } from './session';
import type { ExecutionProviderSetting } from '../types';

export class GraphSessions<K> {
  private readonly sessions = new Map<K, RuntimeSession>();
  /** Sessions whose graph is being built or opened (it may take a load process): one per key, however many ask. */
  private readonly opening = new Map<K, Promise<RuntimeSession>>();
  private readonly graphs: CachedModelGraph[] = [];

  /** The session under `key`, or a new one on the graph `graph()` resolves to (built or taken from the cache). */
  protected session(
    key: K,
    name: GraphName,
    graph: () => Promise<CachedModelGraph>,
    ep: ExecutionProviderSetting | undefined,
    threads: number,
  ): Promise<RuntimeSession> {
    const known = this.sessions.get(key);
    if (known) return Promise.resolve(known);
    let opening = this.opening.get(key);
    if (!opening) {
      opening = (async () => {
        const g = await graph();
        this.graphs.push(g);
        const session = new RuntimeSession({ [name]: g.modelPath }, providerOrder(ep ?? 'auto'), threads);
        this.sessions.set(key, session);
        await session.start();
        return session;
      })().finally(() => this.opening.delete(key));
      this.opening.set(key, opening);
    }
    return opening;
  }

  /** Stops the process under `key` (its graph stays cached and held): the next run there starts a fresh one. */
  async idle(key: K): Promise<void> {
    await this.sessions.get(key)?.terminate();
  }

  /** The runtime processes' ids (for memory figures). */
  get pids(): number[] {
    return [...this.sessions.values()].flatMap((s) => (s.pid === undefined ? [] : [s.pid]));
  }

  async dispose(): Promise<void> {
    try {
      await Promise.all([...this.sessions.values()].map((s) => s.terminate()));
    } finally {
      this.sessions.clear();
      for (const g of this.graphs.splice(0)) g.release();
    }
  }
}
