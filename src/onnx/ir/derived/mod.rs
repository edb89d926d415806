//! Constants computed from stored weight bytes when they are written, not when they are folded.
//!
//! Folding a weight transpose or a BatchNormalization into conv weights makes a new weight as
//! large as the stored one; computed during the optimizer, every folded weight would sit in
//! anonymous memory until saved. A [`Derived`] tensor records the computation instead — a strided
//! gather of the stored elements (transposes, composed) followed by elementwise float ops with
//! small broadcast constants — and the save computes it in chunks straight into its write buffers
//! ([`Raw::compute_into`]). Its byte length is known without computing it.
//!
//! Every value is computed exactly as the eager fold did: the same gathered element, then the same
//! IEEE operations on it in the same order, each rounded to the element type. Readers that need the
//! bytes (further folding, deduplication, `to_proto`, tests) get them through `Deref`, which
//! materializes once and keeps the result.

use std::borrow::Cow;
use std::sync::{Arc, OnceLock};

use bytes::Bytes;

use super::{DType, TensorData};

mod transpose;

/// Bytes of a derived tensor computed at a time while writing: the size of one of the save's
/// write buffers, which a chunk is computed straight into; small, so that it stays in the cache
/// the two cores share while the writer thread writes it.
pub const CHUNK_BYTES: usize = 256 << 10;
/// Most bytes computed at a time (transposes of tall weights, see [`Derived::chunk_bytes`]).
pub const MAX_CHUNK_BYTES: usize = 16 << 20;

/// Elementwise operations a derived tensor can apply (one IEEE operation each).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
}

impl BinOp {
    const ALL: [BinOp; 4] = [BinOp::Add, BinOp::Sub, BinOp::Mul, BinOp::Div];

    /// The operation named `name`: its variant's name, which is also the ONNX operator computing
    /// it (a [`Recipe`] writes operations by name).
    pub fn from_name(name: &str) -> Option<BinOp> {
        BinOp::ALL.into_iter().find(|op| format!("{op:?}") == name)
    }
}

/// `x = x op c` (or `c op x` when `konst_first`) with `c` a small constant broadcast to the output.
#[derive(Clone, Debug, PartialEq)]
struct Op {
    op: BinOp,
    konst: Bytes,
    /// Element stride into `konst` per output axis (0 along broadcast axes).
    strides: Vec<usize>,
    konst_first: bool,
}

/// A tensor that is a streamable function of stored bytes; see the module documentation.
#[derive(Debug)]
pub struct Derived {
    dtype: DType,
    /// Output dims (row-major).
    dims: Vec<i64>,
    /// The stored elements (a slice of the archive's map, typically), `dtype` each.
    source: Bytes,
    /// Element stride into `source` per output axis.
    gather: Vec<usize>,
    ops: Vec<Op>,
    /// Output bytes.
    len: usize,
    cache: OnceLock<Bytes>,
}

impl PartialEq for Derived {
    /// Same computation on the same stored bytes (compared by address: they are not read).
    fn eq(&self, o: &Derived) -> bool {
        self.dtype == o.dtype
            && self.dims == o.dims
            && self.source.as_ptr() == o.source.as_ptr()
            && self.source.len() == o.source.len()
            && self.gather == o.gather
            && self.ops == o.ops
    }
}

/// How a derived tensor is computed from its stored bytes, written down: a weight-free model
/// (`--no-weights`) records it for each folded weight, and `apply_weights` computes the weight
/// again from the archive, exactly as the export would have.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Recipe {
    /// Bytes of the stored slice the elements are gathered from.
    pub source_len: usize,
    /// Element stride into the source per output axis.
    pub gather: Vec<usize>,
    pub ops: Vec<OpRecipe>,
}

/// One elementwise operation of a [`Recipe`].
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct OpRecipe {
    /// `Add`, `Sub`, `Mul` or `Div`.
    pub op: String,
    /// The small constant's bytes, in hex.
    pub konst: String,
    pub strides: Vec<usize>,
    pub konst_first: bool,
}

/// The largest element index a gather with `strides` over `dims` reads (`None` on overflow).
fn last_index(dims: &[i64], strides: &[usize]) -> Option<usize> {
    dims.iter().zip(strides).try_fold(0usize, |acc, (&d, &s)| {
        let d = usize::try_from(d).ok()?;
        acc.checked_add(d.saturating_sub(1).checked_mul(s)?)
    })
}

