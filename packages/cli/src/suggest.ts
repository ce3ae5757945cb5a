/**
 * "Did you mean": the closest of a few names to what the user typed (a command, an action, an
 * option), by Damerau-Levenshtein distance, only when it is close enough to be the one meant.
 */

/**
 * The Damerau-Levenshtein distance between `a` and `b`: the fewest insertions, deletions,
 * substitutions and swaps of two adjacent characters (code points) that turn one into the
 * other. Unlike the "optimal string alignment" variant it is a metric (it keeps the triangle
 * inequality), so a text edited after a swap is measured right.
 *
 * @example
 * ```ts
 * editDistance('migrat', 'migrate'); // 1
 * editDistance('craete', 'create');  // 1 (one swap)
 * ```
 */
export function editDistance(a: string, b: string): number {
  const s = Array.from(a);
  const t = Array.from(b);
  const m = s.length;
  const n = t.length;
  if (m === 0 || n === 0) return m + n;
  // Lowrance and Wagner's table, with a border row and column of `far` (more than any distance).
  const far = m + n;
  const width = n + 2;
  const d = new Array<number>((m + 2) * width).fill(0);
  const at = (i: number, j: number) => d[i * width + j]!;
  const set = (i: number, j: number, v: number) => void (d[i * width + j] = v);
  set(0, 0, far);
  for (let i = 0; i <= m; i++) {
    set(i + 1, 0, far);
    set(i + 1, 1, i);
  }
  for (let j = 0; j <= n; j++) {
    set(0, j + 1, far);
    set(1, j + 1, j);
  }
  // The last row of `s` in which each character was seen.
  const lastRow = new Map<string, number>();
  for (let i = 1; i <= m; i++) {
    let lastMatchColumn = 0;
    for (let j = 1; j <= n; j++) {
      const k = lastRow.get(t[j - 1]!) ?? 0;
      const l = lastMatchColumn;
      const same = s[i - 1] === t[j - 1];
      if (same) lastMatchColumn = j;
      set(
        i + 1,
        j + 1,
        Math.min(
          at(i, j) + (same ? 0 : 1),
          at(i + 1, j) + 1,
          at(i, j + 1) + 1,
          // a swap of t[l-1] and s[k-1], with what lies between them deleted or inserted
          at(k, l) + (i - k - 1) + 1 + (j - l - 1),
        ),
      );
    }
    lastRow.set(s[i - 1]!, i);
  }
  return at(m + 1, n + 1);
}

/**
 * The name among `names` that `typed` most likely meant, or undefined: the closest by
 * {@link editDistance} when it is at most max(1, floor(length / 3)) edits away (the length of
 * what was typed, in code points; on a tie the first in `names`), else the only name that
 * begins with `typed`.
 *
 * @example
 * ```ts
 * closestName('migrat', ['serve', 'migrate', 'import']); // 'migrate'
 * closestName('mig', ['serve', 'migrate', 'import']);    // 'migrate' (the only one it begins)
 * closestName('xyz', ['serve', 'migrate', 'import']);    // undefined
 * ```
 */
export function closestName(typed: string, names: readonly string[]): string | undefined {
  const length = Array.from(typed).length;
  const most = Math.max(1, Math.floor(length / 3));
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const name of names) {
    // The lengths alone bound the distance from below: a long text is not compared at all.
    if (Math.abs(Array.from(name).length - length) > most) continue;
    const distance = editDistance(typed, name);
    if (distance <= most && distance < bestDistance) {
      best = name;
      bestDistance = distance;
    }
  }
  if (best !== undefined) return best;
  const starting = typed === '' ? [] : names.filter((name) => name.startsWith(typed));
  return starting.length === 1 ? starting[0] : undefined;
}
