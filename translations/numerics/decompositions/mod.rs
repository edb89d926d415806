//! Matrix decompositions and solvers for small static matrices, unrolled into ONNX ops at export
//! time: LU with partial pivoting (LAPACK's getrf pivot choice: the first row of largest magnitude),
//! determinants, solves and inverses, Cholesky, triangular solves, matrix powers, Householder QR
//! (and LAPACK's geqrf / orgqr / ormqr forms), Bunch-Kaufman LDLᵀ (sytf2 / sytrs), symmetric
//! eigenvalues (Jacobi rotations), singular values and the products of singular vectors that do
//! not depend on their signs (pseudo-inverse, polar decomposition), matrix square root and
//! exponential, matrix and vector norms.
//!
//! Every algorithm works on whole `[..., m, n]` tensors, batched over the leading dims: one step of
//! an elimination is a handful of Slice / Where / Mul / Sub nodes with constant masks.
//!
//! One file per algorithm family, each with the ops it serves: `lu.rs`, `triangular.rs` (Cholesky
//! and triangular solves), `qr.rs`, `ldl.rs`, `jacobi.rs` (SVD and symmetric eigenvalues),
//! `norms.rs`, `matrix_functions.rs` (powers, exponential, square root). The shape checks and
//! constant helpers they share are here.

use crate::translate::prelude::*;

mod jacobi;
mod ldl;
mod lu;
mod matrix_functions;
mod norms;
mod qr;
mod triangular;

/// The largest matrix side unrolled.
const MAX_SIDE: i64 = 16;

/// `(batch dims, rows, cols)` of a matrix (batch) with static, small sides.
fn matrix_dims(op: &Builder, x: Value, what: &str) -> OpResult<(Vec<i64>, i64, i64)> {
    let s = static_shape(op, x, what)?;
    if s.len() < 2 {
        bail!("{what} needs a tensor of at least 2 dimensions");
    }
    let (m, n) = (s[s.len() - 2], s[s.len() - 1]);
    if m > MAX_SIDE || n > MAX_SIDE {
        bail!("{what} is unrolled for matrices up to {MAX_SIDE}x{MAX_SIDE}, got {m}x{n}");
    }
    Ok((s[..s.len() - 2].to_vec(), m, n))
}

fn float_type(op: &Builder, x: Value, what: &str) -> OpResult<DType> {
    let t = match op.out_dtype(0) {
        Some(t) => t,
        None => dtype_of(op, x)?,
    };
    if op.info(x).complex || !computes_in(t) {
        bail!("{what} is translated for real float16, bfloat16, float32 and float64 tensors only, not {t:?}");
    }
    Ok(t)
}

/// The floating-point types the decompositions compute in (torch has no linear algebra in float8
/// either).
fn computes_in(t: DType) -> bool {
    matches!(t, DType::Float | DType::Double | DType::Float16 | DType::BFloat16)
}

/// A constant `[rows, cols]` tensor of type `t` from `f(i, j)`. The decompositions run in the
/// types [`float_type`] admits, whose constants are encoded directly; any other type gets the
/// float64 constant cast to it, never a panic.
fn const_mat(op: &mut Builder, t: DType, rows: i64, cols: i64, f: impl Fn(i64, i64) -> f64) -> Value {
    let vals: Vec<f64> = (0..rows).flat_map(|i| (0..cols).map(move |j| (i, j))).map(|(i, j)| f(i, j)).collect();
    match TensorData::from_f64_as(t, vec![rows, cols], &vals) {
        Some(data) => op.constant_tensor(data),
        None => {
            let raw: Vec<u8> = vals.iter().flat_map(|v| v.to_le_bytes()).collect();
            let c = op.constant_tensor(TensorData { dtype: DType::Double, dims: vec![rows, cols], raw: raw.into() });
            cast(op, c, t)
        }
    }
}

/// A constant bool `[rows, cols]` mask.
fn mask(op: &mut Builder, rows: i64, cols: i64, f: impl Fn(i64, i64) -> bool) -> Value {
    const_mat(op, DType::Bool, rows, cols, |i, j| f(i, j) as i64 as f64)
}

/// The transpose of the last two dims of a rank-`rank` tensor.
fn transpose_last_two(op: &mut Builder, x: Value, rank: usize) -> Value {
    let mut perm: Vec<i64> = (0..rank as i64).collect();
    perm.swap(rank - 2, rank - 1);
    op.Transpose(x).perm(&perm).out()
}

/// `x` broadcast to the static shape `dims`.
fn expand_to(op: &mut Builder, x: Value, dims: &[i64]) -> Value {
    let s = op.const_i64s(dims);
    op.Expand(x, s)
}

/// The shape `batch` followed by `tail`.
fn batched(batch: &[i64], tail: &[i64]) -> Vec<i64> {
    let mut v = batch.to_vec();
    v.extend_from_slice(tail);
    v
}

/// A square float matrix input: `(x cast to t, t, batch, n)`.
fn square(op: &mut Builder, x: Value, what: &str) -> OpResult<(Value, DType, Vec<i64>, i64)> {
    let (batch, m, n) = matrix_dims(op, x, what)?;
    if m != n {
        bail!("{what} needs square matrices, got {m}x{n}");
    }
    let t = float_type(op, x, what)?;
    let x = cast(op, x, t);
    Ok((x, t, batch, n))
}

/// Broadcasts the batch dims of A (`[..., n, n]`) and B (`[..., n, k]`).
fn broadcast_pair(op: &mut Builder, a: Value, b: Value, what: &str) -> OpResult<(Value, Value, Vec<i64>, i64, i64)> {
    let (abatch, m, n) = matrix_dims(op, a, what)?;
    if m != n {
        bail!("{what} needs square coefficient matrices, got {m}x{n}");
    }
    let bshape = static_shape(op, b, what)?;
    if bshape.len() < 2 {
        bail!("{what}: B must be a matrix batch");
    }
    let r = bshape.len();
    let (bbatch, bm, k) = (bshape[..r - 2].to_vec(), bshape[r - 2], bshape[r - 1]);
    if bm != n {
        bail!("{what}: B has {bm} rows but A is {n}x{n}");
    }
    let batch = broadcast_shapes(&abatch, &bbatch).ok_or("the batch dimensions do not broadcast")?;
    let a = expand_to(op, a, &batched(&batch, &[n, n]));
    let b = expand_to(op, b, &batched(&batch, &[n, k]));
    Ok((a, b, batch, n, k))
}

/// The entry `(i, j)` of a matrix batch (`[..., 1, 1]`).
fn entry(op: &mut Builder, w: Value, i: i64, j: i64) -> Value {
    let r = slice_along(op, w, -2, i, i + 1);
    slice_along(op, r, -1, j, j + 1)
}

/// Register every decomposition into `table` (one family, `decompositions` in `FAMILIES`).
pub fn register(table: &mut TranslationTable) {
    lu::register(table);
    triangular::register(table);
    qr::register(table);
    ldl::register(table);
    jacobi::register(table);
    norms::register(table);
    matrix_functions::register(table);
}
