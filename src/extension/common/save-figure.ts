// A panel's figure export as the user sees it: the save dialog, the file written, one line saying where (or why not).
import * as path from 'node:path';
import * as vscode from 'vscode';
import { LensError } from '../../engine';
import { type ImagePayload, writeImageFile } from './image-file';
import { askSavePath } from './save-path';

/** Asks where, writes `image` there and says so; a file that cannot be written is one line. `what` prefixes the log. */
export async function saveFigure(
  image: ImagePayload & { format: 'png' | 'svg'; name: string },
  log: (line: string) => void,
  what: string,
): Promise<void> {
  try {
    const file = await askSavePath(
      image.name,
      image.format === 'png' ? { 'PNG image': ['png'] } : { 'SVG image': ['svg'] },
      `Export ${image.format.toUpperCase()}`,
    );
    if (!file) return;
    await writeImageFile(image.format, file, image);
    log(`${what}: exported ${file}`);
    void vscode.window.showInformationMessage(`DeBERTa Lens: exported ${path.basename(file)}`);
  } catch (e) {
    const why =
      e instanceof LensError
        ? e.message
        : `could not write the figure (${e instanceof Error ? e.message.split('\n')[0] : String(e)}); choose a writable folder`;
    void vscode.window.showErrorMessage(`DeBERTa Lens: ${why}`);
  }
}
