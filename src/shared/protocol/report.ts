// What an exported HTML report carries to its page script (src/analysis/export/html-report.ts writes it,
// webview/report reads it): the result's shape, its text and tokens, and each `layer/kind` tensor as base64
// float32 ([heads, n, n]).
import type { MatrixKind } from '../kinds';
import type { ProtocolToken } from './token';

export interface ReportMeta {
  n: number;
  heads: number;
  layers: number[];
  kinds: MatrixKind[];
  scale: number;
  model: { name: string; type: string; checkpoint_hash?: string };
  /** The text the tokens' offsets point into (the pieces, spaced, when the result was explained from ids). */
  text: string;
  tokens: ProtocolToken[];
  initial: { layer: number; head: number; kind: MatrixKind };
}

export interface ReportPayload {
  meta: ReportMeta;
  /** `${layer}/${kind}` → base64 of the little-endian float32 tensor. */
  data: Record<string, string>;
}
