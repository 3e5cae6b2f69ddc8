/** Edit distance (insert, delete, substitute, swap two neighbours), for "did you mean". */
function distance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  const at = (i: number, j: number): number => d[i]?.[j] ?? Number.POSITIVE_INFINITY;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        best = Math.min(best, at(i - 2, j - 2) + 1);
      (d[i] as number[])[j] = best;
    }
  }
  return at(a.length, b.length);
}

/**
 * The known word a typo most likely meant: one a prefix of it names, else the closest within two
 * edits (one for short words), else undefined.
 *
 * @example
 *   nearest('sevre', ['serve', 'submit']) // 'serve'
 */
export function nearest(word: string, known: readonly string[]): string | undefined {
  const lower = word.toLowerCase();
  if (lower.length >= 2) {
    const prefixed = known.filter((k) => k.startsWith(lower));
    if (prefixed.length === 1) return prefixed[0];
  }
  let best: string | undefined;
  let bestDistance = lower.length <= 3 ? 1 : 2;
  for (const k of known) {
    const dist = distance(lower, k);
    if (dist <= bestDistance && (best === undefined || dist < bestDistance)) {
      best = k;
      bestDistance = dist;
    }
  }
  return best;
}

/**
 * ` (did you mean X?)`, or nothing when no known word is close: for unknown commands and options
 * (the CLI) and unknown input keys (skills' schemas, shown quoted).
 */
export const didYouMean = (word: string, known: readonly string[], show = (k: string) => k): string => {
  const guess = nearest(word, known);
  return guess === undefined ? '' : ` (did you mean ${show(guess)}?)`;
};
