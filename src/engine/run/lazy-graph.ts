// A graph built on first use (graph/graph-recipes.ts) for one open model: taken from the cache, else built — here,
// or, for a model opened with `isolate`, in a load process, this process then only opening the entry it wrote.
import { LensError } from '../errors';
import { type CachedModelGraph, ensureGraphOf, findGraph } from '../graph/graph-cache';
import { graphKind, type GraphRecipe } from '../graph/graph-recipes';
import type { RunBase } from './run-base';

export async function lazyGraph(model: RunBase, recipe: GraphRecipe): Promise<CachedModelGraph> {
  const { checkpoint: ck, graphCache } = model;
  const kind = graphKind(ck, recipe);
  if (!graphCache.buildElsewhere) return ensureGraphOf(ck, graphCache.dir, kind, graphCache.options);
  const cached = findGraph(ck, graphCache.dir, kind, graphCache.options);
  if (cached) return cached;
  await graphCache.buildElsewhere(recipe, kind.what);
  const built = findGraph(ck, graphCache.dir, kind, graphCache.options);
  if (!built) {
    // Evicted between the build and this open (another process filling a small cache): never build it here.
    throw new LensError(
      `${ck.dir}: the ${kind.what} left the graph cache (${graphCache.dir}) right after it was built; raise the cache's size limit, or try again.`,
      'runtime',
    );
  }
  return { ...built, built: true };
}
