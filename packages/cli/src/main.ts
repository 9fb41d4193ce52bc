#!/usr/bin/env node
import { INTERRUPT_STATUS } from "./io.js";
import { runCli } from "./run.js";

const status = await runCli(process.argv.slice(2));
// After SIGINT / SIGTERM the report is out; the case that was running may still hold the event
// loop (worker processes, timers) and is not waited for.
if (Object.values(INTERRUPT_STATUS).includes(status)) process.exit(status);
process.exitCode = status;
