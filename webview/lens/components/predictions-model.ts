// Pure parts of the Predictions section (./predictions.ts): the one-line summary, token names, the strip's
// context-menu data and the piece → strip row map. No DOM: the unit tests run it under node.
import type { ProtocolToken, WordGroupInfo } from '../../../src/shared/protocol/lens';
import { type FillMask, formatProb, type PositionPredictions, predictedLabel, type TokenPrediction } from '../../../src/shared/predictions';
import { pieceLabel } from '../../../src/shared/token-layout';
import { decisionLine } from '../../../src/shared/decision';

/** `#5 “door”`: a token as the section names it. */
export function tokenName(tokens: readonly ProtocolToken[], i: number): string {
  const t = tokens[i];
  return t ? `#${i} “${t.special ? t.text : pieceLabel(t.text)}”` : `#${i}`;
}

/** The strip token's context for the webview's context menu: pieces offer "What Would the Model Put Here?". */
export function stripContext(i: number, groups: WordGroupInfo[] | undefined): string {
  // A merged word of several pieces has no one token to mask.
  const piece = groups ? (groups[i]?.pieces.length === 1 ? groups[i].pieces[0] : undefined) : i;
  return JSON.stringify(
    piece === undefined ? { webviewSection: 'word' } : { webviewSection: 'token', tokenIndex: piece, preventDefaultContextMenuItems: true },
  );
}

/** The strip row that shows piece `p`: the piece itself, or the word group holding it when pieces are merged. */
export function rowOfPiece(p: number | null, groups: WordGroupInfo[] | undefined): number | null {
  if (p === null || !groups) return p;
  const w = groups.findIndex((g) => g.pieces.includes(p));
  return w >= 0 ? w : null;
}

/** The piece a strip row stands for (a merged word of several pieces stands for none). */
export function pieceOfRow(i: number | null, groups: WordGroupInfo[] | undefined): number | null {
  if (i === null || !groups) return i;
  const pieces = groups[i]?.pieces;
  return pieces?.length === 1 ? (pieces[0] ?? null) : null;
}

const topOne = (p: PositionPredictions) => {
  const t = p.top[0];
  return t ? `${predictedLabel(t.token)} ${formatProb(t.prob)}` : '–';
};

/**
 * The section's one line: the first choice at each [MASK] and at each token asked about, the most "replaced"
 * token of an RTD head, why there is nothing to show, and the last question's failure.
 */
export function summaryLine(
  fm: FillMask,
  asked: readonly TokenPrediction[],
  tokens: readonly ProtocolToken[],
  latestError?: TokenPrediction,
): string {
  const errorLine = latestError?.state === 'error' ? ` · ${tokenName(tokens, latestError.position)}: ${latestError.message}` : '';
  switch (fm.state) {
    case 'pending':
      return 'computing…';
    case 'none':
    case 'error':
      return fm.message;
    case 'ready': {
      const parts: string[] = [];
      const masked = asked.flatMap((a) => (a.state === 'ready' && a.prediction.source === 'masked' ? [a.prediction] : []));
      for (const m of fm.masks) parts.push(`#${m.position} → ${topOne(m)}`);
      for (const p of masked) parts.push(`${tokenName(tokens, p.position)} → ${topOne(p)}`);
      if (fm.rtd) {
        const rtd = fm.rtd;
        const k = rtd.reduce((best, p, i) => (!tokens[i]?.special && (best < 0 || p > (rtd[best] ?? -Infinity)) ? i : best), -1);
        const top = rtd[k];
        if (top !== undefined) parts.push(`replaced? highest ${formatProb(top)} at ${tokenName(tokens, k)}`);
      }
      if (fm.decision) parts.push(`task head: ${decisionLine(fm.decision, (p) => tokens[p]?.special !== false)} (the decision card above)`);
      if (fm.mlmHead === null)
        parts.push(fm.decision ? 'no fill-mask (no masked-LM head)' : 'no masked-LM head in this checkpoint, so no fill-mask');
      else if (fm.masks.length === 0 && masked.length === 0) {
        parts.push(
          'no [MASK] in the selection: write [MASK] where a word should go, or pick a token and ask what the model would put there',
        );
      }
      if (fm.decoderNote) parts.push(`no EMD here: ${fm.decoderNote}`);
      const decoder = fm.decoder === 'emd' && fm.masks.length ? 'through the EMD (plain head beside) · ' : '';
      const head = `${fm.intervened ? 'after the intervention · ' : ''}${decoder}${fm.masks.length ? `${fm.masks.length} [MASK] · top ${fm.k}: ` : ''}`;
      return `${head}${parts.join(' · ')}${errorLine}`;
    }
  }
}
