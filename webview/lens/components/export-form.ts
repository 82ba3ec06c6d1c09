// Export choices in the panel, before any save dialog: for the HTML report the layers and kinds to embed with
// the size they come to (and the ceiling), for .npz and JSON the size of the whole result.
import { formatBytes, HTML_REPORT_MAX_BYTES, reportDataBytes } from '../../../src/shared/export-size';
import { TERM_NAMES, type MatrixKind } from '../../../src/shared/kinds';
import type { ExportFormat, ModelShape } from '../../../src/shared/protocol/lens';
import { el } from '../../common/dom';

export interface ExportChoice {
  format: ExportFormat;
  layers?: number[];
  kinds?: MatrixKind[];
}

/** JSON writes each float as text: about 2.5 × its 4 bytes (sign, digits, exponent, comma). */
const JSON_PER_FLOAT = 10;

/**
 * Fills `box` with the form for `format`; `save` gets the choice. Defaults: the layer on screen and the term
 * on screen plus probs, which always fit.
 */
export function showExportForm(
  box: HTMLElement,
  format: 'npz' | 'json' | 'html',
  model: ModelShape,
  n: number,
  current: { layer: number; term: MatrixKind },
  save: (c: ExportChoice) => void,
): void {
  const kinds: MatrixKind[] = [...TERM_NAMES.filter((t) => model.terms.includes(t) || t === 'c2c'), 'probs'];
  const size = el('span', { id: 'export-size', class: 'meta' });
  const saveBtn = el('button', { id: 'export-save', type: 'button' }, ['Save…']);
  const cancel = el('button', { id: 'export-cancel', type: 'button' }, ['Cancel']);
  cancel.addEventListener('click', () => {
    box.hidden = true;
    box.replaceChildren();
  });
  const checks = (name: string, values: (number | string)[], label: (v: number | string) => string, on: (v: number | string) => boolean) =>
    el('span', { class: 'group', role: 'group', 'aria-label': name }, [
      `${name}: `,
      ...values.map((v) => {
        const c = el('input', { type: 'checkbox', class: `export-${name}`, value: String(v), 'aria-label': `${name} ${label(v)}` });
        c.checked = on(v);
        return el('label', {}, [c, label(v)]);
      }),
    ]);
  const picked = (cls: string) => [...box.querySelectorAll<HTMLInputElement>(`input.${cls}:checked`)].map((c) => c.value);
  let body: HTMLElement[] = [];
  let choice = (): ExportChoice => ({ format });
  if (format === 'html') {
    body = [
      checks(
        'layers',
        model.layers,
        (l) => `L${l}`,
        (l) => l === current.layer,
      ),
      checks(
        'kinds',
        kinds,
        (k) => String(k),
        (k) => k === current.term || k === 'probs',
      ),
    ];
    choice = () => ({ format, layers: picked('export-layers').map(Number), kinds: picked('export-kinds') as MatrixKind[] });
  }
  const update = () => {
    const c = choice();
    if (format === 'html') {
      const bytes = reportDataBytes(c.layers?.length ?? 0, c.kinds?.length ?? 0, model.heads, n);
      const over = bytes > HTML_REPORT_MAX_BYTES;
      const none = !c.layers?.length || !c.kinds?.length;
      size.textContent = none
        ? 'pick at least one layer and one kind'
        : `≈ ${formatBytes(bytes)} of matrices${over ? ` — over the ${formatBytes(HTML_REPORT_MAX_BYTES)} a page can hold: pick fewer, or export .npz` : ` (limit ${formatBytes(HTML_REPORT_MAX_BYTES)})`}`;
      saveBtn.disabled = none || over;
    } else {
      const floats = reportDataBytes(model.layers.length, kinds.length, model.heads, n) / 4;
      size.textContent = `whole result, every layer and kind: ≈ ${formatBytes(format === 'npz' ? floats * 4 : floats * JSON_PER_FLOAT)}`;
    }
  };
  box.addEventListener('change', update);
  saveBtn.addEventListener('click', () => {
    box.hidden = true;
    save(choice());
  });
  box.replaceChildren(
    el('strong', {}, [`Export ${format === 'html' ? 'HTML report' : format.toUpperCase()}`]),
    ...body,
    size,
    saveBtn,
    cancel,
  );
  box.hidden = false;
  update();
}

/**
 * The figure form for PNG and SVG: width in centimetres and (PNG) DPI, then Save. Values out of range are
 * brought back into it (2–100 cm, 72–1200 dpi).
 */
export function showFigureForm(
  box: HTMLElement,
  format: 'png' | 'svg',
  size: { widthCm: number; dpi: number },
  save: (size: { widthCm: number; dpi: number }) => void,
): void {
  const width = el('input', { id: 'export-width-cm', type: 'number', min: '2', max: '100', step: '0.5', value: String(size.widthCm) });
  const dpi = el('input', { id: 'export-dpi', type: 'number', min: '72', max: '1200', step: '50', value: String(size.dpi) });
  const saveBtn = el('button', { id: 'export-save', type: 'button' }, ['Save…']);
  const cancel = el('button', { id: 'export-cancel', type: 'button' }, ['Cancel']);
  const hide = () => {
    box.hidden = true;
    box.replaceChildren();
  };
  cancel.addEventListener('click', hide);
  const clamp = (v: number, lo: number, hi: number, d: number) => (Number.isFinite(v) ? Math.min(hi, Math.max(lo, v)) : d);
  saveBtn.addEventListener('click', () => {
    const chosen = { widthCm: clamp(Number(width.value), 2, 100, size.widthCm), dpi: clamp(Number(dpi.value), 72, 1200, size.dpi) };
    hide();
    save(chosen);
  });
  box.replaceChildren(
    el('strong', {}, [`Export ${format.toUpperCase()} figure`]),
    el('label', {}, ['width ', width, ' cm']),
    ...(format === 'png' ? [el('label', {}, [dpi, ' dpi'])] : []),
    el('span', { class: 'meta' }, ['title, word labels (≥ 7 pt, thinned to fit) and colour bar included']),
    saveBtn,
    cancel,
  );
  box.hidden = false;
}
