// Writes exports of the current result to a file: the whole result as .npz, JSON or a self-contained HTML
// report, or the view's image (PNG bytes from a canvas data URL, SVG text). No `vscode` here, so the unit tests
// write real files; the panel picks the path (save dialog, or the command's target argument).
import * as fs from 'node:fs';
import { type ExplainResult, LensError } from '../../engine';
import { jsonChunks, toHtmlReport, writeChunks, writeNpzFile, type HtmlReportOptions } from '../../analysis';
import type { ExportFormat } from '../../shared/protocol/lens';
import { type ImagePayload, writeImageFile } from '../common/image-file';

export const EXPORT_FILTERS: Record<ExportFormat, Record<string, string[]>> = {
  png: { 'PNG image': ['png'] },
  svg: { 'SVG image': ['svg'] },
  npz: { 'NumPy archive': ['npz'] },
  json: { JSON: ['json'] },
  html: { 'HTML report': ['html'] },
};

/** A file name for the save dialog: model name, token count, optional view stem, the format's extension. */
export function defaultExportName(result: ExplainResult, format: ExportFormat, stem?: string): string {
  const base = `${result.model.name}-${result.n}tok${stem ? `-${stem}` : ''}`.replace(/[^\w.-]+/g, '-');
  return `${base}.${format}`;
}

/**
 * Writes `format` of `result` (or of the view's image) to `file`. Throws LensError naming the file when it
 * cannot be written or the image payload is missing.
 */
export async function writeExport(
  result: ExplainResult,
  format: ExportFormat,
  file: string,
  image: ImagePayload = {},
  report: HtmlReportOptions = {},
  /** JSON: what the panel knows of the result besides its matrices (the decision, the occlusion). */
  extra: Record<string, unknown> = {},
): Promise<void> {
  try {
    switch (format) {
      case 'npz':
        await writeNpzFile(result, file);
        return;
      case 'json':
        await writeChunks(file, jsonChunks(result, extra));
        return;
      case 'html':
        await fs.promises.writeFile(file, await toHtmlReport(result, report), 'utf8');
        return;
      case 'png':
      case 'svg':
        await writeImageFile(format, file, image);
        return;
    }
  } catch (e) {
    if (e instanceof LensError) throw e;
    const why = e instanceof Error ? e.message.split('\n')[0] : String(e);
    throw new LensError(`export: could not write ${file} (${why}); choose a writable folder`);
  }
}
