//! Vector norms and distances, shared by the distance ops (linalg) and the losses built on them.

use crate::translate::prelude::*;

/// The vector p-norm of `x` over `axes` (torch's `linalg_vector_norm`).
pub fn pnorm(op: &mut Builder, x: Value, p: f64, axes: &[i64], keepdim: bool) -> OpResult<Value> {
    let t = dtype_of(op, x)?;
    let a = op.const_i64s(axes);
    let k = keepdim as i64;
    let ax = op.Abs(x);
    Ok(if p == 2.0 {
        op.ReduceL2(x, Some(a)).keepdims(k).out()
    } else if p == 1.0 {
        op.ReduceL1(x, Some(a)).keepdims(k).out()
    } else if p == f64::INFINITY {
        op.ReduceMax(ax, Some(a)).keepdims(k).out()
    } else if p == f64::NEG_INFINITY {
        op.ReduceMin(ax, Some(a)).keepdims(k).out()
    } else if p == 0.0 {
        let z = op.scalar(t, 0.0);
        let nz = op.Equal(x, z);
        let nz = op.Not(nz);
        let nz = cast(op, nz, t);
        op.ReduceSum(nz, Some(a)).keepdims(k).out()
    } else {
        let pv = op.scalar(t, p);
        let pw = op.Pow(ax, pv);
        let s = op.ReduceSum(pw, Some(a)).keepdims(k).out();
        let inv = op.scalar(t, 1.0 / p);
        op.Pow(s, inv)
    })
}

/// `pairwise_distance`: the p-norm of `x1 - x2 + eps` over the last dim.
pub fn pairwise(op: &mut Builder, x1: Value, x2: Value, p: f64, eps: f64, keepdim: bool, t: DType) -> OpResult<Value> {
    let r = rank_of(op, x1)?.max(rank_of(op, x2)?);
    let (a, b) = (cast(op, x1, t), cast(op, x2, t));
    let d = op.Sub(a, b);
    let e = op.scalar(t, eps);
    let d = op.Add(d, e);
    if r == 0 {
        // A 0-d difference: the norm of one element.
        let d1 = as_1d(op, d);
        let n = pnorm(op, d1, p, &[0], false)?;
        return Ok(n);
    }
    pnorm(op, d, p, &[r as i64 - 1], keepdim)
}
