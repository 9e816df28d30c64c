/**
 * "Did you mean …?": the candidate closest to a mistyped word, for every message that names what is allowed (the
 * tools' options and operations, the guided setup's menus).
 */

/** The edit distance of two words (insertions, deletions, substitutions). */
function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = row;
  }
  return previous[b.length];
}

/** The candidate closest to `word`, when one is close enough to be what was meant. */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  let best: { candidate: string; score: number } | undefined;
  for (const candidate of candidates) {
    const prefix = candidate.startsWith(word) || word.startsWith(candidate);
    const score = prefix ? 0.5 : distance(word, candidate);
    if (!best || score < best.score) best = { candidate, score };
  }
  return best && best.score <= Math.max(2, Math.floor(word.length / 3)) ? best.candidate : undefined;
}

/** ` (did you mean X?)` or nothing. */
export function suggestion(word: string, candidates: readonly string[], prefix = ''): string {
  const near = closest(word, candidates);
  return near === undefined ? '' : ` (did you mean ${prefix}${near}?)`;
}
