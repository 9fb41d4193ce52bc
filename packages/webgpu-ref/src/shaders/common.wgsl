// common.wgsl: included first in every stage (after the generated header, see shaders.ts).
//
// The parameter block P holds core's `layoutParams` (region offsets and sizes in bytes, scalars)
// followed by this package's work-buffer offsets (in u32 words); kernels index it with the
// generated P_* constants and never derive an offset themselves.

struct Params {
  v: array<vec4<u32>, NP4>,
}

/// A storage binding of [base, base + size) bytes of a rank's heap or local buffer. An item (row,
/// signal word, token block) starting at byte `a` is handled by this window iff a / stride == index.
struct Window {
  base: u32,
  stride: u32,
  index: u32,
  size: u32,
}

/// Per-dispatch values (one slot of the call ring, bound with a dynamic offset).
struct Call {
  rank: u32,    // the rank running the stage
  peer: u32,    // the rank a put or signal goes to (dispatch send: destination; combine send: home)
  tokens: u32,  // T, tokens `rank` passed this step
  epoch: u32,   // this step's epoch (core signal.ts)
  phase: u32,   // bf16 row copies: 0 whole words, 1 a row's last half-word, 2 a row's first half-word
  groups: u32,  // workgroups along x of a row kernel (written into indirect args)
  zero: u32,    // always 0; keeps compilers from contracting a * b + c (product())
  spare: u32,
  a: Window,    // the heap-side binding (or the local buffer where a kernel reads it instead)
  b: Window,    // a second window (reserved: no stage binds two windows at once now)
}

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<uniform> C: Call;

fn p(i: u32) -> u32 {
  return P.v[i >> 2u][i & 3u];
}

/// Linear invocation index of a 1-D grid laid out as (x <= MAX_GROUPS, y) workgroups.
fn lin(gid: vec3u, nwg: vec3u) -> u32 {
  return gid.x + gid.y * nwg.x * WG;
}

fn mine_a(byte_addr: u32) -> bool {
  return byte_addr / C.a.stride == C.a.index;
}

fn at_a(byte_addr: u32) -> u32 {
  return (byte_addr - C.a.base) >> 2u;
}

/// fp32(w * x), rounded on its own: the OR with the runtime zero keeps a compiler from fusing it
/// into the following add (core's rule: separate multiply and add, no FMA contraction). Used by
/// combine_send.wgsl's partials and combine_recv.wgsl's sums at home.
fn product(w: f32, x: f32) -> f32 {
  return bitcast<f32>(bitcast<u32>(w * x) | C.zero);
}

fn contiguous() -> bool {
  return p(P_layoutContiguous) == 1u;
}

/// combineWeights home: combine moves one unweighted row per (token, slot), weighted at home.
fn at_home() -> bool {
  return p(P_combineAtHome) == 1u;
}

fn align_up(n: u32, a: u32) -> u32 {
  return ((n + a - 1u) / a) * a;
}

/// Words of a dispatch row (payload only): ceil(H * dispatch bytes / 4).
fn payload_words() -> u32 {
  return (p(P_hidden) * p(P_dispatchElemBytes) + 3u) / 4u;
}

// ---- signal words (core signal.ts): epoch << 21 | (count + 1) ----

fn signal_word(epoch: u32, count: u32) -> u32 {
  return (epoch << 21u) | (count + 1u);
}

fn signal_count(w: u32) -> u32 {
  return (w & 0x1fffffu) - 1u;
}

/// Why a receive stage refuses word `w` (0: it is fine), in core's readSignal order.
fn signal_fault(w: u32, epoch: u32, max_count: u32) -> u32 {
  if (w == 0u) {
    return FAULT_MISSING;
  }
  if ((w >> 21u) != epoch) {
    return FAULT_STALE;
  }
  if ((w & 0x1fffffu) == 0u) {
    return FAULT_MALFORMED;
  }
  if (signal_count(w) > max_count) {
    return FAULT_TOO_MANY;
  }
  return 0u;
}

/// Element `e` (bf16 bits) of an array of packed words, given the word holding it.
fn half_of(word: u32, e: u32) -> u32 {
  return (word >> ((e & 1u) * 16u)) & 0xffffu;
}

// ---- route records (docs/protocol.md): W = 2 + 4 J words, (srcToken, n, n x (localExpert, slot, index, weight bits)) ----

/// Words of a route record with n entries that a sender writes (entries past n are left alone).
fn record_words(n: u32) -> u32 {
  return 2u + 4u * n;
}

/// Whether signal word `w` carries this step's epoch (core's countsArrived).
fn arrived(w: u32, epoch: u32) -> bool {
  return w != 0u && (w >> 21u) == epoch;
}
