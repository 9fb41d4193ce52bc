/** The signals that interrupt a run (`timeout` sends SIGTERM, Ctrl-C SIGINT). */
export type InterruptSignal = "SIGINT" | "SIGTERM";

/** The exit status after an interruption: 128 + the signal's number, as a shell reports it. */
export const INTERRUPT_STATUS: Record<InterruptSignal, number> = { SIGINT: 130, SIGTERM: 143 };

/** Where the command line writes, its clock and its signals: injectable so tests can capture them. */
export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  /** Whether stderr is a terminal (live progress line) or a log (one line per property, and a line every ~15 s of a long one). */
  readonly interactive: boolean;
  readonly cwd: string;
  /** Milliseconds, for the progress lines' timing. */
  now(): number;
  /** Calls `handler` on SIGINT / SIGTERM until the returned function is called. */
  onInterrupt(handler: (signal: InterruptSignal) => void): () => void;
}

export const processIo: CliIo = {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
  // The bin shim runs the command line in a child whose stderr is a pipe; it says when its own is a terminal.
  interactive: process.stderr.isTTY === true || process.env.SWITCHYARD_STDERR_TTY === "1",
  cwd: process.cwd(),
  now: () => performance.now(),
  onInterrupt(handler) {
    let received = false;
    const on = (signal: InterruptSignal) => {
      // A second signal ends the process at once, as it would without this handler.
      if (received) process.exit(INTERRUPT_STATUS[signal]);
      received = true;
      handler(signal);
    };
    process.on("SIGINT", on);
    process.on("SIGTERM", on);
    return () => {
      process.off("SIGINT", on);
      process.off("SIGTERM", on);
    };
  },
};
