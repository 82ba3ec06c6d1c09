// The two DOM helpers every webview component uses.

export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Partial<Record<string, string>> = {},
  children: (Node | string)[] = [],
): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) if (v !== undefined) e.setAttribute(k, v);
  for (const c of children) e.append(c);
  return e;
}

export function $<T extends HTMLElement>(sel: string): T {
  const e = document.querySelector<T>(sel);
  if (!e) throw new Error(`missing ${sel}`);
  return e;
}

/** Which way the VS Code theme goes (the body carries vscode-light / vscode-dark / vscode-high-contrast*). */
export function themeKind(): 'light' | 'dark' {
  const c = document.body.classList;
  return c.contains('vscode-light') || c.contains('vscode-high-contrast-light')
    ? 'light'
    : c.contains('vscode-dark') || c.contains('vscode-high-contrast')
      ? 'dark'
      : 'light';
}

/**
 * Scrolls `box` (a scrolling container) so that `child` is inside it, moving nothing else: scrollIntoView
 * would also scroll the page, and the heatmap would move under a still pointer.
 */
export function revealWithin(box: HTMLElement, child: HTMLElement | null): void {
  if (!child) return;
  const b = box.getBoundingClientRect();
  const c = child.getBoundingClientRect();
  if (c.top < b.top) box.scrollTop -= b.top - c.top + 4;
  else if (c.bottom > b.bottom) box.scrollTop += c.bottom - b.bottom + 4;
}
