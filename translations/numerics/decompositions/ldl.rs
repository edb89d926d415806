//! Bunch-Kaufman LDLᵀ as LAPACK's sytf2 / sytrs (lower).

use super::jacobi::symmetrize_lower;
use super::lu::{swap_rows, zero_info};
use super::{batched, broadcast_pair, entry, expand_to, float_type, mask, square, transpose_last_two};
use crate::translate::prelude::*;
use crate::translations;

/// Bunch and Kaufman's pivot threshold, (1 + √17) / 8.
const BK_ALPHA: f64 = 0.6403882032022076;

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

translations! {
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
