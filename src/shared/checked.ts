// Checked reads for indices the code has already bounded (a loop over the same array, a position validated up
// front): a missing element is a bug, reported as a RangeError that names what was read, never an undefined that
// travels on.

/** `xs[i]`, or a RangeError naming `what`. */
export function at<T>(xs: ArrayLike<T>, i: number, what = 'element'): T {
  const x = xs[i];
  if (x === undefined) throw new RangeError(`${what} ${i} is out of range (0…${xs.length - 1})`);
  return x;
}

/** The first element of a list that cannot be empty here. */
export function first<T>(xs: ArrayLike<T>, what = 'list'): T {
  const x = xs[0];
  if (x === undefined) throw new RangeError(`${what} is empty`);
  return x;
}

/** The last element of a list that cannot be empty here. */
export function last<T>(xs: ArrayLike<T>, what = 'list'): T {
  const x = xs[xs.length - 1];
  if (x === undefined) throw new RangeError(`${what} is empty`);
  return x;
}
