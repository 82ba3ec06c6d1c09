// The head atlas's corpus: every `.txt` and `.md` file of a folder (recursively, in path order) or one file, each
// cut into paragraphs (blank-line separated) with their place in the file. Files are read one at a time when
// reached, so a folder of 100,000 files costs its list of names. A file that is not UTF-8 text (a NUL byte, or bytes
// that do not decode), unreadable or over the size bound is skipped with one line saying so.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { LensError } from '../../engine/errors';

export interface Paragraph {
  /** The file, relative to the corpus folder (or its name, for one file), with `/` separators. */
  file: string;
  text: string;
  /** Where the paragraph starts in the file's text (UTF-16 units). */
  offset: number;
}

/** Beyond any text file a corpus holds; a file over it is skipped, not read. */
export const MAX_CORPUS_FILE_BYTES = 64 * 2 ** 20;
const EXTENSIONS = new Set(['.txt', '.md']);

/** Whether the atlas reads a file of this name (.txt, .md, any case). */
export const isCorpusFileName = (name: string): boolean => EXTENSIONS.has(path.extname(name).toLowerCase());

/** The corpus's files in path order (relative names); `skipped` is told of folders it cannot read. */
export function corpusFiles(corpus: string, skipped: (line: string) => void): { root: string; files: string[] } {
  let st: fs.Stats;
  try {
    st = fs.statSync(corpus);
  } catch (e) {
    throw new LensError(
      `--corpus ${corpus}: ${(e as NodeJS.ErrnoException).code ?? String(e)}; give a folder or a .txt/.md file`,
      'not-found',
    );
  }
  if (st.isFile()) return { root: path.dirname(corpus), files: [path.basename(corpus)] };
  if (!st.isDirectory()) throw new LensError(`--corpus ${corpus} is neither a folder nor a file`, 'invalid-input');
  const files: string[] = [];
  const walk = (rel: string) => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(path.join(corpus, rel), { withFileTypes: true });
    } catch (e) {
      skipped(`skipped folder ${rel || '.'}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
      return;
    }
    for (const e of entries) {
      const name = rel ? `${rel}/${e.name}` : e.name;
      // Symbolic links are not followed: a link to a parent folder would never end.
      if (e.isDirectory()) walk(name);
      else if (e.isFile() && isCorpusFileName(e.name)) files.push(name);
    }
  };
  walk('');
  files.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  if (files.length === 0)
    throw new LensError(`--corpus ${corpus}: no .txt or .md file in it (folders searched recursively)`, 'invalid-input');
  return { root: corpus, files };
}

const decoder = new TextDecoder('utf-8', { fatal: true });

/** A file's text, or undefined (and one line to `skipped`) when it is not UTF-8 text or cannot be read. */
export function readCorpusFile(root: string, file: string, skipped: (line: string) => void): string | undefined {
  try {
    const full = path.join(root, file);
    const st = fs.statSync(full);
    if (!st.isFile()) return void skipped(`skipped ${file}: not a regular file`);
    if (st.size > MAX_CORPUS_FILE_BYTES)
      return void skipped(`skipped ${file}: ${st.size} bytes, over ${MAX_CORPUS_FILE_BYTES} for one file`);
    const bytes = fs.readFileSync(full);
    if (bytes.includes(0)) return void skipped(`skipped ${file}: binary (a NUL byte)`);
    return decoder.decode(bytes);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return void skipped(`skipped ${file}: ${code ?? 'not UTF-8 text'}`);
  }
}

/** The paragraphs of a text: runs of lines between blank lines (whitespace-only lines count as blank). */
export function paragraphs(file: string, text: string): Paragraph[] {
  const out: Paragraph[] = [];
  const blank = /(?:\r?\n[ \t]*){2,}/g;
  let start = 0;
  const push = (s: number, e: number) => {
    // Leading and trailing whitespace trimmed, offsets kept.
    while (s < e && /\s/.test(text[s]!)) s++;
    while (e > s && /\s/.test(text[e - 1]!)) e--;
    if (e > s) out.push({ file, text: text.slice(s, e), offset: s });
  };
  for (const m of text.matchAll(blank)) {
    push(start, m.index);
    start = m.index + m[0].length;
  }
  push(start, text.length);
  return out;
}
