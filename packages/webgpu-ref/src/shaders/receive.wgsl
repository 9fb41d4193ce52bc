// receive.wgsl: what rank C.rank received in this step's dispatch, read from its heap and checked
// exactly in core's order (core backend/reference/received.ts, readReceived). Run by dispatch
// receive and again by combine send (which reads everything again, as the reference does).
//
// 1. every source's counts for this rank's local experts (masked countSignal[s][e], contiguous
//    countSignal[s][rank L + e]): missing, stale, malformed, more than M;
// 2. per source s: dispatchSignal[s] (records, at most M), then each record j: token < M,
//    n in 1..J, each entry's local expert < L, slot < K, index < the count announced; then each
//    entry's output row named once; after s's records, each local expert named exactly as often as
//    its count. The first fault goes to the status words and nothing moves.
// Output rows: masked e R M + sum over s' < s of count[s'][e] + index (packed index: the same
// with the expert's first packed row instead of e R M); contiguous: padded blocks, packed index = row.
// Dispatch order (host: stages/receive.ts): snapshot, routes (per heap window), clear, check.

/// report [16 + L R + 2 L + R]; saved [R + R L]; prefix [L, R]; npre [L]; rrecs [R, M, W] the
/// records as read; entN [R, M, J] packed index of each entry; deliv [P] entry of each packed row
/// ((s M + j) J + i, PAD | e for padding, NONE unnamed); seen [L]; recvArgs [8].
@group(0) @binding(2) var<storage, read_write> work: array<u32>;
/// This rank's heap (window C.a): the signal words, as atomics.
@group(0) @binding(4) var<storage, read_write> heapSig: array<atomic<u32>>;
/// This rank's heap (window C.a): dispatchRoutes [R, M, W].
@group(0) @binding(5) var<storage, read> rd: array<u32>;

/// One invocation per signal word: dispatchSignal[s] into saved[s], s's counts into saved[R + s L + e].
@compute @workgroup_size(WG)
fn snapshot(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let q = lin(gid, nwg);
  let R = p(P_ranks);
  let L = p(P_localExperts);
  if (q >= R + R * L) {
    return;
  }
  var addr = p(P_dispatchSignal_offset) + q * 4u;
  if (q >= R) {
    let s = (q - R) / L;
    let e = (q - R) % L;
    var at = s * L + e;
    if (contiguous()) {
      at = s * p(P_experts) + C.rank * L + e;
    }
    addr = p(P_countSignal_offset) + at * 4u;
  }
  if (mine_a(addr)) {
    work[p(P_work_saved) + q] = atomicLoad(&heapSig[at_a(addr)]);
  }
}

/// One invocation per record slot (s, j) of dispatchRoutes: its W words into rrecs.
@compute @workgroup_size(WG)
fn routes(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let q = lin(gid, nwg);
  let W = p(P_routeWords);
  if (q >= p(P_ranks) * p(P_maxTokensPerRank)) {
    return;
  }
  let start = p(P_dispatchRoutes_offset) + q * W * 4u;
  if (mine_a(start)) {
    for (var w = 0u; w < W; w++) {
      work[p(P_work_rrecs) + q * W + w] = rd[at_a(start) + w];
    }
  }
}

/// One invocation per packed row: deliv[n] = NONE (no entry names it yet).
@compute @workgroup_size(WG)
fn clear(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let n = lin(gid, nwg);
  if (n < p(P_packRows)) {
    work[p(P_work_deliv) + n] = NONE;
  }
}

/// Status words: (peer, code, value, a, b, c, d, 0); see protocol.ts for what a..d mean per code.
fn fail(peer: u32, code: u32, value: u32, a: u32, b: u32, c: u32, d: u32) {
  let r = p(P_work_report);
  work[r] = peer;
  work[r + 1u] = code;
  work[r + 2u] = value;
  work[r + 3u] = a;
  work[r + 4u] = b;
  work[r + 5u] = c;
  work[r + 6u] = d;
}

fn count_of(e: u32, s: u32) -> u32 {
  return work[p(P_work_report) + REPORT_HEAD + e * p(P_ranks) + s];
}

/// Packed index of entry (local expert e, index) from source s.
fn packed_of(e: u32, s: u32, index: u32) -> u32 {
  let q = e * p(P_ranks) + s;
  if (contiguous()) {
    let offsets = p(P_work_report) + REPORT_HEAD + p(P_localExperts) * (p(P_ranks) + 1u);
    return work[offsets + e] + work[p(P_work_prefix) + q] + index;
  }
  return work[p(P_work_npre) + e] + work[p(P_work_prefix) + q] + index;
}

