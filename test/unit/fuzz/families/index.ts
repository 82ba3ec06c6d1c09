// Every fuzz family, in the order a run cycles through them: the byte-level mutations of each file kind
// (cases.ts), then the structured, semantic families.
import { KINDS, makeCase, textFor } from '../cases';
import { explainProblem } from '../judge';
import { cgroupLimits } from './cgroup-limits';
import { cliOutputs } from './cli-outputs';
import { explainArgs, type Family } from './family';
import { pickleBombs } from './pickle-bombs';
import { sharedStorages } from './shared-storages';
import { specialFiles } from './special-files';
import { weightEdits } from './weight-edits';

const mutated: Family[] = KINDS.map((kind) => ({
  name: `mutated ${kind}`,
  make({ rng, dir, cache, bases }) {
    const model = `${dir}/model`;
    const what = makeCase(kind, bases, rng, model);
    const text = textFor(kind);
    return { what, args: explainArgs(model, cache, '--text', text), expect: 'either', check: (out) => explainProblem(out, text) };
  },
}));

export const FAMILIES: Family[] = [...mutated, pickleBombs, specialFiles, sharedStorages, cgroupLimits, cliOutputs, weightEdits];
