// What the renderer hands an analysis view: the host's answers and whether its render is still the latest. The
// rest (the result, the reader's choices, opening a head) the views read and change through the lens store.
import type { RequestBody, ResponseBody } from '../../../src/shared/protocol/lens';

export interface ViewContext {
  request<T extends ResponseBody>(body: RequestBody): Promise<T>;
  /** False once a newer render (or a new result) took over: the view then paints nothing more. */
  isCurrent(): boolean;
}
