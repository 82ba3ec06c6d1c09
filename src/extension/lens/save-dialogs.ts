// What an export asks before it writes: where to save (VS Code's save dialog, opening in the first workspace
// folder with a name filled in) and, for PNG and SVG, the picture the view draws.
import { type ExplainResult, LensError } from '../../engine';
import type { ExportFormat, ExportMessage, FigureSize, HostToWebview, ImageRequests, WebviewToHost } from '../../shared/protocol/lens';
import type { MessageHandler } from '../../shared/messaging/message-handler';
import { defaultExportName, EXPORT_FILTERS } from './export-files';
import { askSavePath } from '../common/save-path';

/** How long the view has to send its picture before the export gives up (a hidden view never answers). */
const IMAGE_TIMEOUT_MS = 15000;

export function askExportPath(format: ExportFormat, result: ExplainResult, stem?: string): Promise<string | undefined> {
  return askSavePath(defaultExportName(result, format, stem), EXPORT_FILTERS[format], `Export ${format.toUpperCase()}`);
}

/** `stem`: another table's name (the Patching tab's grids); default the head ranking's. */
export function askRankingPath(format: 'json' | 'csv', stem = 'head-ranking'): Promise<string | undefined> {
  return askSavePath(
    `${stem}.${format}`,
    format === 'csv' ? { CSV: ['csv'] } : { JSON: ['json'] },
    `Export ranking as ${format.toUpperCase()}`,
  );
}

/** The view's current picture, through the panel's image channel; fails after a while if the view does not answer. */
export function askViewImage(
  images: MessageHandler<ImageRequests, void, HostToWebview, WebviewToHost>,
  format: 'png' | 'svg',
  size: FigureSize = {},
): Promise<ExportMessage> {
  const { id, reply } = images.start({ format, ...size }, undefined);
  return new Promise<ExportMessage>((resolve, reject) => {
    const timer = setTimeout(() => {
      images.reject(id, 'timed out');
      reject(new LensError(`Export ${format.toUpperCase()}: the view did not answer; show the DeBERTa Lens panel and try again.`));
    }, IMAGE_TIMEOUT_MS);
    reply.then(
      (m) => {
        clearTimeout(timer);
        resolve(m);
      },
      () => undefined, // only the timeout rejects it, and that has answered already
    );
  });
}
