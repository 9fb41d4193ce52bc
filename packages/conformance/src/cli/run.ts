import { runDemo } from "../demo/index.js";
import { benchCommand } from "./bench.js";
import { conformanceCommand } from "./conformance.js";
import { USAGE } from "./help.js";
import { type CliIo, processIo } from "./io.js";

/** The `switchyard` command line: dispatches to a subcommand and returns the exit status. */
export async function runCli(argv: string[], io: CliIo = processIo): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case undefined:
      case "help":
      case "--help":
      case "-h":
        io.out(USAGE);
        return 0;
      case "conformance":
        if (rest.includes("--help") || rest.includes("-h")) {
          io.out(USAGE);
          return 0;
        }
        return await conformanceCommand(rest, io);
      case "demo":
        return await runDemo(rest);
      case "bench":
        return await benchCommand(rest, io);
      default:
        io.err(`switchyard: unknown command "${command}"\n\n${USAGE}`);
        return 2;
    }
  } catch (e) {
    const usage =
      e instanceof Error &&
      (e.name === "UsageError" || (e as { code?: string }).code?.startsWith("ERR_PARSE_ARGS"));
    io.err(`switchyard ${command}: ${e instanceof Error ? e.message : String(e)}\n`);
    if (usage) io.err(`run \`switchyard --help\` for the options\n`);
    return usage ? 2 : 1;
  }
}
