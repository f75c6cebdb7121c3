/**
 * 1 -> "1st", 2 -> "2nd", 11 -> "11th": an op's k-th trace, as the report words it (analysis/explain.py ordinal).
 * One word for an op's k-th run everywhere: "trace" (a row of Graph Execution); "execution" is the timeline's.
 */
export function ordinal(n: number): string {
  const suffix =
    n % 100 >= 10 && n % 100 <= 20 ? 'th' : (({ 1: 'st', 2: 'nd', 3: 'rd' } as Record<number, string>)[n % 10] ?? 'th');
  return `${n.toLocaleString('en-US')}${suffix}`;
}
