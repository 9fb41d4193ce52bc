import { benchCommand } from "./bench.js";
import { conformanceCommand } from "./conformance.js";
import { runDemo } from "./demo/index.js";
import { USAGE } from "./help.js";
import { type CliIo, processIo } from "./io.js";
import { packageVersion } from "./version.js";

/** Errors that mean "the command cannot start as asked": exit status 2, as the help documents. */
const STATUS_2 = new Set(["UsageError", "BackendLoadError", "CapabilitiesError", "BackendUnavailableError"]);

function isParseError(e: unknown): boolean {
  return (e as { code?: string } | null)?.code?.startsWith("ERR_PARSE_ARGS") === true;
}

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
      case "--version":
      case "-v":
        io.out(`switchyard ${packageVersion()}\n`);
        return 0;
      case "conformance":
        if (rest.includes("--help") || rest.includes("-h")) {
          io.out(USAGE);
          return 0;
        }
        return await conformanceCommand(rest, io);
      case "demo":
        return await runDemo(rest, io);
      case "bench":
        return await benchCommand(rest, io);
      default:
        io.err(`switchyard: unknown command "${command}"\n\n${USAGE}`);
        return 2;
    }
  } catch (e) {
    const usage = isParseError(e) || (e instanceof Error && e.name === "UsageError");
    const status2 = usage || (e instanceof Error && STATUS_2.has(e.name));
    io.err(`switchyard ${command}: ${e instanceof Error ? e.message : String(e)}\n`);
    if (usage) io.err(`run \`switchyard ${command === "demo" ? "demo " : ""}--help\` for the options\n`);
    return status2 ? 2 : 1;
  }
}
