// Type guards for validating what a webview sends: its messages are untrusted input for the host.

export const isInt = (x: unknown): x is number => typeof x === 'number' && Number.isInteger(x);

/** A guard for one of a fixed list of strings (a preset, a format). */
export function isOneOf<T extends string>(values: readonly T[]): (x: unknown) => x is T {
  return (x: unknown): x is T => typeof x === 'string' && (values as readonly string[]).includes(x);
}
