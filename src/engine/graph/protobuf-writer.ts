/** Minimal protobuf encoder: just the wire types ONNX needs (varint, length-delimited, fixed32). */
export class ProtoWriter {
  private chunks: Uint8Array[] = [];
  private buf = new Uint8Array(256);
  private pos = 0;

  private ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    this.flush();
    if (n > this.buf.length) this.buf = new Uint8Array(Math.max(n, this.buf.length * 2));
  }

  private flush(): void {
    if (this.pos > 0) this.chunks.push(this.buf.slice(0, this.pos));
    this.pos = 0;
  }

  private varint(v: number | bigint): void {
    let x = BigInt.asUintN(64, BigInt(v));
    this.ensure(10);
    while (x >= 0x80n) {
      this.buf[this.pos++] = Number(x & 0x7fn) | 0x80;
      x >>= 7n;
    }
    this.buf[this.pos++] = Number(x);
  }

  private tag(field: number, wire: number): void {
    this.varint((field << 3) | wire);
  }

  int(field: number, v: number | bigint): this {
    this.tag(field, 0);
    this.varint(v);
    return this;
  }

  float(field: number, v: number): this {
    this.tag(field, 5);
    this.ensure(4);
    new DataView(this.buf.buffer, this.buf.byteOffset + this.pos, 4).setFloat32(0, v, true);
    this.pos += 4;
    return this;
  }

  bytes(field: number, data: Uint8Array): this {
    this.tag(field, 2);
    this.varint(data.length);
    this.flush();
    this.chunks.push(data);
    return this;
  }

  string(field: number, s: string): this {
    return this.bytes(field, new TextEncoder().encode(s));
  }

  message(field: number, w: ProtoWriter): this {
    return this.bytes(field, w.finish());
  }

  /** Packed repeated int64 (ONNX dims, ints attributes). */
  packedInts(field: number, values: ArrayLike<number | bigint>): this {
    const inner = new ProtoWriter();
    for (let i = 0; i < values.length; i++) inner.varint(values[i]!);
    return this.bytes(field, inner.finish());
  }

  finish(): Uint8Array {
    this.flush();
    const total = this.chunks.reduce((a, c) => a + c.length, 0);
    const out = new Uint8Array(total);
    let o = 0;
    for (const c of this.chunks) {
      out.set(c, o);
      o += c.length;
    }
    this.chunks = [out];
    return out;
  }
}
