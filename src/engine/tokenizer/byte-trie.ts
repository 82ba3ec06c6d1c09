// A byte trie from piece to id: one Map keyed by (node, byte), so 128k-piece vocabularies stay compact.

export class ByteTrie {
  /** (node * 256 + byte) → child node; exposed so hot loops can walk the trie without callbacks. */
  readonly edges = new Map<number, number>();
  /** Node → stored value, -1 for none. Node 0 is the root. */
  readonly values: number[] = [-1];

  insert(bytes: Uint8Array, value: number): void {
    let node = 0;
    for (const b of bytes) {
      const key = node * 256 + b;
      let next = this.edges.get(key);
      if (next === undefined) {
        next = this.values.length;
        this.values.push(-1);
        this.edges.set(key, next);
      }
      node = next;
    }
    this.values[node] = value;
  }

  /** Calls visit(value, endExclusive) for every stored key that is a prefix of bytes[pos..end). */
  prefixes(bytes: Uint8Array, pos: number, end: number, visit: (value: number, endPos: number) => void): void {
    let node = 0;
    for (let i = pos; i < end; i++) {
      const next = this.edges.get(node * 256 + bytes[i]!);
      if (next === undefined) return;
      node = next;
      const v = this.values[node]!;
      if (v >= 0) visit(v, i + 1);
    }
  }

  /** Length of the longest stored key at pos, 0 if none. */
  longest(bytes: Uint8Array, pos: number, end: number): number {
    let best = 0;
    this.prefixes(bytes, pos, end, (_v, e) => {
      best = e - pos;
    });
    return best;
  }
}
