//! Pointwise building blocks: the node's floating type, torch's formulas for log1p / expm1,
//! NaN-propagating minimum / maximum, clamp, floor division and the sign bit, as ONNX nodes.

use crate::translate::prelude::*;

/// torch's result type for the node (output 0), else `x`'s type.
pub fn out_t(op: &Builder, x: Value) -> DType {
    op.out_dtype(0).or(op.dtype(x)).unwrap_or(DType::Float)
}

/// The floating type a float-valued op computes in (integers and bools promote to float32).
pub fn float_t(op: &Builder, x: Value) -> DType {
    let t = out_t(op, x);
    if t.is_float() {
        t
    } else {
        DType::Float
    }
}

/// `x` as the node's floating result type, and that type.
pub fn float_input(op: &mut Builder, x: Value) -> (Value, DType) {
    let t = float_t(op, x);
    (cast(op, x, t), t)
}

/// `Where` for any element type (ORT has no bool kernel: bools go through uint8).
pub fn where_t(op: &mut Builder, c: Value, a: Value, b: Value, t: DType) -> Value {
    if t != DType::Bool {
        return op.Where(c, a, b);
    }
    let (a, b) = (cast(op, a, DType::Uint8), cast(op, b, DType::Uint8));
    let r = op.Where(c, a, b);
    cast(op, r, DType::Bool)
}

/// The sign bit of a float (true for negative numbers and -0.0; NaN counts as positive).
pub fn signbit_f(op: &mut Builder, x: Value, t: DType) -> Value {
    let zero = op.scalar(t, 0.0);
    let one = op.scalar(t, 1.0);
    let neg = op.Less(x, zero);
    let is_zero = op.Equal(x, zero);
    let inv = op.Div(one, x);
    let neg_zero = op.Less(inv, zero);
    let nz = op.And(is_zero, neg_zero);
    op.Or(neg, nz)
}

/// `log(1 + x)` accurate for small `x`: `log(u) · x / (u - 1)` with `u = 1 + x` (Goldberg).
pub fn log1p_f(op: &mut Builder, x: Value, t: DType) -> Value {
    let one = op.scalar(t, 1.0);
    let u = op.Add(x, one);
    let lu = op.Log(u);
    let um1 = op.Sub(u, one);
    let ratio = op.Div(x, um1);
    let prod = op.Mul(lu, ratio);
    let u_is_one = op.Equal(u, one);
    let r = op.Where(u_is_one, x, prod);
    // u = +inf: log(u) = inf and x / (u - 1) = inf / inf.
    let inf = op.IsInf(u).detect_negative(0).out();
    op.Where(inf, u, r)
}

/// `exp(x) - 1` accurate for small `x`: `(u - 1) · x / log(u)` with `u = exp(x)` (Kahan).
pub fn expm1_f(op: &mut Builder, x: Value, t: DType) -> Value {
    let one = op.scalar(t, 1.0);
    let minus_one = op.scalar(t, -1.0);
    let u = op.Exp(x);
    let um1 = op.Sub(u, one);
    let lu = op.Log(u);
    let ratio = op.Div(x, lu);
    let prod = op.Mul(um1, ratio);
    let u_is_one = op.Equal(u, one);
    let r = op.Where(u_is_one, x, prod);
    let is_m1 = op.Equal(um1, minus_one);
    let r = op.Where(is_m1, minus_one, r);
    let inf = op.IsInf(u).detect_negative(0).out();
    op.Where(inf, u, r)
}

/// Elementwise maximum (NaN-propagating, like torch.maximum; bools: or).
pub fn maximum_v(op: &mut Builder, a: Value, b: Value, t: DType) -> Value {
    if t == DType::Bool {
        op.Or(a, b)
    } else {
        op.Max(&[a, b])
    }
}

/// Elementwise minimum (NaN-propagating, like torch.minimum; bools: and).
pub fn minimum_v(op: &mut Builder, a: Value, b: Value, t: DType) -> Value {
    if t == DType::Bool {
        op.And(a, b)
    } else {
        op.Min(&[a, b])
    }
}

/// clamp with optional bounds: `min(max(x, lo), hi)` (so `hi` wins when `lo > hi`, like torch).
pub fn clamp_v(op: &mut Builder, x: Value, lo: Option<Operand>, hi: Option<Operand>, t: DType) -> Value {
    let x = cast(op, x, t);
    let is_0d = |op: &Builder, b: &Option<Operand>| match b.and_then(Operand::value) {
        None => true,
        Some(v) => op.rank(v) == Some(0),
    };
    let lo_v = lo.map(|b| operand_value(op, b, t));
    let hi_v = hi.map(|b| operand_value(op, b, t));
    // Clip takes 0-d bounds; its kernel exists for floats and the common integer types.
    let clip_ok = matches!(
        t,
        DType::Float | DType::Double | DType::Float16 | DType::Int32 | DType::Int64 | DType::Int8 | DType::Uint8
    );
    if clip_ok && is_0d(op, &lo) && is_0d(op, &hi) {
        return op.Clip(x, lo_v, hi_v);
    }
    let mut y = x;
    if let Some(l) = lo_v {
        y = maximum_v(op, y, l, t);
    }
    if let Some(h) = hi_v {
        y = minimum_v(op, y, h, t);
    }
    // A bound alone does not broadcast the result; the driver gives the output its shape.
    y
}

/// torch's floor division of floats (`div_floor_floating`).
pub fn floor_div_float(op: &mut Builder, a: Value, b: Value, t: DType) -> Value {
    let zero = op.scalar(t, 0.0);
    let one = op.scalar(t, 1.0);
    let half = op.scalar(t, 0.5);
    let md = op.Mod(a, b).fmod(1).out();
    let am = op.Sub(a, md);
    let div = op.Div(am, b);
    let md_nz = op.Equal(md, zero);
    let md_nz = op.Not(md_nz);
    let b_neg = op.Less(b, zero);
    let m_neg = op.Less(md, zero);
    let differ = op.Xor(b_neg, m_neg);
    let adjust = op.And(md_nz, differ);
    let div_m1 = op.Sub(div, one);
    let div = op.Where(adjust, div_m1, div);
    let fl = op.Floor(div);
    let frac = op.Sub(div, fl);
    let up = op.Greater(frac, half);
    let fl_p1 = op.Add(fl, one);
    let fl = op.Where(up, fl_p1, fl);
    // div == 0: a zero with the sign of a / b.
    let q = op.Div(a, b);
    let q_neg = signbit_f(op, q, t);
    let neg_zero = op.scalar(t, -0.0);
    let signed_zero = op.Where(q_neg, neg_zero, zero);
    let div_zero = op.Equal(div, zero);
    let r = op.Where(div_zero, signed_zero, fl);
    // b == 0: a / b (inf or nan).
    let b_zero = op.Equal(b, zero);
    op.Where(b_zero, q, r)
}

/// Integer floor division, exact: truncating quotient, minus one when the signs differ and the
/// division is inexact.
pub fn floor_div_int(op: &mut Builder, a: Value, b: Value, t: DType) -> Value {
    let zero = op.scalar(t, 0.0);
    let one = op.scalar(t, 1.0);
    let q = op.Div(a, b);
    let r = op.Mod(a, b).fmod(1).out();
    let r_nz = op.Equal(r, zero);
    let r_nz = op.Not(r_nz);
    let a_neg = op.Less(r, zero);
    let b_neg = op.Less(b, zero);
    let differ = op.Xor(a_neg, b_neg);
    let adjust = op.And(r_nz, differ);
    let qm1 = op.Sub(q, one);
    op.Where(adjust, qm1, q)
}
