// What the renderer hands an analysis view: the host's answers and whether its render is still the latest. The
// rest (the result, the reader's choices, opening a head) the views read and change through the lens store.
import type { LensReply, RequestBody } from '../../../src/shared/protocol/lens';

export interface ViewContext {
  request<B extends RequestBody>(body: B): Promise<LensReply<B>>;
  /** False once a newer render (or a new result) took over: the view then paints nothing more. */
  isCurrent(): boolean;
}
