// send_rows.wgsl: included by the two sending stages (dispatch_send, dispatch_write): their
// bindings and the put of one route record's payload, scales and words into a destination heap.

/// Routing [M, K] i32 and weights [M, K] f32 (P_work_topkIdx / P_work_topkWeights); the plan:
/// sendCounts [E] rows per global expert, sendRecs [R] records per destination, sendArgs [R, 8],
/// recs [R(dst), M, W] the route records for each destination; the continuation's cnt [R, E],
/// first [E], flag [4] and wArgs [R, 8].
@group(0) @binding(2) var<storage, read_write> work: array<u32>;
@group(0) @binding(3) var<storage, read> workR: array<u32>;
/// Input x [T, H] in the input dtype, its scales [T, S], the quantised payload [T, H] fp8 and
/// scales [T, S] (see plan.ts `inbox`); contiguous continuations bind the sender's kept copy.
@group(0) @binding(4) var<storage, read_write> inbox: array<u32>;
@group(0) @binding(5) var<storage, read> inboxR: array<u32>;
/// The destination rank's symmetric heap (window C.a), as words and as atomics.
@group(0) @binding(6) var<storage, read_write> heap: array<u32>;
@group(0) @binding(7) var<storage, read_write> heapSig: array<atomic<u32>>;

fn send_bf16(e: u32) -> u32 {
  return half_of(inboxR[p(P_inbox_send) + (e >> 1u)], e);
}

/// bf16 payload of token t into row `row` of the region at byte `region` (element a = row * H):
/// phase 0 the whole words (invocations `first`, `first + step`, ...), phases 1 and 2 the row's
/// last / first element where it shares a word with the next / previous row.
fn put_bf16(region: u32, row: u32, t: u32, first: u32, step: u32) {
  let H = p(P_hidden);
  let a = row * H;
  let sa = t * H;
  if (!mine_a(region + (a >> 1u) * 4u)) {
    return;
  }
  if (C.phase == 0u) {
    let w0 = (a + 1u) >> 1u;
    let e0 = sa + 2u * w0 - a;
    let d = at_a(region + w0 * 4u);
    let s = p(P_inbox_send) + (e0 >> 1u);
    let aligned = (e0 & 1u) == 0u;
    let words = (a + H - 2u * w0) >> 1u;
    for (var v = first; v < words; v += step) {
      if (aligned) {
        heap[d + v] = inboxR[s + v];
      } else {
        heap[d + v] = (inboxR[s + v] >> 16u) | (inboxR[s + v + 1u] << 16u);
      }
    }
  } else if (first == 0u) {
    if (C.phase == 1u && ((a + H) & 1u) == 1u) {
      let i = at_a(region + ((a + H - 1u) >> 1u) * 4u);
      heap[i] = (heap[i] & 0xffff0000u) | send_bf16(sa + H - 1u);
    }
    if (C.phase == 2u && (a & 1u) == 1u) {
      let i = at_a(region + (a >> 1u) * 4u);
      heap[i] = (heap[i] & 0xffffu) | (send_bf16(sa) << 16u);
    }
  }
}

/// Token t's payload (dispatch dtype) and scales into row `row` of the payload region at byte
/// `xregion` and the scales region at byte `sregion`, each part where window C.a holds its start.
fn put_row(xregion: u32, sregion: u32, row: u32, t: u32, first: u32, step: u32) {
  let H = p(P_hidden);
  let S = p(P_scalesPerRow);
  if (p(P_dispatchElemBytes) == 1u) {
    let start = xregion + row * H;
    if (C.phase == 0u && mine_a(start)) {
      let d = at_a(start);
      let s = p(P_inbox_send) + t * (H / 4u);
      for (var v = first; v < H / 4u; v += step) {
        heap[d + v] = inboxR[s + v];
      }
    }
  } else {
    put_bf16(xregion, row, t, first, step);
  }
  let scales = sregion + row * S * 4u;
  if (C.phase == 0u && S > 0u && mine_a(scales)) {
    let d = at_a(scales);
    let s = p(P_inbox_sendScales) + t * S;
    for (var w = first; w < S; w += step) {
      heap[d + w] = inboxR[s + w];
    }
  }
}

/// The words of the route record at word `rec` of work into dispatchRoutes[C.rank][j] of the
/// destination (its first 2 + 4 n words, as core's writeRecord).
fn put_record(rec: u32, j: u32, first: u32, step: u32) {
  let W = p(P_routeWords);
  let at = p(P_dispatchRoutes_offset) + (C.rank * p(P_maxTokensPerRank) + j) * W * 4u;
  if (C.phase != 0u || !mine_a(at)) {
    return;
  }
  let d = at_a(at);
  let n = record_words(workR[rec + 1u]);
  for (var w = first; w < n; w += step) {
    heap[d + w] = workR[rec + w];
  }
}

/// Indirect args at word `at` for `rows` rows: (groups, y, 1) for phase 0, (1, y, 1) for phases 1 / 2.
fn write_args(at: u32, rows: u32) {
  let y = min(rows, MAX_GROUPS);
  work[at] = C.groups;
  work[at + 1u] = y;
  work[at + 2u] = 1u;
  work[at + 3u] = 0u;
  work[at + 4u] = 1u;
  work[at + 5u] = y;
  work[at + 6u] = 1u;
  work[at + 7u] = 0u;
}
