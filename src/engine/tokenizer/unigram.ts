// Unigram Viterbi segmentation, as SentencePiece's unigram_model.cc (EncodeOptimized) does it: best path ending
// at each character boundary, user-defined pieces boosted, one UNK node per uncovered character.
import { ByteTrie } from './byte-trie';
import { utf8CharLen } from './utf8';

export const enum UnigramKind {
  NORMAL,
  USER_DEFINED,
  UNUSED,
}

export interface UnigramPiece {
  bytes: Uint8Array;
  id: number;
  score: number;
  kind: UnigramKind;
}

export interface UnigramOptions {
  unkId: number;
  /** SentencePiece accumulates path scores in float32; Hugging Face in float64. */
  float32: boolean;
}

export interface Segment {
  start: number;
  end: number;
  id: number;
  unk: boolean;
}

const UNK_PENALTY = 10;

export class UnigramModel {
  private readonly trie = new ByteTrie();
  private readonly scores: Float64Array;
  private readonly kinds: Uint8Array;
  private readonly unkScore: number;
  private readonly maxScore: number;

  constructor(
    pieces: UnigramPiece[],
    size: number,
    private readonly opts: UnigramOptions,
  ) {
    this.scores = new Float64Array(size);
    this.kinds = new Uint8Array(size);
    let min = Infinity;
    let max = -Infinity;
    for (const p of pieces) {
      this.trie.insert(p.bytes, p.id);
      this.scores[p.id] = p.score;
      this.kinds[p.id] = p.kind;
      if (p.kind === UnigramKind.NORMAL) {
        min = Math.min(min, p.score);
        max = Math.max(max, p.score);
      }
    }
    if (!Number.isFinite(min)) {
      min = 0;
      max = 0;
    }
    const f = opts.float32 ? Math.fround : (x: number) => x;
    this.unkScore = f(min - UNK_PENALTY);
    this.maxScore = max;
  }

  /** Longest user-defined piece at pos (for the normalizer's prefix matcher); 0 when none. */
  userDefinedPrefix(bytes: Uint8Array, pos: number, end: number): number {
    let best = 0;
    this.trie.prefixes(bytes, pos, end, (id, e) => {
      if ((this.kinds[id] as UnigramKind) === UnigramKind.USER_DEFINED) best = e - pos;
    });
    return best;
  }

  hasUserDefined(): boolean {
    return this.kinds.includes(UnigramKind.USER_DEFINED);
  }

  /** Segments bytes[0..size) into pieces; byte ranges [start,end) in the given bytes. */
  encode(bytes: Uint8Array): Segment[] {
    const size = bytes.length;
    const f = this.opts.float32 ? Math.fround : (x: number) => x;
    const bestScore = new Float64Array(size + 1);
    const startsAt = new Int32Array(size + 1).fill(-1);
    const ids = new Int32Array(size + 1).fill(-1);
    const unkId = this.opts.unkId;
    const edges = this.trie.edges;
    const values = this.trie.values;
    let pos = 0;
    while (pos < size) {
      const here = bestScore[pos]!;
      const mblen = Math.min(utf8CharLen(bytes[pos]!), size - pos);
      let hasSingle = false;
      // Walk the trie inline (no callback): this loop is the tokenizer's hot path.
      let node = 0;
      for (let end = pos + 1; end <= size; end++) {
        const next = edges.get(node * 256 + bytes[end - 1]!);
        if (next === undefined) break;
        node = next;
        const id = values[node]!;
        if (id < 0) continue;
        const kind = this.kinds[id] as UnigramKind;
        if (kind === UnigramKind.UNUSED) continue;
        const length = end - pos;
        // As in the C++: the score is a double, compared unrounded, stored as float.
        const score = kind === UnigramKind.USER_DEFINED ? f(length * this.maxScore) - 0.1 : this.scores[id]!;
        const cand = score + here;
        if (startsAt[end] === -1 || cand > bestScore[end]!) {
          bestScore[end] = f(cand);
          startsAt[end] = pos;
          ids[end] = id;
        }
        if (length === mblen) hasSingle = true;
      }
      if (!hasSingle) {
        const end = pos + mblen;
        const cand = f(this.unkScore + here);
        if (startsAt[end] === -1 || cand > bestScore[end]!) {
          bestScore[end] = cand;
          startsAt[end] = pos;
          ids[end] = unkId;
        }
      }
      pos += mblen;
    }
    const out: Segment[] = [];
    let end = size;
    while (end > 0) {
      const start = startsAt[end]!;
      if (start < 0) throw new Error('unigram lattice has no path'); // cannot happen: every char gets a node
      const id = ids[end]!; // set with startsAt[end]
      out.push({ start, end, id, unk: id === unkId });
      end = start;
    }
    return out.reverse();
  }
}
