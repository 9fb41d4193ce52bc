import { bf16ToNumber, type DispatchResult, deliveredRows, type RankInput } from "@switchyard/core";
import { brokenBackend, copyResult, ForwardingSession, valid } from "./wrap.js";

/** Drops the last row a source sent each local expert that got any (the count is one short). */
export const dropRow = brokenBackend(
  "drop-a-row",
  (inner) =>
    new (class extends ForwardingSession {
      override async dispatchRecv(rank: number): Promise<DispatchResult> {
        const r = copyResult(await this.inner.dispatchRecv(rank));
        const R = this.config.ranks;
        for (let i = 0; i < r.sourceCounts.length; i++) {
          if (r.sourceCounts[i] > 0) {
            r.sourceCounts[i]--;
            r.expertCounts[Math.floor(i / R)]--;
            break;
          }
        }
        return r;
      }
    })(inner),
);

/** Reports each row's top-k slot one too high. */
export const offByOneSlot = brokenBackend(
  "off-by-one-slot",
  (inner) =>
    new (class extends ForwardingSession {
      override async dispatchRecv(rank: number): Promise<DispatchResult> {
        const r = copyResult(await this.inner.dispatchRecv(rank));
        for (const { row } of deliveredRows(this.config, r)) r.meta[row * 4 + 2]++;
        return r;
      }
    })(inner),
);

/** Treats -1 as a real expert: unused slots go to the lowest expert the token does not already use. */
export const ignoreUnused = brokenBackend(
  "ignores-minus-one",
  (inner) =>
    new (class extends ForwardingSession {
      override dispatchSend(rank: number, input: RankInput): Promise<void> {
        if (!valid(this, rank, input)) return this.inner.dispatchSend(rank, input);
        const K = this.config.topK;
        const idx = input.topkIdx.slice();
        for (let t = 0; t < idx.length / K; t++) {
          const row = idx.subarray(t * K, (t + 1) * K);
          for (let k = 0; k < K; k++) {
            if (row[k] >= 0) continue;
            let e = 0;
            while (row.includes(e)) e++;
            row[k] = e;
          }
        }
        return this.inner.dispatchSend(rank, { ...input, topkIdx: idx });
      }
    })(inner),
);

/** Never resets counts: from the second step on, each region reports max(previous, current) rows. */
export const staleCounts = brokenBackend(
  "stale-counts",
  (inner) =>
    new (class extends ForwardingSession {
      private readonly previous = new Map<number, Int32Array>();
      override async dispatchRecv(rank: number): Promise<DispatchResult> {
        const r = copyResult(await this.inner.dispatchRecv(rank));
        const prev = this.previous.get(rank);
        this.previous.set(rank, r.sourceCounts.slice());
        if (prev) {
          const R = this.config.ranks;
          r.expertCounts.fill(0);
          for (let i = 0; i < r.sourceCounts.length; i++) {
            r.sourceCounts[i] = Math.max(r.sourceCounts[i], prev[i]);
            r.expertCounts[Math.floor(i / R)] += r.sourceCounts[i];
          }
        }
        return r;
      }
    })(inner),
);

/** Swaps the provenance (meta) of the first two rows of each local expert; the payloads stay put. */
export const swappedProvenance = brokenBackend(
  "swapped-provenance",
  (inner) =>
    new (class extends ForwardingSession {
      override async dispatchRecv(rank: number): Promise<DispatchResult> {
        const r = copyResult(await this.inner.dispatchRecv(rank));
        const rows = deliveredRows(this.config, r);
        for (let i = 0; i + 1 < rows.length; i++) {
          if (rows[i].localExpert !== rows[i + 1].localExpert) continue;
          const a = r.meta.slice(rows[i].row * 4, rows[i].row * 4 + 4);
          r.meta.copyWithin(rows[i].row * 4, rows[i + 1].row * 4, rows[i + 1].row * 4 + 4);
          r.meta.set(a, rows[i + 1].row * 4);
          i++;
        }
        return r;
      }
    })(inner),
);

