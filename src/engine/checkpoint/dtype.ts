import type { DType } from '../types';

/** Bytes per element of the float dtypes the engine reads. */
export const DTYPE_BYTES: Record<DType, number> = { float32: 4, float16: 2, bfloat16: 2 };

/** safetensors dtype codes → engine dtype; anything else is not a readable weight. */
export const SAFETENSORS_DTYPES: Record<string, DType> = { F32: 'float32', F16: 'float16', BF16: 'bfloat16' };

/** safetensors codes of non-float tensors (position_ids-style buffers): kept out of the weights, not fatal. */
export const SAFETENSORS_INTEGER_DTYPES: Record<string, number> = {
  I64: 8,
  U64: 8,
  I32: 4,
  U32: 4,
  I16: 2,
  U16: 2,
  I8: 1,
  U8: 1,
  BOOL: 1,
};

export function elementCount(shape: number[]): number {
  let n = 1;
  for (const s of shape) n *= s;
  return n;
}

/** A shape for messages: `[3, 4]`, or the first dimensions and the rank when there are many. */
export function shapeText(shape: readonly number[]): string {
  if (shape.length <= 8) return `[${shape.join(', ')}]`;
  return `[${shape.slice(0, 6).join(', ')}, … ${shape.length} dimensions]`;
}
