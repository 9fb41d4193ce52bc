/** What a fuzz run tried, and how the API answered: every figure the closing note cites. */
export interface FuzzCounts {
  /** Calls (or validations) that had to be refused. */
  badTried: number;
  /** Of those, refused with the expected named error (equal to `badTried` when the run passed). */
  badRefused: number;
  /** Valid calls made, all accepted when the run passed. */
  validCalls: number;
  /** Of those, inputs an edit left valid (a view into a larger or shared buffer, an extra field, a harmless id). */
  editedValid: number;
  /** Refusals by error name. */
  byError: Record<string, number>;
  /** Whole steps whose results were checked against the reference. */
  stepsVerified: number;
  /** Sessions created (fuzzing a backend). */
  sessions: number;
}

export function emptyCounts(): FuzzCounts {
  return {
    badTried: 0,
    badRefused: 0,
    validCalls: 0,
    editedValid: 0,
    byError: {},
    stepsVerified: 0,
    sessions: 0,
  };
}

export function countRefusal(c: FuzzCounts, name: string): void {
  c.badRefused++;
  c.byError[name] = (c.byError[name] ?? 0) + 1;
}

/** One line: "N bad inputs tried, N refused (InputError N, ...); N valid calls; N steps verified". */
export function formatCounts(c: FuzzCounts): string {
  const by = Object.entries(c.byError)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => `${k} ${v}`)
    .join(", ");
  const sessions = c.sessions > 0 ? `; ${c.sessions} sessions` : "";
  return (
    `${c.badTried} bad inputs / calls tried, ${c.badRefused} refused (${by || "none"}); ` +
    `${c.validCalls} valid calls accepted (${c.editedValid} of them edited but still valid); ` +
    `${c.stepsVerified} steps verified${sessions}`
  );
}
