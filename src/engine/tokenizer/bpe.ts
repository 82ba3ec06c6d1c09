// Byte-pair encoding of one pre-tokenized word: repeatedly merge the lowest-ranked adjacent pair (as GPT-2's
// bpe() does). Returns each piece with how many of the word's initial symbols it covers, for offsets.

export interface BpePiece {
  piece: string;
  symbols: number;
}

export class BpeModel {
  private readonly ranks = new Map<string, number>();
  private readonly cache = new Map<string, BpePiece[]>();

  constructor(merges: ReadonlyArray<readonly [string, string]>) {
    merges.forEach(([a, b], i) => {
      const key = pairKey(a, b);
      if (!this.ranks.has(key)) this.ranks.set(key, i);
    });
  }

  encodeWord(symbols: readonly string[]): BpePiece[] {
    const cacheKey = symbols.join('\u0001');
    const hit = this.cache.get(cacheKey);
    if (hit) return hit;
    let word: BpePiece[] = symbols.map((s) => ({ piece: s, symbols: 1 }));
    while (word.length > 1) {
      let best = Infinity;
      let first = '';
      let second = '';
      for (let i = 0; i + 1 < word.length; i++) {
        const a = word[i]!,
          b = word[i + 1]!; // i + 1 < length
        const r = this.ranks.get(pairKey(a.piece, b.piece));
        if (r !== undefined && r < best) {
          best = r;
          first = a.piece;
          second = b.piece;
        }
      }
      if (best === Infinity) break;
      const next: BpePiece[] = [];
      for (let i = 0; i < word.length;) {
        const a = word[i]!,
          b = word[i + 1]; // i < length
        if (b && a.piece === first && b.piece === second) {
          next.push({ piece: first + second, symbols: a.symbols + b.symbols });
          i += 2;
        } else {
          next.push(a);
          i += 1;
        }
      }
      word = next;
    }
    if (this.cache.size > 50000) this.cache.clear(); // bound memory on long, varied inputs
    this.cache.set(cacheKey, word);
    return word;
  }
}

function pairKey(a: string, b: string): string {
  return `${a}\u0000${b}`;
}
