// Export of the picture on screen: PNG (the canvas scaled up with hard pixel edges) or SVG (cell rectangles
// from the same values and colours); the whole-result formats are written by the host.
import type { ExportFormat } from '../../../src/shared/protocol/lens';
import { makeLut } from '../../common/colors';
import { themeKind } from '../../common/dom';
import type { Heatmap } from '../../common/heatmap';
import { heatmapSvg } from '../../common/heatmap-svg';
import { isAnalysis } from '../state/selectors';
import { $picture } from '../state/picture';
import { $current, $init, $merged, $viewState } from '../state/store';
import { post } from './host';
import { reportError } from './status';

export function exportTitle(f: ExportFormat): string {
  switch (f) {
    case 'png':
      return 'Export the current view as a PNG image';
    case 'svg':
      return 'Export the current heatmap as an SVG image';
    case 'npz':
      return 'Export the whole result (every layer and term) as .npz';
    case 'json':
      return 'Export the whole result as JSON';
    case 'html':
      return 'Export a self-contained HTML report';
  }
}

export class ViewExport {
  constructor(private readonly heatmap: Heatmap) {}

  /** The picture on screen: the analysis view's main canvas, or the heatmap. */
  private picture() {
    const state = $viewState.get();
    const current = $current.get();
    if (!state || !$init.get()) return undefined;
    if (isAnalysis(state.view)) return $picture.get();
    if (state.view === 'heatmap' && current) {
      const lut = makeLut(state.colorScale, current.range.signed, themeKind());
      const head = state.headAgg ?? `head ${state.head}`;
      return {
        canvas: this.heatmap.bitmap,
        values: current.shown,
        rows: current.n,
        cols: current.n,
        range: current.range,
        lut,
        title: `${state.term}, layer ${state.layer}, ${head}`,
      };
    }
    return undefined;
  }

  private imagePayload(format: 'png' | 'svg'): { dataUrl?: string; svg?: string; name: string } {
    const p = this.picture();
    if (!p) throw new Error('nothing to export here: open the heatmap or an analysis view');
    const state = $viewState.get();
    const init = $init.get();
    const merged = $merged.get();
    const name = `${state?.view}-L${state?.layer}-${state?.headAgg ?? `H${state?.head}`}`;
    if (format === 'svg') {
      const labels =
        merged && p.rows === merged.length
          ? merged.map((g) => g.text)
          : init && p.rows === init.tokens.length
            ? init.tokens.map((t) => t.text)
            : undefined;
      return {
        svg: heatmapSvg(p.values, p.rows, p.cols, p.range, p.lut, {
          title: p.title,
          rowLabels: labels,
          colLabels: p.cols === p.rows ? labels : undefined,
        }),
        name,
      };
    }
    const scale = Math.max(1, Math.floor(1024 / Math.max(p.canvas.width, p.canvas.height)));
    const out = document.createElement('canvas');
    out.width = p.canvas.width * scale;
    out.height = p.canvas.height * scale;
    const ctx = out.getContext('2d');
    if (!ctx) throw new Error('this view cannot draw a PNG (no 2D canvas)');
    ctx.imageSmoothingEnabled = false;
    ctx.drawImage(p.canvas, 0, 0, out.width, out.height);
    return { dataUrl: out.toDataURL('image/png'), name };
  }

  /** Sends the export to the host (`requestId`: the host's own Export command asked for it). */
  send(format: ExportFormat, requestId?: number): void {
    try {
      if (format === 'png' || format === 'svg') post({ type: 'export', format, requestId, ...this.imagePayload(format) });
      else post({ type: 'export', format, requestId });
    } catch (e) {
      reportError(e);
      if (requestId !== undefined) post({ type: 'export', format, requestId });
    }
  }
}