impl Derived {
    /// The computation, written down (see [`Recipe`]).
    pub fn recipe(&self) -> Recipe {
        let name = |op: BinOp| format!("{op:?}");
        Recipe {
            source_len: self.source.len(),
            gather: self.gather.clone(),
            ops: self
                .ops
                .iter()
                .map(|o| OpRecipe {
                    op: name(o.op),
                    konst: o.konst.iter().map(|b| format!("{b:02x}")).collect(),
                    strides: o.strides.clone(),
                    konst_first: o.konst_first,
                })
                .collect(),
        }
    }

    /// The tensor `recipe` computes from `source` (of `recipe.source_len` bytes), checked: a
    /// recipe read from a file must not index past its source or its constants.
    pub fn from_recipe(dtype: DType, dims: Vec<i64>, source: Bytes, recipe: &Recipe) -> Result<TensorData, String> {
        let es = dtype.size().ok_or("an element type without a fixed size")?;
        let n = numel(&dims).ok_or("dims out of range")?;
        let len = n.checked_mul(es).ok_or("size out of range")?;
        let within = |strides: &[usize], bytes: usize| {
            strides.len() == dims.len()
                && (n == 0
                    || last_index(&dims, strides)
                        .and_then(|i| i.checked_add(1)?.checked_mul(es))
                        .is_some_and(|b| b <= bytes))
        };
        if source.len() != recipe.source_len || !within(&recipe.gather, source.len()) {
            return Err("the gather reads outside its stored bytes".into());
        }
        if !recipe.ops.is_empty() && !matches!(dtype, DType::Float | DType::Double) {
            return Err("elementwise operations on a type other than float32 or float64".into());
        }
        let mut ops = Vec::with_capacity(recipe.ops.len());
        for o in &recipe.ops {
            let op = BinOp::from_name(&o.op).ok_or_else(|| format!("unknown operation `{}`", o.op))?;
            let konst = hex_bytes(&o.konst).ok_or("a constant that is not hex")?;
            if !konst.len().is_multiple_of(es) || !within(&o.strides, konst.len()) {
                return Err("a constant smaller than its strides read".into());
            }
            ops.push(Op { op, konst: konst.into(), strides: o.strides.clone(), konst_first: o.konst_first });
        }
        let gather = recipe.gather.clone();
        Ok(Derived { dtype, dims, source, gather, ops, len, cache: OnceLock::new() }.into_tensor())
    }
}

fn hex_bytes(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok()).collect()
}

/// Element bytes of a constant: stored, or derived and computed on demand.
#[derive(Clone)]
pub struct Raw(Repr);

#[derive(Clone)]
enum Repr {
    Stored(Bytes),
    Derived(Arc<Derived>),
}

impl Raw {
    /// Byte length, without computing a derived tensor.
    pub fn len(&self) -> usize {
        match &self.0 {
            Repr::Stored(b) => b.len(),
            Repr::Derived(d) => d.len,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The computation, for a derived tensor.
    pub fn derived(&self) -> Option<&Derived> {
        match &self.0 {
            Repr::Stored(_) => None,
            Repr::Derived(d) => Some(d),
        }
    }

    /// The bytes if they exist already (stored, or derived and materialized by some reader).
    pub fn existing(&self) -> Option<&Bytes> {
        match &self.0 {
            Repr::Stored(b) => Some(b),
            Repr::Derived(d) => d.cache.get(),
        }
    }

    /// All bytes (a derived tensor is computed once and kept).
    pub fn to_bytes(&self) -> Bytes {
        match &self.0 {
            Repr::Stored(b) => b.clone(),
            Repr::Derived(d) => d.bytes().clone(),
        }
    }

    /// The first `n` bytes (or all, if fewer), computing only those of a derived tensor.
    pub fn prefix(&self, n: usize) -> Cow<'_, [u8]> {
        match (self.existing(), &self.0) {
            (None, Repr::Derived(d)) => {
                let es = d.elem_size();
                let count = n.min(d.len).div_ceil(es);
                let mut buf = vec![0u8; count * es];
                d.fill(0, &mut buf);
                buf.truncate(n.min(d.len));
                Cow::Owned(buf)
            }
            // Stored, or derived and already computed: the bytes exist.
            _ => Cow::Borrowed(&self[..n.min(self.len())]),
        }
    }

    /// Compute a derived tensor's bytes in order, a chunk at a time ([`Derived::chunk_bytes`]),
    /// each straight into the buffer `room` hands out for it: no copy after computing. Stops when
    /// `room` has none. Returns false (nothing done) for bytes that exist already.
    pub fn compute_into(&self, room: &mut impl ChunkRoom) -> bool {
        let (None, Repr::Derived(d)) = (self.existing(), &self.0) else { return false };
        let step = d.chunk_bytes();
        let mut off = 0;
        while off < d.len {
            let n = step.min(d.len - off);
            let Some(out) = room.room(n) else { break };
            d.fill(off / d.elem_size(), out);
            off += n;
        }
        true
    }
}

/// Where [`Raw::compute_into`] computes each chunk.
pub trait ChunkRoom {
    /// `len` writable bytes for the next chunk, or `None` to stop.
    fn room(&mut self, len: usize) -> Option<&mut [u8]>;
}

impl std::ops::Deref for Raw {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match &self.0 {
            Repr::Stored(b) => b,
            Repr::Derived(d) => d.bytes(),
        }
    }
}

