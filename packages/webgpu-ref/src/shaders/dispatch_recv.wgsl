// dispatch_recv.wgsl: dispatch receive on rank C.rank (core backend/reference/dispatchRecv.ts).
//
// Reads every source's signal words, checks them in core's order (missing, stale epoch, malformed,
// count too large; contiguous: per-expert counts adding up to the announced total) and reports the
// first fault in the status words instead of moving anything. Then expert offsets (masked e*R*M,
// contiguous padded prefix sums), the delivered-row list, the compaction of staged rows into recvX
// (contiguous: expert blocks, rows by (srcRank, srcToken), padding rows zero with meta
// (-1, -1, -1, e)), and a packed copy of the result rows for the host to read back.
// Dispatch order (host: stages/dispatchRecv.ts): snapshot (per heap window), offsets, deliver,
// gather (contiguous; per heap x local window and bf16 phase), pack (per window).

/// Report, saved words [max(L*R, R*(L+1))], totals [R], esStart / srcStart / dstStart [L, R],
/// recvArgs [8], deliv [R*C], gsrc [N].
@group(0) @binding(2) var<storage, read_write> work: array<u32>;
@group(0) @binding(3) var<storage, read> workR: array<u32>;
/// This rank's heap (window C.a) as atomics: the signal words.
@group(0) @binding(4) var<storage, read_write> heapSig: array<atomic<u32>>;
/// gather: this rank's heap (window C.a); pack: the heap (masked) or the local buffer (contiguous).
@group(0) @binding(5) var<storage, read> rd: array<u32>;
/// This rank's local buffer (window C.b): recvX [N, H], recvScales [N, S], recvMeta [N, 4].
@group(0) @binding(6) var<storage, read_write> lbuf: array<u32>;
/// Packed result rows for the host: x [P, PWd], scales [P, S], meta [P, 4].
@group(0) @binding(8) var<storage, read_write> outbox: array<u32>;

/// One invocation per signal word: read it (atomically) into saved[q].
@compute @workgroup_size(WG)
fn snapshot(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let q = lin(gid, nwg);
  if (q >= dispatch_signal_words()) {
    return;
  }
  let addr = dispatch_signal_addr(q);
  if (mine_a(addr)) {
    work[p(P_work_saved) + q] = atomicLoad(&heapSig[at_a(addr)]);
  }
}

fn report(key: u32, code: u32, word: u32, a: u32, b: u32) {
  let r = p(P_work_report);
  work[r] = key;
  work[r + 1u] = code;
  work[r + 2u] = word;
  work[r + 3u] = a;
  work[r + 4u] = b;
}

/// Checks the saved words exactly in core's order and returns the first fault's key (NONE if none),
/// writing sourceCounts [e*R + s] and reporting the fault.
fn check_signals() -> u32 {
  let R = p(P_ranks);
  let L = p(P_localExperts);
  let M = p(P_maxTokensPerRank);
  let saved = p(P_work_saved);
  let counts = p(P_work_report) + REPORT_HEAD;
  if (!contiguous()) {
    for (var q = 0u; q < L * R; q++) {
      let w = work[saved + q];
      let f = signal_fault(w, C.epoch, M);
      if (f != 0u) {
        report(q, f, w, M, 0u);
        return q;
      }
      work[counts + q] = signal_count(w);
    }
    return NONE;
  }
  for (var s = 0u; s < R; s++) {
    let q0 = s * (L + 1u);
    let key0 = s * (L + 2u);
    let done = work[saved + q0];
    let f = signal_fault(done, C.epoch, p(P_rowsPerSource));
    if (f != 0u) {
      report(key0, f, done, p(P_rowsPerSource), 0u);
      return key0;
    }
    var sum = 0u;
    for (var e = 0u; e < L; e++) {
      let w = work[saved + q0 + 1u + e];
      let fe = signal_fault(w, C.epoch, M);
      if (fe != 0u) {
        report(key0 + 1u + e, fe, w, M, 0u);
        return key0 + 1u + e;
      }
      work[counts + e * R + s] = signal_count(w);
      sum += signal_count(w);
    }
    if (sum != signal_count(done)) {
      report(key0 + L + 1u, FAULT_SUM, done, signal_count(done), sum);
      return key0 + L + 1u;
    }
  }
  return NONE;
}

