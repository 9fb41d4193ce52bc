/** The command that regenerates every file written from the contract (core must be built first). */
export const CONTRACT_COMMAND = "npm run contract -w @switchyard/cuda";

/** The first lines of every generated file, in the file's comment syntax. */
export function generatedNotice(what: string): string[] {
  return [
    `${what}`,
    "Generated from core's contract (packages/core/src/contract), do not edit.",
    `Regenerate: npx turbo run build --filter=@switchyard/core && ${CONTRACT_COMMAND}`,
  ];
}

/** The values of `codes` in order are 0, 1, 2, ...: a table indexed by value needs this. Throws otherwise. */
export function requireDense(values: readonly number[], table: string): void {
  values.forEach((v, i) => {
    if (v !== i)
      throw new RangeError(`requireDense: ${table} has value ${v} at position ${i}; expected ${i}`);
  });
}