impl From<Bytes> for Raw {
    fn from(b: Bytes) -> Raw {
        Raw(Repr::Stored(b))
    }
}

impl From<Vec<u8>> for Raw {
    fn from(v: Vec<u8>) -> Raw {
        Raw(Repr::Stored(v.into()))
    }
}

impl From<&'static [u8]> for Raw {
    fn from(v: &'static [u8]) -> Raw {
        Raw(Repr::Stored(Bytes::from_static(v)))
    }
}

impl Default for Raw {
    fn default() -> Raw {
        Raw(Repr::Stored(Bytes::new()))
    }
}

impl std::fmt::Debug for Raw {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            Repr::Stored(b) => b.fmt(f),
            Repr::Derived(d) => write!(f, "Derived({} bytes, {} ops)", d.len, d.ops.len()),
        }
    }
}

impl PartialEq for Raw {
    /// Equal bytes. Two derived tensors doing the same computation are equal without computing
    /// either; otherwise both are compared chunk by chunk, never materialized whole.
    fn eq(&self, o: &Raw) -> bool {
        if self.len() != o.len() {
            return false;
        }
        if let (Repr::Derived(a), Repr::Derived(b)) = (&self.0, &o.0) {
            if Arc::ptr_eq(a, b) || **a == **b {
                return true;
            }
        }
        // Compared in aligned pieces (every element size divides CHUNK_BYTES).
        let (mut ba, mut bb) = (Vec::new(), Vec::new());
        let mut off = 0;
        while off < self.len() {
            let n = CHUNK_BYTES.min(self.len() - off);
            if self.piece(off, n, &mut ba) != o.piece(off, n, &mut bb) {
                return false;
            }
            off += n;
        }
        true
    }
}

impl Raw {
    /// Bytes `off..off + n` (both multiples of the element size), computed into `buf` if derived.
    fn piece<'a>(&'a self, off: usize, n: usize, buf: &'a mut Vec<u8>) -> &'a [u8] {
        match (self.existing(), &self.0) {
            (Some(b), _) => &b[off..off + n],
            (None, Repr::Derived(d)) => {
                buf.resize(n, 0);
                d.fill(off / d.elem_size(), &mut buf[..n]);
                &buf[..n]
            }
            (None, Repr::Stored(b)) => &b[off..off + n],
        }
    }
}

fn numel(dims: &[i64]) -> Option<usize> {
    dims.iter().try_fold(1usize, |acc, &d| acc.checked_mul(usize::try_from(d).ok()?))
}

fn contiguous_strides(dims: &[i64]) -> Vec<usize> {
    let mut s = vec![0usize; dims.len()];
    let mut acc = 1usize;
    for i in (0..dims.len()).rev() {
        s[i] = acc;
        acc = acc.saturating_mul(dims[i].max(0) as usize);
    }
    s
}

impl Derived {
    /// The computation behind `t` as a fresh derived tensor of dims `t.dims` (a stored tensor is
    /// the identity gather). `None` when `t`'s bytes do not match its shape.
    fn of(t: &TensorData) -> Option<Derived> {
        let es = t.dtype.size()?;
        let n = numel(&t.dims)?;
        let len = n.checked_mul(es)?;
        if t.raw.len() != len {
            return None;
        }
        match &t.raw.0 {
            Repr::Derived(d) if d.dims == t.dims && d.dtype == t.dtype => Some(Derived {
                dtype: d.dtype,
                dims: d.dims.clone(),
                source: d.source.clone(),
                gather: d.gather.clone(),
                ops: d.ops.clone(),
                len,
                cache: OnceLock::new(),
            }),
            // Viewed with other dims (reshaped): its gather is not expressed in them, so it is
            // computed (rare: large constants are only transposed or scaled).
            Repr::Derived(d) => Some(Derived {
                dtype: t.dtype,
                dims: t.dims.clone(),
                source: d.bytes().clone(),
                gather: contiguous_strides(&t.dims),
                ops: Vec::new(),
                len,
                cache: OnceLock::new(),
            }),
            Repr::Stored(b) => Some(Derived {
                dtype: t.dtype,
                dims: t.dims.clone(),
                source: b.clone(),
                gather: contiguous_strides(&t.dims),
                ops: Vec::new(),
                len,
                cache: OnceLock::new(),
            }),
        }
    }

