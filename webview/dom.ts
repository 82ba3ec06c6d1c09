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
  return c.contains('vscode-light') || c.contains('vscode-high-contrast-light') ? 'light' : c.contains('vscode-dark') || c.contains('vscode-high-contrast') ? 'dark' : 'light';
}
