// Export of the picture on screen as a figure (figure.ts): PNG or SVG with the title, whole-word axis labels, a
// colour bar and its range, at the chosen width and DPI; the whole-result formats are written by the host.
import type { ExportFormat, FigureSize } from '../../../src/shared/protocol/lens';
import { describeRange, lutFor } from '../../common/colors';
import { themeKind } from '../../common/dom';
import { figureSvg, mapFigure, type FigureSpec } from '../../common/figure';
import { figureCanvas } from '../../common/figure-canvas';
import { cleanLabel, wordLabels } from '../../common/figure-labels';
import { isAnalysis } from '../state/selectors';
import { $comparePicture, $picture } from '../state/picture';
import { $current, $init, $merged, $viewState } from '../state/store';
import { post } from './host';
import { reportError } from './status';

/** A single-column figure in most journals; 300 dpi is what print asks of a PNG. */
export const DEFAULT_FIGURE_SIZE: Required<FigureSize> = { widthCm: 8, dpi: 300 };
let lastSize: Required<FigureSize> = { ...DEFAULT_FIGURE_SIZE };

/** The size the next figure gets when none is given: the last one chosen in the panel. */
export function figureSize(): Required<FigureSize> {
  return lastSize;
}

export function exportTitle(f: ExportFormat): string {
  switch (f) {
    case 'png':
      return 'Export the current view as a PNG figure (title, word labels, colour bar)';
    case 'svg':
      return 'Export the current view as an SVG figure (vector text)';
    case 'npz':
      return 'Export the whole result (every layer and term) as .npz';
    case 'json':
      return 'Export the whole result as JSON';
    case 'html':
      return 'Export a self-contained HTML report';
  }
}

export class ViewExport {
  /** `withValues`: fetches the values of a heatmap on screen that came as a picture (a figure draws every cell). */
  constructor(private readonly withValues: () => Promise<void>) {}

  /** What is on screen as a figure: the analysis view's main map, or the heatmap. */
  private figure(size: Required<FigureSize>): FigureSpec | undefined {
    const state = $viewState.get();
    const current = $current.get();
    const init = $init.get();
    if (!state || !init) return undefined;
    const theme = themeKind();
    const words = wordLabels(init.text, init.tokens);
    const model = init.model.name;
    if (isAnalysis(state.view)) {
      const p = $picture.get();
      if (!p) return undefined;
      const labels = p.rows === init.tokens.length && p.cols === p.rows ? words : undefined;
      return {
        ...size,
        theme,
        values: p.values,
        rows: p.rows,
        cols: p.cols,
        range: p.range,
        lut: p.lut,
        title: `${model} · ${p.title}`,
        caption: p.caption ?? describeRange(p.range, 'values'),
        ...(p.axesNote === undefined ? {} : { axesNote: p.axesNote }),
        rowLabels: p.rowLabels ?? labels,
        colLabels: p.colLabels ?? labels,
      };
    }
    if (state.view === 'heads') {
      // Compare Heads: the side-by-side panes as one figure, on their one range.
      const c = $comparePicture.get();
      if (!c || c.layer !== state.layer || c.term !== state.term) return undefined;
      const labels = c.n === init.tokens.length ? words : undefined;
      return {
        ...size,
        theme,
        values: c.shown[0] ?? new Float32Array(0),
        rows: c.n,
        cols: c.n,
        range: c.range,
        lut: c.lut,
        title: `${model} · ${c.term} · layer ${c.layer} · heads ${c.heads.join(', ')}`,
        caption: `${describeRange(c.range, c.term)}; one range over the ${c.heads.length} heads`,
        panels: c.heads.map((h, k) => ({ values: c.shown[k] ?? new Float32Array(0), title: `head ${h}` })),
        // Up to three in a row; more wrap two to a row, so each map keeps a readable size.
        panelColumns: c.heads.length <= 3 ? c.heads.length : 2,
        rowLabels: labels,
        colLabels: labels,
      };
    }
    if (state.view !== 'heatmap' || !current?.shown) return undefined;
    const merged = $merged.get();
    const labels =
      merged && current.n === merged.length ? merged.map((g) => cleanLabel(g.text)) : current.n === init.tokens.length ? words : undefined;
    const head = state.headAgg ? `${state.headAgg} over heads` : `head ${state.head}`;
    return mapFigure({
      size,
      theme,
      values: current.shown,
      n: current.n,
      range: current.range,
      lut: lutFor(state.colorScale, current.range, theme),
      title: `${model} · ${state.term} · layer ${state.layer} · ${head}${merged ? ` · merged into ${state.merge ?? 'words'}` : ''}`,
      kind: state.term,
      labels,
    });
  }

  private imagePayload(format: 'png' | 'svg', size: Required<FigureSize>): { dataUrl?: string; svg?: string; name: string } {
    const spec = this.figure(size);
    if (!spec) throw new Error('nothing to export here: open the heatmap or an analysis view, or tick two heads in Compare Heads');
    const state = $viewState.get();
    const name = spec.panels
      ? `compare-L${state?.layer}-${[...(state?.compare ?? [])]
          .sort((a, b) => a - b)
          .map((h) => `H${h}`)
          .join('-')}`
      : `${state?.view}-L${state?.layer}-${state?.headAgg ?? `H${state?.head}`}`;
    const own = isAnalysis(state?.view ?? 'heatmap') ? $picture.get()?.figure?.(size) : undefined;
    if (own) return format === 'svg' ? { svg: own.svg(), name } : { dataUrl: own.canvas().toDataURL('image/png'), name };
    const drawing = isAnalysis(state?.view ?? 'heatmap') ? $picture.get()?.svg : undefined;
    if (format === 'svg') return { svg: drawing ?? figureSvg(spec), name };
    return { dataUrl: figureCanvas(spec).toDataURL('image/png'), name };
  }

  /** Sends the export to the host (`requestId`: the host's own Export command asked for it, maybe with a size). */
  send(format: ExportFormat, requestId?: number, size: FigureSize = {}): void {
    const current = $current.get();
    if ((format === 'png' || format === 'svg') && $viewState.get()?.view === 'heatmap' && current && !current.shown) {
      // A long input's map on screen is a pooled picture: the figure waits for every cell of it.
      void this.withValues().then(
        () => this.sendNow(format, requestId, size),
        (e: unknown) => {
          reportError(e);
          if (requestId !== undefined) post({ type: 'export', format, requestId });
        },
      );
      return;
    }
    this.sendNow(format, requestId, size);
  }

  private sendNow(format: ExportFormat, requestId?: number, size: FigureSize = {}): void {
    try {
      if (format === 'png' || format === 'svg') {
        const chosen = {
          widthCm: size.widthCm ?? lastSize.widthCm,
          dpi: size.dpi ?? lastSize.dpi,
        };
        if (requestId === undefined) lastSize = chosen;
        post({ type: 'export', format, requestId, ...this.imagePayload(format, chosen) });
      } else post({ type: 'export', format, requestId });
    } catch (e) {
      reportError(e);
      if (requestId !== undefined) post({ type: 'export', format, requestId });
    }
  }
}
