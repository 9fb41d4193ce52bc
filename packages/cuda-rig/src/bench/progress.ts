/** Where progress goes: a terminal gets one line redrawn in place, a log one line per update. */
export interface ProgressSink {
  write(text: string): void;
  readonly interactive: boolean;
}

/** "[#####.....]  5/10  label  12 s": the bar `width` characters wide. */
export function renderProgress(
  done: number,
  total: number,
  label: string,
  elapsedS: number,
  width = 24,
): string {
  const frac = total > 0 ? Math.min(1, Math.max(0, done / total)) : 1;
  const filled = Math.round(frac * width);
  const bar = `[${"#".repeat(filled)}${".".repeat(width - filled)}]`;
  const count = `${String(done).padStart(String(total).length)}/${total}`;
  return `${bar} ${count}  ${label}  ${Math.round(elapsedS)} s`;
}

/** A progress bar over `total` units of work; `clear()` before printing other lines to the same sink. */
export class Progress {
  private done = 0;
  private shown = false;
  private readonly t0 = Date.now();

  constructor(
    private readonly sink: ProgressSink,
    readonly total: number,
  ) {}

  /** Shows what is running now (without counting it done). */
  show(label: string): void {
    const line = renderProgress(this.done, this.total, label, (Date.now() - this.t0) / 1000);
    if (this.sink.interactive) {
      this.sink.write(`\r\x1b[2K${line}`);
      this.shown = true;
    } else {
      this.sink.write(`${line}\n`);
    }
  }

  /** Counts one unit done. */
  tick(): void {
    this.done = Math.min(this.total, this.done + 1);
  }

  /** Erases the live line (terminal only) so a table row can be printed above it. */
  clear(): void {
    if (this.sink.interactive && this.shown) this.sink.write("\r\x1b[2K");
    this.shown = false;
  }
}
