// A legend's colour ramp: the 256 colours of a lookup table, one pixel each, stretched by CSS.

export function paintRamp(bar: HTMLCanvasElement, lut: Uint8ClampedArray): void {
  const ctx = bar.getContext('2d');
  if (!ctx) return;
  const img = ctx.createImageData(256, 1);
  img.data.set(lut);
  ctx.putImageData(img, 0, 0);
}
