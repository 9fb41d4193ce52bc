import { parseArgs } from "node:util";
import type { ArgReader } from "./checks/commands.js";

/** A bad command line: the message says which word and why; the command line prints it with the usage. */
export class RigUsageError extends Error {
  override name = "UsageError";
}

/** Each command of the rig's command line, its flags (all take a value) and what it does. */
export const RIG_COMMANDS: Record<string, { flags: string[]; what: string }> = {
  checks: {
    flags: ["ranks", "layout", "only", "blocks", "json"],
    what:
      "graph replay checks against core's reference, missing-rank timeouts (--layout masked|contiguous; " +
      "--blocks n: the endpoints' SM budget, 1 takes the masked receive's table-first way)",
  },
  baseline: { flags: ["ranks", "json"], what: "the NCCL baseline against core's reference" },
  deepseek: { flags: ["ranks", "replays", "json"], what: "one DeepSeek-like step, checked and timed" },
  bench: { flags: [], what: "the bench (its own flags: bench --help)" },
  faults: {
    flags: ["ranks", "timeout-ms", "layouts", "json"],
    what: "a rank killed / stalled in each phase of each layout, then a recovery",
  },
  soak: {
    flags: ["steps", "ranks", "sets", "chunk", "max-seconds", "json"],
    what: "many steps changing layouts every step, each checked",
  },
  cycles: { flags: ["count", "ranks", "json"], what: "session create / destroy, leak verdict after warm-up" },
  "abi-fuzz": { flags: ["seed", "iterations", "json"], what: "build/abi_fuzz against a reference case" },
  fuzz: { flags: ["runs", "max-ranks", "max-hidden", "seed", "json"], what: "conformance's fuzzBackend" },
};

export const RIG_USAGE = `node dist/cli.js <command> [--flag value ...]   (GPU checks and benchmarks of the CUDA backend)

${Object.entries(RIG_COMMANDS)
  .map(
    ([name, c]) =>
      `  ${name.padEnd(9)} ${c.what}${c.flags.length ? `\n            flags: ${c.flags.map((f) => `--${f}`).join(" ")}` : ""}`,
  )
  .join("\n")}

  -h, --help  this text. The environment's SWITCHYARD_CUDA_RANKS_PER_GPU and runtime variables apply to every command.
`;

/** What the command line asked for: the command, an ArgReader over its flags, or help. */
export type RigArgs = { help: true } | { help: false; command: string; rest: string[]; arg: ArgReader };

/**
 * Reads argv (after `node cli.js`): the command (default `checks`), then only that command's flags,
 * each with a value; `bench` passes the rest to the bench's own parser. An unknown command or flag,
 * a flag without a value, `--layout` other than masked / contiguous or `--blocks` other than a whole
 * number >= 1 is a RigUsageError.
 */
export function parseRigArgs(argv: string[]): RigArgs {
  if (argv.includes("-h") || argv.includes("--help")) {
    if (argv[0] !== "bench") return { help: true };
  }
  const command = argv[0] === undefined || argv[0].startsWith("-") ? "checks" : argv[0];
  const rest = argv[0] === command ? argv.slice(1) : argv;
  const spec = RIG_COMMANDS[command];
  if (spec === undefined) {
    throw new RigUsageError(`unknown command "${command}": one of ${Object.keys(RIG_COMMANDS).join(", ")}`);
  }
  if (command === "bench") return { help: false, command, rest, arg: (_n, fallback) => fallback };
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseArgs({
      args: rest,
      options: Object.fromEntries(spec.flags.map((f) => [f, { type: "string" as const }])),
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (e) {
    throw new RigUsageError(
      `${command}: ${(e as Error).message} (its flags: ${spec.flags.map((f) => `--${f}`).join(" ")})`,
    );
  }
  const layout = values.layout;
  if (layout !== undefined && layout !== "masked" && layout !== "contiguous") {
    throw new RigUsageError(`${command}: --layout ${String(layout)}: masked or contiguous`);
  }
  const blocks = values.blocks;
  if (blocks !== undefined && !/^[1-9][0-9]*$/.test(String(blocks))) {
    throw new RigUsageError(`${command}: --blocks ${String(blocks)}: a whole number of SMs, 1 or more`);
  }
  const arg: ArgReader = (name, fallback) => {
    const v = values[name];
    return typeof v === "string" ? v : fallback;
  };
  return { help: false, command, rest, arg };
}
