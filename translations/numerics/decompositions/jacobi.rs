//! Jacobi rotations: singular values by the one-sided (Hestenes) SVD and what does not depend on the
//! singular vectors' signs (pseudo-inverse, rank, polar decomposition), symmetric eigenvalues by
//! cyclic two-sided rotations.

use super::{
    batched, computes_in, const_mat, expand_to, float_type, mask, matrix_dims, square, transpose_last_two, MAX_SIDE,
};
use crate::translate::prelude::*;
use crate::translations;

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
pub(super) fn singular_values(op: &mut Builder, a: Value, t: DType, batch: &[i64], m: i64, n: i64) -> Value {
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
pub(super) fn symmetrize_lower(op: &mut Builder, a: Value, rank: usize) -> Value {
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
pub(super) fn symmetric_jacobi(
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

translations! {
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

    /// pinverse(Tensor self, float rcond=1.0000000000000001e-15) -> Tensor
    #[target("aten::pinverse")]
    fn pinverse(op, self_: Tensor, rcond: f64 = 1e-15) -> OpResult<Value> {
        let atol = Some(op.scalar(DType::Double, 0.0));
        let rtol = Some(op.scalar(DType::Double, rcond));
        pinv_impl(op, self_, atol, rtol, false, "pinv")
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
}
