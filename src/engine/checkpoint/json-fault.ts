// Where JSON text stops being valid, as an offset. V8's JSON.parse errors quote the text around the fault and often
// give no position, and a message must never carry a file's content (json-file.ts), so the fault is located
// here instead: a small validator, iterative so that deep nesting cannot overflow the call stack.

const WS = new Set([' ', '\t', '\n', '\r']);
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
// eslint-disable-next-line no-control-regex -- JSON forbids raw control characters inside strings
const STRING = /"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/y;

/** The offset of the first character that makes `text` invalid JSON (text.length when it ends too early), or -1. */
export function jsonFaultOffset(text: string): number {
  let k = 0;
  const skip = () => {
    while (k < text.length && WS.has(text[k]!)) k++;
  };
  const match = (re: RegExp): boolean => {
    re.lastIndex = k;
    const m = re.exec(text);
    if (!m) return false;
    k += m[0].length;
    return true;
  };
  // Each open container: 'a' (array) or 'o' (object); `expect` is what may come next.
  const open: ('a' | 'o')[] = [];
  let expect: 'value' | 'key' | 'after' = 'value';
  let first = true; // right after '[' or '{', where ']' or '}' may close at once
  for (;;) {
    skip();
    if (k >= text.length) return open.length === 0 && expect === 'after' ? -1 : k;
    const c = text[k]!;
    if (expect === 'after') {
      const top = open[open.length - 1];
      if (top === undefined) return k; // text after the single top-level value
      if (c === ',') {
        k++;
        expect = top === 'o' ? 'key' : 'value';
        first = false;
      } else if ((c === ']' && top === 'a') || (c === '}' && top === 'o')) {
        k++;
        open.pop();
      } else return k;
      continue;
    }
    if (first && ((c === ']' && open[open.length - 1] === 'a') || (c === '}' && open[open.length - 1] === 'o'))) {
      k++;
      open.pop();
      expect = 'after';
      first = false;
      continue;
    }
    first = false;
    if (expect === 'key') {
      if (!match(STRING)) return k;
      skip();
      if (text[k] !== ':') return k;
      k++;
      expect = 'value';
      continue;
    }
    if (c === '[' || c === '{') {
      open.push(c === '[' ? 'a' : 'o');
      k++;
      expect = c === '[' ? 'value' : 'key';
      first = true;
      continue;
    }
    if (c === '"' ? match(STRING) : c === '-' || (c >= '0' && c <= '9') ? match(NUMBER) : literal()) {
      expect = 'after';
      continue;
    }
    return k;
  }
  function literal(): boolean {
    for (const w of ['true', 'false', 'null']) {
      if (text.startsWith(w, k)) {
        k += w.length;
        return true;
      }
    }
    return false;
  }
}
