// The WGSL of the GPU decoder: five compute entry points over one logits row
// of a [rows, vocab] storage buffer (f32, or f16 read as packed pairs), sharing one
// bind group layout (readback.mjs). Per row:
//   init     clears the selection state and the global histogram
//   stats    per workgroup: max and sum exp((x - max) * scale) over the
//            selectable logits, their count, and NaN / +Inf / finite flags
//   histo    (x8) a 256-bin histogram of one 8-bit digit of the 64-bit key
//            (order-preserving logit bits, then ~id) among the keys that
//            match the digits picked so far
//   pick     (x8) one workgroup: the bin holding the m-th largest key
//   compact  writes every key >= the picked threshold, i.e. exactly the top m
//            (ids, logits), and the logits of the listed ids; per workgroup,
//            the sum of exp((x - t) * scale_pow) over the selectable logits
//            below the threshold t (Bregman's dropped tokens, each term <= 1,
//            so the sum keeps its relative precision however small it is)
// "Selectable": finite and not listed. Listed ids (the ones the edit stages
// touch: biases, bans, the allowed set, the history) are excluded from the
// selection and gathered separately, so the CPU can apply the edits itself.

// Logits per workgroup: 256 threads x kElemsPerThread, read strided so a
// warp touches consecutive addresses.
export const kThreads = 256;
export const kElemsPerThread = 8;
export const kChunk = kThreads * kElemsPerThread;
// Words of the control block (see struct Ctl) and of one per-workgroup partial.
export const kCtlWords = 8;
export const kPartialWords = 8;

