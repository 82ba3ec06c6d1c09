// Sizes of exports, known before anything is written: the panel shows them next to the choices, the host
// refuses an HTML report over the ceiling before a save dialog opens.

/** The ceiling on the matrices one HTML page embeds (float32 bytes): larger pages do not open smoothly. */
export const HTML_REPORT_MAX_BYTES = 64 * 2 ** 20;

/** Float32 bytes of `layerCount` × `kindCount` matrices of `heads` × n × n. */
export function reportDataBytes(layerCount: number, kindCount: number, heads: number, n: number): number {
  return layerCount * kindCount * heads * n * n * 4;
}

/** "12.5 MiB", "840 KiB": the one byte formatter, here beside the sizes it shows. */
export { formatBytes } from './format';
