/** `table[key]` only when `key` is the table's own entry: names read from a file (`__proto__`, `toString`,
 *  `constructor`) must not reach Object.prototype. */
export function own<T>(table: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.prototype.hasOwnProperty.call(table, key) ? table[key] : undefined;
}
