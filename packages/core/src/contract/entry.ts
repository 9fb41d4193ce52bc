/**
 * One named code of the protocol: the value every language uses, a camelCase name (C and Python
 * identifiers are derived from it: `countTooLarge` -> `COUNT_TOO_LARGE`), the short words messages
 * and error fields use, and a one-line meaning (written as a comment into the generated files).
 */
export interface ContractCode {
  readonly value: number;
  readonly name: string;
  readonly label: string;
  readonly meaning: string;
}

/** `countTooLarge` -> `COUNT_TOO_LARGE`, `fp8-e4m3` -> `FP8_E4M3`: the C / Python identifier of a name. */
export function constantName(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .replace(/[^A-Za-z0-9]+/g, "_")
    .toUpperCase();
}

/** The entry of `value` in `codes`, or undefined. */
export function codeOf(codes: readonly ContractCode[], value: number): ContractCode | undefined {
  return codes.find((c) => c.value === value);
}

/** The entry named `name` in `codes`; throws a RangeError naming the table when there is none. */
export function codeNamed<C extends ContractCode>(codes: readonly C[], name: string, table: string): C {
  const found = codes.find((c) => c.name === name);
  if (found === undefined) throw new RangeError(`codeNamed: ${table} has no code named "${name}"`);
  return found;
}
