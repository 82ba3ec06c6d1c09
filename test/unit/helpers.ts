import * as path from 'node:path';

/** The repository root, from out/test/unit (compiled) or test/unit (source). */
export const REPO_ROOT = path.resolve(__dirname, __dirname.includes(`${path.sep}out${path.sep}`) ? '../../..' : '../..');
export const DATA = path.join(REPO_ROOT, 'test', 'data');
export const FIXTURES = path.join(DATA, 'fixtures');