/// One invocation: the checks, then per-expert counts and offsets, per-(e, s) starts, and the
/// indirect args of gather / pack. On a fault everything after the report is zero (nothing moves).
@compute @workgroup_size(WG)
fn offsets(@builtin(global_invocation_id) gid: vec3u) {
  if (gid.x != 0u) {
    return;
  }
  let R = p(P_ranks);
  let L = p(P_localExperts);
  let M = p(P_maxTokensPerRank);
  let A = p(P_expertAlignment);
  let rep = p(P_work_report);
  let args = p(P_work_recvArgs);
  report(NONE, 0u, 0u, 0u, 0u);
  if (check_signals() != NONE) {
    for (var i = 0u; i < 8u; i++) {
      work[args + i] = 0u;
      work[rep + 8u + i] = 0u;
    }
    return;
  }
  let counts = rep + REPORT_HEAD;
  let expertCounts = counts + L * R;
  let expertOffsets = expertCounts + L;
  var next = 0u;
  var n = 0u;
  for (var e = 0u; e < L; e++) {
    var ec = 0u;
    for (var s = 0u; s < R; s++) {
      ec += work[counts + e * R + s];
    }
    work[expertCounts + e] = ec;
    var off = e * R * M;
    if (contiguous()) {
      off = next;
      next += align_up(ec, A);
    }
    work[expertOffsets + e] = off;
    var row = off;
    for (var s = 0u; s < R; s++) {
      let q = e * R + s;
      let c = work[counts + q];
      work[p(P_work_esStart) + q] = n;
      if (contiguous()) {
        work[p(P_work_dstStart) + q] = row;
      } else {
        work[p(P_work_dstStart) + q] = off + s * M;
      }
      n += c;
      row += c;
    }
  }
  if (contiguous()) {
    for (var s = 0u; s < R; s++) {
      var first = s * p(P_rowsPerSource);
      for (var e = 0u; e < L; e++) {
        work[p(P_work_srcStart) + e * R + s] = first;
        first += work[counts + e * R + s];
      }
    }
  }
  var packed = n;
  if (contiguous()) {
    packed = next;
  }
  work[rep + 8u] = n;
  work[rep + 9u] = packed;
  let y = min(packed, MAX_GROUPS);
  work[args] = C.groups;
  work[args + 1u] = y;
  work[args + 2u] = 1u;
  work[args + 3u] = 0u;
  work[args + 4u] = 1u;
  work[args + 5u] = y;
  work[args + 6u] = 1u;
  work[args + 7u] = 0u;
}

/// One invocation per (e, s): its entries of the delivered list (result rows), and for contiguous
/// the staging row of each output row, padding rows marked PAD | e.
@compute @workgroup_size(WG)
fn deliver(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let R = p(P_ranks);
  let L = p(P_localExperts);
  let q = lin(gid, nwg);
  if (q >= L * R || work[p(P_work_report)] != NONE) {
    return;
  }
  let e = q / R;
  let s = q % R;
  let counts = p(P_work_report) + REPORT_HEAD;
  let c = work[counts + q];
  let n0 = work[p(P_work_esStart) + q];
  let d0 = work[p(P_work_dstStart) + q];
  for (var i = 0u; i < c; i++) {
    work[p(P_work_deliv) + n0 + i] = d0 + i;
    if (contiguous()) {
      work[p(P_work_gsrc) + d0 + i] = work[p(P_work_srcStart) + q] + i;
    }
  }
  if (contiguous() && s == 0u) {
    let ec = work[counts + L * R + e];
    let off = work[counts + L * R + L + e];
    for (var r = off + ec; r < off + align_up(ec, p(P_expertAlignment)); r++) {
      work[p(P_work_gsrc) + r] = PAD | e;
    }
  }
}

fn rd_bf16(region: u32, e: u32) -> u32 {
  return half_of(rd[at_a(region + (e >> 1u) * 4u)], e);
}

/// The bf16 payload of output row n (element a of recvX, window C.b) from staging element sa of
/// dispatchX (window C.a), or zeros: phase 0 whole words, phases 1 / 2 a shared last / first element.
fn gather_bf16(a: u32, sa: u32, pad: bool, first: u32, step: u32) {
  let H = p(P_hidden);
  let dregion = p(P_recvX_offset);
  let sregion = p(P_dispatchX_offset);
  if (C.phase == 0u) {
    let w0 = (a + 1u) >> 1u;
    let e0 = sa + 2u * w0 - a;
    let d = at_b(dregion + w0 * 4u);
    let s = at_a(sregion + (e0 >> 1u) * 4u);
    let aligned = (e0 & 1u) == 0u;
    let words = (a + H - 2u * w0) >> 1u;
    for (var v = first; v < words; v += step) {
      if (pad) {
        lbuf[d + v] = 0u;
      } else if (aligned) {
        lbuf[d + v] = rd[s + v];
      } else {
        lbuf[d + v] = (rd[s + v] >> 16u) | (rd[s + v + 1u] << 16u);
      }
    }
  } else if (first == 0u) {
    if (C.phase == 1u && ((a + H) & 1u) == 1u) {
      let i = at_b(dregion + ((a + H - 1u) >> 1u) * 4u);
      lbuf[i] = (lbuf[i] & 0xffff0000u) | select(rd_bf16(sregion, sa + H - 1u), 0u, pad);
    }
    if (C.phase == 2u && (a & 1u) == 1u) {
      let i = at_b(dregion + (a >> 1u) * 4u);
      lbuf[i] = (lbuf[i] & 0xffffu) | (select(rd_bf16(sregion, sa), 0u, pad) << 16u);
    }
  }
}

