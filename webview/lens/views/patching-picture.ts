// What the toolbar's figure export takes from the Patching tab: the grid of a causal trace or of the head terms
// with its labels, title and colour bar; for the flow, the graph's SVG (with a title) and, for PNG, a token ×
// layer map of the signed change each token's outgoing edges carry.
import type { PatchView } from '../../../src/shared/patching';
import { makeLut } from '../../common/colors';
import { themeKind } from '../../common/dom';
import type { Picture } from '../state/picture';
import { flowMinShown } from './patching-draw';
import { flowSvg } from './patching-flow';
import { flowLayout, gridFigure, restoredRange, traceTitle } from './patching-model';

const RESTORED = 'Colour: restored fraction (patched − corrupt) / (clean − corrupt); 0 = the corrupted run, 1 = the clean run';

export function gridPicture(v: PatchView): Picture | undefined {
  const f = gridFigure(v);
  if (!f) return undefined;
  const range = restoredRange([f.values]);
  return {
    canvas: document.createElement('canvas'),
    values: f.values,
    rows: f.rows,
    cols: f.cols,
    range,
    lut: makeLut('diverging', true, themeKind()),
    title: traceTitle(v),
    rowLabels: f.rowLabels,
    colLabels: f.colLabels,
    caption: RESTORED,
    axesNote:
      v.trace === 'resid'
        ? 'Rows: the state entering each layer (last: the final state), columns: tokens; each cell puts that one state back.'
        : 'Rows: layers, columns: heads of each term; each cell puts that head’s term back.',
  };
}

export function flowPicture(v: PatchView, out: HTMLElement): Picture | undefined {
  const g = v.grid;
  if (g.kind !== 'flow' || g.edges.length === 0) return undefined;
  const min = flowMinShown();
  const layout = flowLayout(g, v.layers, min);
  const values = new Float32Array(layout.rows.length * v.layers);
  for (const e of layout.edges) values[e.fromRow * v.layers + e.layer] = (values[e.fromRow * v.layers + e.layer] ?? 0) + e.change;
  const m = Math.max(1e-12, ...Array.from(values, Math.abs));
  const { svg } = flowSvg(layout, {
    labels: v.tokens,
    terms: v.terms,
    theme: themeKind(),
    width: Math.max(480, out.clientWidth || 720),
    title: traceTitle(v),
    note: `${layout.edges.length} of ${g.edges.length} edges whose knockout moves the target by more than ${g.threshold.toPrecision(3)}${min > 0 ? `, those ≥ ${Math.round(min * 100)}% of the strongest drawn` : ''} (${g.knockouts} knockouts).`,
  });
  return {
    canvas: document.createElement('canvas'),
    values,
    rows: layout.rows.length,
    cols: v.layers,
    range: { min: -m, max: m, signed: true },
    lut: makeLut('diverging', true, themeKind()),
    title: `${traceTitle(v)} · change carried by each token’s outgoing edges, per layer`,
    rowLabels: layout.rows.map((t) => `${t} ${v.tokens[t] ?? ''}`),
    colLabels: Array.from({ length: v.layers }, (_, l) => `L${l}`),
    caption: 'Colour: Σ over the token’s kept edges of (target after knocking the edge out − clean target)',
    axesNote: 'Rows: tokens with edges, columns: layers.',
    svg,
  };
}
