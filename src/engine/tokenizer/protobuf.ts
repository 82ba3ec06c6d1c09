// A minimal protobuf wire-format reader: enough to walk SentencePiece's ModelProto without a dependency.

export type WireValue =
  { wire: 0; value: number } | { wire: 1; bytes: Uint8Array } | { wire: 2; bytes: Uint8Array } | { wire: 5; bytes: Uint8Array };

export class ProtoError extends Error {}

/** Calls `onField` for every field of one message, in order. Throws ProtoError on malformed input. */
export function readMessage(buf: Uint8Array, onField: (field: number, v: WireValue) => void): void {
  let pos = 0;
  // Plain numbers, not BigInt: the fields read here fit in 53 bits, and BigInt makes loading 10x slower.
  // Negative int32 values arrive as 10-byte varints; their low 32 bits are recovered in asInt.
  const varint = (): number => {
    let result = 0;
    let mul = 1;
    for (let i = 0; ; i++) {
      if (pos >= buf.length) throw new ProtoError('truncated varint');
      if (i >= 10) throw new ProtoError('varint too long');
      const b = buf[pos++]!;
      if (i < 5) result += (b & 0x7f) * mul; // bits beyond 35 only matter for negatives, kept via the low 32
      mul *= 128;
      if ((b & 0x80) === 0) return result;
    }
  };
  const take = (n: number): Uint8Array => {
    if (n < 0 || pos + n > buf.length) throw new ProtoError('truncated field');
    const out = buf.subarray(pos, pos + n);
    pos += n;
    return out;
  };
  while (pos < buf.length) {
    const key = varint();
    const field = key >>> 3;
    const wire = key & 7;
    if (field === 0) throw new ProtoError('field number 0');
    switch (wire) {
      case 0:
        onField(field, { wire: 0, value: varint() });
        break;
      case 1:
        onField(field, { wire: 1, bytes: take(8) });
        break;
      case 2:
        onField(field, { wire: 2, bytes: take(varint()) });
        break;
      case 5:
        onField(field, { wire: 5, bytes: take(4) });
        break;
      default:
        throw new ProtoError(`unsupported wire type ${wire}`);
    }
  }
}

const utf8 = new TextDecoder('utf-8');

export function asString(v: WireValue): string {
  if (v.wire !== 2) throw new ProtoError('expected a string field');
  return utf8.decode(v.bytes);
}
export function asBytes(v: WireValue): Uint8Array {
  if (v.wire !== 2) throw new ProtoError('expected a bytes field');
  return v.bytes;
}
export function asInt(v: WireValue): number {
  if (v.wire !== 0) throw new ProtoError('expected a varint field');
  return (v.value % 2 ** 32) | 0; // low 32 bits as a signed int32
}
export function asBool(v: WireValue): boolean {
  return asInt(v) !== 0;
}
export function asFloat(v: WireValue): number {
  if (v.wire !== 5) throw new ProtoError('expected a float field');
  return new DataView(v.bytes.buffer, v.bytes.byteOffset, 4).getFloat32(0, true);
}
