// dispatch_recv.wgsl: dispatch receive on rank C.rank (core backend/reference/dispatchRecv.ts),
// after receive.wgsl checked everything and named every packed row's entry (deliv).
//
// fan:   packed row n <- its record's payload (masked dispatchX[s][j]; contiguous the first entry's
//        row of recvX, where the sender put it), its scales, and meta (s, srcToken, slot, e); a
//        padding row (contiguous) <- zeros (the protocol leaves its x and scales unspecified) and
//        meta (-1, -1, -1, e). Into the outbox, rows padded
//        to whole words: the host reads it back as the result.
// place: the outbox rows into the output regions: masked recvX / recvScales / recvMeta (local) at
//        the entry's row e R M + sum over s' < s of count[s'][e] + index; contiguous recvX /
//        recvScales (symmetric) and recvMeta (local) at row n (the first entries' rows get the
//        bytes they already hold).
// Dispatch order (host: stages/dispatchRecv.ts): receive.wgsl, fan (per heap window), placeX
// (per window of the output's buffer and bf16 phase), placeMeta (per local window).

/// receive.wgsl's results: report, prefix [L, R], rrecs [R, M, W], deliv [P], recvArgs [8].
@group(0) @binding(3) var<storage, read> workR: array<u32>;
/// fan: this rank's heap (window C.a).
@group(0) @binding(5) var<storage, read> rd: array<u32>;
/// place: the output's buffer (window C.a): masked the local buffer, contiguous the heap (x and
/// scales) or the local buffer (meta).
@group(0) @binding(6) var<storage, read_write> dst: array<u32>;
/// Packed result rows: x [P, PWd] words, scales [P, S] f32, meta [P, 4] i32.
@group(0) @binding(8) var<storage, read_write> outbox: array<u32>;
@group(0) @binding(9) var<storage, read> outboxR: array<u32>;

/// Record words of entry id (s M + j) J + i.
fn record_of(id: u32) -> u32 {
  return p(P_work_rrecs) + (id / p(P_slotsPerRank)) * p(P_routeWords);
}

/// Output row of entry id: offsets[e] + prefix[e][s] + index.
fn entry_row(id: u32) -> u32 {
  let R = p(P_ranks);
  let J = p(P_slotsPerRank);
  let s = id / (p(P_maxTokensPerRank) * J);
  let i = id % J;
  let rec = record_of(id);
  let e = workR[rec + 2u + 4u * i];
  let offsets = p(P_work_report) + REPORT_HEAD + p(P_localExperts) * (R + 1u);
  return workR[offsets + e] + workR[p(P_work_prefix) + e * R + s] + workR[rec + 4u + 4u * i];
}