export function decoderWgsl(dtype) {
  const f16 = dtype === 'f16';
  return /* wgsl */ `
struct Params {
  vocab: u32, row_base: u32, max_cand: u32, n_listed: u32,
  scale: f32, scale_pow: f32, n_wg: u32, pad0: u32,
};
// level: next digit (0..8); done: the threshold is final; none: nothing to
// select; remaining: keys still wanted at or below the picked prefix;
// (pre_hi, pre_lo): the threshold key; m: keys selected; count: keys written.
struct Ctl {
  level: u32, done: u32, none: u32, remaining: u32,
  pre_hi: u32, pre_lo: u32, m: u32, count: atomic<u32>,
};

// f16 rows are read as packed u32 pairs (unpack2x16float is core WGSL: no
// shader-f16 feature needed); f32 rows directly.
@group(0) @binding(0) var<storage, read> logits: array<${f16 ? 'u32' : 'f32'}>;
@group(0) @binding(1) var<uniform> P: Params;
@group(0) @binding(2) var<storage, read> listed: array<u32>;
@group(0) @binding(3) var<storage, read_write> ctl: Ctl;
@group(0) @binding(4) var<storage, read_write> hist: array<atomic<u32>, 256>;
// Per workgroup, two vec4s: (max, sum at scale, selectable count, flags) and
// (tail sum at scale_pow, sum at 1, 0, 0), as f32 bits; the stats pass's sums
// are of exp((x - max) * s), the tail's (compact's) of exp((x - t) * scale_pow).
@group(0) @binding(5) var<storage, read_write> partials: array<vec4<u32>>;
// [0, M): ids; [M, 2M): logit bits; [2M, 2M + n_listed): listed logit bits.
@group(0) @binding(6) var<storage, read_write> outb: array<u32>;

const kThreads = ${kThreads}u;
const kElems = ${kElemsPerThread}u;
const kChunk = ${kChunk}u;

var<workgroup> sh_f: array<f32, ${kThreads}>;
var<workgroup> sh_h: array<f32, ${kThreads}>;
var<workgroup> sh_u: array<u32, ${kThreads}>;
var<workgroup> sh_v: array<u32, ${kThreads}>;
var<workgroup> sh_hist: array<atomic<u32>, 256>;
var<workgroup> sh_done: u32;

${f16 ? `// The f32 bits of half number i of the row, built from the half's bits with
// integer operations: exact for every half, subnormals included (WGSL lets
// float arithmetic and unpack2x16float flush subnormals to zero, and need not
// preserve infinities or NaN).
fn load_bits(i: u32) -> u32 {
  let idx = P.row_base + i;
  let word = logits[idx >> 1u];
  let h = (word >> (16u * (idx & 1u))) & 0xFFFFu;
  let sign = (h & 0x8000u) << 16u;
  let e = (h >> 10u) & 0x1Fu;
  let m = h & 0x3FFu;
  if (e == 0x1Fu) { return sign | 0x7F800000u | (m << 13u); }  // infinities, NaN
  if (e != 0u) { return sign | ((e + 112u) << 23u) | (m << 13u); }  // normal: rebias 15 -> 127
  if (m == 0u) { return sign; }  // +-0
  // Subnormal m 2^-24 = 2^(t - 24) (1 + (m - 2^t) / 2^t), t = m's top bit.
  let t = firstLeadingBit(m);
  return sign | ((t + 103u) << 23u) | ((m << (23u - t)) & 0x7FFFFFu);
}` : `fn load_bits(i: u32) -> u32 { return bitcast<u32>(logits[P.row_base + i]); }`}
fn load(i: u32) -> f32 { return bitcast<f32>(load_bits(i)); }

// Finite: neither NaN nor an infinity (decided on the bits: WGSL arithmetic
// need not honour IEEE infinities).
fn is_finite_bits(b: u32) -> bool { return (b & 0x7f800000u) != 0x7f800000u; }

// Binary search in the sorted listed ids.
fn is_listed(id: u32) -> bool {
  var lo = 0u;
  var hi = P.n_listed;
  while (lo < hi) {
    let mid = (lo + hi) / 2u;
    let v = listed[mid];
    if (v == id) { return true; }
    if (v < id) { lo = mid + 1u; } else { hi = mid; }
  }
  return false;
}

// Order-preserving bits: unsigned order of key_hi = float order (the CPU's
// OrderKey in src/kernels/order_keys.h, which folds -0 into +0: they tie, and
// the lower id goes first, as every tie does).
fn key_hi(b: u32) -> u32 {
  if (b == 0x80000000u) { return 0x80000000u; }
  if ((b & 0x80000000u) != 0u) { return ~b; }
  return b | 0x80000000u;
}

// The float whose key_hi is k (key_hi's inverse); keys at or below -inf's
// (a threshold whose lower digits were left zero) give -FLT_MAX: no finite
// logit lies below them.
fn key_hi_float(k: u32) -> f32 {
  if ((k & 0x80000000u) != 0u) { return bitcast<f32>(k ^ 0x80000000u); }
  if (k < 0x00800000u) { return bitcast<f32>(0xff7fffffu); }
  return bitcast<f32>(~k);
}

// Mask of the digits of one 32-bit word already decided (d of them).
fn decided_mask(d: u32) -> u32 {
  if (d == 0u) { return 0u; }
  return ~(0xFFFFFFFFu >> (8u * d));
}

@compute @workgroup_size(${kThreads})
fn init(@builtin(local_invocation_index) lid: u32) {
  atomicStore(&hist[lid], 0u);
  if (lid == 0u) {
    ctl.level = 0u; ctl.done = 0u; ctl.none = 0u; ctl.remaining = 0u;
    ctl.pre_hi = 0u; ctl.pre_lo = 0u; ctl.m = 0u;
    atomicStore(&ctl.count, 0u);
  }
}

@compute @workgroup_size(${kThreads})
fn stats(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let base = wid.x * kChunk;
  var mx = bitcast<f32>(0xff7fffffu);  // -FLT_MAX
  var n = 0u;
  var flags = 0u;  // 1: NaN, 2: +Inf, 4: some finite logit
  for (var j = 0u; j < kElems; j++) {
    let i = base + j * kThreads + lid;
    if (i < P.vocab) {
      let b = load_bits(i);
      let x = bitcast<f32>(b);
      if (!is_finite_bits(b)) {
        if ((b & 0x007fffffu) != 0u) { flags |= 1u; } else if ((b & 0x80000000u) == 0u) { flags |= 2u; }
      } else {
        flags |= 4u;
        if (!is_listed(i)) { n += 1u; mx = max(mx, x); }
      }
    }
  }
  sh_f[lid] = mx; sh_u[lid] = n; sh_v[lid] = flags;
  workgroupBarrier();
  for (var s = kThreads / 2u; s > 0u; s >>= 1u) {
    if (lid < s) {
      sh_f[lid] = max(sh_f[lid], sh_f[lid + s]);
      sh_u[lid] += sh_u[lid + s];
      sh_v[lid] |= sh_v[lid + s];
    }
    workgroupBarrier();
  }
  let wmx = sh_f[0];
  let wn = sh_u[0];
  let wf = sh_v[0];
  workgroupBarrier();
  // Second sweep (cached): the workgroup's sums of exp((x - wmx) * s) at the
  // normaliser's scale (1 / T) and at 1 (the raw distribution, for logprobs).
  var acc = vec2<f32>(0.0, 0.0);
  for (var j = 0u; j < kElems; j++) {
    let i = base + j * kThreads + lid;
    if (i < P.vocab) {
      let x = load(i);
      if (is_finite_bits(load_bits(i)) && !is_listed(i)) {
        let d = x - wmx;
        acc += vec2<f32>(exp(d * P.scale), exp(d));
      }
    }
  }
  sh_f[lid] = acc.x;
  sh_h[lid] = acc.y;
  workgroupBarrier();
  for (var s = kThreads / 2u; s > 0u; s >>= 1u) {
    if (lid < s) {
      sh_f[lid] += sh_f[lid + s];
      sh_h[lid] += sh_h[lid + s];
    }
    workgroupBarrier();
  }
  if (lid == 0u) {
    partials[2u * wid.x] = vec4<u32>(bitcast<u32>(wmx), bitcast<u32>(sh_f[0]), wn, wf);
    partials[2u * wid.x + 1u].y = bitcast<u32>(sh_h[0]);
  }
}

@compute @workgroup_size(${kThreads})
fn histo(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  if (lid == 0u) { sh_done = ctl.done; }
  if (workgroupUniformLoad(&sh_done) != 0u) { return; }
  atomicStore(&sh_hist[lid], 0u);
  workgroupBarrier();
  let level = ctl.level;
  let pre_hi = ctl.pre_hi;
  let pre_lo = ctl.pre_lo;
  let base = wid.x * kChunk;
  for (var j = 0u; j < kElems; j++) {
    let i = base + j * kThreads + lid;
    if (i < P.vocab) {
      let b = load_bits(i);
      if (is_finite_bits(b) && !is_listed(i)) {
        let hi = key_hi(b);
        let lo = ~i;
        var ok = false;
        var d = 0u;
        if (level < 4u) {
          ok = (hi & decided_mask(level)) == pre_hi;
          d = (hi >> (24u - 8u * level)) & 0xFFu;
        } else {
          ok = hi == pre_hi && (lo & decided_mask(level - 4u)) == pre_lo;
          d = (lo >> (24u - 8u * (level - 4u))) & 0xFFu;
        }
        if (ok) { atomicAdd(&sh_hist[d], 1u); }
      }
    }
  }
  workgroupBarrier();
  let c = atomicLoad(&sh_hist[lid]);
  if (c > 0u) { atomicAdd(&hist[lid], c); }
}

@compute @workgroup_size(${kThreads})
fn pick(@builtin(local_invocation_index) lid: u32) {
  if (lid == 0u) { sh_done = ctl.done; }
  if (workgroupUniformLoad(&sh_done) != 0u) { return; }
  sh_u[lid] = atomicLoad(&hist[lid]);
  atomicStore(&hist[lid], 0u);
  workgroupBarrier();
  if (lid != 0u) { return; }
  let level = ctl.level;
  var remaining = ctl.remaining;
  if (level == 0u) {
    var total = 0u;
    for (var w = 0u; w < P.n_wg; w++) { total += partials[2u * w].z; }
    remaining = min(total, P.max_cand);
    ctl.m = remaining;
    if (remaining == 0u) { ctl.done = 1u; ctl.none = 1u; return; }
  }
  // Invariant: acc = keys in bins above b; the m-th largest key is in the
  // first bin (from the top) where acc + count reaches remaining.
  var acc = 0u;
  var b = 255u;
  loop {
    let c = sh_u[b];
    if (acc + c >= remaining || b == 0u) { break; }
    acc += c;
    b -= 1u;
  }
  let need = remaining - acc;
  if (level < 4u) {
    ctl.pre_hi = ctl.pre_hi | (b << (24u - 8u * level));
  } else {
    ctl.pre_lo = ctl.pre_lo | (b << (24u - 8u * (level - 4u)));
  }
  ctl.remaining = need;
  // The whole bin is wanted: every key with this prefix is in, so the
  // threshold is the prefix with the lower digits zero.
  if (need == sh_u[b] || level == 7u) { ctl.done = 1u; }
  ctl.level = level + 1u;
}

@compute @workgroup_size(${kThreads})
fn compact(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let none = ctl.none;
  let th_hi = ctl.pre_hi;
  let th_lo = ctl.pre_lo;
  let base = wid.x * kChunk;
  let th_x = key_hi_float(th_hi);
  var tail = 0.0;
  if (none == 0u) {
    for (var j = 0u; j < kElems; j++) {
      let i = base + j * kThreads + lid;
      if (i < P.vocab) {
        let b = load_bits(i);
        let x = bitcast<f32>(b);
        if (is_finite_bits(b) && !is_listed(i)) {
          let hi = key_hi(b);
          let lo = ~i;
          if (hi > th_hi || (hi == th_hi && lo >= th_lo)) {
            let slot = atomicAdd(&ctl.count, 1u);
            if (slot < P.max_cand) {
              outb[slot] = i;
              outb[P.max_cand + slot] = b;
            }
          } else {
            // Below the threshold: x <= th_x (the key orders as the float).
            tail += exp(max((x - th_x) * P.scale_pow, -200.0));
          }
        }
      }
    }
  }
  sh_f[lid] = tail;
  workgroupBarrier();
  for (var s = kThreads / 2u; s > 0u; s >>= 1u) {
    if (lid < s) { sh_f[lid] += sh_f[lid + s]; }
    workgroupBarrier();
  }
  if (lid == 0u) { partials[2u * wid.x + 1u].x = bitcast<u32>(sh_f[0]); }
  for (var g = wid.x * kThreads + lid; g < P.n_listed; g += P.n_wg * kThreads) {
    outb[2u * P.max_cand + g] = load_bits(listed[g]);
  }
}
`;
}
