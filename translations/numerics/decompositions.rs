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

use crate::translate::prelude::*;
use crate::translations;
use crate::translations::shared::norms::pnorm;

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

/// The longest side of a matrix whose other side is at most [`MAX_SIDE`]: the one-sided Jacobi
/// SVD rotates the short side's columns, so its graph grows with the short side only.
const MAX_LONG_SIDE: i64 = 4096;

/// `(batch dims, rows, cols)` of a matrix (batch) with static sides, the shorter one small.
fn thin_matrix_dims(op: &Builder, x: Value, what: &str) -> OpResult<(Vec<i64>, i64, i64)> {
    let s = static_shape(op, x, what)?;
    if s.len() < 2 {
        bail!("{what} needs a tensor of at least 2 dimensions");
    }
    let (m, n) = (s[s.len() - 2], s[s.len() - 1]);
    if m.min(n) > MAX_SIDE {
        bail!("{what} is unrolled for matrices up to {MAX_SIDE}x{MAX_SIDE}, got {m}x{n}");
    }
    if m.max(n) > MAX_LONG_SIDE {
        bail!("{what} is unrolled for matrices of sides up to {MAX_SIDE} and {MAX_LONG_SIDE}, got {m}x{n}");
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

/// A row permutation applied to `w` (`[..., m, c]`): row `k` and row `p` (`[..., 1, 1]` int64)
/// swapped.
fn swap_rows(op: &mut Builder, w: Value, k: i64, p: Value, batch: &[i64], m: i64, c: i64) -> Value {
    let ar_data = TensorData::from_i64s(vec![m, 1], &(0..m).collect::<Vec<_>>());
    let ar = op.constant_tensor(ar_data);
    let kk = op.scalar_i64(k);
    let is_k = op.Equal(ar, kk);
    let is_p = op.Equal(ar, p);
    let inner = op.Where(is_p, kk, ar);
    let idx = op.Where(is_k, p, inner);
    let idx = expand_to(op, idx, &batched(batch, &[m, c]));
    op.GatherElements(w, idx).axis(-2).out()
}

/// Gaussian elimination with partial pivoting of `w` (`[..., m, c]`, type `t`) over its first
/// `n` columns (`steps` = min(m, n) pivots). Returns the eliminated matrix (the multipliers of L
/// stored below the diagonal, as LAPACK's getrf), the 0-based pivot rows (`[..., 1, 1]` int64
/// each), and the row order (`[..., m, 1]` int64: row `i` of the result came from row `ord[i]`).
struct Lu {
    w: Value,
    pivots: Vec<Value>,
    order: Value,
}

fn lu_eliminate(op: &mut Builder, w: Value, t: DType, batch: &[i64], m: i64, c: i64, steps: i64) -> Lu {
    let mut w = w;
    let mut pivots = Vec::new();
    let ord_data = TensorData::from_i64s(vec![m, 1], &(0..m).collect::<Vec<_>>());
    let ord0 = op.constant_tensor(ord_data);
    let mut order = expand_to(op, ord0, &batched(batch, &[m, 1]));
    let zero = op.scalar(t, 0.0);
    if batch.contains(&0) {
        // An empty batch: nothing to compute (ORT's ArgMax mishandles empty inputs).
        for k in 0..steps {
            let kk = op.scalar_i64(k);
            pivots.push(expand_to(op, kk, &batched(batch, &[1, 1])));
        }
        return Lu { w, pivots, order };
    }
    for k in 0..steps {
        // The pivot: the first row of largest magnitude in column k, rows k.. (LAPACK's i?amax).
        let col = slice_along(op, w, -1, k, k + 1);
        let sub = slice_along(op, col, -2, k, m);
        let a = op.Abs(sub);
        let am = op.ArgMax(a).axis(-2).keepdims(1).select_last_index(0).out();
        let kk = op.scalar_i64(k);
        let p = op.Add(am, kk);
        pivots.push(p);
        w = swap_rows(op, w, k, p, batch, m, c);
        order = swap_rows(op, order, k, p, batch, m, 1);
        if k + 1 >= m {
            continue;
        }
        let piv = slice_along(op, w, -2, k, k + 1);
        let row = piv;
        let piv = slice_along(op, piv, -1, k, k + 1);
        let col = slice_along(op, w, -1, k, k + 1);
        // A zero pivot means the whole column is zero: LAPACK leaves it unscaled.
        let is_zero = op.Equal(piv, zero);
        let q = op.Div(col, piv);
        let f = op.Where(is_zero, col, q);
        let fr = op.Mul(f, row);
        let upd = op.Sub(w, fr);
        let trail = mask(op, m, c, |i, j| i > k && j > k);
        let below = mask(op, m, c, |i, j| i > k && j == k);
        let inner = op.Where(below, f, w);
        w = op.Where(trail, upd, inner);
    }
    Lu { w, pivots, order }
}

/// torch's 1-based int32 pivots `[..., steps]` from the 0-based pivot rows.
fn pivots_out(op: &mut Builder, pivots: &[Value], batch: &[i64]) -> Value {
    let v = if pivots.is_empty() {
        let data = TensorData::from_i64s(vec![0], &[]);
        let e = op.constant_tensor(data);
        expand_to(op, e, &batched(batch, &[0]))
    } else {
        let parts: Vec<Value> = pivots
            .iter()
            .map(|&p| {
                let ax = op.const_i64s(&[-1]);
                op.Squeeze(p, Some(ax))
            })
            .collect();
        let cat = op.Concat(&parts).axis(-1).out();
        let one = op.scalar_i64(1);
        op.Add(cat, one)
    };
    op.Cast(v).to(DType::Int32 as i64).out()
}

/// Zeros of type int32 and shape `batch` (LAPACK's `info` when nothing failed).
fn zero_info(op: &mut Builder, batch: &[i64]) -> Value {
    let z = op.scalar(DType::Int32, 0.0);
    expand_to(op, z, batch)
}

/// LAPACK getrf's `info` (int32 `[...]`): the 1-based index of the first exactly zero pivot of U,
/// else 0.
fn lu_info(op: &mut Builder, w: Value, t: DType, batch: &[i64], steps: i64) -> Value {
    let mut info = zero_info(op, batch);
    if batch.contains(&0) {
        return info;
    }
    let zero = op.scalar(t, 0.0);
    for k in (0..steps).rev() {
        let r = slice_along(op, w, -2, k, k + 1);
        let d = slice_along(op, r, -1, k, k + 1);
        let z = op.Equal(d, zero);
        let ax = op.const_i64s(&[-2, -1]);
        let z = op.Squeeze(z, Some(ax));
        let v = op.scalar(DType::Int32, (k + 1) as f64);
        info = op.Where(z, v, info);
    }
    info
}

/// The determinant of an LU-eliminated square matrix: the product of U's diagonal, negated per
/// row swap.
fn lu_det(op: &mut Builder, lu: &Lu, t: DType, batch: &[i64], n: i64) -> Value {
    let eye = mask(op, n, n, |i, j| i == j);
    let one = op.scalar(t, 1.0);
    let d = op.Where(eye, lu.w, one);
    let mut det = if n == 0 {
        let one = op.scalar(t, 1.0);
        expand_to(op, one, batch)
    } else {
        let axes = op.const_i64s(&[-2, -1]);
        op.ReduceProd(d, Some(axes)).keepdims(0).out()
    };
    for (k, &p) in lu.pivots.iter().enumerate() {
        let kk = op.scalar_i64(k as i64);
        let swapped = op.Equal(p, kk);
        let ax = op.const_i64s(&[-2, -1]);
        let swapped = op.Squeeze(swapped, Some(ax));
        let neg = op.Neg(det);
        det = op.Where(swapped, det, neg);
    }
    det
}

/// Solves `A X = B` (A `[..., n, n]`, B `[..., n, k]`, same batch) by elimination with partial
/// pivoting and back substitution. Returns X and the LU factorisation.
fn solve_square(op: &mut Builder, a: Value, b: Value, t: DType, batch: &[i64], n: i64, k: i64) -> (Value, Lu) {
    let w = op.Concat(&[a, b]).axis(-1).out();
    let c = n + k;
    let lu = lu_eliminate(op, w, t, batch, n, c, n);
    // U alone: the multipliers stored below the diagonal must not enter the back substitution.
    let lower = mask(op, n, c, |i, j| j < i && j < n);
    let zero = op.scalar(t, 0.0);
    let mut w = op.Where(lower, zero, lu.w);
    for j in (0..n).rev() {
        let row = slice_along(op, w, -2, j, j + 1);
        let piv = slice_along(op, row, -1, j, j + 1);
        let row = op.Div(row, piv);
        let col = slice_along(op, w, -1, j, j + 1);
        let fr = op.Mul(col, row);
        let upd = op.Sub(w, fr);
        let above = mask(op, n, 1, |i, _| i < j);
        let at = mask(op, n, 1, |i, _| i == j);
        let inner = op.Where(at, row, w);
        w = op.Where(above, upd, inner);
    }
    let x = slice_along(op, w, -1, n, c);
    let lu_part = slice_along(op, lu.w, -1, 0, n);
    (x, Lu { w: lu_part, pivots: lu.pivots, order: lu.order })
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

/// `linalg.solve(A, B, left)`: B is a vector batch when it is 1-D or has A's shape minus one dim.
fn linalg_solve_impl(op: &mut Builder, a: Value, b: Value, left: bool, what: &str) -> OpResult<(Value, Lu, Vec<i64>)> {
    let (a, t, abatch, n) = square(op, a, what)?;
    let bshape = static_shape(op, b, what)?;
    let b = cast(op, b, t);
    let a_rank = abatch.len() + 2;
    let vector = bshape.len() == 1 || (bshape.len() + 1 == a_rank && bshape[..] == batched(&abatch, &[n])[..]);
    let (b, bbatch, k) = if vector {
        let ax = op.const_i64s(&[-1]);
        let b2 = op.Unsqueeze(b, ax);
        (b2, bshape[..bshape.len() - 1].to_vec(), 1)
    } else {
        if bshape.len() < 2 {
            bail!("{what}: B must be a vector or a matrix batch");
        }
        let r = bshape.len();
        if left {
            (b, bshape[..r - 2].to_vec(), bshape[r - 1])
        } else {
            (b, bshape[..r - 2].to_vec(), bshape[r - 2])
        }
    };
    if k > MAX_SIDE * 4 {
        bail!("{what}: too many right-hand sides to unroll ({k})");
    }
    let batch = broadcast_shapes(&abatch, &bbatch).ok_or("the batch dimensions do not broadcast")?;
    let rank = batch.len() + 2;
    let a = expand_to(op, a, &batched(&batch, &[n, n]));
    let (a, b) = if left || vector {
        if !left {
            let at = transpose_last_two(op, a, rank);
            (at, b)
        } else {
            (a, b)
        }
    } else {
        // X A = B  <=>  A^T X^T = B^T.
        let at = transpose_last_two(op, a, rank);
        let bt = transpose_last_two(op, b, bbatch.len() + 2);
        (at, bt)
    };
    let b = expand_to(op, b, &batched(&batch, &[n, k]));
    let (x, lu) = solve_square(op, a, b, t, &batch, n, k);
    let x = if vector {
        let ax = op.const_i64s(&[-1]);
        op.Squeeze(x, Some(ax))
    } else if left {
        x
    } else {
        transpose_last_two(op, x, rank)
    };
    Ok((x, lu, batch))
}

/// Cholesky `L` (lower) of a symmetric positive-definite batch, and LAPACK's `info` (the 1-based
/// order of the first leading minor that is not positive definite, else 0).
fn cholesky_lower(op: &mut Builder, a: Value, t: DType, batch: &[i64], n: i64) -> (Value, Value) {
    let rank = batch.len() + 2;
    let mut w = a;
    let zero = op.scalar(t, 0.0);
    let mut cols = Vec::new();
    let mut bads = Vec::new();
    for j in 0..n {
        let row = slice_along(op, w, -2, j, j + 1);
        let ajj = slice_along(op, row, -1, j, j + 1);
        let pos = op.Greater(ajj, zero);
        bads.push(op.Not(pos));
        let d = op.Sqrt(ajj);
        let col = slice_along(op, w, -1, j, j + 1);
        let q = op.Div(col, d);
        let below = mask(op, n, 1, |i, _| i > j);
        let at = mask(op, n, 1, |i, _| i == j);
        let inner = op.Where(at, d, zero);
        let l = op.Where(below, q, inner);
        cols.push(l);
        if j + 1 < n {
            let lt = transpose_last_two(op, l, rank);
            let outer = op.Mul(l, lt);
            let upd = op.Sub(w, outer);
            let trail = mask(op, n, n, |r, c| r > j && c > j);
            w = op.Where(trail, upd, w);
        }
    }
    let l = if cols.is_empty() {
        a
    } else {
        let l = op.Concat(&cols).axis(-1).out();
        expand_to(op, l, &batched(batch, &[n, n]))
    };
    let mut info = zero_info(op, batch);
    for (j, bad) in bads.iter().enumerate().rev() {
        let ax = op.const_i64s(&[-2, -1]);
        let bad = op.Squeeze(*bad, Some(ax));
        let v = op.scalar(DType::Int32, (j + 1) as f64);
        info = op.Where(bad, v, info);
    }
    (l, info)
}

/// Solves `A X = B` for triangular A (`[..., n, n]`) and B (`[..., n, k]`) with the same batch,
/// reading only A's `upper` (or lower) triangle.
fn tri_solve(op: &mut Builder, a: Value, b: Value, upper: bool, unit: bool, n: i64) -> Value {
    let mut w = b;
    let order: Vec<i64> = if upper { (0..n).rev().collect() } else { (0..n).collect() };
    for j in order {
        let row = slice_along(op, w, -2, j, j + 1);
        let xj = if unit {
            row
        } else {
            let arow = slice_along(op, a, -2, j, j + 1);
            let ajj = slice_along(op, arow, -1, j, j + 1);
            op.Div(row, ajj)
        };
        let col = slice_along(op, a, -1, j, j + 1);
        let fr = op.Mul(col, xj);
        let upd = op.Sub(w, fr);
        let rest = mask(op, n, 1, |i, _| if upper { i < j } else { i > j });
        let at = mask(op, n, 1, |i, _| i == j);
        let inner = op.Where(at, xj, w);
        w = op.Where(rest, upd, inner);
    }
    w
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

/// The permutation matrix P (`[..., m, m]`, type t) with `A = P L U` from the row order.
fn perm_matrix(op: &mut Builder, order: Value, t: DType, batch: &[i64], m: i64) -> Value {
    let ot = transpose_last_two(op, order, batch.len() + 2);
    let ar_data = TensorData::from_i64s(vec![m, 1], &(0..m).collect::<Vec<_>>());
    let ar = op.constant_tensor(ar_data);
    let eq = op.Equal(ar, ot);
    cast(op, eq, t)
}

/// The Jacobi rotation `(cos, sin)` that zeroes the off-diagonal `apq` of the symmetric 2×2
/// `[[app, apq], [apq, aqq]]` (float64): `t = sign(θ) / (|θ| + sqrt(θ² + 1))` with
/// `θ = (aqq - app) / 2apq`, and no rotation where `apq` is 0. `k` holds the float64 constants
/// 0, 1, 2 and -1.
fn jacobi_rotation(op: &mut Builder, app: Value, aqq: Value, apq: Value, k: [Value; 4]) -> (Value, Value) {
    let [zero, one, two, minus_one] = k;
    let g0 = op.Equal(apq, zero);
    let gs = op.Where(g0, one, apq);
    let diff = op.Sub(aqq, app);
    let den = op.Mul(two, gs);
    let theta = op.Div(diff, den);
    let nonneg = op.GreaterOrEqual(theta, zero);
    let sgn = op.Where(nonneg, one, minus_one);
    let at = op.Abs(theta);
    let t2 = op.Mul(theta, theta);
    let t2 = op.Add(t2, one);
    let r = op.Sqrt(t2);
    let den = op.Add(at, r);
    let tt = op.Div(sgn, den);
    let tt = op.Where(g0, zero, tt);
    let tt2 = op.Mul(tt, tt);
    let tt2 = op.Add(tt2, one);
    let r = op.Sqrt(tt2);
    let c = op.Div(one, r);
    let s = op.Mul(c, tt);
    (c, s)
}

/// Jacobi sweeps of the one-sided (Hestenes) SVD; quadratic convergence makes this many reach
/// double precision for the matrix sides unrolled here.
const JACOBI_SWEEPS: usize = 10;

/// The one-sided Jacobi SVD of `a` (`[..., m, n]` with m >= n, computed in double): orthogonal
/// rotations of column pairs until the columns are orthogonal. Returns the rotated columns
/// (`a_i = σ_i u_i`, `[..., m, 1]` each) and, when asked, the accumulated right rotations
/// (`v_i`, `[..., n, 1]` each).
fn jacobi_columns(op: &mut Builder, a: Value, batch: &[i64], m: i64, n: i64, want_v: bool) -> (Vec<Value>, Vec<Value>) {
    let d = DType::Double;
    let a = cast(op, a, d);
    let mut cols: Vec<Value> = (0..n).map(|j| slice_along(op, a, -1, j, j + 1)).collect();
    let mut vs: Vec<Value> = Vec::new();
    if want_v {
        let eye = const_mat(op, d, n, n, |i, j| (i == j) as i64 as f64);
        let eye = expand_to(op, eye, &batched(batch, &[n, n]));
        vs = (0..n).map(|j| slice_along(op, eye, -1, j, j + 1)).collect();
    }
    let (zero, one, two) = (op.scalar(d, 0.0), op.scalar(d, 1.0), op.scalar(d, 2.0));
    let minus_one = op.scalar(d, -1.0);
    let dot = |op: &mut Builder, x: Value, y: Value| {
        let p = op.Mul(x, y);
        let ax = op.const_i64s(&[-2]);
        op.ReduceSum(p, Some(ax)).keepdims(1).out()
    };
    for _ in 0..JACOBI_SWEEPS {
        for p in 0..n as usize {
            for q in p + 1..n as usize {
                let alpha = dot(op, cols[p], cols[p]);
                let beta = dot(op, cols[q], cols[q]);
                let gamma = dot(op, cols[p], cols[q]);
                let (c, s) = jacobi_rotation(op, alpha, beta, gamma, [zero, one, two, minus_one]);
                let rotate = |op: &mut Builder, x: Value, y: Value| {
                    let cx = op.Mul(c, x);
                    let sy = op.Mul(s, y);
                    let sx = op.Mul(s, x);
                    let cy = op.Mul(c, y);
                    (op.Sub(cx, sy), op.Add(sx, cy))
                };
                let (x, y) = rotate(op, cols[p], cols[q]);
                cols[p] = x;
                cols[q] = y;
                if want_v {
                    let (x, y) = rotate(op, vs[p], vs[q]);
                    vs[p] = x;
                    vs[q] = y;
                }
            }
        }
    }
    let _ = m;
    (cols, vs)
}

/// The singular values (descending, `[..., k]`, type `t`) of `a` (`[..., m, n]`).
fn singular_values(op: &mut Builder, a: Value, t: DType, batch: &[i64], m: i64, n: i64) -> Value {
    let k = m.min(n);
    if k == 0 || batch.contains(&0) {
        let z = op.scalar(t, 0.0);
        return expand_to(op, z, &batched(batch, &[k]));
    }
    let (a, m, n) = if m < n { (transpose_last_two(op, a, batch.len() + 2), n, m) } else { (a, m, n) };
    let (cols, _) = jacobi_columns(op, a, batch, m, n, false);
    let norms: Vec<Value> = cols
        .iter()
        .map(|&c| {
            let ax = op.const_i64s(&[-2]);
            op.ReduceL2(c, Some(ax)).keepdims(1).out()
        })
        .collect();
    let s = op.Concat(&norms).axis(-1).out();
    let ax = op.const_i64s(&[-2]);
    let s = op.Squeeze(s, Some(ax));
    let kk = op.const_i64s(&[k]);
    let [sorted, _] = op.TopK(s, kk).axis(-1).largest(1).sorted(1).outs::<2>();
    cast(op, sorted, t)
}

/// The lower triangle of `a` mirrored (what LAPACK's symmetric eigen solvers read).
fn symmetrize_lower(op: &mut Builder, a: Value, rank: usize) -> Value {
    let at = transpose_last_two(op, a, rank);
    let lower = op.Trilu(a, None).upper(0).out();
    let k = op.scalar_i64(1);
    let strict_upper = op.Trilu(at, Some(k)).upper(1).out();
    op.Add(lower, strict_upper)
}

/// torch's pinv / matrix_rank tolerance: `max(atol, rtol·σ_max)`, with rtol defaulting to
/// `eps·max(m, n)` when neither is given and to 0 when only atol is.
fn sv_tolerance(
    op: &mut Builder,
    smax: Value,
    atol: Option<Value>,
    rtol: Option<Value>,
    t: DType,
    m: i64,
    n: i64,
) -> Value {
    let d = DType::Double;
    let eps = match t {
        DType::Double => f64::EPSILON,
        DType::Float16 => 0.0009765625,
        DType::BFloat16 => 0.0078125,
        _ => f32::EPSILON as f64,
    };
    let rtol = match (rtol, atol) {
        (Some(r), _) => cast(op, r, d),
        (None, Some(_)) => op.scalar(d, 0.0),
        (None, None) => op.scalar(d, eps * m.max(n) as f64),
    };
    let atol = match atol {
        Some(a) => cast(op, a, d),
        None => op.scalar(d, 0.0),
    };
    let smax = cast(op, smax, d);
    let r = op.Mul(rtol, smax);
    op.Max(&[atol, r])
}

/// The pseudo-inverse of `a` (`[..., m, n]`, type t) from the Jacobi SVD, dropping singular values
/// not above torch's tolerance.
fn pinv_impl(
    op: &mut Builder,
    a: Value,
    atol: Option<Value>,
    rtol: Option<Value>,
    hermitian: bool,
    what: &str,
) -> OpResult<Value> {
    let (batch, m, n) = thin_matrix_dims(op, a, what)?;
    let t = float_type(op, a, what)?;
    let rank = batch.len() + 2;
    let a = cast(op, a, t);
    if m.min(n) == 0 || batch.contains(&0) {
        let z = op.scalar(t, 0.0);
        return Ok(expand_to(op, z, &batched(&batch, &[n, m])));
    }
    if hermitian && m != n {
        bail!("{what}: hermitian needs square matrices");
    }
    let a = if hermitian { symmetrize_lower(op, a, rank) } else { a };
    let (x, mm, nn, flip) = if m < n { (transpose_last_two(op, a, rank), n, m, true) } else { (a, m, n, false) };
    let (cols, vs) = jacobi_columns(op, x, &batch, mm, nn, true);
    let d = DType::Double;
    let sq: Vec<Value> = cols
        .iter()
        .map(|&c| {
            let ax = op.const_i64s(&[-2]);
            op.ReduceSumSquare(c, Some(ax)).keepdims(1).out()
        })
        .collect();
    let s2 = op.Concat(&sq).axis(-1).out();
    let sig = op.Sqrt(s2);
    let ax = op.const_i64s(&[-1]);
    let smax = op.ReduceMax(sig, Some(ax)).keepdims(1).out();
    let tol = sv_tolerance(op, smax, atol, rtol, t, m, n);
    let keep = op.Greater(sig, tol);
    let one = op.scalar(d, 1.0);
    let zero = op.scalar(d, 0.0);
    let inv = op.Div(one, s2);
    let w = op.Where(keep, inv, zero);
    let v = op.Concat(&vs).axis(-1).out();
    let u = op.Concat(&cols).axis(-1).out();
    let vw = op.Mul(v, w);
    let ut = transpose_last_two(op, u, rank);
    let p = op.MatMul(vw, ut);
    let p = if flip { transpose_last_two(op, p, rank) } else { p };
    Ok(cast(op, p, t))
}

/// The numerical rank (int64 `[...]`): singular values above torch's tolerance.
fn matrix_rank_impl(
    op: &mut Builder,
    a: Value,
    atol: Option<Value>,
    rtol: Option<Value>,
    hermitian: bool,
) -> OpResult<Value> {
    let what = "matrix_rank";
    let (batch, m, n) = matrix_dims(op, a, what)?;
    let t = float_type_of(op, a, what)?;
    let a = cast(op, a, t);
    if m.min(n) == 0 || batch.contains(&0) {
        let z = op.scalar_i64(0);
        return Ok(expand_to(op, z, &batch));
    }
    if hermitian && m != n {
        bail!("{what}: hermitian needs square matrices");
    }
    let a = if hermitian { symmetrize_lower(op, a, batch.len() + 2) } else { a };
    let s = singular_values(op, a, DType::Double, &batch, m, n);
    let first = slice_along(op, s, -1, 0, 1);
    let tol = sv_tolerance(op, first, atol, rtol, t, m, n);
    let gt = op.Greater(s, tol);
    let gt = cast(op, gt, DType::Int64);
    let ax = op.const_i64s(&[-1]);
    Ok(op.ReduceSum(gt, Some(ax)).keepdims(0).out())
}

/// The input's float type (the output type of matrix_rank is int64, so not from the output).
fn float_type_of(op: &Builder, x: Value, what: &str) -> OpResult<DType> {
    let t = dtype_of(op, x)?;
    if op.info(x).complex || !computes_in(t) {
        bail!("{what} is translated for real float16, bfloat16, float32 and float64 tensors only, not {t:?}");
    }
    Ok(t)
}

/// Solves with an LU factorisation (`LU`, 1-based `pivots`) as LAPACK's getrs: `A X = B`, or
/// `A^T X = B` when `adjoint` (A = P L U).
fn lu_solve_impl(op: &mut Builder, lu: Value, pivots: Value, b: Value, left: bool, adjoint: bool) -> OpResult<Value> {
    let what = "lu_solve";
    let t = float_type(op, b, what)?;
    let lu = cast(op, lu, t);
    let b = cast(op, b, t);
    let rb = rank_of(op, b)?;
    let bshape = static_shape(op, b, what)?;
    // X A = B  <=>  A^T X^T = B^T.
    let (b, adjoint) = if left {
        (b, adjoint)
    } else {
        let bt = transpose_last_two(op, b, rb);
        let mut s = bshape.clone();
        s.swap(rb - 2, rb - 1);
        op.info_mut(bt).shape = Some(s.iter().map(|&d| Dim::Fixed(d)).collect());
        (bt, !adjoint)
    };
    let (lu, b, batch, n, k) = broadcast_pair(op, lu, b, what)?;
    let rank = batch.len() + 2;
    if k == 0 {
        // No right-hand sides: nothing to solve (ORT's GatherElements refuses the empty rows).
        return Ok(if left { b } else { transpose_last_two(op, b, rank) });
    }
    let piv = cast(op, pivots, DType::Int64);
    let piv = expand_to(op, piv, &batched(&batch, &[n]));
    let one = op.scalar_i64(1);
    let piv = op.Sub(piv, one);
    let ax = op.const_i64s(&[-1]);
    let piv = op.Unsqueeze(piv, ax);
    let pk: Vec<Value> = (0..n).map(|j| slice_along(op, piv, -2, j, j + 1)).collect();
    let x = if !adjoint {
        let mut w = b;
        for (j, &p) in pk.iter().enumerate() {
            w = swap_rows(op, w, j as i64, p, &batch, n, k);
        }
        let y = tri_solve(op, lu, w, false, true, n);
        tri_solve(op, lu, y, true, false, n)
    } else {
        let lut = transpose_last_two(op, lu, rank);
        let y = tri_solve(op, lut, b, false, false, n);
        let mut w = tri_solve(op, lut, y, true, true, n);
        for (j, &p) in pk.iter().enumerate().rev() {
            w = swap_rows(op, w, j as i64, p, &batch, n, k);
        }
        w
    };
    Ok(if left { x } else { transpose_last_two(op, x, rank) })
}

/// The eigenvalues (ascending, `[..., n]`, type t) of the symmetric matrix read from `a`'s lower
/// (or upper) triangle: cyclic two-sided Jacobi rotations in double precision.
fn symmetric_eigenvalues(op: &mut Builder, a: Value, t: DType, batch: &[i64], n: i64, lower: bool) -> Value {
    if n == 0 || batch.contains(&0) {
        let z = op.scalar(t, 0.0);
        return expand_to(op, z, &batched(batch, &[n]));
    }
    let (ev, _) = symmetric_jacobi(op, a, batch, n, lower, false);
    let kk = op.const_i64s(&[n]);
    let [sorted, _] = op.TopK(ev, kk).axis(-1).largest(0).sorted(1).outs::<2>();
    cast(op, sorted, t)
}

/// Cyclic Jacobi on the symmetric matrix read from `a`'s lower (or upper) triangle, in double:
/// the eigenvalues (`[..., n]`, unsorted) and, when asked, the eigenvectors as columns.
fn symmetric_jacobi(
    op: &mut Builder,
    a: Value,
    batch: &[i64],
    n: i64,
    lower: bool,
    want_v: bool,
) -> (Value, Option<Value>) {
    let rank = batch.len() + 2;
    let d = DType::Double;
    let a = cast(op, a, d);
    let a = if lower {
        symmetrize_lower(op, a, rank)
    } else {
        let at = transpose_last_two(op, a, rank);
        symmetrize_lower(op, at, rank)
    };
    let mut w = a;
    let (zero, one, two, minus_one) = (op.scalar(d, 0.0), op.scalar(d, 1.0), op.scalar(d, 2.0), op.scalar(d, -1.0));
    let eye = const_mat(op, d, n, n, |i, j| (i == j) as i64 as f64);
    let mut v = if want_v { Some(expand_to(op, eye, &batched(batch, &[n, n]))) } else { None };
    let entry = |op: &mut Builder, w: Value, i: i64, j: i64| {
        let r = slice_along(op, w, -2, i, i + 1);
        slice_along(op, r, -1, j, j + 1)
    };
    for _ in 0..JACOBI_SWEEPS {
        for p in 0..n {
            for q in p + 1..n {
                let app = entry(op, w, p, p);
                let aqq = entry(op, w, q, q);
                let apq = entry(op, w, p, q);
                let (c, s) = jacobi_rotation(op, app, aqq, apq, [zero, one, two, minus_one]);
                // J = I + (c - 1)(e_p e_p^T + e_q e_q^T) + s (e_p e_q^T - e_q e_p^T); A <- J^T A J.
                let dpq = const_mat(op, d, n, n, |i, j| ((i == j) && (i == p || i == q)) as i64 as f64);
                let opq = const_mat(op, d, n, n, |i, j| {
                    if i == p && j == q {
                        1.0
                    } else if i == q && j == p {
                        -1.0
                    } else {
                        0.0
                    }
                });
                let cm1 = op.Sub(c, one);
                let x = op.Mul(cm1, dpq);
                let y = op.Mul(s, opq);
                let j = op.Add(x, y);
                let j = op.Add(j, eye);
                let jt = transpose_last_two(op, j, rank);
                let aj = op.MatMul(w, j);
                w = op.MatMul(jt, aj);
                v = v.map(|v| op.MatMul(v, j));
            }
        }
    }
    let mask = mask(op, n, n, |i, j| i == j);
    let z = op.scalar(d, 0.0);
    let diag = op.Where(mask, w, z);
    let ax = op.const_i64s(&[-1]);
    let ev = op.ReduceSum(diag, Some(ax)).keepdims(0).out();
    (ev, v)
}

enum NormKind {
    Fro,
    Nuc,
    /// σ_max (true) or σ_min.
    Spectral(bool),
    /// Max (true) or min over columns of the column sums of |x|.
    Col(bool),
    /// Max (true) or min over rows of the row sums of |x|.
    Row(bool),
}

fn matrix_norm_impl(op: &mut Builder, x: Value, kind: NormKind, dim: &[i64], keepdim: bool) -> OpResult<Value> {
    let what = "matrix_norm";
    let r = rank_of(op, x)?;
    if dim.len() != 2 || r < 2 {
        bail!("{what} needs two dims of a tensor of rank >= 2");
    }
    let (d0, d1) = (normalize_axis(dim[0], r)? as usize, normalize_axis(dim[1], r)? as usize);
    if d0 == d1 {
        bail!("{what}: the two dims must differ");
    }
    let t = float_type(op, x, what)?;
    let sx = static_shape(op, x, what)?;
    let x = cast(op, x, t);
    let mut perm: Vec<usize> = (0..r).filter(|&i| i != d0 && i != d1).collect();
    perm.extend([d0, d1]);
    let p: Vec<i64> = perm.iter().map(|&i| i as i64).collect();
    let x = if perm.iter().enumerate().all(|(i, &j)| i == j) { x } else { op.Transpose(x).perm(&p).out() };
    let ps: Vec<i64> = perm.iter().map(|&i| sx[i]).collect();
    let batch = ps[..r - 2].to_vec();
    let (m, n) = (ps[r - 2], ps[r - 1]);
    let res = match kind {
        NormKind::Fro => {
            let ax = op.const_i64s(&[-2, -1]);
            op.ReduceL2(x, Some(ax)).keepdims(0).out()
        }
        NormKind::Nuc | NormKind::Spectral(_) => {
            if m.min(n) == 0 {
                bail!("{what}: spectral norms of empty matrices are not translated");
            }
            if m > MAX_SIDE || n > MAX_SIDE {
                bail!("{what} is unrolled for matrices up to {MAX_SIDE}x{MAX_SIDE}");
            }
            let s = singular_values(op, x, t, &batch, m, n);
            let k = m.min(n);
            match kind {
                NormKind::Nuc => {
                    let ax = op.const_i64s(&[-1]);
                    op.ReduceSum(s, Some(ax)).keepdims(0).out()
                }
                NormKind::Spectral(true) => {
                    let v = slice_along(op, s, -1, 0, 1);
                    let ax = op.const_i64s(&[-1]);
                    op.Squeeze(v, Some(ax))
                }
                _ => {
                    let v = slice_along(op, s, -1, k - 1, k);
                    let ax = op.const_i64s(&[-1]);
                    op.Squeeze(v, Some(ax))
                }
            }
        }
        NormKind::Col(max) | NormKind::Row(max) => {
            let (sum_axis, red_axis) = if matches!(kind, NormKind::Col(_)) { (-2, -1) } else { (-1, -2) };
            let a = op.Abs(x);
            let ax = op.const_i64s(&[sum_axis]);
            let s = op.ReduceSum(a, Some(ax)).keepdims(1).out();
            let ax = op.const_i64s(&[red_axis, sum_axis]);
            if max {
                op.ReduceMax(s, Some(ax)).keepdims(0).out()
            } else {
                op.ReduceMin(s, Some(ax)).keepdims(0).out()
            }
        }
    };
    Ok(if keepdim {
        let mut axes = vec![d0 as i64, d1 as i64];
        axes.sort();
        let ax = op.const_i64s(&axes);
        op.Unsqueeze(res, ax)
    } else {
        res
    })
}

/// Householder QR as LAPACK's geqrf + orgqr: for each column, dlarfg's reflector
/// (β = -sign(α)·‖(α, x)‖, τ = (β - α)/β, v = x/(α - β); τ = 0 when x is zero), applied to the
/// trailing columns and accumulated into Q. Computed in double.
fn householder_qr(op: &mut Builder, a: Value, batch: &[i64], m: i64, n: i64) -> (Value, Value) {
    let qr = householder_steps(op, a, batch, m, n, true);
    (qr.q.expect("Q requested"), qr.r)
}

/// The steps of [`householder_qr`]: R, Q when asked, and each step's reflector `v` (`[..., m, 1]`,
/// 1 at the step's row, 0 above) and `τ` (`[..., 1, 1]`), double.
struct Householder {
    q: Option<Value>,
    r: Value,
    vs: Vec<Value>,
    taus: Vec<Value>,
}

fn householder_steps(op: &mut Builder, a: Value, batch: &[i64], m: i64, n: i64, want_q: bool) -> Householder {
    let d = DType::Double;
    let rank = batch.len() + 2;
    let mut r = cast(op, a, d);
    let mut q = if want_q {
        let eye = const_mat(op, d, m, m, |i, j| (i == j) as i64 as f64);
        Some(expand_to(op, eye, &batched(batch, &[m, m])))
    } else {
        None
    };
    let (mut vs, mut taus) = (Vec::new(), Vec::new());
    let (zero, one) = (op.scalar(d, 0.0), op.scalar(d, 1.0));
    let minus_one = op.scalar(d, -1.0);
    for k in 0..m.min(n) {
        if k + 1 >= m {
            // x is empty: H = I.
            break;
        }
        let col = slice_along(op, r, -1, k, k + 1);
        let alpha = slice_along(op, col, -2, k, k + 1);
        let below = mask(op, m, 1, |i, _| i > k);
        let x = op.Where(below, col, zero);
        let ax = op.const_i64s(&[-2]);
        let xnorm = op.ReduceL2(x, Some(ax)).keepdims(1).out();
        let x0 = op.Equal(xnorm, zero);
        let a2 = op.Mul(alpha, alpha);
        let x2 = op.Mul(xnorm, xnorm);
        let h = op.Add(a2, x2);
        let h = op.Sqrt(h);
        let nonneg = op.GreaterOrEqual(alpha, zero);
        let sgn = op.Where(nonneg, minus_one, one);
        let beta = op.Mul(sgn, h);
        let beta_safe = op.Where(x0, one, beta);
        let diff = op.Sub(beta, alpha);
        let tau = op.Div(diff, beta_safe);
        let tau = op.Where(x0, zero, tau);
        let den = op.Sub(alpha, beta);
        let den = op.Where(x0, one, den);
        let vx = op.Div(x, den);
        let at = mask(op, m, 1, |i, _| i == k);
        let v = op.Where(at, one, vx);
        // R <- H R on the trailing columns; column k becomes (…, β, 0, …).
        let vt = transpose_last_two(op, v, rank);
        let vtr = op.MatMul(vt, r);
        let p = op.MatMul(v, vtr);
        let p = op.Mul(tau, p);
        let upd = op.Sub(r, p);
        let trail = mask(op, m, n, |i, j| i >= k && j > k);
        let colk_below = mask(op, m, n, |i, j| i > k && j == k);
        let colk_at = mask(op, m, n, |i, j| i == k && j == k);
        let newk = op.Where(x0, alpha, beta);
        let r1 = op.Where(colk_at, newk, r);
        let r2 = op.Where(colk_below, zero, r1);
        r = op.Where(trail, upd, r2);
        // Q <- Q H.
        if let Some(qq) = q {
            let qv = op.MatMul(qq, v);
            let qvv = op.MatMul(qv, vt);
            let qvv = op.Mul(tau, qvv);
            q = Some(op.Sub(qq, qvv));
        }
        vs.push(v);
        taus.push(tau);
    }
    Householder { q, r, vs, taus }
}

/// The coefficients of torch's degree-18 Taylor approximation (Bader, Blanes and Casas 2019):
/// `B_i = Σ_j b[i][j]·P_j` over the powers `P = (I, A, A², A³, A⁶)`.
const T18: [[f64; 5]; 5] = [
    [0., -1.00365581030144618291e-01, -8.02924648241156932449e-03, -8.92138498045729985177e-04, 0.],
    [
        0.,
        3.97849749499645077844e-01,
        1.36783778460411720168e+00,
        4.98289622525382669416e-01,
        -6.37898194594723280150e-04,
    ],
    [
        -1.09676396052962061844e+01,
        1.68015813878906206114e+00,
        5.71779846478865511061e-02,
        -6.98210122488052056106e-03,
        3.34975017086070470649e-05,
    ],
    [
        -9.04316832390810593223e-02,
        -6.76404519071381882256e-02,
        6.75961301770459654925e-02,
        2.95552570429315521194e-02,
        -1.39180257516060693404e-05,
    ],
    [0., 0., -9.23364619367118555360e-02, -1.69364939002081722752e-02, -1.40086798182036094347e-05],
];

/// torch's float32 matrix exponential, in float32 as torch computes it (its rounding, amplified by
/// the squarings, is what the result carries): A/2^s with s = max(0, ⌈log2(‖A‖₁/θ₁₈)⌉), the
/// degree-18 polynomial `B_1 + (B_2 + B_3 + B_0 B_4)(B_3 + B_0 B_4)`, then s squarings chosen per
/// matrix at run time. torch picks a lower degree for a single matrix of small norm (s = 0 there:
/// the same value to float32 precision).
fn matrix_exp_t18(op: &mut Builder, a: Value, batch: &[i64], n: i64) -> Value {
    let t = DType::Float;
    let a = cast(op, a, t);
    let abs = op.Abs(a);
    let ax = op.const_i64s(&[-2]);
    let colsum = op.ReduceSum(abs, Some(ax)).keepdims(1).out();
    let ax = op.const_i64s(&[-1]);
    let norm = op.ReduceMax(colsum, Some(ax)).keepdims(1).out();
    let theta = op.scalar(t, 3.010066362817634);
    let r = op.Div(norm, theta);
    let l = op.Log(r);
    let ln2 = op.scalar(t, std::f64::consts::LN_2);
    let l = op.Div(l, ln2);
    let l = op.Ceil(l);
    let zero = op.scalar(t, 0.0);
    let s = op.Max(&[l, zero]);
    let two = op.scalar(t, 2.0);
    let p2 = op.Pow(two, s);
    let x = op.Div(a, p2);
    let eye = const_mat(op, t, n, n, |i, j| (i == j) as i64 as f64);
    let eye = expand_to(op, eye, &batched(batch, &[n, n]));
    let x2 = op.MatMul(x, x);
    let x3 = op.MatMul(x, x2);
    let x6 = op.MatMul(x3, x3);
    let powers = [eye, x, x2, x3, x6];
    let bs: Vec<Value> = T18
        .iter()
        .map(|row| {
            let mut acc: Option<Value> = None;
            for (&c, &p) in row.iter().zip(&powers) {
                let c = op.scalar(t, c);
                let term = op.Mul(c, p);
                acc = Some(match acc {
                    Some(v) => op.Add(v, term),
                    None => term,
                });
            }
            acc.expect("five terms")
        })
        .collect();
    let a9 = op.MatMul(bs[0], bs[4]);
    let b3 = op.Add(bs[3], a9);
    let b2 = op.Add(bs[2], b3);
    let prod = op.MatMul(b2, b3);
    let mut e = op.Add(bs[1], prod);
    // Enough squarings for every finite float32 input (‖A‖₁ < 2^128).
    for i in 0..140 {
        let sq = op.MatMul(e, e);
        let ii = op.scalar(t, i as f64);
        let more = op.Less(ii, s);
        e = op.Where(more, sq, e);
    }
    e
}

/// Bunch and Kaufman's pivot threshold, (1 + √17) / 8.
const BK_ALPHA: f64 = 0.6403882032022076;

/// The entry `(i, j)` of a matrix batch (`[..., 1, 1]`).
fn entry(op: &mut Builder, w: Value, i: i64, j: i64) -> Value {
    let r = slice_along(op, w, -2, i, i + 1);
    slice_along(op, r, -1, j, j + 1)
}

/// LAPACK's sytf2 (lower): the Bunch-Kaufman factorisation `P A Pᵀ = L D Lᵀ` of the symmetric
/// matrix read from `a`'s lower triangle (`[..., n, n]`, type t), with D of 1×1 and 2×2 blocks.
/// Each column k, per matrix: a 1×1 pivot in place, a 1×1 pivot swapped with row imax, or a 2×2
/// pivot with rows k+1 and imax swapped (by LAPACK's tests on the column and row maxima); the
/// column after a 2×2 pivot is skipped. The swaps permute the trailing block only. The work matrix
/// is kept symmetric (its lower triangle mirrored) so rows read as LAPACK's columns. Returns LD
/// (lower), the 1-based int32 pivots (negative for 2×2 blocks) and info.
fn ldl_factor_impl(op: &mut Builder, a: Value, t: DType, batch: &[i64], n: i64) -> (Value, Value, Value) {
    let rank = batch.len() + 2;
    let mut w = symmetrize_lower(op, a, rank);
    let rows = op.constant_tensor(TensorData::from_i64s(vec![n, 1], &(0..n).collect::<Vec<_>>()));
    let cols = op.constant_tensor(TensorData::from_i64s(vec![1, n], &(0..n).collect::<Vec<_>>()));
    let (zero, one) = (op.scalar(t, 0.0), op.scalar(t, 1.0));
    let alpha = op.scalar(t, BK_ALPHA);
    let f = op.constant_tensor(TensorData::from_f64_as(DType::Bool, vec![], &[0.0]).expect("bool constant"));
    let mut skip = expand_to(op, f, &batched(batch, &[1, 1]));
    let z64 = op.scalar_i64(0);
    let mut pending = expand_to(op, z64, &batched(batch, &[1, 1]));
    let (mut pivs, mut zero_cols) = (Vec::new(), Vec::new());
    for k in 0..n {
        let kv = op.scalar_i64(k);
        let akk = entry(op, w, k, k);
        let absakk = op.Abs(akk);
        let (kp, two, zero_col) = if k + 1 < n {
            let col = slice_along(op, w, -1, k, k + 1);
            let sub = slice_along(op, col, -2, k + 1, n);
            let ab = op.Abs(sub);
            let am = op.ArgMax(ab).axis(-2).keepdims(1).select_last_index(0).out();
            let k1 = op.scalar_i64(k + 1);
            let imax = op.Add(am, k1);
            let ax = op.const_i64s(&[-2]);
            let colmax = op.ReduceMax(ab, Some(ax)).keepdims(1).out();
            let mx = op.Max(&[absakk, colmax]);
            let is0 = op.Equal(mx, zero);
            let nan = op.IsNaN(absakk);
            let zero_col = op.Or(is0, nan);
            let ac = op.Mul(alpha, colmax);
            let c1 = op.GreaterOrEqual(absakk, ac);
            // Row imax over columns k.. (its column below imax, by symmetry), without its diagonal.
            let at_imax = op.Equal(rows, imax);
            let r = op.Where(at_imax, w, zero);
            let ax = op.const_i64s(&[-2]);
            let row = op.ReduceSum(r, Some(ax)).keepdims(1).out();
            let arow = op.Abs(row);
            let from_k = op.GreaterOrEqual(cols, kv);
            let diag = op.Equal(cols, imax);
            let off = op.Not(diag);
            let ok = op.And(from_k, off);
            let ro = op.Where(ok, arow, zero);
            let ax = op.const_i64s(&[-1]);
            let rowmax = op.ReduceMax(ro, Some(ax)).keepdims(1).out();
            let d = op.Where(diag, row, zero);
            let ax = op.const_i64s(&[-1]);
            let aimax = op.ReduceSum(d, Some(ax)).keepdims(1).out();
            let aimax = op.Abs(aimax);
            let q = op.Div(colmax, rowmax);
            let acq = op.Mul(ac, q);
            let c2 = op.GreaterOrEqual(absakk, acq);
            let ar = op.Mul(alpha, rowmax);
            let c3 = op.GreaterOrEqual(aimax, ar);
            let stay = op.Or(c1, c2);
            let stay = op.Or(zero_col, stay);
            let kp = op.Where(stay, kv, imax);
            let swap1 = op.Or(stay, c3);
            let two = op.Not(swap1);
            (kp, two, zero_col)
        } else {
            let kp = expand_to(op, kv, &batched(batch, &[1, 1]));
            let is0 = op.Equal(absakk, zero);
            let nan = op.IsNaN(absakk);
            let zero_col = op.Or(is0, nan);
            let no = expand_to(op, f, &batched(batch, &[1, 1]));
            (kp, no, zero_col)
        };
        // Swap rows and columns kk = k + kstep - 1 and kp of the trailing block.
        let k1 = op.scalar_i64(k + 1);
        let kk = op.Where(two, k1, kv);
        let is_kk = op.Equal(rows, kk);
        let is_kp = op.Equal(rows, kp);
        let inner = op.Where(is_kp, kk, rows);
        let sidx = op.Where(is_kk, kp, inner);
        let from_k = op.GreaterOrEqual(cols, kv);
        let ridx = op.Where(from_k, sidx, rows);
        let ridx = expand_to(op, ridx, &batched(batch, &[n, n]));
        let ws = op.GatherElements(w, ridx).axis(-2).out();
        let sidx_t = transpose_last_two(op, sidx, rank);
        let below_k = op.GreaterOrEqual(rows, kv);
        let cidx = op.Where(below_k, sidx_t, cols);
        let cidx = expand_to(op, cidx, &batched(batch, &[n, n]));
        let ws = op.GatherElements(ws, cidx).axis(-1).out();
        // A 1×1 pivot: A(k+1.., k+1..) -= x (d11 x)ᵀ, then x *= d11 (LAPACK's syr and scal).
        let w1 = if k + 1 < n {
            let akk = entry(op, ws, k, k);
            let d11 = op.Div(one, akk);
            let colk = slice_along(op, ws, -1, k, k + 1);
            let below = mask(op, n, 1, |i, _| i > k);
            let x = op.Where(below, colk, zero);
            let xt = transpose_last_two(op, x, rank);
            let nd = op.Neg(d11);
            let tmp = op.Mul(nd, xt);
            let p = op.Mul(x, tmp);
            let upd = op.Add(ws, p);
            let trail = mask(op, n, n, |i, j| i > k && j > k);
            let sc = op.Mul(colk, d11);
            let colm = mask(op, n, n, |i, j| i > k && j == k);
            let w1 = op.Where(trail, upd, ws);
            op.Where(colm, sc, w1)
        } else {
            ws
        };
        // A 2×2 pivot: the columns of L beyond it from D's inverse, and the trailing update.
        let w2 = if k + 2 < n {
            let d21 = entry(op, ws, k + 1, k);
            let a11 = entry(op, ws, k + 1, k + 1);
            let d11 = op.Div(a11, d21);
            let a00 = entry(op, ws, k, k);
            let d22 = op.Div(a00, d21);
            let dd = op.Mul(d11, d22);
            let dd = op.Sub(dd, one);
            let tt = op.Div(one, dd);
            let d21 = op.Div(tt, d21);
            let ck = slice_along(op, ws, -1, k, k + 1);
            let ck1 = slice_along(op, ws, -1, k + 1, k + 2);
            let x = op.Mul(d11, ck);
            let x = op.Sub(x, ck1);
            let wk = op.Mul(d21, x);
            let y = op.Mul(d22, ck1);
            let y = op.Sub(y, ck);
            let wkp1 = op.Mul(d21, y);
            let wkt = transpose_last_two(op, wk, rank);
            let wkp1t = transpose_last_two(op, wkp1, rank);
            let p1 = op.Mul(ck, wkt);
            let p2 = op.Mul(ck1, wkp1t);
            let upd = op.Sub(ws, p1);
            let upd = op.Sub(upd, p2);
            let trail = mask(op, n, n, |i, j| i > k + 1 && j > k + 1);
            let c0 = mask(op, n, n, |i, j| i > k + 1 && j == k);
            let c1 = mask(op, n, n, |i, j| i > k + 1 && j == k + 1);
            let w2 = op.Where(trail, upd, ws);
            let w2 = op.Where(c0, wk, w2);
            op.Where(c1, wkp1, w2)
        } else {
            ws
        };
        let upd = op.Where(two, w2, w1);
        let upd = op.Where(zero_col, ws, upd);
        let upd = symmetrize_lower(op, upd, rank);
        w = op.Where(skip, w, upd);
        let one64 = op.scalar_i64(1);
        let kp1 = op.Add(kp, one64);
        let neg = op.Neg(kp1);
        let own = op.Where(two, neg, kp1);
        pivs.push(op.Where(skip, pending, own));
        pending = neg;
        let not_skip = op.Not(skip);
        zero_cols.push(op.And(zero_col, not_skip));
        let two_here = op.And(two, not_skip);
        skip = two_here;
    }
    let ld = op.Trilu(w, None).upper(0).out();
    let mut info = zero_info(op, batch);
    for (k, zc) in zero_cols.iter().enumerate().rev() {
        let ax = op.const_i64s(&[-2, -1]);
        let zc = op.Squeeze(*zc, Some(ax));
        let v = op.scalar(DType::Int32, (k + 1) as f64);
        info = op.Where(zc, v, info);
    }
    let parts: Vec<Value> = pivs
        .iter()
        .map(|&p| {
            let ax = op.const_i64s(&[-1]);
            op.Squeeze(p, Some(ax))
        })
        .collect();
    let piv = op.Concat(&parts).axis(-1).out();
    let piv = op.Cast(piv).to(DType::Int32 as i64).out();
    (ld, piv, info)
}

/// The LD factorisation of `a` as torch's linalg.ldl_factor_ex: `(LD, pivots, info)`.
fn ldl_factor_outputs(op: &mut Builder, a: Value) -> OpResult<(Value, Value, Value)> {
    let (x, t, batch, n) = square(op, a, "ldl_factor")?;
    if n == 0 || batch.contains(&0) {
        let z = op.scalar(DType::Int32, 0.0);
        let piv = expand_to(op, z, &batched(&batch, &[n]));
        let info = zero_info(op, &batch);
        return Ok((op.Identity(x), piv, info));
    }
    Ok(ldl_factor_impl(op, x, t, &batch, n))
}

/// Solves `A X = B` from A's Bunch-Kaufman factorisation (`ld` `[..., n, n]`, 1-based `pivots`,
/// negative for 2×2 blocks) as LAPACK's sytrs (lower): `L D Y = B` forward, then `Lᵀ X = Y`
/// backward, swapping rows as the pivots say. Which columns start a 2×2 block is read from the
/// pivots per matrix.
fn ldl_solve_impl(op: &mut Builder, ld: Value, pivots: Value, b: Value) -> OpResult<Value> {
    let what = "ldl_solve";
    let t = float_type(op, b, what)?;
    let ld = cast(op, ld, t);
    let b = cast(op, b, t);
    let (ld, b, batch, n, k) = broadcast_pair(op, ld, b, what)?;
    if n == 0 || k == 0 || batch.contains(&0) {
        return Ok(b);
    }
    let piv = cast(op, pivots, DType::Int64);
    let piv = expand_to(op, piv, &batched(&batch, &[n]));
    let ax = op.const_i64s(&[-1]);
    let piv = op.Unsqueeze(piv, ax);
    let pk: Vec<Value> = (0..n).map(|j| slice_along(op, piv, -2, j, j + 1)).collect();
    let (z64, one64) = (op.scalar_i64(0), op.scalar_i64(1));
    let f = op.constant_tensor(TensorData::from_f64_as(DType::Bool, vec![], &[0.0]).expect("bool constant"));
    let mut second = expand_to(op, f, &batched(&batch, &[1, 1]));
    let (mut firsts, mut seconds, mut ones) = (Vec::new(), Vec::new(), Vec::new());
    for &p in &pk {
        let neg = op.Less(p, z64);
        let not_second = op.Not(second);
        let first = op.And(neg, not_second);
        let either = op.Or(first, second);
        ones.push(op.Not(either));
        firsts.push(first);
        seconds.push(second);
        second = first;
    }
    // The row each column's pivot swaps with (0-based), itself where the branch does not apply.
    let swap_with = |op: &mut Builder, p: Value, two: bool, when: Value, own: i64| {
        let q = if two { op.Neg(p) } else { p };
        let q = op.Sub(q, one64);
        let o = op.scalar_i64(own);
        op.Where(when, q, o)
    };
    let (zero, one) = (op.scalar(t, 0.0), op.scalar(t, 1.0));
    let lcol = |op: &mut Builder, j: i64, from: i64| {
        let c = slice_along(op, ld, -1, j, j + 1);
        let below = mask(op, n, 1, |i, _| i >= from);
        op.Where(below, c, zero)
    };
    let mut x = b;
    for j in 0..n {
        let ju = j as usize;
        // 1×1: swap j and p - 1, eliminate below, divide by D(j, j).
        let p1 = swap_with(op, pk[ju], false, ones[ju], j);
        let xs = swap_rows(op, x, j, p1, &batch, n, k);
        let rj = slice_along(op, xs, -2, j, j + 1);
        let c = lcol(op, j, j + 1);
        let pr = op.Mul(c, rj);
        let xs = op.Sub(xs, pr);
        let djj = entry(op, ld, j, j);
        let q = op.Div(rj, djj);
        let at = mask(op, n, 1, |i, _| i == j);
        let y1 = op.Where(at, q, xs);
        // 2×2 (columns j, j + 1): swap j + 1 and -p - 1, eliminate below, solve with the block.
        let y2 = if j + 1 < n {
            let p2 = swap_with(op, pk[ju], true, firsts[ju], j + 1);
            let mut xs = swap_rows(op, x, j + 1, p2, &batch, n, k);
            let r0 = slice_along(op, xs, -2, j, j + 1);
            let r1 = slice_along(op, xs, -2, j + 1, j + 2);
            if j + 2 < n {
                let c0 = lcol(op, j, j + 2);
                let pr = op.Mul(c0, r0);
                xs = op.Sub(xs, pr);
                let c1 = lcol(op, j + 1, j + 2);
                let pr = op.Mul(c1, r1);
                xs = op.Sub(xs, pr);
            }
            let akm1k = entry(op, ld, j + 1, j);
            let a00 = entry(op, ld, j, j);
            let akm1 = op.Div(a00, akm1k);
            let a11 = entry(op, ld, j + 1, j + 1);
            let ak = op.Div(a11, akm1k);
            let den = op.Mul(akm1, ak);
            let den = op.Sub(den, one);
            let bkm1 = op.Div(r0, akm1k);
            let bk = op.Div(r1, akm1k);
            let u = op.Mul(ak, bkm1);
            let u = op.Sub(u, bk);
            let u = op.Div(u, den);
            let v = op.Mul(akm1, bk);
            let v = op.Sub(v, bkm1);
            let v = op.Div(v, den);
            let at0 = mask(op, n, 1, |i, _| i == j);
            let at1 = mask(op, n, 1, |i, _| i == j + 1);
            let y = op.Where(at0, u, xs);
            op.Where(at1, v, y)
        } else {
            x
        };
        let keep = op.Where(seconds[ju], x, y1);
        x = op.Where(firsts[ju], y2, keep);
    }
    for j in (0..n).rev() {
        let ju = j as usize;
        // Lᵀ: row j (and j - 1 for the second column of a 2×2 block) less L's column below the
        // block times the rows below, then the swap.
        let sub_row = |op: &mut Builder, x: Value, row: i64| {
            let c = lcol(op, row, j + 1);
            let p = op.Mul(c, x);
            let ax = op.const_i64s(&[-2]);
            let s = op.ReduceSum(p, Some(ax)).keepdims(1).out();
            let r = slice_along(op, x, -2, row, row + 1);
            let r = op.Sub(r, s);
            let at = mask(op, n, 1, |i, _| i == row);
            op.Where(at, r, x)
        };
        let y1 = if j + 1 < n { sub_row(op, x, j) } else { x };
        let p1 = swap_with(op, pk[ju], false, ones[ju], j);
        let y1 = swap_rows(op, y1, j, p1, &batch, n, k);
        let y2 = if j >= 1 {
            let y = if j + 1 < n {
                let y = sub_row(op, x, j);
                sub_row(op, y, j - 1)
            } else {
                x
            };
            let p2 = swap_with(op, pk[ju], true, seconds[ju], j);
            swap_rows(op, y, j, p2, &batch, n, k)
        } else {
            x
        };
        let keep = op.Where(firsts[ju], x, y1);
        x = op.Where(seconds[ju], y2, keep);
    }
    Ok(x)
}

/// Reflector `i` of a geqrf result `a` (`[..., m, n]`): `(0, …, 0, 1, a[i+1.., i])` (`[..., m, 1]`).
fn reflector(op: &mut Builder, a: Value, t: DType, m: i64, i: i64) -> Value {
    let col = slice_along(op, a, -1, i, i + 1);
    let below = mask(op, m, 1, |r, _| r > i);
    let at = mask(op, m, 1, |r, _| r == i);
    let (zero, one) = (op.scalar(t, 0.0), op.scalar(t, 1.0));
    let inner = op.Where(at, one, zero);
    op.Where(below, col, inner)
}

/// `H_1 ⋯ H_k` (`[..., m, m]`, double) with `H_i = I - τ_i v_i v_iᵀ` from a geqrf result `a`
/// (`[..., m, n]`) and `tau` (`[..., k]`): the Q that LAPACK's orgqr and ormqr apply.
fn householder_q(op: &mut Builder, a: Value, tau: Value, batch: &[i64], m: i64, k: i64) -> Value {
    let d = DType::Double;
    let rank = batch.len() + 2;
    let a = cast(op, a, d);
    let tau = cast(op, tau, d);
    let eye = const_mat(op, d, m, m, |i, j| (i == j) as i64 as f64);
    let mut q = expand_to(op, eye, &batched(batch, &[m, m]));
    for i in 0..k {
        let v = reflector(op, a, d, m, i);
        let ti = slice_along(op, tau, -1, i, i + 1);
        let ax = op.const_i64s(&[-1]);
        let ti = op.Unsqueeze(ti, ax);
        let vt = transpose_last_two(op, v, rank);
        let qv = op.MatMul(q, v);
        let qvv = op.MatMul(qv, vt);
        let qvv = op.Mul(ti, qvv);
        q = op.Sub(q, qvv);
    }
    q
}

/// torch's SVD `(U, S, Vh)` of `a` (`[..., m, n]`). The singular vectors are built only for empty
/// inputs (zeros, and identities with `full_matrices`, as torch fills them); elsewhere they are
/// unique only up to sign and LAPACK's choice (gesdd's bidiagonal iterations) is not reproduced,
/// so they are left unset and a graph that reads them fails.
fn svd_impl(
    op: &mut Builder,
    a: Value,
    full_matrices: bool,
    compute_uv: bool,
    what: &str,
) -> OpResult<(Option<Value>, Value, Option<Value>)> {
    let (batch, m, n) = matrix_dims(op, a, what)?;
    let t = float_type_of(op, a, what)?;
    let x = cast(op, a, t);
    let s = singular_values(op, x, t, &batch, m, n);
    let k = m.min(n);
    if !compute_uv || (k > 0 && !batch.contains(&0)) {
        return Ok((None, s, None));
    }
    let (ur, vr) = if full_matrices { (m, n) } else { (k, k) };
    let u = const_mat(op, t, m, ur, |i, j| (full_matrices && i == j) as i64 as f64);
    let u = expand_to(op, u, &batched(&batch, &[m, ur]));
    let vh = const_mat(op, t, vr, n, |i, j| (full_matrices && i == j) as i64 as f64);
    let vh = expand_to(op, vh, &batched(&batch, &[vr, n]));
    Ok((Some(u), s, Some(vh)))
}

/// torch's eigh `(eigenvalues, eigenvectors)`. The eigenvectors are built only for empty inputs:
/// elsewhere they are unique only up to sign and LAPACK's choice (syevd's tridiagonal QL/QR
/// iterations) is not reproduced, so they are left unset and a graph that reads them fails.
fn eigh_impl(op: &mut Builder, a: Value, uplo: &str, compute_v: bool) -> OpResult<(Value, Option<Value>)> {
    let (x, t, batch, n) = square(op, a, "eigh")?;
    let ev = symmetric_eigenvalues(op, x, t, &batch, n, !uplo.eq_ignore_ascii_case("U"));
    if !compute_v || (n > 0 && !batch.contains(&0)) {
        return Ok((ev, None));
    }
    let z = op.scalar(t, 0.0);
    Ok((ev, Some(expand_to(op, z, &batched(&batch, &[n, n])))))
}

/// torch's linalg.norm over one dim (or all, flattened, when `dim` is None): the vector p-norm.
fn vector_norm_of(op: &mut Builder, x: Value, ord: f64, dim: Option<&[i64]>, keepdim: bool) -> OpResult<Value> {
    let r = rank_of(op, x)?;
    match dim {
        Some(dim) if r > 0 => {
            let axes: Vec<i64> = dim.iter().map(|&d| normalize_axis(d, r)).collect::<OpResult<_>>()?;
            pnorm(op, x, ord, &axes, keepdim)
        }
        _ => {
            let flat = op.const_i64s(&[-1]);
            let x = op.Reshape(x, flat).out();
            let v = pnorm(op, x, ord, &[0], false)?;
            Ok(if keepdim && r > 0 {
                let ones = op.const_i64s(&vec![1; r]);
                op.Reshape(v, ones).out()
            } else {
                v
            })
        }
    }
}

/// The matrix norm `ord` names (`None` is Frobenius).
fn matrix_norm_kind(ord: Option<f64>) -> OpResult<NormKind> {
    Ok(match ord {
        None => NormKind::Fro,
        Some(2.0) => NormKind::Spectral(true),
        Some(-2.0) => NormKind::Spectral(false),
        Some(o) if o.abs() == 1.0 => NormKind::Col(o > 0.0),
        Some(o) if o.is_infinite() => NormKind::Row(o > 0.0),
        Some(o) => bail!("linalg_norm: ord {o} is not a matrix norm"),
    })
}

/// torch's linalg.norm: a vector norm over one dim (or over all when neither `ord` nor `dim` is
/// given), else a matrix norm over two dims (the last two of a matrix when only `ord` is given).
fn linalg_norm_impl(
    op: &mut Builder,
    x: Value,
    ord: Option<f64>,
    matrix: Option<NormKind>,
    dim: Option<Vec<i64>>,
    keepdim: bool,
) -> OpResult<Value> {
    let what = "linalg_norm";
    let t = float_type(op, x, what)?;
    let x = cast(op, x, t);
    let r = rank_of(op, x)?;
    let matrix_dims = match (&dim, ord.is_some() || matrix.is_some()) {
        (Some(d), _) if d.len() == 2 => Some(d.clone()),
        (Some(d), _) if d.len() == 1 => None,
        (Some(d), _) => bail!("{what}: dim must have one or two entries, got {d:?}"),
        (None, true) if r == 2 => Some(vec![-2, -1]),
        (None, true) if r == 1 => None,
        (None, true) => bail!("{what}: with ord and no dim the input must be 1-D or 2-D, got {r}-D"),
        (None, false) => None,
    };
    match matrix_dims {
        Some(md) => {
            let kind = match matrix {
                Some(k) => k,
                None => matrix_norm_kind(ord)?,
            };
            matrix_norm_impl(op, x, kind, &md, keepdim)
        }
        None => {
            if matrix.is_some() {
                bail!("{what}: a string ord names a matrix norm, which needs two dims");
            }
            vector_norm_of(op, x, ord.unwrap_or(2.0), dim.as_deref(), keepdim)
        }
    }
}

/// L (`[..., m, k]`, unit diagonal) and U (`[..., k, n]`) from a packed LU (`[..., m, n]`).
fn lu_factors(op: &mut Builder, w: Value, t: DType, m: i64, n: i64) -> (Value, Value) {
    let k = m.min(n);
    let zero = op.scalar(t, 0.0);
    let one = op.scalar(t, 1.0);
    let lw = slice_along(op, w, -1, 0, k);
    let strict = mask(op, m, k, |i, j| i > j);
    let diag = mask(op, m, k, |i, j| i == j);
    let inner = op.Where(diag, one, zero);
    let l = op.Where(strict, lw, inner);
    let uw = slice_along(op, w, -2, 0, k);
    let upper = mask(op, k, n, |i, j| i <= j);
    let u = op.Where(upper, uw, zero);
    (l, u)
}

translations! {
    /// linalg_det(Tensor A) -> Tensor
    #[target("aten::linalg_det", "aten::det")]
    fn linalg_det(op, A: Option<Tensor> = None, self_: Option<Tensor> = None) -> OpResult<Value> {
        let Some(x) = A.or(self_) else { bail!("det needs a tensor") };
        let (x, t, batch, n) = square(op, x, "det")?;
        let lu = lu_eliminate(op, x, t, &batch, n, n, n);
        Ok(lu_det(op, &lu, t, &batch, n))
    }

    /// _linalg_det(Tensor A) -> (Tensor result, Tensor LU, Tensor pivots)
    #[target("aten::_linalg_det")]
    fn _linalg_det(op, A: Tensor) -> OpResult<Vec<Option<Value>>> {
        let a = A;
        let (x, t, batch, n) = square(op, a, "det")?;
        let lu = lu_eliminate(op, x, t, &batch, n, n, n);
        let det = lu_det(op, &lu, t, &batch, n);
        let piv = pivots_out(op, &lu.pivots, &batch);
        Ok(vec![Some(det), Some(lu.w), Some(piv)])
    }

    /// logdet(Tensor self) -> Tensor
    #[target("aten::logdet")]
    fn logdet(op, self_: Tensor) -> OpResult<Value> {
        let (x, t, batch, n) = square(op, self_, "logdet")?;
        let lu = lu_eliminate(op, x, t, &batch, n, n, n);
        let det = lu_det(op, &lu, t, &batch, n);
        // log of a negative determinant is NaN, of zero -inf, as torch.
        Ok(op.Log(det))
    }

    /// _linalg_slogdet(Tensor A) -> (Tensor sign, Tensor logabsdet, Tensor LU, Tensor pivots)
    #[target("aten::_linalg_slogdet", "aten::linalg_slogdet")]
    fn _linalg_slogdet(op, A: Tensor) -> OpResult<Vec<Option<Value>>> {
        let a = A;
        let (x, t, batch, n) = square(op, a, "slogdet")?;
        let lu = lu_eliminate(op, x, t, &batch, n, n, n);
        // sign·exp(logabsdet): the log of |U|'s diagonal summed (no overflow of the product).
        let eye = mask(op, n, n, |i, j| i == j);
        let one = op.scalar(t, 1.0);
        let d = op.Where(eye, lu.w, one);
        let ad = op.Abs(d);
        let ld = op.Log(ad);
        let logabs = if n == 0 {
            let z = op.scalar(t, 0.0);
            expand_to(op, z, &batch)
        } else {
            let axes = op.const_i64s(&[-2, -1]);
            op.ReduceSum(ld, Some(axes)).keepdims(0).out()
        };
        let det = lu_det(op, &lu, t, &batch, n);
        let sign = op.Sign(det);
        let piv = pivots_out(op, &lu.pivots, &batch);
        Ok(vec![Some(sign), Some(logabs), Some(lu.w), Some(piv)])
    }

    /// linalg_matrix_power(Tensor self, int n) -> Tensor
    #[target("aten::linalg_matrix_power", "aten::matrix_power")]
    fn linalg_matrix_power(op, self_: Tensor, n: i64) -> OpResult<Value> {
        let s = static_shape(op, self_, "matrix_power")?;
        if s.len() < 2 || s[s.len() - 1] != s[s.len() - 2] {
            bail!("matrix_power needs square matrices");
        }
        let t = match op.out_dtype(0) {
            Some(t) => t,
            None => dtype_of(op, self_)?,
        };
        if op.info(self_).complex || t == DType::Bool {
            bail!("matrix_power of complex or bool tensors is not supported");
        }
        let side = s[s.len() - 1];
        let x = cast(op, self_, t);
        if n == 0 {
            let eye = const_mat(op, t, side, side, |i, j| (i == j) as i64 as f64);
            return Ok(expand_to(op, eye, &s));
        }
        let a = if n < 0 {
            if !t.is_float() {
                bail!("matrix_power with a negative exponent needs a floating-point matrix");
            }
            let batch = s[..s.len() - 2].to_vec();
            if side > MAX_SIDE {
                bail!("matrix_power: inverses are unrolled for matrices up to {MAX_SIDE}x{MAX_SIDE}");
            }
            let eye = const_mat(op, t, side, side, |i, j| (i == j) as i64 as f64);
            let eye = expand_to(op, eye, &s);
            solve_square(op, x, eye, t, &batch, side, side).0
        } else {
            x
        };
        let mut n = n.unsigned_abs();
        // ATen's order of products: n = 1, 2, 3 directly, else a binary decomposition.
        match n {
            1 => return Ok(op.Identity(a)),
            2 => return Ok(op.MatMul(a, a)),
            3 => {
                let aa = op.MatMul(a, a);
                return Ok(op.MatMul(aa, a));
            }
            _ => {}
        }
        let (mut z, mut result): (Option<Value>, Option<Value>) = (None, None);
        while n > 0 {
            let bit = n % 2;
            n /= 2;
            let zz = match z {
                Some(z) => op.MatMul(z, z),
                None => a,
            };
            z = Some(zz);
            if bit == 1 {
                result = Some(match result {
                    Some(r) => op.MatMul(r, zz),
                    None => zz,
                });
            }
        }
        Ok(result.expect("n > 0"))
    }

    /// linalg_inv_ex(Tensor A, *, bool check_errors=False) -> (Tensor inverse, Tensor info)
    #[target("aten::linalg_inv_ex")]
    fn linalg_inv_ex(op, A: Tensor, check_errors: bool = false) -> OpResult<Vec<Option<Value>>> {
        let a = A;
        let _ = check_errors;
        let (x, t, batch, n) = square(op, a, "inv")?;
        let eye = const_mat(op, t, n, n, |i, j| (i == j) as i64 as f64);
        let eye = expand_to(op, eye, &batched(&batch, &[n, n]));
        let (inv, lu) = solve_square(op, x, eye, t, &batch, n, n);
        let info = lu_info(op, lu.w, t, &batch, n);
        Ok(vec![Some(inv), Some(info)])
    }

    /// linalg_inv(Tensor A) -> Tensor
    #[target("aten::linalg_inv")]
    fn linalg_inv(op, A: Tensor) -> OpResult<Value> {
        let a = A;
        let (x, t, batch, n) = square(op, a, "inv")?;
        let eye = const_mat(op, t, n, n, |i, j| (i == j) as i64 as f64);
        let eye = expand_to(op, eye, &batched(&batch, &[n, n]));
        Ok(solve_square(op, x, eye, t, &batch, n, n).0)
    }

    /// _linalg_solve_ex(Tensor A, Tensor B, *, bool left=True, bool check_errors=False) -> (Tensor result, Tensor LU,
    ///     Tensor pivots, Tensor info)
    #[target("aten::_linalg_solve_ex")]
    fn _linalg_solve_ex(
        op,
        A: Tensor,
        B: Tensor,
        left: bool = true,
        check_errors: bool = false,
    ) -> OpResult<Vec<Option<Value>>> {
        let (a, b) = (A, B);
        let _ = check_errors;
        let t = float_type(op, a, "solve")?;
        let (x, lu, batch) = linalg_solve_impl(op, a, b, left, "solve")?;
        let piv = pivots_out(op, &lu.pivots, &batch);
        let n = lu.pivots.len() as i64;
        let info = lu_info(op, lu.w, t, &batch, n);
        Ok(vec![Some(x), Some(lu.w), Some(piv), Some(info)])
    }

    /// linalg_solve_ex(Tensor A, Tensor B, *, bool left=True, bool check_errors=False) -> (Tensor result, Tensor info)
    #[target("aten::linalg_solve_ex")]
    fn linalg_solve_ex(
        op,
        A: Tensor,
        B: Tensor,
        left: bool = true,
        check_errors: bool = false,
    ) -> OpResult<Vec<Option<Value>>> {
        let (a, b) = (A, B);
        let _ = check_errors;
        let t = float_type(op, a, "solve")?;
        let (x, lu, batch) = linalg_solve_impl(op, a, b, left, "solve")?;
        let n = lu.pivots.len() as i64;
        let info = lu_info(op, lu.w, t, &batch, n);
        Ok(vec![Some(x), Some(info)])
    }

    /// linalg_solve(Tensor A, Tensor B, *, bool left=True) -> Tensor
    #[target("aten::linalg_solve")]
    fn linalg_solve(op, A: Tensor, B: Tensor, left: bool = true) -> OpResult<Value> {
        let (a, b) = (A, B);
        Ok(linalg_solve_impl(op, a, b, left, "solve")?.0)
    }

    /// linalg_cholesky_ex(Tensor self, *, bool upper=False, bool check_errors=False) -> (Tensor L, Tensor info)
    #[target("aten::linalg_cholesky_ex")]
    fn linalg_cholesky_ex(
        op,
        self_: Tensor,
        upper: bool = false,
        check_errors: bool = false,
    ) -> OpResult<Vec<Option<Value>>> {
        let _ = check_errors;
        let (x, t, batch, n) = square(op, self_, "cholesky")?;
        let (l, info) = cholesky_lower(op, x, t, &batch, n);
        let l = if upper { transpose_last_two(op, l, batch.len() + 2) } else { l };
        Ok(vec![Some(l), Some(info)])
    }

    /// linalg_cholesky(Tensor self, *, bool upper=False) -> Tensor
    #[target("aten::linalg_cholesky")]
    fn linalg_cholesky(op, self_: Tensor, upper: bool = false) -> OpResult<Value> {
        let (x, t, batch, n) = square(op, self_, "cholesky")?;
        let (l, _) = cholesky_lower(op, x, t, &batch, n);
        Ok(if upper { transpose_last_two(op, l, batch.len() + 2) } else { l })
    }

    /// cholesky_inverse(Tensor self, bool upper=False) -> Tensor
    #[target("aten::cholesky_inverse")]
    fn cholesky_inverse(op, self_: Tensor, upper: bool = false) -> OpResult<Value> {
        let (x, t, batch, n) = square(op, self_, "cholesky_inverse")?;
        let rank = batch.len() + 2;
        // A = L L^T (or U^T U): A^-1 = L^-T L^-1.
        let eye = const_mat(op, t, n, n, |i, j| (i == j) as i64 as f64);
        let eye = expand_to(op, eye, &batched(&batch, &[n, n]));
        let linv = tri_solve(op, x, eye, upper, false, n);
        let lt = transpose_last_two(op, linv, rank);
        Ok(if upper { op.MatMul(linv, lt) } else { op.MatMul(lt, linv) })
    }

    /// linalg_solve_triangular(Tensor self, Tensor B, *, bool upper, bool left=True,
    ///     bool unitriangular=False) -> Tensor
    #[target("aten::linalg_solve_triangular")]
    fn linalg_solve_triangular(
        op,
        self_: Tensor,
        B: Tensor,
        upper: bool,
        left: bool = true,
        unitriangular: bool = false,
    ) -> OpResult<Value> {
        let b = B;
        let t = float_type(op, self_, "solve_triangular")?;
        let a = cast(op, self_, t);
        let b = cast(op, b, t);
        if left {
            let (a, b, _, n, _) = broadcast_pair(op, a, b, "solve_triangular")?;
            Ok(tri_solve(op, a, b, upper, unitriangular, n))
        } else {
            // X A = B  <=>  A^T X^T = B^T (A^T has the other triangle).
            let (ra, rb) = (rank_of(op, a)?, rank_of(op, b)?);
            let at = transpose_last_two(op, a, ra);
            let bt = transpose_last_two(op, b, rb);
            let ash = static_shape(op, a, "solve_triangular")?;
            let bsh = static_shape(op, b, "solve_triangular")?;
            let mut ats = ash.clone();
            ats.swap(ra - 2, ra - 1);
            let mut bts = bsh.clone();
            bts.swap(rb - 2, rb - 1);
            op.info_mut(at).shape = Some(ats.iter().map(|&d| Dim::Fixed(d)).collect());
            op.info_mut(bt).shape = Some(bts.iter().map(|&d| Dim::Fixed(d)).collect());
            let (at, bt, batch, n, _) = broadcast_pair(op, at, bt, "solve_triangular")?;
            let xt = tri_solve(op, at, bt, !upper, unitriangular, n);
            Ok(transpose_last_two(op, xt, batch.len() + 2))
        }
    }

    /// triangular_solve(Tensor self, Tensor A, bool upper=True, bool transpose=False,
    ///     bool unitriangular=False) -> (Tensor solution, Tensor cloned_coefficient)
    #[target("aten::triangular_solve")]
    fn triangular_solve(
        op,
        self_: Tensor,
        A: Tensor,
        upper: bool = true,
        transpose: bool = false,
        unitriangular: bool = false,
    ) -> OpResult<Vec<Option<Value>>> {
        let a = A;
        let t = float_type(op, self_, "triangular_solve")?;
        let b = cast(op, self_, t);
        let a = cast(op, a, t);
        let (ab, bb, batch, n, _) = broadcast_pair(op, a, b, "triangular_solve")?;
        let (coef, up) = if transpose { (transpose_last_two(op, ab, batch.len() + 2), !upper) } else { (ab, upper) };
        let x = tri_solve(op, coef, bb, up, unitriangular, n);
        Ok(vec![Some(x), Some(ab)])
    }

    /// linalg_lu_factor_ex(Tensor A, *, bool pivot=True, bool check_errors=False) -> (Tensor LU, Tensor pivots,
    ///     Tensor info)
    #[target("aten::linalg_lu_factor_ex", "aten::_lu_with_info")]
    fn linalg_lu_factor_ex(
        op,
        A: Option<Tensor> = None,
        self_: Option<Tensor> = None,
        pivot: bool = true,
        check_errors: bool = false,
    ) -> OpResult<Vec<Option<Value>>> {
        let _ = check_errors;
        let Some(x) = A.or(self_) else { bail!("lu_factor needs a tensor") };
        if !pivot {
            bail!("LU without pivoting is not translated");
        }
        let (batch, m, n) = matrix_dims(op, x, "lu_factor")?;
        let t = float_type(op, x, "lu_factor")?;
        let x = cast(op, x, t);
        let lu = lu_eliminate(op, x, t, &batch, m, n, m.min(n));
        let piv = pivots_out(op, &lu.pivots, &batch);
        let info = lu_info(op, lu.w, t, &batch, m.min(n));
        Ok(vec![Some(lu.w), Some(piv), Some(info)])
    }

    /// linalg_lu(Tensor A, *, bool pivot=True) -> (Tensor P, Tensor L, Tensor U)
    #[target("aten::linalg_lu")]
    fn linalg_lu(op, A: Tensor, pivot: bool = true) -> OpResult<Vec<Option<Value>>> {
        let a = A;
        if !pivot {
            bail!("LU without pivoting is not translated");
        }
        let (batch, m, n) = matrix_dims(op, a, "lu")?;
        let t = float_type(op, a, "lu")?;
        let x = cast(op, a, t);
        let k = m.min(n);
        let lu = lu_eliminate(op, x, t, &batch, m, n, k);
        let p = perm_matrix(op, lu.order, t, &batch, m);
        let zero = op.scalar(t, 0.0);
        let one = op.scalar(t, 1.0);
        let lw = slice_along(op, lu.w, -1, 0, k);
        let strict = mask(op, m, k, |i, j| i > j);
        let diag = mask(op, m, k, |i, j| i == j);
        let inner = op.Where(diag, one, zero);
        let l = op.Where(strict, lw, inner);
        let uw = slice_along(op, lu.w, -2, 0, k);
        let upper = mask(op, k, n, |i, j| i <= j);
        let u = op.Where(upper, uw, zero);
        Ok(vec![Some(p), Some(l), Some(u)])
    }

    /// _linalg_svd(Tensor A, bool full_matrices=False, bool compute_uv=True, *, str? driver=None) -> (Tensor U,
    ///     Tensor S, Tensor Vh)
    #[target("aten::_linalg_svd")]
    fn _linalg_svd(
        op,
        A: Tensor,
        full_matrices: bool = false,
        compute_uv: bool = true,
        // LAPACK's algorithm: the results are the same.
        _driver: Ignored,
    ) -> OpResult<Vec<Option<Value>>> {
        let (u, s, vh) = svd_impl(op, A, full_matrices, compute_uv, "svd")?;
        Ok(vec![u, Some(s), vh])
    }

    /// linalg_svd(Tensor A, bool full_matrices=True, *, str? driver=None) -> (Tensor U, Tensor S, Tensor Vh)
    #[target("aten::linalg_svd")]
    fn linalg_svd(
        op,
        A: Tensor,
        full_matrices: bool = true,
        // LAPACK's algorithm: the results are the same.
        _driver: Ignored,
    ) -> OpResult<Vec<Option<Value>>> {
        let (u, s, vh) = svd_impl(op, A, full_matrices, true, "svd")?;
        Ok(vec![u, Some(s), vh])
    }

    /// svd(Tensor self, bool some=True, bool compute_uv=True) -> (Tensor U, Tensor S, Tensor V)
    #[target("aten::svd")]
    fn svd(op, self_: Tensor, some: bool = true, compute_uv: bool = true) -> OpResult<Vec<Option<Value>>> {
        if !compute_uv {
            // torch.svd then returns zero-filled U (m×m) and V (n×n).
            let (_, s, _) = svd_impl(op, self_, false, false, "svd")?;
            let (batch, m, n) = matrix_dims(op, self_, "svd")?;
            let t = float_type_of(op, self_, "svd")?;
            let z = op.scalar(t, 0.0);
            let u = expand_to(op, z, &batched(&batch, &[m, m]));
            let v = expand_to(op, z, &batched(&batch, &[n, n]));
            return Ok(vec![Some(u), Some(s), Some(v)]);
        }
        let (u, s, vh) = svd_impl(op, self_, !some, true, "svd")?;
        let rank = rank_of(op, self_)?;
        let v = vh.map(|vh| transpose_last_two(op, vh, rank));
        Ok(vec![u, Some(s), v])
    }

    /// linalg_svdvals(Tensor A, *, str? driver=None) -> Tensor
    #[target("aten::linalg_svdvals")]
    fn linalg_svdvals(op, A: Tensor, driver: Option<&str> = None) -> OpResult<Value> {
        let _ = driver;
        let (batch, m, n) = matrix_dims(op, A, "svdvals")?;
        let t = float_type(op, A, "svdvals")?;
        let x = cast(op, A, t);
        Ok(singular_values(op, x, t, &batch, m, n))
    }

    /// linalg_pinv.atol_rtol_tensor(Tensor self, *, Tensor? atol=None, Tensor? rtol=None,
    ///     bool hermitian=False) -> Tensor
    #[target("aten::linalg_pinv.atol_rtol_tensor")]
    fn linalg_pinv_atol_rtol_tensor(
        op,
        self_: Tensor,
        atol: Option<Tensor> = None,
        rtol: Option<Tensor> = None,
        hermitian: bool = false,
    ) -> OpResult<Value> {
        pinv_impl(op, self_, atol, rtol, hermitian, "pinv")
    }

    /// linalg_pinv.atol_rtol_float(Tensor self, *, float? atol=None, float? rtol=None, bool hermitian=False) -> Tensor
    #[target("aten::linalg_pinv.atol_rtol_float")]
    fn linalg_pinv_atol_rtol_float(
        op,
        self_: Tensor,
        atol: Option<f64> = None,
        rtol: Option<f64> = None,
        hermitian: bool = false,
    ) -> OpResult<Value> {
        let atol = atol.map(|v| op.scalar(DType::Double, v));
        let rtol = rtol.map(|v| op.scalar(DType::Double, v));
        pinv_impl(op, self_, atol, rtol, hermitian, "pinv")
    }

    /// linalg_pinv(Tensor self, float rcond, bool hermitian=False) -> Tensor
    #[target("aten::linalg_pinv")]
    fn linalg_pinv(op, self_: Tensor, rcond: f64, hermitian: bool = false) -> OpResult<Value> {
        let atol = Some(op.scalar(DType::Double, 0.0));
        let rtol = Some(op.scalar(DType::Double, rcond));
        pinv_impl(op, self_, atol, rtol, hermitian, "pinv")
    }

    /// linalg_matrix_rank.atol_rtol_tensor(Tensor input, *, Tensor? atol=None, Tensor? rtol=None,
    ///     bool hermitian=False) -> Tensor
    #[target("aten::linalg_matrix_rank.atol_rtol_tensor")]
    fn linalg_matrix_rank_atol_rtol_tensor(
        op,
        input: Tensor,
        atol: Option<Tensor> = None,
        rtol: Option<Tensor> = None,
        hermitian: bool = false,
    ) -> OpResult<Value> {
        matrix_rank_impl(op, input, atol, rtol, hermitian)
    }

    /// linalg_matrix_rank.atol_rtol_float(Tensor self, *, float? atol=None, float? rtol=None,
    ///     bool hermitian=False) -> Tensor
    #[target("aten::linalg_matrix_rank.atol_rtol_float")]
    fn linalg_matrix_rank_atol_rtol_float(
        op,
        self_: Tensor,
        atol: Option<f64> = None,
        rtol: Option<f64> = None,
        hermitian: bool = false,
    ) -> OpResult<Value> {
        let atol = atol.map(|v| op.scalar(DType::Double, v));
        let rtol = rtol.map(|v| op.scalar(DType::Double, v));
        matrix_rank_impl(op, self_, atol, rtol, hermitian)
    }

    /// linalg_matrix_rank(Tensor self, float tol, bool hermitian=False) -> Tensor
    #[target("aten::linalg_matrix_rank", "aten::linalg_matrix_rank.tol_tensor")]
    fn linalg_matrix_rank(
        op,
        self_: Option<Tensor> = None,
        input: Option<Tensor> = None,
        tol: Operand,
        hermitian: bool = false,
    ) -> OpResult<Value> {
        let Some(x) = self_.or(input) else { bail!("matrix_rank needs a tensor") };
        let atol = Some(operand_value(op, tol, DType::Double));
        let rtol = Some(op.scalar(DType::Double, 0.0));
        matrix_rank_impl(op, x, atol, rtol, hermitian)
    }

    /// linalg_cond(Tensor self, Scalar? p=None) -> Tensor
    #[target("aten::linalg_cond")]
    fn linalg_cond(op, self_: Tensor, p: Option<f64> = None) -> OpResult<Value> {
        let p = p.unwrap_or(2.0);
        if p != 2.0 && p != -2.0 {
            bail!("linalg_cond is translated for p = None, 2 and -2 only (got {p})");
        }
        let (batch, m, n) = matrix_dims(op, self_, "cond")?;
        let t = float_type(op, self_, "cond")?;
        if m.min(n) == 0 || batch.contains(&0) {
            bail!("linalg_cond of empty matrices is not translated");
        }
        let x = cast(op, self_, t);
        let s = singular_values(op, x, t, &batch, m, n);
        let k = m.min(n);
        let hi = slice_along(op, s, -1, 0, 1);
        let lo = slice_along(op, s, -1, k - 1, k);
        let r = if p == 2.0 { op.Div(hi, lo) } else { op.Div(lo, hi) };
        let ax = op.const_i64s(&[-1]);
        Ok(op.Squeeze(r, Some(ax)))
    }

    /// linalg_lu_solve(Tensor LU, Tensor pivots, Tensor B, *, bool left=True, bool adjoint=False) -> Tensor
    #[target("aten::linalg_lu_solve")]
    fn linalg_lu_solve(
        op,
        LU: Tensor,
        pivots: Tensor,
        B: Tensor,
        left: bool = true,
        adjoint: bool = false,
    ) -> OpResult<Value> {
        lu_solve_impl(op, LU, pivots, B, left, adjoint)
    }

    /// lu_solve(Tensor self, Tensor LU_data, Tensor LU_pivots) -> Tensor
    #[target("aten::lu_solve")]
    fn lu_solve(op, self_: Tensor, LU_data: Tensor, LU_pivots: Tensor) -> OpResult<Value> {
        lu_solve_impl(op, LU_data, LU_pivots, self_, true, false)
    }

    /// _linalg_eigh(Tensor A, str UPLO="L", bool compute_v=True) -> (Tensor eigenvalues, Tensor eigenvectors)
    #[target("aten::_linalg_eigh")]
    fn _linalg_eigh(
        op,
        A: Tensor,
        UPLO: &str = "L",
        compute_v: bool = true,
    ) -> OpResult<Vec<Option<Value>>> {
        let (ev, v) = eigh_impl(op, A, UPLO, compute_v)?;
        Ok(vec![Some(ev), v])
    }

    /// linalg_eigh(Tensor self, str UPLO="L") -> (Tensor eigenvalues, Tensor eigenvectors)
    #[target("aten::linalg_eigh")]
    fn linalg_eigh(op, self_: Tensor, UPLO: &str = "L") -> OpResult<Vec<Option<Value>>> {
        let (ev, v) = eigh_impl(op, self_, UPLO, true)?;
        Ok(vec![Some(ev), v])
    }

    /// linalg_eigvalsh(Tensor self, str UPLO="L") -> Tensor
    #[target("aten::linalg_eigvalsh")]
    fn linalg_eigvalsh(op, self_: Tensor, UPLO: &str = "L") -> OpResult<Value> {
        let (x, t, batch, n) = square(op, self_, "eigvalsh")?;
        Ok(symmetric_eigenvalues(op, x, t, &batch, n, !UPLO.eq_ignore_ascii_case("U")))
    }

    /// linalg_vander(Tensor x, *, SymInt? N=None) -> Tensor
    #[target("aten::linalg_vander")]
    fn linalg_vander(op, x: Tensor, N: Option<i64> = None) -> OpResult<Value> {
        let mut s = static_shape(op, x, "vander")?;
        let mut x = x;
        if s.is_empty() {
            // torch treats a 0-d tensor as one value.
            let one = op.const_i64s(&[1]);
            x = op.Reshape(x, one).out();
            s = vec![1];
        }
        let t = match op.out_dtype(0) {
            Some(t) => t,
            None => dtype_of(op, x)?,
        };
        if op.info(x).complex || t == DType::Bool {
            bail!("vander of complex or bool tensors is not supported");
        }
        let n = N.unwrap_or(s[s.len() - 1]);
        if n <= 0 {
            bail!("vander needs N > 0");
        }
        if n > 64 {
            bail!("vander is unrolled for N up to 64");
        }
        let x = cast(op, x, t);
        let ax = op.const_i64s(&[-1]);
        let x = op.Unsqueeze(x, ax);
        // torch: ones, then the running product x·x·… (cumprod).
        let one = op.scalar(t, 1.0);
        let mut cols = vec![];
        // The ones column does not inherit NaN/inf from x: built from the shape.
        let shape = op.Shape(x).out();
        let ones_clean = op.Expand(one, shape);
        cols.push(ones_clean);
        let mut acc = x;
        for i in 1..n {
            if i > 1 {
                acc = op.Mul(acc, x);
            }
            cols.push(acc);
        }
        Ok(op.Concat(&cols).axis(-1).out())
    }

    /// linalg_tensorsolve(Tensor self, Tensor other, int[]? dims=None) -> Tensor
    #[target("aten::linalg_tensorsolve")]
    fn linalg_tensorsolve(
        op,
        self_: Tensor,
        other: Tensor,
        dims: Option<Vec<i64>> = None,
    ) -> OpResult<Value> {
        let what = "tensorsolve";
        let sa = static_shape(op, self_, what)?;
        let sb = static_shape(op, other, what)?;
        let r = sa.len();
        let mut a = self_;
        let mut shape = sa.clone();
        if let Some(dims) = dims {
            // The listed dims move to the end, in order (torch's movedim).
            let dims = dims.iter().map(|&d| Ok(normalize_axis(d, r)? as usize));
            let dims: Vec<usize> = dims.collect::<OpResult<_>>()?;
            let mut perm: Vec<usize> = (0..r).filter(|i| !dims.contains(i)).collect();
            perm.extend(dims.iter().copied());
            let p: Vec<i64> = perm.iter().map(|&i| i as i64).collect();
            a = op.Transpose(a).perm(&p).out();
            shape = perm.iter().map(|&i| sa[i]).collect();
        }
        if sb.len() > shape.len() {
            bail!("{what}: other has more dims than self");
        }
        let rows: i64 = sb.iter().product();
        let out_shape: Vec<i64> = shape[sb.len()..].to_vec();
        let cols: i64 = out_shape.iter().product();
        if rows != cols {
            bail!("{what}: the problem is not square ({rows} x {cols})");
        }
        let s2 = op.const_i64s(&[rows, cols]);
        let a2 = op.Reshape(a, s2).out();
        op.info_mut(a2).shape = Some(vec![Dim::Fixed(rows), Dim::Fixed(cols)]);
        let dt = dtype_of(op, self_)?;
        op.info_mut(a2).dtype = Some(dt);
        let s1 = op.const_i64s(&[rows]);
        let b1 = op.Reshape(other, s1).out();
        op.info_mut(b1).shape = Some(vec![Dim::Fixed(rows)]);
        let db = dtype_of(op, other)?;
        op.info_mut(b1).dtype = Some(db);
        let (x, _, _) = linalg_solve_impl(op, a2, b1, true, what)?;
        let so = op.const_i64s(&out_shape);
        Ok(op.Reshape(x, so).out())
    }

    /// linalg_matrix_norm.str_ord(Tensor self, str ord="fro", int[] dim=[-2, -1], bool keepdim=False, *,
    ///     ScalarType? dtype=None) -> Tensor
    #[target("aten::linalg_matrix_norm.str_ord")]
    fn linalg_matrix_norm_str_ord(
        op,
        self_: Tensor,
        ord: &str = "fro",
        dim: Vec<i64> = vec![-2, -1],
        keepdim: bool = false,
        dtype: Option<ScalarType> = None,
    ) -> OpResult<Value> {
        let _ = dtype;
        let kind = match ord {
            "fro" => NormKind::Fro,
            "nuc" => NormKind::Nuc,
            other => bail!("matrix_norm: unknown ord {other:?}"),
        };
        matrix_norm_impl(op, self_, kind, &dim, keepdim)
    }

    /// linalg_matrix_norm(Tensor self, Scalar ord, int[] dim=[-2, -1], bool keepdim=False, *,
    ///     ScalarType? dtype=None) -> Tensor
    #[target("aten::linalg_matrix_norm")]
    fn linalg_matrix_norm(
        op,
        self_: Tensor,
        ord: f64,
        dim: Vec<i64> = vec![-2, -1],
        keepdim: bool = false,
        dtype: Option<ScalarType> = None,
    ) -> OpResult<Value> {
        let _ = dtype;
        let kind = if ord == 2.0 {
            NormKind::Spectral(true)
        } else if ord == -2.0 {
            NormKind::Spectral(false)
        } else if ord.abs() == 1.0 {
            NormKind::Col(ord > 0.0)
        } else if ord.is_infinite() {
            NormKind::Row(ord > 0.0)
        } else {
            bail!("matrix_norm: ord {ord} is not a matrix norm");
        };
        matrix_norm_impl(op, self_, kind, &dim, keepdim)
    }

    /// linalg_qr(Tensor A, str mode="reduced") -> (Tensor Q, Tensor R)
    #[target("aten::linalg_qr")]
    fn linalg_qr(op, A: Tensor, mode: &str = "reduced") -> OpResult<Vec<Option<Value>>> {
        let (batch, m, n) = matrix_dims(op, A, "qr")?;
        let t = float_type(op, A, "qr")?;
        let k = m.min(n);
        let (q, r) = if batch.contains(&0) || k == 0 {
            let z = op.scalar(DType::Double, 0.0);
            let eye = const_mat(op, DType::Double, m, m, |i, j| (i == j) as i64 as f64);
            (expand_to(op, eye, &batched(&batch, &[m, m])), expand_to(op, z, &batched(&batch, &[m, n])))
        } else {
            householder_qr(op, A, &batch, m, n)
        };
        let (q, r) = match mode {
            "reduced" => (Some(slice_along(op, q, -1, 0, k)), slice_along(op, r, -2, 0, k)),
            "complete" => (Some(q), r),
            "r" => (None, slice_along(op, r, -2, 0, k)),
            other => bail!("linalg_qr: unknown mode {other:?}"),
        };
        let q = match q {
            Some(q) => cast(op, q, t),
            None => op.constant_tensor(constant_data(t, vec![0], &[])?),
        };
        let r = cast(op, r, t);
        Ok(vec![Some(q), Some(r)])
    }

    /// linalg_matrix_sqrth(Tensor self) -> Tensor
    #[target("aten::linalg_matrix_sqrth")]
    fn linalg_matrix_sqrth(op, self_: Tensor) -> OpResult<Value> {
        // V·diag(√λ)·Vᵀ from the eigendecomposition of the lower triangle (unique, whatever the
        // eigenvectors' signs); negative eigenvalues give NaN as torch's sqrt does.
        let (batch, m, n) = matrix_dims(op, self_, "matrix_sqrth")?;
        if m != n {
            bail!("matrix_sqrth needs square matrices");
        }
        let t = float_type(op, self_, "matrix_sqrth")?;
        if n == 0 || batch.contains(&0) {
            return Ok(op.Identity(self_));
        }
        let (ev, v) = symmetric_jacobi(op, self_, &batch, n, true, true);
        let v = v.expect("eigenvectors requested");
        let r = op.Sqrt(ev);
        let ax = op.const_i64s(&[-2]);
        let r = op.Unsqueeze(r, ax);
        let vr = op.Mul(v, r);
        let vt = transpose_last_two(op, v, batch.len() + 2);
        let x = op.MatMul(vr, vt);
        Ok(cast(op, x, t))
    }

    /// linalg_matrix_exp(Tensor self) -> Tensor
    #[target("aten::linalg_matrix_exp", "aten::matrix_exp")]
    fn linalg_matrix_exp(op, self_: Tensor) -> OpResult<Value> {
        // Scaling and squaring in double: A/2^s with s = max(0, ⌈log2(2‖A‖₁)⌉) so the scaled
        // norm is at most 1/2, a degree-18 Taylor polynomial (remainder below 1e-22), then s
        // squarings chosen per matrix at run time (enough for every finite input of its type).
        let (batch, m, n) = matrix_dims(op, self_, "matrix_exp")?;
        if m != n {
            bail!("matrix_exp needs square matrices");
        }
        let t = float_type(op, self_, "matrix_exp")?;
        if n == 0 || batch.contains(&0) {
            return Ok(op.Identity(self_));
        }
        if t == DType::Float {
            return Ok(matrix_exp_t18(op, self_, &batch, n));
        }
        let max_squarings = match t {
            DType::Double => 1100,
            _ => 140,
        };
        let d = DType::Double;
        let a = cast(op, self_, d);
        let abs = op.Abs(a);
        let ax = op.const_i64s(&[-2]);
        let colsum = op.ReduceSum(abs, Some(ax)).keepdims(1).out();
        let ax = op.const_i64s(&[-1]);
        let norm = op.ReduceMax(colsum, Some(ax)).keepdims(1).out();
        let two = op.scalar(d, 2.0);
        let zero = op.scalar(d, 0.0);
        let n2 = op.Mul(norm, two);
        let l = op.Log(n2);
        let ln2 = op.scalar(d, std::f64::consts::LN_2);
        let l = op.Div(l, ln2);
        let l = op.Ceil(l);
        let s = op.Max(&[l, zero]);
        let neg = op.Neg(s);
        let scale = op.Pow(two, neg);
        let x = op.Mul(a, scale);
        let eye = const_mat(op, d, n, n, |i, j| (i == j) as i64 as f64);
        // Horner: I + X(I + X/2(I + X/3(…))).
        let mut e = eye;
        for k in (1..=18).rev() {
            let c = op.scalar(d, 1.0 / k as f64);
            let xe = op.MatMul(x, e);
            let xe = op.Mul(xe, c);
            e = op.Add(eye, xe);
        }
        for i in 0..max_squarings {
            let sq = op.MatMul(e, e);
            let ii = op.scalar(d, i as f64);
            let more = op.Less(ii, s);
            e = op.Where(more, sq, e);
        }
        Ok(cast(op, e, t))
    }

    /// linalg_lu_factor(Tensor A, *, bool pivot=True) -> (Tensor LU, Tensor pivots)
    #[target("aten::linalg_lu_factor")]
    fn linalg_lu_factor(op, A: Tensor, pivot: bool = true) -> OpResult<Vec<Option<Value>>> {
        if !pivot {
            bail!("LU without pivoting is not translated");
        }
        let (batch, m, n) = matrix_dims(op, A, "lu_factor")?;
        let t = float_type(op, A, "lu_factor")?;
        let x = cast(op, A, t);
        let lu = lu_eliminate(op, x, t, &batch, m, n, m.min(n));
        let piv = pivots_out(op, &lu.pivots, &batch);
        Ok(vec![Some(lu.w), Some(piv)])
    }

    /// lu_unpack(Tensor LU_data, Tensor LU_pivots, bool unpack_data=True, bool unpack_pivots=True) -> (Tensor P,
    ///     Tensor L, Tensor U)
    #[target("aten::lu_unpack")]
    fn lu_unpack(
        op,
        LU_data: Tensor,
        LU_pivots: Tensor,
        unpack_data: bool = true,
        unpack_pivots: bool = true,
    ) -> OpResult<Vec<Option<Value>>> {
        let what = "lu_unpack";
        let (batch, m, n) = matrix_dims(op, LU_data, what)?;
        let t = float_type(op, LU_data, what)?;
        let k = m.min(n);
        let w = cast(op, LU_data, t);
        let (l, u) = if unpack_data {
            let (l, u) = lu_factors(op, w, t, m, n);
            (Some(l), Some(u))
        } else {
            (None, None)
        };
        let p = if unpack_pivots {
            // The row order after swapping rows j and pivots[j] - 1, in turn (LAPACK's laswp).
            let ord_data = TensorData::from_i64s(vec![m, 1], &(0..m).collect::<Vec<_>>());
            let ord0 = op.constant_tensor(ord_data);
            let mut order = expand_to(op, ord0, &batched(&batch, &[m, 1]));
            if k > 0 && !batch.contains(&0) {
                let piv = cast(op, LU_pivots, DType::Int64);
                let one = op.scalar_i64(1);
                let piv = op.Sub(piv, one);
                let ax = op.const_i64s(&[-1]);
                let piv = op.Unsqueeze(piv, ax);
                let piv = expand_to(op, piv, &batched(&batch, &[k, 1]));
                for j in 0..k {
                    let pj = slice_along(op, piv, -2, j, j + 1);
                    order = swap_rows(op, order, j, pj, &batch, m, 1);
                }
            }
            Some(perm_matrix(op, order, t, &batch, m))
        } else {
            None
        };
        Ok(vec![p, l, u])
    }

    /// cholesky_solve(Tensor self, Tensor input2, bool upper=False) -> Tensor
    #[target("aten::cholesky_solve")]
    fn cholesky_solve(op, self_: Tensor, input2: Tensor, upper: bool = false) -> OpResult<Value> {
        let what = "cholesky_solve";
        let t = float_type(op, self_, what)?;
        let b = cast(op, self_, t);
        let f = cast(op, input2, t);
        let (f, b, batch, n, k) = broadcast_pair(op, f, b, what)?;
        if n == 0 || k == 0 || batch.contains(&0) {
            return Ok(b);
        }
        // A = L Lᵀ (or Uᵀ U): a lower then an upper triangular solve.
        let ft = transpose_last_two(op, f, batch.len() + 2);
        let (lower, upper_factor) = if upper { (ft, f) } else { (f, ft) };
        let y = tri_solve(op, lower, b, false, false, n);
        Ok(tri_solve(op, upper_factor, y, true, false, n))
    }

    /// pinverse(Tensor self, float rcond=1.0000000000000001e-15) -> Tensor
    #[target("aten::pinverse")]
    fn pinverse(op, self_: Tensor, rcond: f64 = 1e-15) -> OpResult<Value> {
        let atol = Some(op.scalar(DType::Double, 0.0));
        let rtol = Some(op.scalar(DType::Double, rcond));
        pinv_impl(op, self_, atol, rtol, false, "pinv")
    }

    /// linalg_tensorinv(Tensor self, int ind=2) -> Tensor
    #[target("aten::linalg_tensorinv")]
    fn linalg_tensorinv(op, self_: Tensor, ind: i64 = 2) -> OpResult<Value> {
        // The inverse of self as a matrix (the first `ind` dims by the rest), of shape
        // self.shape[ind:] + self.shape[:ind].
        let what = "tensorinv";
        let s = static_shape(op, self_, what)?;
        if ind <= 0 || ind as usize > s.len() {
            bail!("{what}: ind must be in 1..={}, got {ind}", s.len());
        }
        let (head, tail) = s.split_at(ind as usize);
        let (rows, cols): (i64, i64) = (head.iter().product(), tail.iter().product());
        if rows != cols {
            bail!("{what}: the tensor is not square as a matrix ({rows} x {cols})");
        }
        let t = float_type(op, self_, what)?;
        let x = cast(op, self_, t);
        let s2 = op.const_i64s(&[rows, cols]);
        let a = op.Reshape(x, s2).out();
        op.info_mut(a).shape = Some(vec![Dim::Fixed(rows), Dim::Fixed(cols)]);
        op.info_mut(a).dtype = Some(t);
        let (a, t, batch, n) = square(op, a, what)?;
        let eye = const_mat(op, t, n, n, |i, j| (i == j) as i64 as f64);
        let inv = solve_square(op, a, eye, t, &batch, n, n).0;
        let out: Vec<i64> = tail.iter().chain(head).copied().collect();
        let out = op.const_i64s(&out);
        Ok(op.Reshape(inv, out).out())
    }

    /// linalg_norm(Tensor self, Scalar? ord=None, int[1]? dim=None, bool keepdim=False, *,
    ///     ScalarType? dtype=None) -> Tensor
    #[target("aten::linalg_norm")]
    fn linalg_norm(
        op,
        self_: Tensor,
        ord: Option<f64> = None,
        dim: Option<Vec<i64>> = None,
        keepdim: bool = false,
        // The result's type, read from the archive.
        _dtype: Ignored,
    ) -> OpResult<Value> {
        linalg_norm_impl(op, self_, ord, None, dim, keepdim)
    }

    /// linalg_norm.ord_str(Tensor self, str ord, int[1]? dim=None, bool keepdim=False, *,
    ///     ScalarType? dtype=None) -> Tensor
    #[target("aten::linalg_norm.ord_str")]
    fn linalg_norm_ord_str(
        op,
        self_: Tensor,
        ord: &str,
        dim: Option<Vec<i64>> = None,
        keepdim: bool = false,
        // The result's type, read from the archive.
        _dtype: Ignored,
    ) -> OpResult<Value> {
        let kind = match ord {
            "fro" => NormKind::Fro,
            "nuc" => NormKind::Nuc,
            other => bail!("linalg_norm: unknown ord {other:?}"),
        };
        linalg_norm_impl(op, self_, None, Some(kind), dim, keepdim)
    }

    /// geqrf(Tensor self) -> (Tensor a, Tensor tau)
    #[target("aten::geqrf")]
    fn geqrf(op, self_: Tensor) -> OpResult<Vec<Option<Value>>> {
        // LAPACK's layout: R on and above the diagonal, each reflector's tail below it.
        let what = "geqrf";
        let (batch, m, n) = matrix_dims(op, self_, what)?;
        let t = float_type(op, self_, what)?;
        let k = m.min(n);
        if k == 0 || batch.contains(&0) {
            let a = cast(op, self_, t);
            let z = op.scalar(t, 0.0);
            let tau = expand_to(op, z, &batched(&batch, &[k]));
            return Ok(vec![Some(op.Identity(a)), Some(tau)]);
        }
        let h = householder_steps(op, self_, &batch, m, n, false);
        let mut a = h.r;
        for (i, &v) in h.vs.iter().enumerate() {
            let below = mask(op, m, n, |r, c| r > i as i64 && c == i as i64);
            a = op.Where(below, v, a);
        }
        // The last row's reflector (when m <= n) is the identity: τ = 0.
        let zero = op.scalar(DType::Double, 0.0);
        let mut taus: Vec<Value> = h
            .taus
            .iter()
            .map(|&tau| {
                let ax = op.const_i64s(&[-1]);
                op.Squeeze(tau, Some(ax))
            })
            .collect();
        while (taus.len() as i64) < k {
            taus.push(expand_to(op, zero, &batched(&batch, &[1])));
        }
        let tau = op.Concat(&taus).axis(-1).out();
        Ok(vec![Some(cast(op, a, t)), Some(cast(op, tau, t))])
    }

    /// linalg_householder_product(Tensor input, Tensor tau) -> Tensor
    #[target("aten::linalg_householder_product")]
    fn linalg_householder_product(op, input: Tensor, tau: Tensor) -> OpResult<Value> {
        // The first n columns of H_1 ⋯ H_k (LAPACK's orgqr).
        let what = "householder_product";
        let (batch, m, n) = matrix_dims(op, input, what)?;
        let t = float_type(op, input, what)?;
        let ts = static_shape(op, tau, what)?;
        let Some(&k) = ts.last() else { bail!("{what}: tau must have at least one dimension") };
        if m < n || n < k {
            bail!("{what} needs input.shape[-2] >= input.shape[-1] >= tau.shape[-1], got {m}x{n} and {k}");
        }
        if m * n == 0 || batch.contains(&0) {
            let z = op.scalar(t, 0.0);
            return Ok(expand_to(op, z, &batched(&batch, &[m, n])));
        }
        let q = householder_q(op, input, tau, &batch, m, k);
        let q = slice_along(op, q, -1, 0, n);
        Ok(cast(op, q, t))
    }

    /// ormqr(Tensor self, Tensor input2, Tensor input3, bool left=True, bool transpose=False) -> Tensor
    #[target("aten::ormqr")]
    fn ormqr(
        op,
        self_: Tensor,
        input2: Tensor,
        input3: Tensor,
        left: bool = true,
        transpose: bool = false,
    ) -> OpResult<Value> {
        // Q = H_1 ⋯ H_k from a geqrf result, applied to C: op(Q)·C when left, else C·op(Q).
        let what = "ormqr";
        let (batch, mq, _) = matrix_dims(op, self_, what)?;
        let cs = static_shape(op, input3, what)?;
        if cs.len() < 2 {
            bail!("{what}: C must be a matrix batch");
        }
        let t = float_type(op, input3, what)?;
        let ts = static_shape(op, input2, what)?;
        let Some(&k) = ts.last() else { bail!("{what}: tau must have at least one dimension") };
        let side = if left { cs[cs.len() - 2] } else { cs[cs.len() - 1] };
        if side != mq {
            bail!("{what}: C's side ({side}) must match the reflectors' length ({mq})");
        }
        if cs.contains(&0) || batch.contains(&0) {
            return Ok(op.Identity(input3));
        }
        let q = householder_q(op, self_, input2, &batch, mq, k);
        let q = if transpose { transpose_last_two(op, q, batch.len() + 2) } else { q };
        let c = cast(op, input3, DType::Double);
        let r = if left { op.MatMul(q, c) } else { op.MatMul(c, q) };
        Ok(cast(op, r, t))
    }

    /// linalg_polar(Tensor A) -> (Tensor U, Tensor H)
    #[target("aten::linalg_polar")]
    fn linalg_polar(op, A: Tensor) -> OpResult<Vec<Option<Value>>> {
        // From the SVD A = W S Vh: U = W Vh and H = Vhᵀ S Vh, products in which the singular
        // vectors' signs cancel (unique for A of full rank). The one-sided Jacobi SVD runs on the
        // taller of A and Aᵀ.
        let what = "polar";
        let (batch, m, n) = matrix_dims(op, A, what)?;
        let t = float_type(op, A, what)?;
        let rank = batch.len() + 2;
        if m.min(n) == 0 || batch.contains(&0) {
            let z = op.scalar(t, 0.0);
            let u = expand_to(op, z, &batched(&batch, &[m, n]));
            let h = expand_to(op, z, &batched(&batch, &[n, n]));
            return Ok(vec![Some(u), Some(h)]);
        }
        let a = cast(op, A, t);
        let flip = m < n;
        let (x, mm, nn) = if flip { (transpose_last_two(op, a, rank), n, m) } else { (a, m, n) };
        let (cols, vs) = jacobi_columns(op, x, &batch, mm, nn, true);
        let d = DType::Double;
        // x = W S Vᵀ with W's columns c_i / σ_i.
        let c = op.Concat(&cols).axis(-1).out();
        let v = op.Concat(&vs).axis(-1).out();
        let ax = op.const_i64s(&[-2]);
        let sig = op.ReduceL2(c, Some(ax)).keepdims(1).out();
        let (zero, one) = (op.scalar(d, 0.0), op.scalar(d, 1.0));
        let pos = op.Greater(sig, zero);
        let safe = op.Where(pos, sig, one);
        let w = op.Div(c, safe);
        let w = op.Where(pos, w, zero);
        let (wt, vt) = (transpose_last_two(op, w, rank), transpose_last_two(op, v, rank));
        let (u, h) = if flip {
            // A = xᵀ = V S Wᵀ: U = V Wᵀ, H = W S Wᵀ.
            let ws = op.Mul(w, sig);
            (op.MatMul(v, wt), op.MatMul(ws, wt))
        } else {
            let vsig = op.Mul(v, sig);
            (op.MatMul(w, vt), op.MatMul(vsig, vt))
        };
        Ok(vec![Some(cast(op, u, t)), Some(cast(op, h, t))])
    }

    /// linalg_ldl_factor_ex(Tensor self, *, bool hermitian=False, bool check_errors=False) -> (Tensor LD,
    ///     Tensor pivots, Tensor info)
    #[target("aten::linalg_ldl_factor_ex")]
    fn linalg_ldl_factor_ex(
        op,
        self_: Tensor,
        // Real matrices: the symmetric and the Hermitian factorisations are the same.
        _hermitian: Ignored,
        // A run-time check torch may raise; the outputs are the same.
        _check_errors: Ignored,
    ) -> OpResult<Vec<Option<Value>>> {
        let (ld, piv, info) = ldl_factor_outputs(op, self_)?;
        Ok(vec![Some(ld), Some(piv), Some(info)])
    }

    /// linalg_ldl_factor(Tensor self, *, bool hermitian=False) -> (Tensor LD, Tensor pivots)
    #[target("aten::linalg_ldl_factor")]
    fn linalg_ldl_factor(
        op,
        self_: Tensor,
        // Real matrices: the symmetric and the Hermitian factorisations are the same.
        _hermitian: Ignored,
    ) -> OpResult<Vec<Option<Value>>> {
        let (ld, piv, _) = ldl_factor_outputs(op, self_)?;
        Ok(vec![Some(ld), Some(piv)])
    }

    /// linalg_ldl_solve(Tensor LD, Tensor pivots, Tensor B, *, bool hermitian=False) -> Tensor
    #[target("aten::linalg_ldl_solve")]
    fn linalg_ldl_solve(
        op,
        LD: Tensor,
        pivots: Tensor,
        B: Tensor,
        // Real matrices: the symmetric and the Hermitian solves are the same.
        _hermitian: Ignored,
    ) -> OpResult<Value> {
        ldl_solve_impl(op, LD, pivots, B)
    }
}
