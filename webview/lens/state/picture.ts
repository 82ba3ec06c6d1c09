// The analysis view's picture, an atom beside the store's: what export reads from the view on screen. Apart from
// store.ts because it holds a canvas, and store.ts also compiles under node (the store's unit test) without the DOM.
import { atom, keepMount } from 'nanostores';
import type { MatrixKind } from '../../../src/shared/kinds';
import type { Range } from '../../../src/shared/value-range';

/** The view's main canvas and the values and colours it shows. */
export interface Picture {
  canvas: HTMLCanvasElement;
  values: Float32Array;
  rows: number;
  cols: number;
  range: Range;
  lut: Uint8ClampedArray;
  title: string;
  /** Axis labels and legend line when the picture is not a token × token map (the Patching tab's grids). */
  rowLabels?: readonly string[];
  colLabels?: readonly string[];
  caption?: string;
  /** The figure's sentence about its axes (figure.ts FigureSpec.axesNote). */
  axesNote?: string;
  /** A drawing that is not a matrix (the flow graph): the SVG export writes it as it is. */
  svg?: string;
  /** A view that is not a matrix and draws its own figure at a size (the Line view: words and lines). */
  figure?: (size: { widthCm: number; dpi: number }) => { svg: () => string; canvas: () => HTMLCanvasElement };
}

/** Undefined while a view draws, and for views with nothing to export. */
export const $picture = atom<Picture | undefined>(undefined);
keepMount($picture);

/** Compare Heads' side-by-side panes as drawn (values as shown, one range over them): the figure export's panels. */
export interface ComparePicture {
  layer: number;
  term: MatrixKind;
  heads: number[];
  /** Each head's n × n values as the panes show them. */
  shown: Float32Array[];
  n: number;
  range: Range;
  lut: Uint8ClampedArray;
}

/** Undefined unless two or more heads are side by side. */
export const $comparePicture = atom<ComparePicture | undefined>(undefined);
keepMount($comparePicture);
