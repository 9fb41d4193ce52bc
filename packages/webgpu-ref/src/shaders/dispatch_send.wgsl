// dispatch_send.wgsl: dispatch send on source rank C.rank (core backend/reference/dispatchSend.ts).
//
// For every destination rank and local expert, the tokens this rank owns that name the expert, in
// token order: rows first (payload, scales, meta), then the signal word.
//   masked:     row i for expert e -> dispatchX[e][src][i]; then dispatchSignal[e][src] = (epoch, count)
//   contiguous: staging rows dispatchX[src][j], j by (expert, token); countSignal[src][e] per expert,
//               then dispatchSignal[src] = (epoch, rows staged)
// Dispatch order (host: stages/dispatchSend.ts): amax and encode (bf16 -> fp8 only), count, assign, then per
// destination: put (per heap window and bf16 phase), signal.

/// Routing [M, K] i32 and weights [M, K] f32 at P_work_topkIdx / P_work_topkWeights; the plan
/// (sendCounts [R*L], sendTotal [R], sendArgs [R, 8], jobs [R, C, 2]).
@group(0) @binding(2) var<storage, read_write> work: array<u32>;
@group(0) @binding(3) var<storage, read> workR: array<u32>;
/// Input x [T, H] in the input dtype, its scales [T, S], the quantised payload [T, H] fp8 and scales [T, S].
@group(0) @binding(4) var<storage, read_write> inbox: array<u32>;
@group(0) @binding(5) var<storage, read> inboxR: array<u32>;
/// The destination rank's symmetric heap (window C.a), as words and as atomics.
@group(0) @binding(6) var<storage, read_write> heap: array<u32>;
@group(0) @binding(7) var<storage, read_write> heapSig: array<atomic<u32>>;

/// Quantise-on-dispatch, step 1: one invocation per (token, block of 128): the block's scale 2^s,
/// from the largest finite |x| (bf16 magnitudes order like their bits), into payloadScales [T, S].
@compute @workgroup_size(WG)
fn amax(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let S = p(P_scalesPerRow);
  let i = lin(gid, nwg);
  if (i >= C.tokens * S) {
    return;
  }
  let first = p(P_inbox_x) + i * 64u; // block i of x [T, H] starts at element 128 i
  var m = 0u;
  for (var j = 0u; j < 64u; j++) {
    let w = inbox[first + j];
    let lo = w & 0x7fffu;
    let hi = (w >> 16u) & 0x7fffu;
    if (lo < 0x7f80u) {
      m = max(m, lo);
    }
    if (hi < 0x7f80u) {
      m = max(m, hi);
    }
  }
  inbox[p(P_inbox_payloadScales) + i] = fp8_scale_bits(fp8_scale_exp(m));
}

/// Quantise-on-dispatch, step 2: workgroup y strides over tokens, invocations over the row's fp8
/// words (4 elements each), each scaled by its block's 2^s: payload [T, H] fp8.
@compute @workgroup_size(WG)
fn encode(
  @builtin(workgroup_id) wg: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) li: u32,
) {
  let H = p(P_hidden);
  let S = p(P_scalesPerRow);
  for (var t = wg.y; t < C.tokens; t += nwg.y) {
    let xrow = p(P_inbox_x) + t * (H / 2u);
    let qrow = p(P_inbox_payload) + t * (H / 4u);
    for (var v = wg.x * WG + li; v < H / 4u; v += nwg.x * WG) {
      let s = i32(inbox[p(P_inbox_payloadScales) + t * S + (v >> 5u)] >> 23u) - 127;
      let a = inbox[xrow + 2u * v];
      let b = inbox[xrow + 2u * v + 1u];
      inbox[qrow + v] = fp8_encode_bf16(a & 0xffffu, s) | (fp8_encode_bf16(a >> 16u, s) << 8u) |
        (fp8_encode_bf16(b & 0xffffu, s) << 16u) | (fp8_encode_bf16(b >> 16u, s) << 24u);
    }
  }
}

/// The slot of token t that names global expert g, or K.
fn slot_of(t: u32, g: u32) -> u32 {
  let K = p(P_topK);
  for (var k = 0u; k < K; k++) {
    if (work[p(P_work_topkIdx) + t * K + k] == g) {
      return k;
    }
  }
  return K;
}

/// One invocation per global expert g = dst * L + e: rows this rank sends it (tokens it owns, t % dpSize == rank % dpSize).
@compute @workgroup_size(WG)
fn count(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let g = lin(gid, nwg);
  if (g >= p(P_ranks) * p(P_localExperts)) {
    return;
  }
  let dp = p(P_dpSize);
  var n = 0u;
  for (var t = C.rank % dp; t < C.tokens; t += dp) {
    if (slot_of(t, g) < p(P_topK)) {
      n++;
    }
  }
  work[p(P_work_sendCounts) + g] = n;
}

