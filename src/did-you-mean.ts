/**
 * The candidate a person most likely meant by `word` (a typo, a plural, a different case), or
 * undefined when none is close: at most a third of the word's letters edited, transpositions counted
 * once.
 */
export function nearest(word: string, candidates: Iterable<string>): string | undefined {
  const typed = word.toLowerCase();
  let best: string | undefined;
  let bestDistance = Math.max(1, Math.floor(typed.length / 3)) + 1;
  for (const candidate of candidates) {
    const d = distance(typed, candidate.toLowerCase());
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}

/** " (did you mean "x"?)" for the nearest candidate, or "" when none is close. */
export const didYouMean = (word: string, candidates: Iterable<string>): string => {
  const guess = nearest(word, candidates);
  return guess === undefined ? '' : ` (did you mean "${guess}"?)`;
};

/** Optimal string alignment distance: insertions, deletions, substitutions, adjacent swaps. */
function distance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 3) return Number.POSITIVE_INFINITY;
  const rows: number[][] = [];
  for (let i = 0; i <= a.length; i++) rows.push([i, ...Array<number>(b.length).fill(0)]);
  for (let j = 0; j <= b.length; j++) (rows[0] as number[])[j] = j;
  for (let i = 1; i <= a.length; i++) {
    const row = rows[i] as number[];
    const above = rows[i - 1] as number[];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min((above[j] as number) + 1, (row[j - 1] as number) + 1, (above[j - 1] as number) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        d = Math.min(d, (rows[i - 2]?.[j - 2] as number) + 1);
      }
      row[j] = d;
    }
  }
  return (rows[a.length] as number[])[b.length] as number;
}
