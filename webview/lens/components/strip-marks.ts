// The decision on the token strip: a token classifier's entities underlined in their colours with the label over
// each span's first token, a question-answering head's answer outlined. A merged word shows its first piece's label.
import { type Decision, entityColour, entityOf, isOutsideLabel } from '../../../src/shared/decision';
import type { WordGroupInfo } from '../../../src/shared/protocol/lens';
import { stripTitle } from '../state/selectors';
import { $decision, $init, $merged } from '../state/store';

/** Marks the chips of `box` (pieces, or `groups`) with the decision on screen; clears old marks first. */
export function markStrip(box: HTMLElement | null, groups: WordGroupInfo[] | undefined): void {
  if (!box) return;
  for (const c of box.querySelectorAll<HTMLElement>('.tok.ent, .tok.answer')) {
    c.classList.remove('ent', 'answer');
    c.style.removeProperty('--ent');
    delete c.dataset.tag;
    delete c.dataset.entity;
  }
  for (const c of box.querySelectorAll<HTMLElement>('.tok')) c.title = stripTitle(Number(c.dataset.i));
  const d = $decision.get();
  const tokens = $init.get()?.tokens;
  if (!d || !tokens) return;
  const pieceOf = (row: number) => (groups ? groups[row]?.pieces[0] : row);
  if (d.task === 'token-classification') markEntities(box, d, pieceOf, (p) => tokens[p]?.special !== false);
  else if (d.task === 'question-answering' && d.answer) {
    const { startToken, endToken } = d.answer;
    for (const c of box.querySelectorAll<HTMLElement>('.tok')) {
      const p = pieceOf(Number(c.dataset.i));
      if (p !== undefined && p >= startToken && p <= endToken) c.classList.add('answer');
    }
  }
}

function markEntities(
  box: HTMLElement,
  d: Extract<Decision, { task: 'token-classification' }>,
  pieceOf: (row: number) => number | undefined,
  special: (p: number) => boolean,
): void {
  let before: string | undefined;
  for (const c of box.querySelectorAll<HTMLElement>('.tok')) {
    const p = pieceOf(Number(c.dataset.i));
    const t = p === undefined ? undefined : d.tokens.find((x) => x.position === p);
    const name = t ? (d.names[t.predicted] ?? '') : '';
    if (!t || p === undefined || special(p) || isOutsideLabel(name)) {
      before = undefined;
      continue;
    }
    const entity = entityOf(name);
    c.classList.add('ent');
    c.style.setProperty('--ent', entityColour(entity, d.names));
    c.dataset.entity = entity;
    // The label once per span: over its first token (a B- tag, or a change of entity, starts a span).
    if (entity !== before || /^[BSU][-_]/.test(name)) c.dataset.tag = entity;
    before = entity;
  }
  dropCrowdedTags(box);
}

/** A tag that would overprint the one before it on the same line is left out (the underline's colour still tells). */
function dropCrowdedTags(box: HTMLElement): void {
  let lastRight = -Infinity,
    lastTop = NaN;
  for (const c of box.querySelectorAll<HTMLElement>('.tok[data-tag]')) {
    const r = c.getBoundingClientRect();
    // The tag is 9-px text: about 6 px a character.
    const width = (c.dataset.tag?.length ?? 0) * 6 + 4;
    if (r.top === lastTop && r.left < lastRight) {
      delete c.dataset.tag;
      continue;
    }
    lastTop = r.top;
    lastRight = r.left + width;
  }
}

/** Keeps the strip's marks in step with the decision (it can arrive after the strip is drawn). */
export function followDecision(): void {
  $decision.listen(() => markStrip(document.getElementById('tokens'), $merged.get()));
}
