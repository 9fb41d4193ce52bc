import { constants } from "node:fs";
import { access, stat } from "node:fs/promises";
import { dirname, resolve } from "node:path";

/** The command line was used wrongly: exit status 2, with a pointer to `--help`. */
export class UsageError extends Error {
  override name = "UsageError";
}

/** `value` of `flag` as an integer (undefined when absent); a UsageError naming the flag otherwise. */
export function integerFlag(
  flag: string,
  value: string | undefined,
  min = Number.MIN_SAFE_INTEGER,
): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (value.trim() === "" || !Number.isInteger(n) || n < min) {
    const what = min === 1 ? "a positive integer" : min === 0 ? "an integer >= 0" : "an integer";
    throw new UsageError(`${flag} must be ${what}, got "${value}"`);
  }
  return n;
}

/**
 * Refuses a report path that cannot be written, before a run that may take minutes: its folder
 * must exist and be writable, and the path must not be a folder or a read-only file.
 */
export async function checkWritable(flag: string, path: string, cwd: string): Promise<void> {
  const full = resolve(cwd, path);
  const existing = await stat(full).catch(() => null);
  if (existing?.isDirectory()) throw new UsageError(`${flag} ${path}: is a folder; give a file name`);
  const target = existing ? full : dirname(full);
  try {
    await access(target, constants.W_OK);
  } catch (e) {
    const code = (e as { code?: string }).code;
    const why = code === "ENOENT" ? `folder ${dirname(full)} does not exist` : `${target} is not writable`;
    throw new UsageError(`${flag} ${path}: ${why}; give a path that can be written`);
  }
}
