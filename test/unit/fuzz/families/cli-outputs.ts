// CLI paths: --file that never ends (/dev/zero) or is a folder; --out where it cannot be written (a missing folder, /dev/full, a folder, under a file, /proc, a
// name too long, a FIFO nobody reads), where it can (/dev/null, an existing file, which must then hold the whole
// result), a reader that closes stdout early (| head), stdout on /dev/full, and a cache folder that cannot be one.
// An unwritable output is refused in one line naming the flag, before the model runs where it can be.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { FuzzCase } from '../judge';
import { explainProblem } from '../judge';
import { explainArgs, type Family, V3 } from './family';

const TEXT = 'the quick brown fox jumps over the lazy dog '.repeat(3).trim();

export const cliOutputs: Family = {
  name: 'CLI input and output paths',
  make({ rng, dir, cache }) {
    fs.mkdirSync(dir, { recursive: true });
    const which = rng.int(12);
    // stdout takes JSON only (npz needs a file).
    const format = which === 10 ? 'json' : rng.pick(['json', 'npz']);
    const input = rng.chance(0.5) ? ['--text', TEXT] : ['--ids', '1,9,17,33,2'];
    const run = (out: string | undefined, more: Partial<FuzzCase> & Pick<FuzzCase, 'what' | 'expect'>): FuzzCase => ({
      args: explainArgs(V3, cache, ...input, '--format', format, ...(out === undefined ? [] : ['--out', out])),
      ...more,
    });
    const file = path.join(dir, 'a-file');
    fs.writeFileSync(file, 'x');
    switch (which) {
      case 0:
        return run(path.join(dir, 'missing', 'out.json'), { what: '--out in a missing folder', expect: 'error', names: /--out/ });
      case 1:
        return run('/dev/full', { what: '--out /dev/full', expect: 'error', names: /--out \/dev\/full/ });
      case 2:
        return run(dir, { what: '--out is a folder', expect: 'error', names: /--out/ });
      case 3:
        return run(path.join(file, 'out.json'), { what: '--out under a regular file', expect: 'error', names: /--out/ });
      case 4:
        return run(`/proc/lens-${rng.int(1000)}.json`, { what: '--out under /proc', expect: 'error', names: /--out/ });
      case 5:
        return run(path.join(dir, 'x'.repeat(300)), { what: '--out name of 300 characters', expect: 'error', names: /--out/ });
      case 6: {
        const fifo = path.join(dir, 'fifo');
        execFileSync('mkfifo', [fifo]);
        return run(fifo, { what: '--out is a FIFO nobody reads', expect: 'error', names: /--out/ });
      }
      case 7: {
        const link = path.join(dir, 'to-full');
        fs.symlinkSync('/dev/full', link);
        return run(link, { what: '--out is a symlink to /dev/full', expect: 'error', names: /--out/ });
      }
      case 8:
        return run('/dev/null', { what: '--out /dev/null', expect: 'result', check: () => undefined });
      case 9: {
        fs.writeFileSync(file, 'old contents');
        const check = (): string | undefined => {
          const bytes = fs.readFileSync(file);
          if (format === 'npz') return bytes.subarray(0, 2).toString() === 'PK' ? undefined : '--out does not hold a zip';
          return explainProblem(bytes.toString('utf8'), input[0] === '--text' ? TEXT : '');
        };
        return run(file, { what: `--out overwrites an existing file (${format})`, expect: 'result', check });
      }
      case 10:
        return rng.chance(0.5)
          ? { ...run(undefined, { what: 'stdout closed after the first chunk', expect: 'result' }), stdout: 'close-early' }
          : { ...run(undefined, { what: 'stdout is /dev/full', expect: 'error', names: /stdout|ENOSPC/ }), stdout: 'dev-full' };
      default: {
        const where = rng.pick([file, '/dev/null', `/proc/lens-cache-${rng.int(100)}`, path.join(file, 'sub')]);
        if (rng.chance(0.5)) {
          // --file that never ends, is a folder, or is over the bound.
          const big = path.join(dir, 'big.txt');
          const src = rng.pick(['/dev/zero', '/dev/urandom', dir, big]);
          if (src === big) fs.writeFileSync(big, Buffer.alloc(17 * 2 ** 20, 0x61));
          return {
            what: `--file ${src === big ? 'of 17 MiB' : src === dir ? 'is a folder' : src}`,
            args: explainArgs(V3, cache, '--file', src),
            expect: 'error',
            names: /--file/,
          };
        }
        return {
          what: `--cache-dir ${where === file ? 'is a regular file' : where}`,
          args: ['explain', '--model', V3, ...input, '--threads', '1', '--cache-dir', where],
          expect: 'error',
          names: /cache/,
        };
      }
    }
  },
};