    fn into_tensor(self) -> TensorData {
        TensorData { dtype: self.dtype, dims: self.dims.clone(), raw: Raw(Repr::Derived(Arc::new(self))) }
    }

    /// `Transpose(t, perm)` recorded, not computed (any element type; composes with `t`'s own
    /// computation). `perm` must be a permutation of `t`'s axes.
    pub fn transpose(t: &TensorData, perm: &[usize]) -> Option<TensorData> {
        let r = t.dims.len();
        let mut seen = vec![false; r];
        if perm.len() != r || perm.iter().any(|&p| p >= r || std::mem::replace(&mut seen[p], true)) {
            return None;
        }
        let d = Derived::of(t)?;
        let pick = |v: &[usize]| perm.iter().map(|&p| v[p]).collect::<Vec<_>>();
        Some(
            Derived {
                dims: perm.iter().map(|&p| d.dims[p]).collect(),
                gather: pick(&d.gather),
                ops: d.ops.iter().map(|o| Op { strides: pick(&o.strides), ..o.clone() }).collect(),
                ..d
            }
            .into_tensor(),
        )
    }

    /// `t op k` (or `k op t` when `konst_first`) recorded, not computed: float32 / float64 only,
    /// `k` of the same type broadcasting to `t`'s shape (the result has `t`'s shape).
    pub fn binary(t: &TensorData, op: BinOp, k: &TensorData, konst_first: bool) -> Option<TensorData> {
        if t.dtype != k.dtype || !matches!(t.dtype, DType::Float | DType::Double) || k.dims.len() > t.dims.len() {
            return None;
        }
        let es = t.dtype.size()?;
        if k.raw.len() != numel(&k.dims)?.checked_mul(es)? {
            return None;
        }
        let r = t.dims.len();
        let ks = contiguous_strides(&k.dims);
        let mut strides = vec![0usize; r];
        for (i, &kd) in k.dims.iter().enumerate() {
            let o = r - k.dims.len() + i;
            if kd != 1 {
                if kd != t.dims[o] {
                    return None;
                }
                strides[o] = ks[i];
            }
        }
        let mut d = Derived::of(t)?;
        d.ops.push(Op { op, konst: k.raw.to_bytes(), strides, konst_first });
        Some(d.into_tensor())
    }

    /// Bytes to compute at a time: [`CHUNK_BYTES`], except for the transpose of a tall weight (say
    /// an lm_head of 32000 × 256), whose output rows are long: a chunk of a few rows would read a
    /// strip a few elements wide from every source row, streaming the whole source through the
    /// cache once per chunk with half of each cache line unused. Its chunks are whole multiples of 64 bytes'
    /// worth of output rows (each source cache line read once), up to [`MAX_CHUNK_BYTES`].
    fn chunk_bytes(&self) -> usize {
        let es = self.elem_size();
        match coalesce(&self.dims, &self.gather)[..] {
            [(cols, 1), (rows, s)] if s == cols => {
                let row = rows * es;
                let line = (64 / es).max(1);
                let k = (CHUNK_BYTES / row.max(1) / line * line).max(line);
                k.saturating_mul(row).min(MAX_CHUNK_BYTES).max(es)
            }
            _ => CHUNK_BYTES,
        }
    }

    /// The stored bytes it is computed from.
    pub fn source(&self) -> &Bytes {
        &self.source
    }

    fn elem_size(&self) -> usize {
        self.dtype.size().unwrap_or(1)
    }

    fn bytes(&self) -> &Bytes {
        self.cache.get_or_init(|| {
            let mut out = vec![0u8; self.len];
            self.fill(0, &mut out);
            out.into()
        })
    }

    /// Compute output elements `start..start + out.len() / size` into `out`.
    fn fill(&self, start: usize, out: &mut [u8]) {
        let es = self.elem_size();
        let count = out.len() / es;
        if count == 0 {
            return;
        }
        self.gather_into(start, out);
        for op in &self.ops {
            match self.dtype {
                DType::Float => apply::<f32>(op, &self.dims, start, out),
                DType::Double => apply::<f64>(op, &self.dims, start, out),
                // Constructors only record ops on float32 / float64.
                _ => {}
            }
        }
    }

