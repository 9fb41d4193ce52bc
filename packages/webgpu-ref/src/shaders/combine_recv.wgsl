// combine_recv.wgsl: combine receive on home rank C.rank (core backend/reference/combineRecv.ts).
//
// Checks every expert rank's signal word (missing, stale, malformed, more than M records) and
// that each announces as many records as this rank's tokens route to it (tokens with a used slot
// naming one of its experts); then, combineWeights expert: y[t] = bf16(sum over ranks r ascending
// that t routes to of fp32(combineX[r][t])); home (P_combineAtHome): y[t] = bf16(sum over used
// slots k ascending of fp32(w[t][k] * combineX[t][k])), w the weights passed to combineRecv (in
// topkWeights). Both: fp32 accumulation from +0, one final rounding (core reference/combine.ts).
// Dispatch order (host: stages/combineRecv.ts): check (per heap window), total, clear, then for
// r = 0..R-1 ascending: sum (per heap window), or at home for k = 0..K-1 ascending: sum_slot
// (per heap window); finish.

/// Report, routing [M, K] (i32), weights [M, K] (f32; at home the ones passed to combineRecv),
/// combineCounts [R] (the words as read), combineExpected [R], combineRows [R] (used slots of
/// this rank's tokens on each rank: the (token, slot) rows it sends home).
@group(0) @binding(2) var<storage, read_write> work: array<u32>;
@group(0) @binding(3) var<storage, read> workR: array<u32>;
/// This rank's heap (window C.a): signals as atomics, combineX (expert [R, M, H], home [M, K, H]) bf16 as words.
@group(0) @binding(4) var<storage, read_write> heapSig: array<atomic<u32>>;
@group(0) @binding(5) var<storage, read> rd: array<u32>;
/// acc [T, H] f32 (the running sums) and y [T, ceil(H / 2)] words.
@group(0) @binding(6) var<storage, read_write> outbox: array<u32>;

/// One invocation per expert rank: read its signal word.
@compute @workgroup_size(WG)
fn check(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let peer = lin(gid, nwg);
  if (peer >= p(P_ranks)) {
    return;
  }
  let addr = p(P_combineSignal_offset) + peer * 4u;
  if (mine_a(addr)) {
    work[p(P_work_combineCounts) + peer] = atomicLoad(&heapSig[at_a(addr)]);
  }
}

/// Whether token t has a used slot naming an expert of rank r (routing in `work` or `workR`).
fn routes_to(t: u32, r: u32) -> bool {
  let K = p(P_topK);
  let L = p(P_localExperts);
  for (var k = 0u; k < K; k++) {
    let e = workR[p(P_work_topkIdx) + t * K + k];
    if (e != 0xffffffffu && e / L == r) {
      return true;
    }
  }
  return false;
}

/// One invocation: the words in peer order, then each expert rank's records (partials, or tokens
/// at home) against the tokens that route to it (peer order); also the rows each sends (combineRows).
@compute @workgroup_size(WG)
fn total(@builtin(global_invocation_id) gid: vec3u) {
  if (gid.x != 0u) {
    return;
  }
  let R = p(P_ranks);
  let K = p(P_topK);
  let L = p(P_localExperts);
  let M = p(P_maxTokensPerRank);
  let r = p(P_work_report);
  for (var i = 0u; i < 8u; i++) {
    work[r + i] = 0u;
  }
  work[r] = NONE;
  for (var peer = 0u; peer < R; peer++) {
    let w = work[p(P_work_combineCounts) + peer];
    let f = signal_fault(w, C.epoch, M);
    if (f != 0u) {
      work[r] = peer;
      work[r + 1u] = f;
      work[r + 2u] = w;
      work[r + 3u] = M;
      return;
    }
  }
  let expected = p(P_work_combineExpected);
  let rows = p(P_work_combineRows);
  for (var peer = 0u; peer < R; peer++) {
    work[expected + peer] = 0u;
    work[rows + peer] = 0u;
  }
  for (var t = 0u; t < C.tokens; t++) {
    for (var k = 0u; k < K; k++) {
      let e = work[p(P_work_topkIdx) + t * K + k];
      if (e == 0xffffffffu) {
        continue;
      }
      work[rows + e / L] += 1u;
      var first = true; // the first used slot of t on rank e / L
      for (var k2 = 0u; k2 < k; k2++) {
        let e2 = work[p(P_work_topkIdx) + t * K + k2];
        if (e2 != 0xffffffffu && e2 / L == e / L) {
          first = false;
        }
      }
      if (first) {
        work[expected + e / L] += 1u;
      }
    }
  }
  for (var peer = 0u; peer < R; peer++) {
    let w = work[p(P_work_combineCounts) + peer];
    if (signal_count(w) != work[expected + peer]) {
      work[r] = peer;
      work[r + 1u] = FAULT_ROWS;
      work[r + 2u] = w;
      work[r + 3u] = signal_count(w);
      work[r + 4u] = work[expected + peer];
      return;
    }
  }
}

