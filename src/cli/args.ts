import { at } from '../shared/checked';
import { LensError } from '../engine/errors';
import { readInputFile } from './input-file';

/** `--flag value` / `--flag=value` / `--switch` parsing with the flags each command accepts; nothing else. */
export interface ParsedArgs {
  command: string;
  flags: Map<string, string>;
}

export function parseArgs(argv: string[], known: Record<string, { switches: string[]; values: string[] }>): ParsedArgs {
  const [command, ...rest] = argv;
  if (!command || command === '--help' || command === '-h' || command === 'help') return { command: 'help', flags: new Map() };
  if (command === '--version' || command === '-v') return { command: 'version', flags: new Map() };
  const spec = known[command];
  if (!spec) throw new LensError(`unknown command "${command}": use one of ${Object.keys(known).join(', ')} (deberta-lens --help)`);
  const flags = new Map<string, string>();
  for (let k = 0; k < rest.length; k++) {
    const arg = at(rest, k, 'argument');
    if (!arg.startsWith('--')) throw new LensError(`unexpected argument "${arg}": flags start with -- (deberta-lens --help)`);
    const eq = arg.indexOf('=');
    const name = eq > 0 ? arg.slice(2, eq) : arg.slice(2);
    if (spec.switches.includes(name)) {
      flags.set(name, 'true');
    } else if (spec.values.includes(name)) {
      const value = eq > 0 ? arg.slice(eq + 1) : rest[++k];
      if (value === undefined) throw new LensError(`--${name} needs a value`);
      flags.set(name, value);
    } else {
      throw new LensError(
        `unknown flag --${name} for "${command}": accepted: ${[...spec.values, ...spec.switches].map((f) => `--${f}`).join(' ')}`,
      );
    }
  }
  return { command, flags };
}

export function intList(value: string, flag: string): number[] {
  const parts = value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  const out = parts.map((p) => Number(p));
  if (parts.length === 0 || out.some((x) => !Number.isInteger(x))) {
    throw new LensError(`--${flag} takes comma-separated integers, got "${value}"`);
  }
  return out;
}

/** The input of explain / predict: exactly one of --text, --file (read as UTF-8) or --ids. */
export function inputFlags(flags: Map<string, string>): { text?: string; ids?: number[] } {
  const sources = ['text', 'file', 'ids'].filter((f) => flags.has(f));
  if (sources.length !== 1) throw new LensError('give exactly one of --text, --file or --ids');
  if (flags.has('ids')) return { ids: intList(flags.get('ids')!, 'ids') };
  if (!flags.has('file')) return { text: flags.get('text') };
  return { text: readInputFile(flags.get('file')!) };
}

/** `--position i`: a token index (0 = [CLS]), or undefined without the flag. */
export function positionFlag(flags: Map<string, string>): number | undefined {
  if (!flags.has('position')) return undefined;
  const position = Number(flags.get('position'));
  if (!Number.isInteger(position) || position < 0)
    throw new LensError(`--position takes a token index (0 = [CLS]), got "${flags.get('position')}"`);
  return position;
}