    fn gather_into(&self, start: usize, out: &mut [u8]) {
        let es = self.elem_size();
        let axes = coalesce(&self.dims, &self.gather);
        let count = out.len() / es;
        let src = &self.source[..];
        match axes.as_slice() {
            [] => out.copy_from_slice(&src[..es]),
            [(_, 1)] => out.copy_from_slice(&src[start * es..(start + count) * es]),
            // A 2-D transpose of a [rows, cols] source: output row j is source column j.
            &[(cols, 1), (rows, s)] if s == cols => match es {
                4 => transpose::chunk::<4>(src, out, rows, cols, start),
                2 => transpose::chunk::<2>(src, out, rows, cols, start),
                8 => transpose::chunk::<8>(src, out, rows, cols, start),
                1 => transpose::chunk::<1>(src, out, rows, cols, start),
                _ => gather_strided(src, out, es, &axes, start),
            },
            _ => gather_strided(src, out, es, &axes, start),
        }
    }
}

/// Merge adjacent axes that step through `strides` as one (and drop size-1 axes): `(size, stride)`.
fn coalesce(dims: &[i64], strides: &[usize]) -> Vec<(usize, usize)> {
    let mut out: Vec<(usize, usize)> = Vec::with_capacity(dims.len());
    for (&d, &s) in dims.iter().zip(strides) {
        let d = d.max(0) as usize;
        if d == 1 {
            continue;
        }
        match out.last_mut() {
            Some(last) if last.1 == s * d => *last = (last.0 * d, s),
            _ => out.push((d, s)),
        }
    }
    out
}

/// The source offset (in elements) of output element `k` and its position along the innermost
/// axis, for axes `(size, stride)`.
fn locate(axes: &[(usize, usize)], mut k: usize) -> (usize, usize) {
    let mut at = 0;
    let mut inner = 0;
    for (i, &(d, s)) in axes.iter().enumerate().rev() {
        let idx = k % d;
        k /= d;
        at += idx * s;
        if i + 1 == axes.len() {
            inner = idx;
        }
    }
    (at, inner)
}

/// Any strided gather: runs along the innermost axis, each run's start located from its index.
fn gather_strided(src: &[u8], out: &mut [u8], es: usize, axes: &[(usize, usize)], start: usize) {
    let Some(&(d, s)) = axes.last() else { return };
    let count = out.len() / es;
    let mut k = 0;
    while k < count {
        let (mut at, inner) = locate(axes, start + k);
        let run = (d - inner).min(count - k);
        for o in out[k * es..(k + run) * es].chunks_exact_mut(es) {
            o.copy_from_slice(&src[at * es..at * es + es]);
            at += s;
        }
        k += run;
    }
}

/// The float element types derived ops compute in.
trait Float:
    Copy
    + std::ops::Add<Output = Self>
    + std::ops::Sub<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::Div<Output = Self>
{
    const E: usize;
    fn read(b: &[u8]) -> Self;
    fn write(self, b: &mut [u8]);
}

impl Float for f32 {
    const E: usize = 4;
    fn read(b: &[u8]) -> f32 {
        f32::from_le_bytes([b[0], b[1], b[2], b[3]])
    }
    fn write(self, b: &mut [u8]) {
        b.copy_from_slice(&self.to_le_bytes());
    }
}

impl Float for f64 {
    const E: usize = 8;
    fn read(b: &[u8]) -> f64 {
        f64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]])
    }
    fn write(self, b: &mut [u8]) {
        b.copy_from_slice(&self.to_le_bytes());
    }
}

/// Apply `op` to output elements `start..` held in `out`, run by run along the innermost axis of
/// the constant's broadcast (a scalar per run, or a stride through it).
fn apply<T: Float>(op: &Op, dims: &[i64], start: usize, out: &mut [u8]) {
    let axes = coalesce(dims, &op.strides);
    let count = out.len() / T::E;
    let konst = |i: usize| T::read(&op.konst[i * T::E..i * T::E + T::E]);
    let (d, s) = axes.last().copied().unwrap_or((usize::MAX, 0));
    let mut k = 0;
    while k < count {
        let (at, inner) = if axes.is_empty() { (0, 0) } else { locate(&axes, start + k) };
        let run = (d - inner).min(count - k);
        let chunk = &mut out[k * T::E..(k + run) * T::E];
        macro_rules! go {
            ($f:expr) => {
                run_op::<T>(chunk, s, at, konst, $f)
            };
        }
        match (op.op, op.konst_first) {
            (BinOp::Add, false) => go!(|x, c| x + c),
            (BinOp::Add, true) => go!(|x, c| c + x),
            (BinOp::Sub, false) => go!(|x, c| x - c),
            (BinOp::Sub, true) => go!(|x, c| c - x),
            (BinOp::Mul, false) => go!(|x, c| x * c),
            (BinOp::Mul, true) => go!(|x, c| c * x),
            (BinOp::Div, false) => go!(|x, c| x / c),
            (BinOp::Div, true) => go!(|x, c| c / x),
        }
        k += run;
    }
}