/// Checks record j from s (its words at rrecs) and names its entries' packed rows; false on a fault.
fn check_record(s: u32, j: u32) -> bool {
  let M = p(P_maxTokensPerRank);
  let J = p(P_slotsPerRank);
  let L = p(P_localExperts);
  let id = s * M + j;
  let rec = p(P_work_rrecs) + id * p(P_routeWords);
  let token = work[rec];
  let n = work[rec + 1u];
  if (token >= M) {
    fail(s, FAULT_TOKEN, token, j, 0u, 0u, 0u);
    return false;
  }
  if (n < 1u || n > J) {
    fail(s, FAULT_ENTRIES, n, j, 0u, 0u, 0u);
    return false;
  }
  for (var i = 0u; i < n; i++) {
    let e = work[rec + 2u + 4u * i];
    let slot = work[rec + 3u + 4u * i];
    let index = work[rec + 4u + 4u * i];
    if (e >= L) {
      fail(s, FAULT_EXPERT, e, j, i, 0u, 0u);
      return false;
    }
    if (slot >= p(P_topK)) {
      fail(s, FAULT_SLOT, slot, j, i, 0u, 0u);
      return false;
    }
    if (index >= count_of(e, s)) {
      fail(s, FAULT_INDEX, index, j, i, e, count_of(e, s));
      return false;
    }
  }
  for (var i = 0u; i < n; i++) {
    let e = work[rec + 2u + 4u * i];
    let index = work[rec + 4u + 4u * i];
    let nidx = packed_of(e, s, index);
    if (work[p(P_work_deliv) + nidx] != NONE) {
      fail(s, FAULT_DUPLICATE, index, j, i, e, 0u);
      return false;
    }
    work[p(P_work_deliv) + nidx] = id * J + i;
    work[p(P_work_entN) + id * J + i] = nidx;
    work[p(P_work_seen) + e] += 1u;
  }
  return true;
}

/// One invocation: the checks, per-expert counts and offsets, packed rows and the args of the
/// row kernels (zero on a fault). report[8] = rows delivered, report[9] = packed rows P.
@compute @workgroup_size(WG)
fn check(@builtin(global_invocation_id) gid: vec3u) {
  if (gid.x != 0u) {
    return;
  }
  let R = p(P_ranks);
  let L = p(P_localExperts);
  let M = p(P_maxTokensPerRank);
  let rep = p(P_work_report);
  let counts = rep + REPORT_HEAD;
  let expertCounts = counts + L * R;
  let offsets = expertCounts + L;
  let records = offsets + L;
  let args = p(P_work_recvArgs);
  for (var i = 0u; i < 16u; i++) {
    work[rep + i] = 0u;
  }
  work[rep] = NONE;
  for (var i = 0u; i < 8u; i++) {
    work[args + i] = 0u;
  }
  for (var s = 0u; s < R; s++) {
    for (var e = 0u; e < L; e++) {
      let w = work[p(P_work_saved) + R + s * L + e];
      let f = signal_fault(w, C.epoch, M);
      if (f != 0u) {
        fail(s, f, w, M, REGION_COUNT, 0u, 0u);
        return;
      }
      work[counts + e * R + s] = signal_count(w);
    }
  }
  var next = 0u;
  var delivered = 0u;
  for (var e = 0u; e < L; e++) {
    var ec = 0u;
    for (var s = 0u; s < R; s++) {
      work[p(P_work_prefix) + e * R + s] = ec;
      ec += work[counts + e * R + s];
    }
    work[expertCounts + e] = ec;
    work[p(P_work_npre) + e] = delivered;
    delivered += ec;
    if (contiguous()) {
      work[offsets + e] = next;
    } else {
      work[offsets + e] = e * R * M;
    }
    next += align_up(ec, p(P_expertAlignment));
  }
  for (var s = 0u; s < R; s++) {
    let w = work[p(P_work_saved) + s];
    let f = signal_fault(w, C.epoch, M);
    if (f != 0u) {
      fail(s, f, w, M, REGION_DISPATCH, 0u, 0u);
      return;
    }
    work[records + s] = signal_count(w);
    for (var e = 0u; e < L; e++) {
      work[p(P_work_seen) + e] = 0u;
    }
    for (var j = 0u; j < signal_count(w); j++) {
      if (!check_record(s, j)) {
        return;
      }
    }
    for (var e = 0u; e < L; e++) {
      let seen = work[p(P_work_seen) + e];
      if (seen != count_of(e, s)) {
        fail(s, FAULT_SEEN, seen, e, count_of(e, s), 0u, 0u);
        return;
      }
    }
  }
  if (contiguous()) {
    for (var e = 0u; e < L; e++) {
      let ec = work[expertCounts + e];
      let off = work[offsets + e];
      for (var r = off + ec; r < off + align_up(ec, p(P_expertAlignment)); r++) {
        work[p(P_work_deliv) + r] = PAD | e;
      }
    }
  }
  let packed = select(delivered, next, contiguous());
  work[rep + 8u] = delivered;
  work[rep + 9u] = packed;
  let y = min(packed, MAX_GROUPS);
  work[args] = C.groups;
  work[args + 1u] = y;
  work[args + 2u] = 1u;
  work[args + 4u] = 1u;
  work[args + 5u] = y;
  work[args + 6u] = 1u;
}
