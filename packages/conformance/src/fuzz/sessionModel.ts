import {
  computeLayout,
  type DispatchResult,
  type EpConfig,
  type RankInput,
  type Session,
} from "@switchyard/core";
import type { StepSpec } from "../generators/step.js";
import { type ExpertFn, provenanceExperts } from "../harness/experts.js";
import { makeInputs } from "../harness/inputs.js";
import { ConformanceMismatch, errorMessage, errorName } from "../harness/problems.js";
import { verifyStep } from "../harness/verify.js";
import { countRefusal, type FuzzCounts } from "./counts.js";
import { snapshot } from "./values.js";

export const CALLS = ["dispatchSend", "dispatchRecv", "combineSend", "combineRecv"] as const;
export type Call = (typeof CALLS)[number];

/** What one step has seen so far, until every rank's combineRecv is in and it is checked. */
interface StepRecord {
  inputs: RankInput[];
  dispatch: DispatchResult[];
  y: Uint16Array[];
  /** Checks that results handed to the caller were not written afterwards. */
  results: (() => string[])[];
  done: number;
}

/**
 * The session as the fuzzer believes it is: each rank's phase (calls made in its step) and step,
 * whether it was destroyed, and the steps in flight. `call` makes a call and checks the outcome
 * against what the model expects; valid calls move the model, refused ones must move nothing.
 */
export class SessionModel {
  readonly R: number;
  readonly rows: number;
  readonly phase: number[];
  readonly step: number[];
  destroyed = false;
  private readonly records = new Map<number, StepRecord>();
  private readonly experts: ExpertFn;

  constructor(
    readonly config: Readonly<EpConfig>,
    readonly session: Session,
    private readonly steps: readonly StepSpec[],
    private readonly counts: FuzzCounts,
  ) {
    this.R = config.ranks;
    this.rows = computeLayout(config).rows;
    this.phase = new Array(this.R).fill(0);
    this.step = new Array(this.R).fill(0);
    this.experts = provenanceExperts(config);
  }

  record(s: number): StepRecord {
    let rec = this.records.get(s);
    if (!rec) {
      rec = {
        inputs: makeInputs(this.config, this.steps[s % this.steps.length]),
        dispatch: [],
        y: [],
        results: [],
        done: 0,
      };
      this.records.set(s, rec);
    }
    return rec;
  }

  /** Whether rank r's next call is allowed now (receives wait for every peer's sends of the step). */
  canProgress(r: number): boolean {
    const s = this.step[r];
    const need = this.phase[r] === 1 ? 1 : this.phase[r] === 3 ? 3 : -1;
    if (need < 0) return true;
    return this.step.every((q, i) => q > s || (q === s && this.phase[i] >= need));
  }

  /** True when every rank is idle in the same step (no step in flight). */
  settled(): boolean {
    return this.phase.every((p) => p === 0) && this.step.every((s) => s === this.step[0]);
  }

  /**
   * Makes a call. `expected` null: it is valid and must succeed; else it must fail with one of
   * those error names. Either way the arrays in `args` must be left as they were.
   */
  async call<T>(
    label: string,
    expected: readonly string[] | null,
    fn: () => Promise<T>,
    args: unknown[],
  ): Promise<T> {
    const checks = args.map((a) => snapshot(a));
    let result: T | undefined;
    let error: unknown = null;
    let threw = false;
    try {
      result = await fn();
    } catch (e) {
      threw = true;
      error = e;
    }
    const modified = checks.flatMap((c) => c());
    if (modified.length > 0)
      throw new ConformanceMismatch(`${label}: wrote into the caller's ${modified.join(", ")}`);
    if (expected === null) {
      this.counts.validCalls++;
      if (threw) {
        const m = new ConformanceMismatch(
          `${label}: a valid call failed: ${errorName(error)}: ${errorMessage(error)}`,
        );
        (m as Error & { cause?: unknown }).cause = error;
        throw m;
      }
      return result as T;
    }
    this.counts.badTried++;
    if (!threw) throw new ConformanceMismatch(`${label}: accepted, expected ${expected.join(" or ")}`);
    const name = errorName(error);
    if (!expected.includes(name))
      throw new ConformanceMismatch(
        `${label}: expected ${expected.join(" or ")}, got ${name}: ${errorMessage(error)}`,
      );
    countRefusal(this.counts, name);
    return undefined as T;
  }

  /** Rank r's next valid call (the model must allow it), then the model moves; a finished step is checked. */
  async legal(r: number): Promise<void> {
    const s = this.step[r];
    const rec = this.record(s);
    const call = CALLS[this.phase[r]];
    const label = `step ${s}: rank ${r} ${call}`;
    const { session } = this;
    if (call === "dispatchSend") {
      await this.call(label, null, () => session.dispatchSend(r, rec.inputs[r]), [rec.inputs[r]]);
    } else if (call === "dispatchRecv") {
      rec.dispatch[r] = await this.call(label, null, () => session.dispatchRecv(r), []);
      rec.results.push(snapshot(rec.dispatch[r]));
    } else if (call === "combineSend") {
      const out = this.experts(r, rec.dispatch[r], this.rows);
      await this.call(label, null, () => session.combineSend(r, out), [out]);
    } else {
      rec.y[r] = await this.call(label, null, () => session.combineRecv(r), []);
      rec.done++;
    }
    this.phase[r] = (this.phase[r] + 1) % 4;
    if (this.phase[r] === 0) this.step[r]++;
    if (rec.done === this.R) this.verify(s, rec);
  }

  /** The valid input rank r would send now (its step's). */
  validInput(r: number): RankInput {
    return this.record(this.step[r]).inputs[r];
  }

  /** Takes `input` (valid, maybe edited) as rank r's input of its step, if the semantics allow it. */
  substitute(r: number, input: RankInput, sameValues: boolean): boolean {
    if (this.config.dpSize > 1 && !sameValues) return false;
    this.record(this.step[r]).inputs[r] = input;
    return true;
  }

  private verify(s: number, rec: StepRecord): void {
    const label = `step ${s}`;
    verifyStep(
      this.config,
      rec.inputs,
      { dispatch: rec.dispatch, y: rec.y },
      { payload: true, combine: true },
      label,
    );
    rec.results.forEach((check, i) => {
      const changed = check();
      if (changed.length > 0)
        throw new ConformanceMismatch(
          `${label}: a dispatch result handed out (#${i}) was later changed: ${changed.join(", ")}`,
        );
    });
    this.records.delete(s);
    this.counts.stepsVerified++;
  }

  /** Valid calls until no step is in flight; if none was, one whole step. */
  async finish(): Promise<void> {
    const wasSettled = this.settled();
    let guard = 0;
    do {
      const ready = Array.from({ length: this.R }, (_, r) => r).filter((r) => this.canProgress(r));
      // Lowest (step, phase) first, so ranks that went ahead wait for the step in flight.
      ready.sort((a, b) => this.step[a] - this.step[b] || this.phase[a] - this.phase[b]);
      if (ready.length === 0) throw new Error(`fuzz model stuck: phases ${this.phase}, steps ${this.step}`);
      await this.legal(ready[0]);
      if (++guard > 16 * this.R + 16) throw new Error("fuzz model: finish did not terminate");
    } while (!this.settled() || (wasSettled && guard < 4 * this.R));
  }
}
