// Runtime sessions of extra graphs of an open model (the heads' compare graph, the reruns of interventions): each in
// its own runtime process, started on first use, stopped with the model, its cache entry released then.
import type { CachedModelGraph } from '../graph/graph-cache';
import { providerOrder } from './execution-providers';
import type { GraphName } from './messages';
import { RuntimeSession } from './session';
import type { ExecutionProviderSetting } from '../types';

export class GraphSessions<K> {
  private readonly sessions = new Map<K, RuntimeSession>();
  private readonly graphs: CachedModelGraph[] = [];

  /** The session under `key`, or a new one on the graph `graph()` returns (built or taken from the cache). */
  protected async session(
    key: K,
    name: GraphName,
    graph: () => CachedModelGraph,
    ep: ExecutionProviderSetting | undefined,
    threads: number,
  ): Promise<RuntimeSession> {
    const known = this.sessions.get(key);
    if (known) return known;
    const g = graph();
    this.graphs.push(g);
    const session = new RuntimeSession({ [name]: g.modelPath }, providerOrder(ep ?? 'auto'), threads);
    this.sessions.set(key, session);
    await session.start();
    return session;
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
