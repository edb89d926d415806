//! Axis helpers of the view, join and reorder families.

use crate::translate::prelude::*;

/// `x` with axes `a` and `b` swapped (rank `r`).
pub(crate) fn swap_axes(op: &mut Builder, x: Value, r: usize, a: i64, b: i64) -> Value {
    if a == b {
        return x;
    }
    let mut perm: Vec<i64> = (0..r as i64).collect();
    perm.swap(a as usize, b as usize);
    op.Transpose(x).perm(&perm).out()
}

/// Makes `x` at least `n`-dimensional the way atleast_{1,2,3}d do.
pub(crate) fn at_least(op: &mut Builder, x: Value, n: usize) -> OpResult<Value> {
    let r = rank_of(op, x)?;
    if r >= n {
        return Ok(x);
    }
    let axes: Vec<i64> = match (n, r) {
        (_, 0) => (0..n as i64).collect(),
        (2, 1) => vec![0],
        (3, 1) => vec![0, 2],
        (3, 2) => vec![2],
        _ => bail!("atleast_{n}d: no rule for an input of rank {r}"),
    };
    let axes = op.const_i64s(&axes);
    Ok(op.Unsqueeze(x, axes))
}