/// Packed row n from the heap (window C.a): payload words, scales, meta; padding from window 0.
fn fan_row(n: u32, first: u32, step: u32) {
  let H = p(P_hidden);
  let S = p(P_scalesPerRow);
  let PW = payload_words();
  let id = workR[p(P_work_deliv) + n];
  let out = p(P_outbox_x) + n * PW;
  let mo = p(P_outbox_meta) + n * 4u;
  if ((id & PAD) != 0u) {
    if (C.a.index == 0u) {
      for (var v = first; v < PW; v += step) {
        outbox[out + v] = 0u;
      }
      for (var w = first; w < S; w += step) {
        outbox[p(P_outbox_scales) + n * S + w] = 0u;
      }
      for (var m = first; m < 4u; m += step) {
        outbox[mo + m] = select(0xffffffffu, id & ~PAD, m == 3u);
      }
    }
    return;
  }
  let rec = record_of(id);
  let M = p(P_maxTokensPerRank);
  let J = p(P_slotsPerRank);
  var row = id / J; // masked: dispatchX row s M + j
  var xo = p(P_dispatchX_offset);
  var so = p(P_dispatchScales_offset);
  if (contiguous()) {
    row = entry_row(id - id % J);
    xo = p(P_recvX_offset);
    so = p(P_recvScales_offset);
  }
  if (p(P_dispatchElemBytes) == 1u) {
    let start = xo + row * H;
    if (mine_a(start)) {
      for (var v = first; v < PW; v += step) {
        outbox[out + v] = rd[at_a(start) + v];
      }
    }
  } else {
    let a = row * H;
    if (mine_a(xo + (a >> 1u) * 4u)) {
      let s = at_a(xo + (a >> 1u) * 4u);
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
  if (C.a.index == 0u) {
    let i = id % J;
    for (var m = first; m < 4u; m += step) {
      var v = id / (M * J); // srcRank
      if (m == 1u) {
        v = workR[rec];
      } else if (m == 2u) {
        v = workR[rec + 3u + 4u * i];
      } else if (m == 3u) {
        v = workR[rec + 2u + 4u * i];
      }
      outbox[mo + m] = v;
    }
  }
}

/// Grid (indirect, recvArgs): y strides over the P packed rows, the invocations over a row's words.
@compute @workgroup_size(WG)
fn fan(
  @builtin(workgroup_id) wg: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) li: u32,
) {
  let rows = workR[p(P_work_report) + 9u];
  for (var n = wg.y; n < rows; n += nwg.y) {
    fan_row(n, wg.x * WG + li, nwg.x * WG);
  }
}

/// Output row of packed row n: masked its entry's row, contiguous n.
fn out_row(n: u32) -> u32 {
  if (contiguous()) {
    return n;
  }
  return entry_row(workR[p(P_work_deliv) + n]);
}

fn outbox_bf16(e: u32) -> u32 {
  return half_of(outboxR[p(P_outbox_x) + (e >> 1u)], e);
}

/// Packed row n's payload (word-aligned in the outbox) into element a = row H of recvX (window
/// C.a): phase 0 the whole words, phases 1 / 2 a last / first element shared with a neighbour row.
fn place_bf16(n: u32, a: u32, first: u32, step: u32) {
  let H = p(P_hidden);
  let region = p(P_recvX_offset);
  let src = p(P_outbox_x) + n * payload_words();
  if (C.phase == 0u) {
    let w0 = (a + 1u) >> 1u;
    let d = at_a(region + w0 * 4u);
    let aligned = (a & 1u) == 0u;
    let words = (a + H - 2u * w0) >> 1u;
    for (var v = first; v < words; v += step) {
      if (aligned) {
        dst[d + v] = outboxR[src + v];
      } else {
        dst[d + v] = (outboxR[src + v] >> 16u) | (outboxR[src + v + 1u] << 16u);
      }
    }
  } else if (first == 0u) {
    let e0 = 2u * n * payload_words(); // element of the row's first value in the outbox
    if (C.phase == 1u && ((a + H) & 1u) == 1u) {
      let i = at_a(region + ((a + H - 1u) >> 1u) * 4u);
      dst[i] = (dst[i] & 0xffff0000u) | outbox_bf16(e0 + H - 1u);
    }
    if (C.phase == 2u && (a & 1u) == 1u) {
      let i = at_a(region + (a >> 1u) * 4u);
      dst[i] = (dst[i] & 0xffffu) | (outbox_bf16(e0) << 16u);
    }
  }
}

/// Grid (indirect, recvArgs; phases 1 / 2 the second half): packed rows into recvX and recvScales.
@compute @workgroup_size(WG)
fn placeX(
  @builtin(workgroup_id) wg: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) li: u32,
) {
  let H = p(P_hidden);
  let S = p(P_scalesPerRow);
  let PW = payload_words();
  let rows = workR[p(P_work_report) + 9u];
  let first = wg.x * WG + li;
  let step = nwg.x * WG;
  for (var n = wg.y; n < rows; n += nwg.y) {
    let row = out_row(n);
    if (p(P_dispatchElemBytes) == 1u) {
      let start = p(P_recvX_offset) + row * H;
      if (C.phase == 0u && mine_a(start)) {
        for (var v = first; v < PW; v += step) {
          dst[at_a(start) + v] = outboxR[p(P_outbox_x) + n * PW + v];
        }
      }
    } else if (mine_a(p(P_recvX_offset) + ((row * H) >> 1u) * 4u)) {
      place_bf16(n, row * H, first, step);
    }
    let scales = p(P_recvScales_offset) + row * S * 4u;
    if (C.phase == 0u && S > 0u && mine_a(scales)) {
      for (var w = first; w < S; w += step) {
        dst[at_a(scales) + w] = outboxR[p(P_outbox_scales) + n * S + w];
      }
    }
  }
}

/// Grid (indirect, recvArgs): packed rows' meta into recvMeta (local buffer, window C.a).
@compute @workgroup_size(WG)
fn placeMeta(
  @builtin(workgroup_id) wg: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) li: u32,
) {
  let rows = workR[p(P_work_report) + 9u];
  for (var n = wg.y; n < rows; n += nwg.y) {
    let at = p(P_recvMeta_offset) + out_row(n) * 16u;
    if (mine_a(at)) {
      for (var m = wg.x * WG + li; m < 4u; m += nwg.x * WG) {
        dst[at_a(at) + m] = outboxR[p(P_outbox_meta) + n * 4u + m];
      }
    }
  }
}
