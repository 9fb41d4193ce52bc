#!/usr/bin/env node
// The `switchyard` command. A committed shim, so npm links the command at install time, before
// the TypeScript build has written dist/.
//
// It runs the command line in a child process and passes its stderr through, less Dawn's notices
// that it lowered adapter limits (printed by native code when a WebGPU device is made, where no
// JavaScript can catch them): they say nothing a user can act on. Signals go to the child.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const DAWN_NOTICE = /^Warning: \w+ artificially reduced from \d+ to \d+/;
const main = fileURLToPath(new URL("../dist/main.js", import.meta.url));

if (process.env.SWITCHYARD_CLI_CHILD === "1") {
  import("../dist/main.js").catch((error) => {
    if (error?.code === "ERR_MODULE_NOT_FOUND" && String(error.message).includes(main)) {
      console.error(
        "switchyard: the packages are not built yet; run `npx turbo run build` (or bash scripts/setup.sh) first",
      );
      process.exit(2);
    }
    throw error;
  });
} else {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), ...process.argv.slice(2)], {
    stdio: ["inherit", "inherit", "pipe"],
    env: {
      ...process.env,
      SWITCHYARD_CLI_CHILD: "1",
      ...(process.stderr.isTTY ? { SWITCHYARD_STDERR_TTY: "1" } : {}),
    },
  });
  let pending = "";
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (chunk) => {
    pending += chunk;
    const lines = pending.split("\n");
    pending = lines.pop();
    const kept = lines.filter((l) => !DAWN_NOTICE.test(l));
    if (kept.length > 0) process.stderr.write(`${kept.join("\n")}\n`);
    // A partial line that cannot be such a notice (a live progress line) goes out at once.
    if (pending !== "" && !"Warning:".startsWith(pending.slice(0, 8))) {
      process.stderr.write(pending);
      pending = "";
    }
  });
  child.stderr.on("end", () => {
    if (pending !== "" && !DAWN_NOTICE.test(pending)) process.stderr.write(pending);
  });
  for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => child.kill(signal));
  child.on("exit", (code, signal) => {
    process.exitCode = code ?? 128 + ({ SIGINT: 2, SIGTERM: 15 }[signal] ?? 1);
  });
}