/// One invocation per element of acc [T, H]: 0.
@compute @workgroup_size(WG)
fn clear(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = lin(gid, nwg);
  if (i < C.tokens * p(P_hidden)) {
    outbox[p(P_outbox_acc) + i] = 0u;
  }
}

/// Expert rank r = C.peer's partials: workgroup y strides over tokens, invocations over the
/// elements of a token's row; acc = fp32(acc + partial) where t routes to r and window C.a holds
/// the row's start.
@compute @workgroup_size(WG)
fn sum(
  @builtin(workgroup_id) wg: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) li: u32,
) {
  let H = p(P_hidden);
  let region = p(P_combineX_offset);
  if (workR[p(P_work_report)] != NONE) {
    return;
  }
  for (var t = wg.y; t < C.tokens; t += nwg.y) {
    let a = (C.peer * p(P_maxTokensPerRank) + t) * H;
    if (!routes_to(t, C.peer) || !mine_a(region + (a >> 1u) * 4u)) {
      continue;
    }
    for (var h = wg.x * WG + li; h < H; h += nwg.x * WG) {
      let e = a + h;
      let x = bf16_to_f32(half_of(rd[at_a(region + (e >> 1u) * 4u)], e));
      let at = p(P_outbox_acc) + t * H + h;
      outbox[at] = bitcast<u32>(bitcast<f32>(outbox[at]) + x);
    }
  }
}

/// Slot k = C.peer of every token (at home): workgroup y strides over tokens, invocations over the
/// elements of a row; acc = fp32(acc + fp32(w[t][k] * combineX[t][k])) where slot k of t is used
/// and window C.a holds the row's start.
@compute @workgroup_size(WG)
fn sum_slot(
  @builtin(workgroup_id) wg: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) li: u32,
) {
  let H = p(P_hidden);
  let K = p(P_topK);
  let k = C.peer;
  let region = p(P_combineX_offset);
  if (workR[p(P_work_report)] != NONE) {
    return;
  }
  for (var t = wg.y; t < C.tokens; t += nwg.y) {
    let a = (t * K + k) * H;
    if (workR[p(P_work_topkIdx) + t * K + k] == 0xffffffffu || !mine_a(region + (a >> 1u) * 4u)) {
      continue;
    }
    let w = bitcast<f32>(workR[p(P_work_topkWeights) + t * K + k]);
    for (var h = wg.x * WG + li; h < H; h += nwg.x * WG) {
      let e = a + h;
      let x = bf16_to_f32(half_of(rd[at_a(region + (e >> 1u) * 4u)], e));
      let at = p(P_outbox_acc) + t * H + h;
      outbox[at] = bitcast<u32>(bitcast<f32>(outbox[at]) + product(w, x));
    }
  }
}

/// One invocation per word of y [T, ceil(H / 2)]: two sums rounded once to bf16.
@compute @workgroup_size(WG)
fn finish(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let H = p(P_hidden);
  let PWo = (H + 1u) / 2u;
  let i = lin(gid, nwg);
  if (i >= C.tokens * PWo || workR[p(P_work_report)] != NONE) {
    return;
  }
  let t = i / PWo;
  let h = 2u * (i % PWo);
  var y = f32_bits_to_bf16(outbox[p(P_outbox_acc) + t * H + h]);
  if (h + 1u < H) {
    y |= f32_bits_to_bf16(outbox[p(P_outbox_acc) + t * H + h + 1u]) << 16u;
  }
  outbox[p(P_outbox_y) + i] = y;
}
