//! LU factorisation with partial pivoting (LAPACK's getrf pivot choice: the first row of largest
//! magnitude) and what is read from it: determinants, solves, inverses, LAPACK's getrs, `lu_unpack`,
//! tensor solves and inverses.

use super::triangular::tri_solve;
use super::{
    batched, broadcast_pair, const_mat, expand_to, float_type, mask, matrix_dims, square, transpose_last_two, MAX_SIDE,
};
use crate::translate::prelude::*;
use crate::translations;

/// A row permutation applied to `w` (`[..., m, c]`): row `k` and row `p` (`[..., 1, 1]` int64)
/// swapped.
pub(super) fn swap_rows(op: &mut Builder, w: Value, k: i64, p: Value, batch: &[i64], m: i64, c: i64) -> Value {
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
pub(super) struct Lu {
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
pub(super) fn zero_info(op: &mut Builder, batch: &[i64]) -> Value {
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
pub(super) fn solve_square(
    op: &mut Builder,
    a: Value,
    b: Value,
    t: DType,
    batch: &[i64],
    n: i64,
    k: i64,
) -> (Value, Lu) {
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

/// The permutation matrix P (`[..., m, m]`, type t) with `A = P L U` from the row order.
fn perm_matrix(op: &mut Builder, order: Value, t: DType, batch: &[i64], m: i64) -> Value {
    let ot = transpose_last_two(op, order, batch.len() + 2);
    let ar_data = TensorData::from_i64s(vec![m, 1], &(0..m).collect::<Vec<_>>());
    let ar = op.constant_tensor(ar_data);
    let eq = op.Equal(ar, ot);
    cast(op, eq, t)
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
}
