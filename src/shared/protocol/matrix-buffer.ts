// Matrices on the wire: float32 values in a bare ArrayBuffer, never an array of numbers. VS Code carries an
// ArrayBuffer inside a posted message as binary (a copy, not a transfer: the host's postMessage has no transfer
// list), so the sender copies exactly the values it means to send.

/** Copies a float32 view into a fresh, exactly-sized ArrayBuffer (a subarray's buffer is the whole tensor). */
export function toBuffer(values: Float32Array): ArrayBuffer {
  const copy = new Float32Array(values.length);
  copy.set(values);
  return copy.buffer;
}

/** Reads a float32 payload back, checking that its size is what the header promised. */
export function fromBuffer(buf: ArrayBuffer | ArrayBufferView, expectedLength: number): Float32Array {
  // Some transports hand typed arrays (or Node Buffers) instead of bare ArrayBuffers.
  const view = ArrayBuffer.isView(buf)
    ? new Float32Array(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength))
    : new Float32Array(buf);
  if (view.length !== expectedLength) {
    throw new RangeError(`payload has ${view.length} floats, expected ${expectedLength}`);
  }
  return view;
}
