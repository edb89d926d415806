//! Evaluation in float64, shared by the special and Bessel functions: Horner's scheme for Cephes'
//! polynomial tables, and the cast in and out around a float64 evaluation.

use crate::translate::prelude::*;
use crate::translations::shared::pointwise::float_t;

/// float64: every special function is evaluated in it.
pub(super) const D: DType = DType::Double;

/// `c[0]·x^n + ... + c[n]` (Horner).
pub(super) fn polevl(op: &mut Builder, x: Value, c: &[f64]) -> Value {
    let mut acc = op.scalar(D, c[0]);
    for &ci in &c[1..] {
        let m = op.Mul(acc, x);
        let kc = op.scalar(D, ci);
        acc = op.Add(m, kc);
    }
    acc
}

/// `f` evaluated in float64, rounded once to the node's floating result type.
pub(super) fn in_float64(op: &mut Builder, x: Value, f: impl FnOnce(&mut Builder, Value) -> Value) -> Value {
    let t = float_t(op, x);
    let xd = cast(op, x, D);
    let r = f(op, xd);
    cast(op, r, t)
}
