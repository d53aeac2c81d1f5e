/**
 * "Did you mean": the known word nearest to a mistyped one, for the usage errors of an unknown
 * command or flag.
 *
 * @module
 */

/**
 * The edit distance between `a` and `b`: insertions, deletions, substitutions and swaps of two
 * neighbours (`idnex` is one swap from `index`), each counting 1.
 */
export function editDistance(a: string, b: string): number {
  // rows of the table: two back, one back, this one
  let before = new Array<number>(b.length + 1).fill(0);
  let last = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min((last[j] as number) + 1, (row[j - 1] as number) + 1, (last[j - 1] as number) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d = Math.min(d, (before[j - 2] as number) + 1);
      row.push(d);
    }
    before = last;
    last = row;
  }
  return last[b.length] as number;
}

/**
 * The word of `known` that `typed` was most likely meant to be: the nearest by
 * {@link editDistance}, when it is at most 2 and less than half of the typed word; else the one
 * word that starts with it (three letters at least: `conc` for `conclusion`); else `undefined`.
 */
export function nearest(typed: string, known: readonly string[]): string | undefined {
  const word = typed.toLowerCase();
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of known) {
    const d = editDistance(word, candidate);
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  if (best !== undefined && bestDistance <= 2 && bestDistance * 2 < word.length) return best;
  const starting = word.length >= 3 ? known.filter((candidate) => candidate.startsWith(word)) : [];
  return starting.length === 1 ? starting[0] : undefined;
}

/** ` (did you mean <word>?)` after a usage error's words, or nothing. */
export function didYouMean(typed: string, known: readonly string[], prefix = ''): string {
  const near = nearest(typed, known);
  return near === undefined ? '' : ` (did you mean ${prefix}${near}?)`;
}
