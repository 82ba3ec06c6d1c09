// Which files go into the VSIX for one platform target.
//
// `.vscodeignore` is the single source of truth: it excludes everything (`**`) and re-includes (`!…`) what the
// packaged extension runs on. Its one line re-including onnxruntime-node's native binaries for *every* platform
// (the universal fallback a plain `vsce package` uses) is replaced here by the target's own binaries, so each VSIX
// carries ~25–45 MB of native code instead of ~290 MB. `filesForTarget` applies those rules the way vsce does
// (vsce's `collectFiles` + minimatch with `dot: true`); tools/package-vsix.mjs checks every VSIX it builds against
// it, which keeps this re-implementation honest.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { LensError } from '../../src/engine/errors';

/** onnxruntime-node 1.30 ships these folders under bin/napi-v6/<platform>/<arch>/ (no darwin/x64). */
export const TARGETS = {
  'linux-x64': { dir: 'linux/x64', binaries: ['onnxruntime_binding.node', 'libonnxruntime.so.1'] },
  'linux-arm64': { dir: 'linux/arm64', binaries: ['onnxruntime_binding.node', 'libonnxruntime.so.1'] },
  // libonnxruntime.1.30.0.dylib is a byte-identical copy (a symlink before npm packed it); the binding loads
  // @rpath/libonnxruntime.1.dylib, so shipping one saves 44 MB.
  'darwin-arm64': { dir: 'darwin/arm64', binaries: ['onnxruntime_binding.node', 'libonnxruntime.1.dylib'] },
  // DirectML.dll serves the `dml` provider, dxcompiler/dxil the `webgpu` one; both are offered in the settings.
  'win32-x64': {
    dir: 'win32/x64',
    binaries: ['onnxruntime_binding.node', 'onnxruntime.dll', 'DirectML.dll', 'dxcompiler.dll', 'dxil.dll'],
  },
  'win32-arm64': {
    dir: 'win32/arm64',
    binaries: ['onnxruntime_binding.node', 'onnxruntime.dll', 'DirectML.dll', 'dxcompiler.dll', 'dxil.dll'],
  },
} as const;

export type Target = keyof typeof TARGETS;
export const TARGET_NAMES = Object.keys(TARGETS) as Target[];

const BIN_ROOT = 'node_modules/onnxruntime-node/bin/';

export function parseTarget(name: string): Target {
  if (!(name in TARGETS)) {
    throw new LensError(`unknown package target '${name}': use one of ${TARGET_NAMES.join(', ')} (flag --target)`);
  }
  return name as Target;
}

/** The `.vscodeignore` text for one target: the repository's rules with the binaries narrowed to that target. */
export function ignoreTextForTarget(baseIgnore: string, target: Target): string {
  const spec = TARGETS[target];
  const kept = baseIgnore.split(/\r?\n/).filter((line) => !line.trim().startsWith(`!${BIN_ROOT}`));
  const own = spec.binaries.map((b) => `!${BIN_ROOT}napi-v6/${spec.dir}/${b}`);
  return [...kept, `# native binaries for ${target} only (tools/package/select-files.ts)`, ...own, ''].join('\n');
}

// vsce's own default excludes (package.js `defaultIgnore`), applied before the ignore file; the file names
// vsce always keeps (package.json, README.md) are negated after it.
const VSCE_DEFAULT_IGNORE = [
  '.vscodeignore',
  'package-lock.json',
  'npm-debug.log',
  'yarn.lock',
  'yarn-error.log',
  'npm-shrinkwrap.json',
  '.editorconfig',
  '.npmrc',
  '.yarnrc',
  '.gitattributes',
  '*.todo',
  'tslint.yaml',
  '.eslintrc*',
  '.babelrc*',
  '.prettierrc*',
  '.cz-config.js',
  '.commitlintrc*',
  'webpack.config.js',
  'ISSUE_TEMPLATE.md',
  'CONTRIBUTING.md',
  'PULL_REQUEST_TEMPLATE.md',
  'CODE_OF_CONDUCT.md',
  '.github',
  '.travis.yml',
  'appveyor.yml',
  '**/.git',
  '**/.git/**',
  '**/*.vsix',
  '**/.DS_Store',
  '**/*.vsixmanifest',
  '**/.vscode-test/**',
  '**/.vscode-test-web/**',
];