/// Output row n of recvX / recvScales / recvMeta (window C.b) from staging row gsrc[n] (window C.a),
/// or a padding row. Each part is handled where its destination lies in window b and its source in
/// window a (padding has no source: heap window 0 handles it).
fn gather_row(n: u32, first: u32, step: u32) {
  let H = p(P_hidden);
  let S = p(P_scalesPerRow);
  let g = workR[p(P_work_gsrc) + n];
  let pad = (g & PAD) != 0u;
  let xd = p(P_recvX_offset) + n * H * p(P_dispatchElemBytes);
  let xs = p(P_dispatchX_offset) + g * H * p(P_dispatchElemBytes);
  if (p(P_dispatchElemBytes) == 1u) {
    if (C.phase == 0u && mine_b(xd) && select(mine_a(xs), C.a.index == 0u, pad)) {
      let d = at_b(xd);
      for (var v = first; v < H / 4u; v += step) {
        lbuf[d + v] = select(rd[at_a(xs) + v], 0u, pad);
      }
    }
  } else {
    let a = n * H;
    let sa = g * H;
    if (mine_b(p(P_recvX_offset) + (a >> 1u) * 4u) &&
        select(mine_a(p(P_dispatchX_offset) + (sa >> 1u) * 4u), C.a.index == 0u, pad)) {
      gather_bf16(a, sa, pad, first, step);
    }
  }
  if (C.phase != 0u) {
    return;
  }
  let sd = p(P_recvScales_offset) + n * S * 4u;
  let ss = p(P_dispatchScales_offset) + g * S * 4u;
  if (S > 0u && mine_b(sd) && select(mine_a(ss), C.a.index == 0u, pad)) {
    for (var w = first; w < S; w += step) {
      lbuf[at_b(sd) + w] = select(rd[at_a(ss) + w], 0u, pad);
    }
  }
  let md = p(P_recvMeta_offset) + n * 16u;
  let ms = p(P_dispatchMeta_offset) + g * 16u;
  if (mine_b(md) && select(mine_a(ms), C.a.index == 0u, pad)) {
    for (var m = first; m < 4u; m += step) {
      var val = 0xffffffffu; // padding: (-1, -1, -1, e)
      if (!pad) {
        val = rd[at_a(ms) + m];
      } else if (m == 3u) {
        val = g & ~PAD;
      }
      lbuf[at_b(md) + m] = val;
    }
  }
}

/// Grid (indirect, recvArgs): y strides over the P output rows, the invocations over a row's words.
@compute @workgroup_size(WG)
fn gather(
  @builtin(workgroup_id) wg: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) li: u32,
) {
  let rows = workR[p(P_work_report) + 9u];
  for (var n = wg.y; n < rows; n += nwg.y) {
    gather_row(n, wg.x * WG + li, nwg.x * WG);
  }
}

/// Packed row n (rows padded to whole words, for the host): result row deliv[n] (masked) or n
/// (contiguous) of the bound buffer (window C.a).
fn pack_row(n: u32, first: u32, step: u32) {
  let H = p(P_hidden);
  let S = p(P_scalesPerRow);
  let PW = payload_words();
  var row = n;
  var xo = p(P_recvX_offset);
  var so = p(P_recvScales_offset);
  var mo = p(P_recvMeta_offset);
  if (!contiguous()) {
    row = workR[p(P_work_deliv) + n];
    xo = p(P_dispatchX_offset);
    so = p(P_dispatchScales_offset);
    mo = p(P_dispatchMeta_offset);
  }
  let out = p(P_outbox_x) + n * PW;
  if (p(P_dispatchElemBytes) == 1u) {
    let start = xo + row * H;
    if (mine_a(start)) {
      for (var v = first; v < PW; v += step) {
        outbox[out + v] = rd[at_a(start) + v];
      }
    }
  } else {
    let a = row * H;
    let s = at_a(xo + (a >> 1u) * 4u);
    if (mine_a(xo + (a >> 1u) * 4u)) {
      for (var v = first; v < PW; v += step) {
        var word: u32;
        if ((a & 1u) == 0u) {
          word = rd[s + v];
        } else {
          word = (rd[s + v] >> 16u) | (rd[s + v + 1u] << 16u);
        }
        if (2u * v + 1u >= H) {
          word = word & 0xffffu; // odd H: the row's last word holds one element
        }
        outbox[out + v] = word;
      }
    }
  }
  let scales = so + row * S * 4u;
  if (S > 0u && mine_a(scales)) {
    for (var w = first; w < S; w += step) {
      outbox[p(P_outbox_scales) + n * S + w] = rd[at_a(scales) + w];
    }
  }
  let metaAt = mo + row * 16u;
  if (mine_a(metaAt)) {
    for (var m = first; m < 4u; m += step) {
      outbox[p(P_outbox_meta) + n * 4u + m] = rd[at_a(metaAt) + m];
    }
  }
}

@compute @workgroup_size(WG)
fn pack(
  @builtin(workgroup_id) wg: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) li: u32,
) {
  let rows = workR[p(P_work_report) + 9u];
  for (var n = wg.y; n < rows; n += nwg.y) {
    pack_row(n, wg.x * WG + li, nwg.x * WG);
  }
}
