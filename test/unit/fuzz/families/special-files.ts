// Special files: a file of the model folder (or the folder itself) that is a device, a FIFO, a folder, a dangling
// or looping symlink, or empty. A required file must be refused in one line naming it; an optional one may be
// refused or skipped, but nothing may block, read a device without end, or leave a stack trace.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { explainProblem } from '../judge';
import { explainArgs, type Family, literal, v3Folder } from './family';

/** Files the folder needs: replacing one must end in a refusal that names it. */
const REQUIRED = ['config.json', 'model.safetensors', 'spm.model'];
const OPTIONAL = ['tokenizer_config.json', 'special_tokens_map.json'];
/** Files that take part when they exist (an index or a .bin beside the safetensors, a tokenizer.json). */
const EXTRA = ['model.safetensors.index.json', 'pytorch_model.bin', 'tokenizer.json', 'added_tokens.json'];

const KINDS = ['/dev/zero', '/dev/urandom', '/dev/null', 'fifo', 'folder', 'dangling', 'loop', 'empty', 'chain'] as const;
type Kind = (typeof KINDS)[number];

function replace(file: string, kind: Kind): void {
  fs.rmSync(file, { force: true, recursive: true });
  switch (kind) {
    case 'fifo':
      execFileSync('mkfifo', [file]);
      break;
    case 'folder':
      fs.mkdirSync(file);
      fs.writeFileSync(path.join(file, 'x'), '{}');
      break;
    case 'dangling':
      fs.symlinkSync(path.join(path.dirname(file), 'no-such-file'), file);
      break;
    case 'loop':
      fs.symlinkSync(`${file}.b`, file);
      fs.symlinkSync(file, `${file}.b`);
      break;
    case 'empty':
      fs.writeFileSync(file, '');
      break;
    case 'chain':
      fs.symlinkSync('/dev/zero', `${file}.1`);
      fs.symlinkSync(`${file}.1`, file);
      break;
    default:
      fs.symlinkSync(kind, file);
  }
}

export const specialFiles: Family = {
  name: 'special files',
  make({ rng, dir, cache }) {
    const model = v3Folder(path.join(dir, 'model'));
    const ids = ['--ids', '1,9,17,33,2'];
    const said = 'naïve café ✓';
    const text = ['--text', said];
    const kind = rng.pick(KINDS);
    if (rng.chance(0.08)) {
      // The model folder itself.
      const where = path.join(dir, 'model-special');
      replace(where, kind === 'folder' ? 'fifo' : kind);
      return { what: `--model is ${kind}`, args: explainArgs(where, cache, ...ids), expect: 'error' };
    }
    const group = rng.pick([REQUIRED, REQUIRED, OPTIONAL, EXTRA]);
    const name = rng.pick(group);
    replace(path.join(model, name), kind);
    // spm.model is read only when the text goes through the tokenizer.
    const args = explainArgs(model, cache, ...(rng.chance(0.7) || name === 'spm.model' ? text : ids));
    const what = `${name} is ${kind}`;
    const check = (out: string) => explainProblem(out, args.includes('--text') ? said : '');
    // Required and present: always a refusal naming the file (an empty one is damaged; a dangling link, missing).
    if (group === REQUIRED && !(name === 'spm.model' && args.includes('--ids')))
      return { what, args, expect: 'error', names: new RegExp(literal(name)), check };
    // Optional or extra: skipping it is fine where it is missing; what is there must be read safely or refused by name.
    return { what, args, expect: 'either', names: new RegExp(literal(name)), check };
  },
};