export interface Rule {
  pattern: string;
  re: RegExp;
}

export interface IgnoreRules {
  ignore: Rule[];
  negate: Rule[];
}

/** Parses ignore text exactly as vsce's collectFiles does (including its "folder name → folder/**" expansion). */
export function parseIgnore(text: string): IgnoreRules {
  const lines = text
    .split(/[\n\r]/)
    .map((s) => s.trim())
    .filter((s) => !!s && !/^\s*#/.test(s));
  const expanded = [...lines, ...lines.filter((i) => !/(^|\/)[^/]*\*[^/]*$/.test(i)).map((i) => (/\/$/.test(i) ? `${i}**` : `${i}/**`))];
  const rules: IgnoreRules = { ignore: [], negate: [] };
  for (const p of [...VSCE_DEFAULT_IGNORE, ...expanded, '!package.json', '!README.md']) {
    const negated = p.startsWith('!');
    const pattern = negated ? p.slice(1) : p;
    (negated ? rules.negate : rules.ignore).push({ pattern, re: globToRegExp(pattern) });
  }
  return rules;
}

export function isIncluded(file: string, rules: IgnoreRules): boolean {
  return !rules.ignore.some((r) => r.re.test(file)) || rules.negate.some((r) => r.re.test(file));
}

/** minimatch semantics (dot: true) for the subset vsce ignore files use: `**` segments, `*`, `?`, literals. */
export function globToRegExp(glob: string): RegExp {
  if (/[[\]{}()!+@]/.test(glob)) {
    throw new LensError(`.vscodeignore pattern '${glob}' uses glob syntax the package check does not model: use only *, ** and ?`);
  }
  const segments = glob.split('/');
  let re = '';
  segments.forEach((seg, i) => {
    // a `**` that is not last swallows its own trailing slash, so the next segment starts without one
    const sep = i > 0 && segments[i - 1] !== '**' ? '/' : '';
    if (seg === '**') {
      const last = i === segments.length - 1;
      if (!last) re += `${sep}(?:[^/]+/)*`;
      else re += i === 0 ? '.*' : '(?:/.*)?'; // `a/**` matches `a` and everything below it
    } else {
      re +=
        sep +
        seg
          .replace(/[.^$|\\]/g, '\\$&')
          .replace(/\*/g, '[^/]*')
          .replace(/\?/g, '[^/]');
    }
  });
  return new RegExp(`^${re}$`);
}

/** Every file (POSIX relative path) vsce would put into the VSIX for `target`, sorted. */
export function filesForTarget(target: Target, root: string, baseIgnore?: string): string[] {
  const ignoreText = baseIgnore ?? readIgnore(root);
  const rules = parseIgnore(ignoreTextForTarget(ignoreText, target));
  const files = candidateFiles(root, rules).filter((f) => isIncluded(f, rules));
  const missing = TARGETS[target].binaries.map((b) => `${BIN_ROOT}napi-v6/${TARGETS[target].dir}/${b}`).filter((f) => !files.includes(f));
  if (missing.length) {
    throw new LensError(
      `${missing.join(', ')} missing for target ${target}: run 'ONNXRUNTIME_NODE_INSTALL=skip npm ci' (onnxruntime-node ${onnxVersion(root)} may have renamed its binaries; update TARGETS in tools/package/select-files.ts)`,
      'not-found',
    );
  }
  return files.sort();
}

function readIgnore(root: string): string {
  const file = path.join(root, '.vscodeignore');
  if (!fs.existsSync(file)) throw new LensError(`${file} is missing: restore it from git`, 'not-found');
  return fs.readFileSync(file, 'utf8');
}

function onnxVersion(root: string): string {
  try {
    return (JSON.parse(fs.readFileSync(path.join(root, 'node_modules/onnxruntime-node/package.json'), 'utf8')) as { version: string })
      .version;
  } catch {
    return '(not installed)';
  }
}

/**
 * The files vsce looks at: the project folder without its node_modules, plus each production dependency's folder
 * (vsce asks `npm list --production`; here the dependency closure is read from the package.json files, which the
 * installed tree must match anyway). Folders that the rules exclude wholesale are not walked (the repository holds
 * big ignored trees: test/e2e/code-server/node_modules, out/, .git).
 */
function candidateFiles(root: string, rules: IgnoreRules): string[] {
  const out: string[] = [];
  walk(root, '', 'node_modules', rules, out);
  for (const dep of productionDependencies(root)) {
    walk(root, `node_modules/${dep}`, `node_modules/${dep}/node_modules`, rules, out);
  }
  return out;
}

/** vsce globs each base folder with `ignore: ['node_modules/**']`, so that base's own node_modules is skipped. */
function walk(root: string, dir: string, skip: string, rules: IgnoreRules, out: string[]): void {
  for (const entry of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
    const child = dir ? `${dir}/${entry.name}` : entry.name;
    if (entry.isDirectory()) {
      if (child !== skip && folderMayHoldIncluded(child, rules)) walk(root, child, skip, rules, out);
    } else {
      out.push(child); // symlinks count as files, as in vsce without --follow-symlinks
    }
  }
}

/** False when ignore rules swallow any name at any depth below `folder` and no negation can reach into it. */
function folderMayHoldIncluded(folder: string, rules: IgnoreRules): boolean {
  const probes = [`${folder}/\u0001probe`, `${folder}/\u0001probe/\u0001probe.\u0001`];
  const swallowed = probes.every((p) => rules.ignore.some((r) => r.re.test(p)));
  return !swallowed || rules.negate.some((r) => negationReaches(r.pattern, folder));
}

/** Whether a negation could match something below `folder`: its literal head (before any wildcard) agrees with it. */
function negationReaches(pattern: string, folder: string): boolean {
  const segments = pattern.split('/');
  const firstWild = segments.findIndex((s) => /[*?]/.test(s));
  const head = firstWild < 0 ? segments : segments.slice(0, firstWild);
  const dir = folder.split('/');
  const n = Math.min(head.length, dir.length);
  for (let i = 0; i < n; i++) if (head[i] !== dir[i]) return false;
  // a fully literal pattern no longer than the folder path names the folder itself or an ancestor: it reaches
  // inside only through vsce's `/**` expansion, which is a separate rule with a wildcard
  return firstWild >= 0 || head.length > dir.length;
}

/** Production dependency closure (names), resolved in the flat top-level node_modules npm installs. */
export function productionDependencies(root: string): string[] {
  const seen = new Set<string>();
  const queue = Object.keys(readJson(path.join(root, 'package.json')).dependencies ?? {});
  while (queue.length) {
    const name = queue.shift()!;
    if (seen.has(name)) continue;
    const manifest = path.join(root, 'node_modules', name, 'package.json');
    if (!fs.existsSync(manifest)) {
      throw new LensError(
        `dependency ${name} is not installed (${manifest} missing): run 'ONNXRUNTIME_NODE_INSTALL=skip npm ci'`,
        'not-found',
      );
    }
    seen.add(name);
    queue.push(...Object.keys(readJson(manifest).dependencies ?? {}));
  }
  return [...seen].sort();
}

function readJson(file: string): { dependencies?: Record<string, string>; version?: string } {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as { dependencies?: Record<string, string>; version?: string };
  } catch (e) {
    throw new LensError(`${file} is not readable JSON (${(e as Error).message}): restore it or reinstall with npm ci`, 'corrupt');
  }
}

/** Where vsce stores a selected file inside the VSIX: under extension/, with its README/CHANGELOG/LICENSE renames. */
export function vsixEntryName(file: string): string {
  const renamed: Record<string, string> = { 'README.md': 'readme.md', 'CHANGELOG.md': 'changelog.md', LICENSE: 'LICENSE.txt' };
  return `extension/${renamed[file] ?? file}`;
}
