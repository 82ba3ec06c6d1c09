// Every repository path the docs name exists: in backticks (`src/engine/index.ts`, or a path inside a command
// such as `node test/e2e/integration.mjs`) and in layout blocks (a fenced tree of folders and files with a
// description each). A doc that names a moved or deleted file fails here, with the doc and the line.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { REPO_ROOT } from './helpers';

/** The docs checked: the ones a contributor reads for where things are (not CHANGELOG.md, which is history). */
function docFiles(): string[] {
  const docs = fs
    .readdirSync(path.join(REPO_ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`);
  const toolReadmes = walk(path.join(REPO_ROOT, 'tools'))
    .filter((f) => path.basename(f) === 'README.md')
    .map((f) => path.relative(REPO_ROOT, f).split(path.sep).join('/'));
  return ['README.md', 'CONTRIBUTING.md', ...docs, ...toolReadmes];
}

/**
 * Names that look like paths but are not files of this repository, each with the reason. A string is one
 * name; a pattern covers a family. Each entry must still be needed (the last test).
 */
const NOT_REPO_PATHS: { name: string | RegExp; why: string }[] = [
  { name: /^(microsoft|huggingface|evalstate|qubvel)\/[\w.-]+$/, why: 'a GitHub or Hugging Face repository id' },
  { name: /^src\/transformers\//, why: 'a file of Hugging Face transformers, cited by docs/deberta-spec.md' },
  { name: /^configuration_deberta(_v2)?\.py$/, why: 'a file of Hugging Face transformers, cited by docs/deberta-spec.md' },
  { name: 'apps/models/masked_language_model.py', why: 'a file of microsoft/DeBERTa, cited by docs/deberta-spec.md' },
  { name: /^deberta_(base|xlarge)\.json$/, why: 'a configuration in microsoft/DeBERTa, cited by docs/deberta-spec.md' },
  { name: 'bench-results/bench.json', why: 'written by `npm run bench` (git-ignored output)' },
  { name: 'test-results/e2e/compare-bench.json', why: 'written by the E2E compare benchmark (git-ignored output)' },
  { name: /^(positions|layer)\.onnx$/, why: 'a graph the engine writes into its cache folder' },
  { name: /^(pytorch_model\.bin|tokenizer\.json)$/, why: 'a checkpoint file name the engine reads, not a file here' },
  { name: /^tools\/train-default-model\/work\//, why: "the training run's git-ignored working folder" },
];

function allowed(name: string): boolean {
  return NOT_REPO_PATHS.some((a) => (typeof a.name === 'string' ? a.name === name : a.name.test(name)));
}

/** Extensions that make a name without a slash a file name. */
const EXTENSIONS = [
  'ts',
  'mts',
  'cts',
  'js',
  'mjs',
  'cjs',
  'json',
  'md',
  'py',
  'sh',
  'css',
  'html',
  'png',
  'svg',
  'onnx',
  'bin',
  'safetensors',
  'model',
  'txt',
  'yml',
  'yaml',
  'vsix',
];
const HAS_EXTENSION = new RegExp(`\\.(${EXTENSIONS.join('|')})$`);
/** Folders never searched for files: dependencies, build output, downloaded test browsers. */
const SKIP_DIRS = new Set([
  '.git',
  'node_modules',
  'out',
  'dist',
  'test-results',
  'bench-results',
  '.vscode-test',
  '.cache',
  'code-server',
]);

function walk(dir: string, out: string[] = []): string[] {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    if (e.isDirectory()) {
      if (!SKIP_DIRS.has(e.name)) walk(path.join(dir, e.name), out);
    } else out.push(path.join(dir, e.name));
  }
  return out;
}

export interface Named {
  doc: string;
  line: number;
  name: string;
}

/**
 * The candidate path in one token, or undefined when the token is not a path: URLs, flags, `VAR=value`,
 * absolute and home paths, globs, `<placeholders>`, CAPITAL placeholders (DIR/config.json), bare extensions
 * (`.npz`) and arithmetic (non-ASCII, parentheses, `c2p/s`). `out/X.js` names the compiled `X.ts`.
 */
export function pathOf(token: string): string | undefined {
  const t = token.replace(/^[("'[]+/, '').replace(/[)"',.:;\]]+$/, '');
  if (!/^[\w.@-]/.test(t) || t.startsWith('-') || t.includes('://') || t.includes('=')) return undefined;
  if (/[<>*{}$|()[\]]/.test(t) || /[^\x21-\x7e]/.test(t) || /\/\w$/.test(t)) return undefined;
  if (/^\.[a-z0-9]+$/.test(t)) return undefined;
  const inner = t.replace(/\/$/, '');
  if (!t.includes('/') && !HAS_EXTENSION.test(t)) return undefined;
  if (inner.split('/').some((seg) => /^[A-Z][A-Z_]*$/.test(seg))) return undefined;
  if (t.startsWith('dist/')) return undefined; // a bundle name, made by the build
  if (t.startsWith('out/')) return t.slice(4).replace(/\.js$/, '.ts');
  return t;
}

/** Names in `backticks`, token by token (a span may be a command with several paths). */
function backticked(doc: string, text: string): Named[] {
  const found: Named[] = [];
  text.split('\n').forEach((lineText, k) => {
    for (const m of lineText.matchAll(/`([^`]+)`/g)) {
      for (const token of (m[1] ?? '').split(/\s+/)) {
        const name = pathOf(token);
        if (name !== undefined) found.push({ doc, line: k + 1, name });
      }
    }
  });
  return found;
}

