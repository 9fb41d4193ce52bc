/** Where the command line writes: injectable so tests can capture it. */
export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  /** Whether stderr is a terminal (live progress line) or a log (one line per property). */
  readonly interactive: boolean;
  readonly cwd: string;
}

export const processIo: CliIo = {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
  interactive: process.stderr.isTTY === true,
  cwd: process.cwd(),
};
