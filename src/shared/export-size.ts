// Sizes of exports, known before anything is written: the panel shows them next to the choices, the host
// refuses an HTML report over the ceiling before a save dialog opens.

/** The ceiling on the matrices one HTML page embeds (float32 bytes): larger pages do not open smoothly. */
export const HTML_REPORT_MAX_BYTES = 64 * 2 ** 20;

/** Float32 bytes of `layerCount` × `kindCount` matrices of `heads` × n × n. */
export function reportDataBytes(layerCount: number, kindCount: number, heads: number, n: number): number {
  return layerCount * kindCount * heads * n * n * 4;
}

/** "12.5 MiB", "840 KiB". */
export function formatBytes(b: number): string {
  return b >= 2 ** 20 ? `${(b / 2 ** 20).toFixed(b >= 10 * 2 ** 20 ? 0 : 1)} MiB` : `${Math.max(1, Math.round(b / 1024))} KiB`;
}