/** Fenced blocks: the language after the opening fence ('' for none) and the 0-based line range inside. */
function fences(lines: readonly string[]): { lang: string; start: number; end: number }[] {
  const blocks: { lang: string; start: number; end: number }[] = [];
  for (let k = 0; k < lines.length; k++) {
    const open = /^```(.*)$/.exec(lines[k] ?? '');
    if (!open) continue;
    let end = k + 1;
    while (end < lines.length && !(lines[end] ?? '').startsWith('```')) end++;
    blocks.push({ lang: (open[1] ?? '').trim(), start: k + 1, end });
    k = end;
  }
  return blocks;
}

/**
 * Names in layout blocks: fenced blocks without a language whose first line is a folder at the margin
 * (`src/` or `src/engine/   what it holds`). An entry is a path-like first token at an indent of at most 12;
 * indentation nests it under the folder above. Deeper lines continue a description.
 */
function layouts(doc: string, text: string): Named[] {
  const found: Named[] = [];
  const lines = text.split('\n');
  for (const { lang, start, end } of fences(lines)) {
    if (lang === '' && /^\S+\/(\s{2,}|$)/.test(lines[start] ?? '')) {
      const stack: { indent: number; dir: string }[] = [];
      for (let j = start; j < end; j++) {
        const m = /^( *)(\S+)( {2,}.*)?$/.exec(lines[j] ?? '');
        const indent = m?.[1]?.length ?? 0,
          token = m?.[2] ?? '';
        if (!m || indent > 12 || pathOf(token) === undefined) continue;
        while (stack.length > 0 && (stack[stack.length - 1]?.indent ?? 0) >= indent) stack.pop();
        const name = `${stack[stack.length - 1]?.dir ?? ''}${token}`;
        found.push({ doc, line: j + 1, name });
        if (token.endsWith('/')) stack.push({ indent, dir: name });
      }
    }
  }
  return found;
}

/** What a doc names, `./` and `../` resolved against the doc's folder; names outside the repository dropped. */
export function namedPaths(doc: string, text: string): Named[] {
  const dir = path.posix.dirname(doc);
  return [...backticked(doc, text), ...layouts(doc, text)].flatMap((n) => {
    if (!n.name.startsWith('./') && !n.name.startsWith('../')) return [n];
    const name = path.posix.join(dir, n.name) + (n.name.endsWith('/') ? '/' : '');
    return name.startsWith('../') ? [] : [{ ...n, name }];
  });
}

/**
 * Whether a name is in the tree: exactly, from the root, when its first part is a top-level entry (`src/…`,
 * `tools/…`); else as the tail of some path (`state/actions.ts`, `safetensors.ts` named next to its folder).
 */