/// One invocation per global expert: its jobs (t * K + k, destination row) in the destination's list,
/// which is ordered by (local expert, token); expert 0's invocation also writes the destination's
/// total and indirect args (groups, rows, 1) and (1, rows, 1) for the half-word phases.
@compute @workgroup_size(WG)
fn assign(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let g = lin(gid, nwg);
  let R = p(P_ranks);
  let L = p(P_localExperts);
  if (g >= R * L) {
    return;
  }
  let K = p(P_topK);
  let M = p(P_maxTokensPerRank);
  let dp = p(P_dpSize);
  let dst = g / L;
  let e = g % L;
  let counts = p(P_work_sendCounts) + dst * L;
  var base = 0u;
  for (var f = 0u; f < e; f++) {
    base += work[counts + f];
  }
  let jobs = p(P_work_jobs) + dst * p(P_rowsPerSource) * 2u;
  var i = 0u;
  for (var t = C.rank % dp; t < C.tokens; t += dp) {
    let k = slot_of(t, g);
    if (k < K) {
      var row = (e * R + C.rank) * M + i;
      if (contiguous()) {
        row = C.rank * p(P_rowsPerSource) + base + i;
      }
      work[jobs + (base + i) * 2u] = t * K + k;
      work[jobs + (base + i) * 2u + 1u] = row;
      i++;
    }
  }
  if (e == 0u) {
    var total = 0u;
    for (var f = 0u; f < L; f++) {
      total += work[counts + f];
    }
    work[p(P_work_sendTotal) + dst] = total;
    let a = p(P_work_sendArgs) + dst * 8u;
    let y = min(total, MAX_GROUPS);
    work[a] = C.groups;
    work[a + 1u] = y;
    work[a + 2u] = 1u;
    work[a + 3u] = 0u;
    work[a + 4u] = 1u;
    work[a + 5u] = y;
    work[a + 6u] = 1u;
    work[a + 7u] = 0u;
  }
}

fn send_bf16(e: u32) -> u32 {
  return half_of(inboxR[p(P_inbox_send) + (e >> 1u)], e);
}

/// bf16 payload of a row starting at element `a` of dispatchX, from element `sa` of the payload:
/// phase 0 the whole words (invocations `first`, `first + step`, ...), phases 1 and 2 the row's
/// last / first element where it shares a word with the next / previous row.
fn put_bf16(a: u32, sa: u32, first: u32, step: u32) {
  let H = p(P_hidden);
  let region = p(P_dispatchX_offset);
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

/// Job (t * K + k, row): payload, then (phase 0) scales and meta, into destination C.peer's heap,
/// each part where window C.a holds its start.
fn put_row(tk: u32, row: u32, first: u32, step: u32) {
  let H = p(P_hidden);
  let K = p(P_topK);
  let S = p(P_scalesPerRow);
  let t = tk / K;
  if (p(P_dispatchElemBytes) == 1u) {
    let start = p(P_dispatchX_offset) + row * H;
    if (C.phase == 0u && mine_a(start)) {
      let d = at_a(start);
      let s = p(P_inbox_send) + t * (H / 4u);
      for (var v = first; v < H / 4u; v += step) {
        heap[d + v] = inboxR[s + v];
      }
    }
  } else if (mine_a(p(P_dispatchX_offset) + ((row * H) >> 1u) * 4u)) {
    put_bf16(row * H, t * H, first, step);
  }
  if (C.phase != 0u) {
    return;
  }
  let scales = p(P_dispatchScales_offset) + row * S * 4u;
  if (S > 0u && mine_a(scales)) {
    let d = at_a(scales);
    let s = p(P_inbox_sendScales) + t * S;
    for (var w = first; w < S; w += step) {
      heap[d + w] = inboxR[s + w];
    }
  }
  let metaAt = p(P_dispatchMeta_offset) + row * 16u;
  if (mine_a(metaAt)) {
    let d = at_a(metaAt);
    for (var m = first; m < 4u; m += step) {
      var val = C.rank;
      if (m == 1u) {
        val = t;
      } else if (m == 2u) {
        val = tk % K;
      } else if (m == 3u) {
        val = workR[p(P_work_topkIdx) + tk] % p(P_localExperts);
      }
      heap[d + m] = val;
    }
  }
}

/// Grid (indirect, sendArgs of C.peer): y strides over the destination's jobs; the invocations
/// (and x, if more than one group) over a row's words.
@compute @workgroup_size(WG)
fn put(
  @builtin(workgroup_id) wg: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) li: u32,
) {
  let dst = C.peer;
  let total = workR[p(P_work_sendTotal) + dst];
  let jobs = p(P_work_jobs) + dst * p(P_rowsPerSource) * 2u;
  for (var j = wg.y; j < total; j += nwg.y) {
    put_row(workR[jobs + j * 2u], workR[jobs + j * 2u + 1u], wg.x * WG + li, nwg.x * WG);
  }
}

/// After the rows: one invocation per signal word this rank owes destination C.peer (L + 1 of them).
@compute @workgroup_size(WG)
fn signal(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let e = lin(gid, nwg);
  let R = p(P_ranks);
  let L = p(P_localExperts);
  let dst = C.peer;
  let src = C.rank;
  if (e > L) {
    return;
  }
  var addr: u32;
  var n: u32;
  if (contiguous()) {
    if (e == L) {
      addr = p(P_dispatchSignal_offset) + src * 4u;
      n = workR[p(P_work_sendTotal) + dst];
    } else {
      addr = p(P_countSignal_offset) + (src * L + e) * 4u;
      n = workR[p(P_work_sendCounts) + dst * L + e];
    }
  } else {
    if (e == L) {
      return;
    }
    addr = p(P_dispatchSignal_offset) + (e * R + src) * 4u;
    n = workR[p(P_work_sendCounts) + dst * L + e];
  }
  if (mine_a(addr)) {
    atomicStore(&heapSig[at_a(addr)], signal_word(C.epoch, n));
  }
}
