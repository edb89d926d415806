//! Cholesky factorisation (LAPACK's potrf `info`) and triangular solves, with the Cholesky solve and
//! inverse.

use super::lu::zero_info;
use super::{batched, broadcast_pair, const_mat, expand_to, float_type, mask, square, transpose_last_two};
use crate::translate::prelude::*;
use crate::translations;

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
pub(super) fn tri_solve(op: &mut Builder, a: Value, b: Value, upper: bool, unit: bool, n: i64) -> Value {
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

translations! {
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
}