export function exists(name: string, files: readonly string[]): boolean {
  const inner = name.replace(/\/$/, '');
  const isDir = name.endsWith('/');
  const under = (p: string) => files.some((f) => f.startsWith(`${p}/`));
  const top = `/${inner.split('/')[0] ?? ''}`;
  if (files.includes(top) || under(top)) return isDir ? under(`/${inner}`) : files.includes(`/${inner}`) || under(`/${inner}`);
  const tail = `/${inner}`;
  return files.some((f) => (isDir ? f.includes(`${tail}/`) : f.endsWith(tail)));
}

/** A name counts from the root and, in a doc below the root (a tool's README), from the doc's folder too. */
function readings(n: Named): string[] {
  const dir = path.posix.dirname(n.doc);
  return dir === '.' ? [n.name] : [n.name, `${dir}/${n.name}`];
}

function missing(named: readonly Named[], files: readonly string[]): string[] {
  return named.filter((n) => !readings(n).some((name) => allowed(name) || exists(name, files))).map((n) => `${n.doc}:${n.line}: ${n.name}`);
}

function repoFiles(): string[] {
  return walk(REPO_ROOT).map((f) => `/${path.relative(REPO_ROOT, f).split(path.sep).join('/')}`);
}

test('the path extraction finds what a doc names and leaves commands, placeholders and URLs alone', () => {
  const doc = [
    'Run `node --test out/test/unit/helpers.test.js` or `bash test/unit/gone.sh`; see `test/unit/helpers.ts`,',
    '`helpers.ts`, `nowhere-at-all.ts`, `unit/helpers.ts`, `test/unit/`, `test/nope/`.',
    'Not paths: `https://example.com/a.ts`, `--cache-dir DIR`, `DIR/config.json`, `<name>.test.js`, `*.ts`, `.npz`,',
    '`../shared/x.md`, `FOO=bar.json`, `probs = softmax(x / scale)`, `/usr/bin/python3`, `dist/cli.js`.',
    '',
    '```',
    'test/               tests',
    '  unit/             node:test',
    '    helpers.ts      shared checks',
    '    missing.ts      a file that is not there',
    '                    a description that goes on (not-a-path.ts)',
    '  suite/',
    'tools/',
    '```',
  ].join('\n');
  const named = namedPaths('DOC.md', doc);
  assert.deepEqual(
    named.map((n) => n.name),
    [
      'test/unit/helpers.test.ts',
      'test/unit/gone.sh',
      'test/unit/helpers.ts',
      'helpers.ts',
      'nowhere-at-all.ts',
      'unit/helpers.ts',
      'test/unit/',
      'test/nope/',
      'test/',
      'test/unit/',
      'test/unit/helpers.ts',
      'test/unit/missing.ts',
      'test/suite/',
      'tools/',
    ],
  );
  const files = ['/test/unit/helpers.ts', '/test/unit/helpers.test.ts', '/test/suite/index.ts', '/tools/demo.mjs'];
  assert.deepEqual(missing(named, files), [
    'DOC.md:1: test/unit/gone.sh',
    'DOC.md:2: nowhere-at-all.ts',
    'DOC.md:2: test/nope/',
    'DOC.md:10: test/unit/missing.ts',
  ]);
});

test('every repository path named in README, CONTRIBUTING, docs/ and tools READMEs exists', () => {
  const files = repoFiles();
  const problems = docFiles().flatMap((doc) => missing(namedPaths(doc, fs.readFileSync(path.join(REPO_ROOT, doc), 'utf8')), files));
  assert.deepEqual(problems, [], 'named in the docs but not in the repository');
});

test('each allow-list entry is still needed: a doc names it, and not a file of the repository', () => {
  const files = repoFiles();
  const named = docFiles().flatMap((doc) => namedPaths(doc, fs.readFileSync(path.join(REPO_ROOT, doc), 'utf8')).flatMap(readings));
  const covers = (a: (typeof NOT_REPO_PATHS)[number], name: string) => (typeof a.name === 'string' ? a.name === name : a.name.test(name));
  const unused = NOT_REPO_PATHS.filter((a) => !named.some((name) => covers(a, name) && !exists(name, files)));
  assert.deepEqual(
    unused.map((a) => String(a.name)),
    [],
  );
});