/** Flushes subnormal bf16 payload values to (signed) zero on the way, as fast-math GPU code might. */
export const flushSubnormals = brokenBackend(
  "flushes-subnormals",
  (inner) =>
    new (class extends ForwardingSession {
      override async dispatchRecv(rank: number): Promise<DispatchResult> {
        const r = copyResult(await this.inner.dispatchRecv(rank));
        if (r.x instanceof Uint16Array) {
          for (let i = 0; i < r.x.length; i++) {
            const v = bf16ToNumber(r.x[i]);
            if (v !== 0 && Math.abs(v) < 2 ** -126) r.x[i] &= 0x8000;
          }
        }
        return r;
      }
    })(inner),
);

/** Leaves padding rows' meta as whatever was there (here: srcRank 0) instead of -1. */
export const paddingMeta = brokenBackend(
  "padding-meta",
  (inner) =>
    new (class extends ForwardingSession {
      override async dispatchRecv(rank: number): Promise<DispatchResult> {
        const r = copyResult(await this.inner.dispatchRecv(rank));
        for (let i = 0; i < r.meta.length; i += 4) if (r.meta[i] === -1) r.meta[i] = 0;
        return r;
      }
    })(inner),
);

/** Delivers each region's / block's rows in reverse order (rows, payloads and meta stay together). */
export const reversedRows = brokenBackend(
  "reversed-rows",
  (inner) =>
    new (class extends ForwardingSession {
      override async dispatchRecv(rank: number): Promise<DispatchResult> {
        const src = await this.inner.dispatchRecv(rank);
        const r = copyResult(src);
        const H = this.config.hidden;
        const S = r.scales ? r.scales.length / (r.meta.length / 4) : 0;
        const rows = deliveredRows(this.config, src);
        const groups = new Map<string, number[]>();
        for (const { row, localExpert } of rows) {
          const key =
            this.config.layout === "masked"
              ? String(Math.floor(row / this.config.maxTokensPerRank))
              : String(localExpert);
          groups.set(key, [...(groups.get(key) ?? []), row]);
        }
        for (const list of groups.values()) {
          list.forEach((to, i) => {
            const from = list[list.length - 1 - i];
            r.x.set(src.x.subarray(from * H, (from + 1) * H), to * H);
            r.meta.set(src.meta.subarray(from * 4, from * 4 + 4), to * 4);
            if (r.scales && src.scales) r.scales.set(src.scales.subarray(from * S, (from + 1) * S), to * S);
          });
        }
        return r;
      }
    })(inner),
);

/**
 * Masked layout: leaves each source's rows in a region of its own (row e*R*M + s*M + i, as
 * version 1 did) instead of packing the expert's rows at the front of its block: holes.
 */
export const maskedHoles = brokenBackend(
  "masked-holes",
  (inner) =>
    new (class extends ForwardingSession {
      override async dispatchRecv(rank: number): Promise<DispatchResult> {
        const packed = await this.inner.dispatchRecv(rank);
        if (this.config.layout !== "masked") return packed;
        const r = copyResult(packed);
        const { ranks: R, maxTokensPerRank: M, hidden: H } = this.config;
        const S = packed.scales ? packed.scales.length / (packed.meta.length / 4) : 0;
        r.meta.fill(0);
        for (let e = 0; e < r.expertOffsets.length; e++) {
          let from = packed.expertOffsets[e];
          for (let s = 0; s < R; s++) {
            for (let i = 0; i < packed.sourceCounts[e * R + s]; i++, from++) {
              const to = e * R * M + s * M + i;
              r.x.set(packed.x.subarray(from * H, (from + 1) * H), to * H);
              if (S && r.scales) r.scales.set(packed.scales!.subarray(from * S, (from + 1) * S), to * S);
              r.meta.set(packed.meta.subarray(from * 4, from * 4 + 4), to * 4);
            }
          }
        }
        return r;
      }
    })(inner),
);
