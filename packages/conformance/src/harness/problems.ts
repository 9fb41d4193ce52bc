/** Thrown by a property when the backend's behaviour differs from the specification. */
export class ConformanceMismatch extends Error {
  override name = "ConformanceMismatch";
}

/**
 * Collects what went wrong in one case, keeping the first few messages and the total count,
 * so a property can report every kind of mismatch at once instead of the first only.
 */
export class Problems {
  private readonly kept: string[] = [];
  private total = 0;

  constructor(private readonly limit = 10) {}

  add(message: string): void {
    this.total++;
    if (this.kept.length < this.limit) this.kept.push(message);
  }

  get count(): number {
    return this.total;
  }

  /** Throws a `ConformanceMismatch` listing the problems, prefixed by `context`, if there are any. */
  throwIfAny(context: string): void {
    if (this.total === 0) return;
    const more = this.total > this.kept.length ? `\n  ... and ${this.total - this.kept.length} more` : "";
    throw new ConformanceMismatch(`${context}: ${this.total} problem(s)\n  ${this.kept.join("\n  ")}${more}`);
  }
}

/** The `name` of a thrown value (errors may come from another module instance, so no instanceof). */
export function errorName(e: unknown): string {
  if (e !== null && typeof e === "object" && "name" in e) return String((e as { name: unknown }).name);
  return typeof e;
}

export function errorMessage(e: unknown): string {
  if (e !== null && typeof e === "object" && "message" in e)
    return String((e as { message: unknown }).message);
  return String(e);
}

/** A constructor name for messages ("Uint16Array", "null", ...). */
export function typeName(v: unknown): string {
  if (v === null || v === undefined) return String(v);
  return (v as object).constructor?.name ?? typeof v;
}
