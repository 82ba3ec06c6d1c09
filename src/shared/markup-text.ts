// Token text in exported documents. Tokens come from the model's vocabulary and the user's text, so they may
// hold anything: the bundled model has pieces with U+FFFE and NUL, which XML 1.0 forbids even as character
// references (an SVG holding them is not well-formed, and strict readers reject the whole file); a CSV cell that
// starts with "=" or "+" is run as a formula by spreadsheets.

// Outside XML 1.0's Char production: C0 controls but tab, LF and CR; lone surrogates; U+FFFE and U+FFFF.
const NOT_XML_CHAR =
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** A character XML cannot carry, shown visibly: a C0 control as its Control Picture (NUL → ␀), others as U+FFFD. */
function visible(c: string): string {
  const code = c.charCodeAt(0);
  return code < 0x20 ? String.fromCharCode(0x2400 + code) : '\ufffd';
}

/** Text for XML or HTML content and attribute values: markup characters escaped, forbidden characters replaced. */
export function markupText(s: string): string {
  return s.replace(NOT_XML_CHAR, visible).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** A quoted CSV cell; text a spreadsheet would run as a formula (=, +, -, @, tab, CR first) gets a leading '. */
export function csvCell(s: string): string {
  const safe = /^[=+\-@\t\r]/.test(s) ? `'${s}` : s;
  return `"${safe.replace(/"/g, '""')}"`;
}

/** `s` as literal text inside Markdown (an editor hover): every character Markdown would read as syntax escaped. */
export function escapeMarkdown(s: string): string {
  return s.replace(/[\\`*_{}[\]()#+\-.!|<>]/g, (c) => `\\${c}`);
}
