// Writes a view's picture to the file the user chose: PNG bytes from a canvas data URL, or SVG text. Both panels
// (the lens and Compare Models) export through here. No `vscode`, so the unit tests write real files.
import * as fs from 'node:fs';
import { LensError } from '../../engine';

/** What an image export carries from the view. */
export interface ImagePayload {
  dataUrl?: string;
  svg?: string;
}

/** PNG bytes from a `data:image/png;base64,…` URL; anything else is refused. */
export function decodePngDataUrl(dataUrl: string): Uint8Array {
  const b64 = /^data:image\/png;base64,([A-Za-z0-9+/=]+)$/.exec(dataUrl)?.[1];
  if (b64 === undefined)
    throw new LensError('export: the view sent no PNG image (expected a data:image/png;base64 URL); redraw the view and export again');
  const bytes = Buffer.from(b64, 'base64');
  // PNG signature: a canvas that failed to encode must not be written as a broken file.
  if (bytes.length < 8 || bytes.readUInt32BE(0) !== 0x89504e47)
    throw new LensError('export: the view sent bytes that are not a PNG image; export again');
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** Writes the PNG or SVG of `image` to `file`; LensError when the view sent none (a file is written only whole). */
export async function writeImageFile(format: 'png' | 'svg', file: string, image: ImagePayload): Promise<void> {
  if (format === 'png') {
    if (!image.dataUrl) throw new LensError('export: the view sent no PNG image; open a view with a heatmap and export again');
    await fs.promises.writeFile(file, decodePngDataUrl(image.dataUrl));
    return;
  }
  if (!image.svg || !image.svg.startsWith('<svg'))
    throw new LensError('export: the view sent no SVG image; open a view with a heatmap and export again');
  await fs.promises.writeFile(file, image.svg, 'utf8');
}
