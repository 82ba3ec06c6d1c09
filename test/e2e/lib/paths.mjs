// Where things are: the repository, the pinned e2e tools, and where artifacts go.
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

export const E2E_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const REPO_ROOT = path.resolve(E2E_DIR, '..', '..');
export const TOOLS_DIR = path.join(E2E_DIR, 'code-server');
export const TOOLS_MODULES = path.join(TOOLS_DIR, 'node_modules');
export const CODE_SERVER_BIN = path.join(TOOLS_MODULES, 'code-server', 'out', 'node', 'entry.js');
export const RESULTS_DIR = path.join(REPO_ROOT, 'test-results', 'e2e');
export const FIXTURES = path.join(REPO_ROOT, 'test', 'data', 'fixtures');
export const CHROMIUM = process.env.E2E_CHROMIUM || '/usr/bin/chromium';

const manifest = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8'));
/** `publisher.name` of the extension under test, from the repository's package.json. */
export const EXTENSION_ID = `${manifest.publisher}.${manifest.name}`;
export const EXTENSION_VERSION = manifest.version;