/// One run: `x[t] = f(x[t], c[at + t * s])`.
fn run_op<T: Float>(chunk: &mut [u8], s: usize, at: usize, konst: impl Fn(usize) -> T, f: impl Fn(T, T) -> T) {
    if s == 0 {
        let c = konst(at);
        for e in chunk.chunks_exact_mut(T::E) {
            f(T::read(e), c).write(e);
        }
    } else {
        for (t, e) in chunk.chunks_exact_mut(T::E).enumerate() {
            f(T::read(e), konst(at + t * s)).write(e);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::onnx::ir::{AttrValue, Node};
    use crate::onnx::operators as fold;

    /// Deterministic pseudo-random bytes (xorshift), so values cover signs, NaNs and subnormals.
    fn noise(n: usize, seed: u64) -> Vec<u8> {
        let mut x = seed | 1;
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 24) as u8
            })
            .collect()
    }

    fn stored(dtype: DType, dims: Vec<i64>, seed: u64) -> TensorData {
        let n = numel(&dims).unwrap() * dtype.size().unwrap();
        TensorData { dtype, dims, raw: noise(n, seed).into() }
    }

    fn f32s(dims: Vec<i64>, v: &[f32]) -> TensorData {
        TensorData {
            dtype: DType::Float,
            dims,
            raw: v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>().into(),
        }
    }

    fn node(op: &str, perm: Option<&[i64]>) -> Node {
        let mut n = Node::identity(crate::onnx::ir::Value(0), crate::onnx::ir::Value(1), Default::default());
        n.op_type = op.into();
        if let Some(p) = perm {
            n.attributes.push(crate::onnx::ir::Attribute { name: "perm".into(), value: AttrValue::Ints(p.to_vec()) });
        }
        n
    }

    /// Every way of reading a derived tensor gives `want`: whole (`Deref`), in the encoder's chunks,
    /// and computed over ranges that start and end anywhere (mid-row included).
    fn check_reads(t: &TensorData, want: &[u8]) {
        assert!(t.raw.derived().is_some(), "not derived");
        assert_eq!(t.raw.len(), want.len());
        /// Collects the chunks the save would compute into its buffers.
        struct Collect(Vec<u8>);
        impl ChunkRoom for Collect {
            fn room(&mut self, len: usize) -> Option<&mut [u8]> {
                assert!(len <= MAX_CHUNK_BYTES);
                let at = self.0.len();
                self.0.resize(at + len, 0);
                Some(&mut self.0[at..])
            }
        }
        let mut streamed = Collect(Vec::new());
        assert!(t.raw.compute_into(&mut streamed));
        assert!(streamed.0 == want, "chunked bytes differ");
        let d = t.raw.derived().unwrap();
        let es = t.dtype.size().unwrap();
        let n = want.len() / es;
        for (a, b) in [(0, n), (1, n), (0, 1), (n / 3, n / 2 + 7), (n - 1, n), (5, 6), (n / 7, n - 3)] {
            let mut out = vec![0u8; (b - a) * es];
            d.fill(a, &mut out);
            assert!(out == want[a * es..b * es], "range {a}..{b} differs");
        }
        assert_eq!(&t.raw.prefix(100)[..], &want[..100.min(want.len())]);
        // Equal to its own bytes without computing it whole; Deref computes it.
        assert!(t.raw == Raw::from(want.to_vec()));
        assert!(t.raw.existing().is_none());
        assert!(&t.raw[..] == want);
        assert!(t.raw.existing().is_some());
    }

    /// A recipe written down and read back computes the same bytes from the same source; one that
    /// would read past its source or constants is refused.
    #[test]
    fn recipes_round_trip_and_are_checked() {
        let x = stored(DType::Float, vec![30, 50], 3);
        let scale = f32s(vec![50, 1], &(0..50).map(|i| i as f32 * 0.5 - 3.0).collect::<Vec<_>>());
        let t = Derived::transpose(&x, &[1, 0]).unwrap();
        let t = Derived::binary(&t, BinOp::Mul, &scale, false).unwrap();
        let d = t.raw.derived().unwrap();
        let recipe: Recipe = serde_json::from_str(&serde_json::to_string(&d.recipe()).unwrap()).unwrap();
        assert_eq!(recipe.ops.len(), 1);
        let again = Derived::from_recipe(t.dtype, t.dims.clone(), d.source().clone(), &recipe).unwrap();
        assert!(again.raw.to_bytes() == t.raw.to_bytes());
        let short = d.source().slice(..d.source().len() - 4);
        let bad = Recipe { source_len: short.len(), ..recipe.clone() };
        assert!(Derived::from_recipe(t.dtype, t.dims.clone(), short, &bad).is_err());
        let mut bad = recipe.clone();
        bad.ops[0].konst.truncate(8);
        assert!(Derived::from_recipe(t.dtype, t.dims.clone(), d.source().clone(), &bad).is_err());
        let mut bad = recipe;
        bad.ops[0].op = "Pow".into();
        assert!(Derived::from_recipe(t.dtype, t.dims.clone(), d.source().clone(), &bad).is_err());
    }

    #[test]
    fn transpose_2d_in_chunks_matches_the_eager_fold() {
        // 700 × 1000 float32 (2.8 MB): chunks of whole output rows, ranges that end mid-row.
        // A tall one (40000 × 20): chunks of 16 output rows (2.56 MB).
        for (dtype, rows, cols) in [
            (DType::Float, 700, 1000),
            (DType::Float, 40000, 20),
            // ViT-B/16's MLP weights, both ways; sizes that cut 8-row blocks at the edges.
            (DType::Float, 3072, 768),
            (DType::Float, 768, 3072),
            (DType::Float, 13, 8),
            (DType::Float, 24, 41),
            // The vector kernel's 8 × 8 blocks: exactly one, and ragged edges both ways.
            (DType::Float, 8, 8),
            (DType::Float, 37, 29),
            (DType::Float16, 333, 129),
            (DType::Double, 17, 4099),
            (DType::Uint8, 9, 31),
        ] {
            let x = stored(dtype, vec![rows, cols], 7);
            let eager = fold::transpose(&x, Some(&[1, 0])).unwrap();
            let lazy = Derived::transpose(&x, &[1, 0]).unwrap();
            assert_eq!(lazy.dims, vec![cols, rows]);
            check_reads(&lazy, &eager.raw);
        }
    }

    #[test]
    fn transpose_nd_and_composed_transposes() {
        let x = stored(DType::BFloat16, vec![6, 5, 70, 3], 11);
        for perm in [[2usize, 0, 3, 1], [0, 1, 3, 2], [3, 2, 1, 0], [1, 0, 2, 3]] {
            let p: Vec<i64> = perm.iter().map(|&a| a as i64).collect();
            let eager = fold::transpose(&x, Some(&p)).unwrap();
            let lazy = Derived::transpose(&x, &perm).unwrap();
            // A transpose of the derived tensor composes (nothing computed) and matches transposing
            // the eager result.
            let again = Derived::transpose(&lazy, &[1, 3, 0, 2]).unwrap();
            assert!(lazy.raw.existing().is_none());
            let eager2 = fold::transpose(&eager, Some(&[1, 3, 0, 2])).unwrap();
            check_reads(&lazy, &eager.raw);
            check_reads(&again, &eager2.raw);
        }
        // Transposing back is the stored tensor again.
        let t = Derived::transpose(&x, &[2, 0, 3, 1]).unwrap();
        let back = Derived::transpose(&t, &[1, 3, 0, 2]).unwrap();
        check_reads(&back, &x.raw);
    }

    /// `x op k` folded eagerly by the constant folder.
    fn eager(op: &str, a: &TensorData, b: &TensorData) -> TensorData {
        fold::eval(&node(op, None), &[Some(a), Some(b)]).unwrap()
    }

    #[test]
    fn broadcast_ops_match_the_eager_fold() {
        let cases: Vec<(Vec<i64>, Vec<i64>)> = vec![
            (vec![64, 3, 3, 3], vec![64, 1, 1, 1]), // Conv weight × per-output-channel factor
            (vec![300, 1000], vec![300, 1]),        // Gemm transB
            (vec![1000, 300], vec![300]),           // Gemm, factor along the last axis
            (vec![16, 8, 3, 3], vec![1, 8, 1, 1]),  // ConvTranspose
            (vec![7, 9, 11], vec![7, 1, 11]),       // a stride through the constant inside each run
            (vec![5, 4001], vec![]),                // scalar
        ];
        for (i, (xd, kd)) in cases.into_iter().enumerate() {
            for dtype in [DType::Float, DType::Double] {
                let x = stored(dtype, xd.clone(), 3 + i as u64);
                let k = stored(dtype, kd.clone(), 99 + i as u64);
                for (op, bop) in [("Mul", BinOp::Mul), ("Add", BinOp::Add), ("Sub", BinOp::Sub), ("Div", BinOp::Div)] {
                    check_reads(&Derived::binary(&x, bop, &k, false).unwrap(), &eager(op, &x, &k).raw);
                    check_reads(&Derived::binary(&x, bop, &k, true).unwrap(), &eager(op, &k, &x).raw);
                }
            }
        }
    }

    #[test]
    fn chains_of_transposes_and_ops_match_step_by_step_folding() {
        // (W^T * s + b)^T, each step rounded as the eager fold rounds it.
        let w = stored(DType::Float, vec![1000, 300], 5);
        let s = stored(DType::Float, vec![1000], 6);
        let b = stored(DType::Float, vec![300, 1], 8);
        let wt = Derived::transpose(&w, &[1, 0]).unwrap();
        let scaled = Derived::binary(&wt, BinOp::Mul, &s, false).unwrap();
        let shifted = Derived::binary(&scaled, BinOp::Sub, &b, true).unwrap();
        let back = Derived::transpose(&shifted, &[1, 0]).unwrap();
        let e1 = fold::transpose(&w, Some(&[1, 0])).unwrap();
        let e2 = eager("Mul", &e1, &s);
        let e3 = eager("Sub", &b, &e2);
        let e4 = fold::transpose(&e3, Some(&[1, 0])).unwrap();
        check_reads(&scaled, &e2.raw);
        check_reads(&shifted, &e3.raw);
        check_reads(&back, &e4.raw);
        // A derived tensor viewed with other dims (a reshape) is computed first, then transposed.
        let reshaped = TensorData { dims: vec![600, 500], ..shifted.clone() };
        let t = Derived::transpose(&reshaped, &[1, 0]).unwrap();
        let want = fold::transpose(&TensorData { dims: vec![600, 500], ..e3.clone() }, Some(&[1, 0])).unwrap();
        check_reads(&t, &want.raw);
    }

    #[test]
    fn equality_without_computing() {
        let w = stored(DType::Float, vec![200, 300], 21);
        let k = f32s(vec![300], &[2.0; 300]);
        let a = Derived::binary(&w, BinOp::Mul, &k, false).unwrap();
        let b = Derived::binary(&w, BinOp::Mul, &k, false).unwrap();
        assert!(a == b);
        assert!(a.raw.existing().is_none() && b.raw.existing().is_none());
        // Same values, computed differently: compared chunk by chunk.
        let c = Derived::binary(&w, BinOp::Add, &stored(DType::Float, vec![1], 0), false).unwrap();
        let d = Derived::transpose(&Derived::transpose(&a, &[1, 0]).unwrap(), &[1, 0]).unwrap();
        assert!(a.raw == d.raw);
        assert!(a.raw != c.raw);
        assert!(a.raw.existing().is_none());
    }

    #[test]
    fn refuses_what_it_cannot_record() {
        let x = stored(DType::Float, vec![4, 6], 1);
        assert!(Derived::transpose(&x, &[0, 0]).is_none());
        assert!(Derived::transpose(&x, &[1]).is_none());
        assert!(Derived::transpose(&x, &[1, 2]).is_none());
        let short = TensorData { dims: vec![5, 6], ..x.clone() };
        assert!(Derived::transpose(&short, &[1, 0]).is_none());
        assert!(Derived::binary(&x, BinOp::Mul, &stored(DType::Double, vec![6], 1), false).is_none());
        assert!(Derived::binary(&x, BinOp::Mul, &stored(DType::Float, vec![4], 1), false).is_none());
        assert!(Derived::binary(&x, BinOp::Mul, &stored(DType::Float, vec![2, 4, 6], 1), false).is_none());
        let h = stored(DType::Float16, vec![4, 6], 1);
        assert!(Derived::binary(&h, BinOp::Mul, &stored(DType::Float16, vec![6], 1), false).is_none());
        let empty = TensorData { dtype: DType::Float, dims: vec![0, 3], raw: Vec::new().into() };
        let t = Derived::transpose(&empty, &[1, 0]).unwrap();
        assert_eq!((t.dims.clone(), t.raw.len(), &t.raw[..]), (vec![3, 0], 0, &[][..]));
    }
}
