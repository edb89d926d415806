//! Pointwise math: clamps, logarithms and exponentials, rounding, remainders, minimum / maximum,
//! bitwise and logical ops, trigonometry, and the small composites built from them.
//!
//! Where ONNX has no operator, the translation composes the same formula torch's CPU kernel
//! evaluates (including its special cases for zeros, infinities and NaN).

use crate::translate::prelude::*;
use crate::translations;

/// torch's result type for the node (output 0), else `x`'s type.
pub(crate) fn out_t(op: &Builder, x: Value) -> DType {
    op.out_dtype(0).or(op.dtype(x)).unwrap_or(DType::Float)
}

/// The floating type a float-valued op computes in (integers and bools promote to float32).
pub(crate) fn float_t(op: &Builder, x: Value) -> DType {
    let t = out_t(op, x);
    if t.is_float() {
        t
    } else {
        DType::Float
    }
}

/// `x` as the node's floating result type, and that type.
pub(crate) fn float_input(op: &mut Builder, x: Value) -> (Value, DType) {
    let t = float_t(op, x);
    (cast(op, x, t), t)
}

pub(crate) fn k(op: &mut Builder, t: DType, v: f64) -> Value {
    op.scalar(t, v)
}

/// `c ? a : b` with constants.
pub(crate) fn select(op: &mut Builder, c: Value, a: Value, b: Value) -> Value {
    op.Where(c, a, b).out()
}

/// `Where` for any element type (ORT has no bool kernel: bools go through uint8).
pub(crate) fn where_t(op: &mut Builder, c: Value, a: Value, b: Value, t: DType) -> Value {
    if t != DType::Bool {
        return op.Where(c, a, b).out();
    }
    let (a, b) = (cast(op, a, DType::Uint8), cast(op, b, DType::Uint8));
    let r = op.Where(c, a, b).out();
    cast(op, r, DType::Bool)
}

/// The sign bit of a float (true for negative numbers and -0.0; NaN counts as positive).
pub(crate) fn signbit_f(op: &mut Builder, x: Value, t: DType) -> Value {
    let zero = k(op, t, 0.0);
    let one = k(op, t, 1.0);
    let neg = op.Less(x, zero).out();
    let is_zero = op.Equal(x, zero).out();
    let inv = op.Div(one, x).out();
    let neg_zero = op.Less(inv, zero).out();
    let nz = op.And(is_zero, neg_zero).out();
    op.Or(neg, nz).out()
}

/// `log(1 + x)` accurate for small `x`: `log(u) · x / (u - 1)` with `u = 1 + x` (Goldberg).
pub(crate) fn log1p_f(op: &mut Builder, x: Value, t: DType) -> Value {
    let one = k(op, t, 1.0);
    let u = op.Add(x, one).out();
    let lu = op.Log(u).out();
    let um1 = op.Sub(u, one).out();
    let ratio = op.Div(x, um1).out();
    let prod = op.Mul(lu, ratio).out();
    let u_is_one = op.Equal(u, one).out();
    let r = select(op, u_is_one, x, prod);
    // u = +inf: log(u) = inf and x / (u - 1) = inf / inf.
    let inf = op.IsInf(u).detect_negative(0).out();
    select(op, inf, u, r)
}

/// `exp(x) - 1` accurate for small `x`: `(u - 1) · x / log(u)` with `u = exp(x)` (Kahan).
pub(crate) fn expm1_f(op: &mut Builder, x: Value, t: DType) -> Value {
    let one = k(op, t, 1.0);
    let minus_one = k(op, t, -1.0);
    let u = op.Exp(x).out();
    let um1 = op.Sub(u, one).out();
    let lu = op.Log(u).out();
    let ratio = op.Div(x, lu).out();
    let prod = op.Mul(um1, ratio).out();
    let u_is_one = op.Equal(u, one).out();
    let r = select(op, u_is_one, x, prod);
    let is_m1 = op.Equal(um1, minus_one).out();
    let r = select(op, is_m1, minus_one, r);
    let inf = op.IsInf(u).detect_negative(0).out();
    select(op, inf, u, r)
}

/// Elementwise maximum (NaN-propagating, like torch.maximum; bools: or).
pub(crate) fn maximum_v(op: &mut Builder, a: Value, b: Value, t: DType) -> Value {
    if t == DType::Bool {
        op.Or(a, b).out()
    } else {
        op.Max(&[a, b]).out()
    }
}

/// Elementwise minimum (NaN-propagating, like torch.minimum; bools: and).
pub(crate) fn minimum_v(op: &mut Builder, a: Value, b: Value, t: DType) -> Value {
    if t == DType::Bool {
        op.And(a, b).out()
    } else {
        op.Min(&[a, b]).out()
    }
}

/// clamp with optional bounds: `min(max(x, lo), hi)` (so `hi` wins when `lo > hi`, like torch).
pub(crate) fn clamp_v(op: &mut Builder, x: Value, lo: Option<Scalar>, hi: Option<Scalar>, t: DType) -> Value {
    let x = cast(op, x, t);
    let is_0d = |op: &Builder, s: &Option<Scalar>| match s {
        None => true,
        Some(Scalar::Dyn(v)) => op.rank(*v) == Some(0),
        Some(_) => true,
    };
    let lo_v = lo.map(|s| scalar_value(op, s, t));
    let hi_v = hi.map(|s| scalar_value(op, s, t));
    // Clip takes 0-d bounds; its kernel exists for floats and the common integer types.
    let clip_ok = matches!(
        t,
        DType::Float | DType::Double | DType::Float16 | DType::Int32 | DType::Int64 | DType::Int8 | DType::Uint8
    );
    if clip_ok && is_0d(op, &lo) && is_0d(op, &hi) {
        return op.Clip(x, lo_v, hi_v).out();
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

/// A bool tensor of `x`'s shape, all false (integers are never NaN or infinite).
pub(crate) fn all_false(op: &mut Builder, x: Value) -> Value {
    let e = op.Equal(x, x).out();
    op.Not(e).out()
}

/// torch's floor division of floats (`div_floor_floating`).
pub(crate) fn floor_div_float(op: &mut Builder, a: Value, b: Value, t: DType) -> Value {
    let zero = k(op, t, 0.0);
    let one = k(op, t, 1.0);
    let half = k(op, t, 0.5);
    let md = op.Mod(a, b).fmod(1).out();
    let am = op.Sub(a, md).out();
    let div = op.Div(am, b).out();
    let md_nz = op_equal(op, md, zero);
    let md_nz = op.Not(md_nz).out();
    let b_neg = op.Less(b, zero).out();
    let m_neg = op.Less(md, zero).out();
    let differ = op.Xor(b_neg, m_neg).out();
    let adjust = op.And(md_nz, differ).out();
    let div_m1 = op.Sub(div, one).out();
    let div = select(op, adjust, div_m1, div);
    let fl = op.Floor(div).out();
    let frac = op.Sub(div, fl).out();
    let up = op.Greater(frac, half).out();
    let fl_p1 = op.Add(fl, one).out();
    let fl = select(op, up, fl_p1, fl);
    // div == 0: a zero with the sign of a / b.
    let q = op.Div(a, b).out();
    let q_neg = signbit_f(op, q, t);
    let neg_zero = k(op, t, -0.0);
    let signed_zero = select(op, q_neg, neg_zero, zero);
    let div_zero = op_equal(op, div, zero);
    let r = select(op, div_zero, signed_zero, fl);
    // b == 0: a / b (inf or nan).
    let b_zero = op_equal(op, b, zero);
    select(op, b_zero, q, r)
}

fn op_equal(op: &mut Builder, a: Value, b: Value) -> Value {
    op.Equal(a, b).out()
}

/// Integer floor division, exact: truncating quotient, minus one when the signs differ and the
/// division is inexact.
pub(crate) fn floor_div_int(op: &mut Builder, a: Value, b: Value, t: DType) -> Value {
    let zero = k(op, t, 0.0);
    let one = k(op, t, 1.0);
    let q = op.Div(a, b).out();
    let r = op.Mod(a, b).fmod(1).out();
    let r_nz = op_equal(op, r, zero);
    let r_nz = op.Not(r_nz).out();
    let a_neg = op.Less(r, zero).out();
    let b_neg = op.Less(b, zero).out();
    let differ = op.Xor(a_neg, b_neg).out();
    let adjust = op.And(r_nz, differ).out();
    let qm1 = op.Sub(q, one).out();
    select(op, adjust, qm1, q)
}

/// Python-style remainder (sign of the divisor), as torch computes it.
fn remainder_v(op: &mut Builder, a: Value, b: Value, t: DType) -> Value {
    if !t.is_float() {
        return op.Mod(a, b).fmod(0).out();
    }
    let zero = k(op, t, 0.0);
    let md = op.Mod(a, b).fmod(1).out();
    let md_nz = op_equal(op, md, zero);
    let md_nz = op.Not(md_nz).out();
    let b_neg = op.Less(b, zero).out();
    let m_neg = op.Less(md, zero).out();
    let differ = op.Xor(b_neg, m_neg).out();
    let adjust = op.And(md_nz, differ).out();
    let sum = op.Add(md, b).out();
    select(op, adjust, sum, md)
}

/// Both operands of a binary op in `t`.
pub(crate) fn pair(op: &mut Builder, a: Scalar, b: Scalar, t: DType) -> (Value, Value) {
    (scalar_value(op, a, t), scalar_value(op, b, t))
}

/// The node's result type for a binary op on scalars or tensors.
pub(crate) fn bin_t(op: &Builder, a: Scalar, b: Scalar) -> DType {
    if let Some(t) = op.out_dtype(0) {
        return t;
    }
    let tensor = |s: Scalar| match s {
        Scalar::Dyn(v) if op.rank(v).is_some_and(|r| r > 0) => op.dtype(v),
        _ => None,
    };
    match (tensor(a), tensor(b)) {
        (Some(x), Some(y)) => promote(x, y),
        (Some(x), None) => promote_with_scalar(x, b, op),
        (None, Some(y)) => promote_with_scalar(y, a, op),
        (None, None) => promote(scalar_dtype(op, a), scalar_dtype(op, b)),
    }
}

/// `ln(x) / ln(base)`-style unary: a float op applied after promotion.
fn unary_float(op: &mut Builder, x: Value, f: impl FnOnce(&mut Builder, Value, DType) -> Value) -> Value {
    let (x, t) = float_input(op, x);
    f(op, x, t)
}

/// Bit width of an integer type.
fn bits(t: DType) -> i64 {
    t.size().unwrap_or(8) as i64 * 8
}

/// `(a, b)` shifted left by `b` with torch's rules: shifts outside `0..bits` give 0.
fn shift_left(op: &mut Builder, a: Value, b: Value, t: DType) -> Value {
    let a64 = cast(op, a, DType::Int64);
    let b64 = cast(op, b, DType::Int64);
    let au = cast(op, a64, DType::Uint64);
    let zero = op.scalar_i64(0);
    let w = op.scalar_i64(bits(t));
    let neg = op.Less(b64, zero).out();
    let big = op.GreaterOrEqual(b64, w).out();
    let out_of_range = op.Or(neg, big).out();
    let safe = select(op, out_of_range, zero, b64);
    let su = cast(op, safe, DType::Uint64);
    let r = op.BitShift(au, su).direction("LEFT").out();
    let r = cast(op, r, DType::Int64);
    let r = select(op, out_of_range, zero, r);
    cast(op, r, t)
}

/// Arithmetic right shift with torch's rules: shifts outside `0..bits` shift by `bits - 1`.
fn shift_right(op: &mut Builder, a: Value, b: Value, t: DType) -> Value {
    let a64 = cast(op, a, DType::Int64);
    let b64 = cast(op, b, DType::Int64);
    let zero = op.scalar_i64(0);
    let w = op.scalar_i64(bits(t));
    let wm1 = op.scalar_i64(bits(t) - 1);
    let neg = op.Less(b64, zero).out();
    let big = op.GreaterOrEqual(b64, w).out();
    let out_of_range = op.Or(neg, big).out();
    let sh = select(op, out_of_range, wm1, b64);
    // Negative values: ~((~a) >> b) shifts in ones.
    let a_neg = op.Less(a64, zero).out();
    let na = op.BitwiseNot(a64).out();
    let pos = select(op, a_neg, na, a64);
    let pu = cast(op, pos, DType::Uint64);
    let su = cast(op, sh, DType::Uint64);
    let r = op.BitShift(pu, su).direction("RIGHT").out();
    let r = cast(op, r, DType::Int64);
    let nr = op.BitwiseNot(r).out();
    let r = select(op, a_neg, nr, r);
    cast(op, r, t)
}

/// gcd by Euclid's algorithm, unrolled for the longest run an integer type needs (consecutive
/// Fibonacci numbers); finished lanes stay put.
fn gcd_v(op: &mut Builder, a: Value, b: Value, t: DType) -> Value {
    let steps = match bits(t) {
        8 => 13,
        16 => 25,
        32 => 48,
        _ => 94,
    };
    let zero = k(op, t, 0.0);
    let one = k(op, t, 1.0);
    let mut a = op.Abs(a).out();
    let mut b = op.Abs(b).out();
    // while a != 0: (a, b) = (b % a, a)
    for _ in 0..steps {
        let done = op_equal(op, a, zero);
        let safe = select(op, done, one, a);
        let r = op.Mod(b, safe).fmod(0).out();
        let na = select(op, done, a, r);
        let nb = select(op, done, b, a);
        a = na;
        b = nb;
    }
    b
}

/// `x · log(y)` with torch's xlogy rules (`x == 0` gives 0 unless `y` is NaN).
fn xlogy_v(op: &mut Builder, x: Value, y: Value, t: DType, log1p: bool) -> Value {
    let zero = k(op, t, 0.0);
    let ly = if log1p { log1p_f(op, y, t) } else { op.Log(y).out() };
    let p = op.Mul(x, ly).out();
    let x0 = op_equal(op, x, zero);
    let r = select(op, x0, zero, p);
    let ny = op.IsNaN(y).out();
    let nan = k(op, t, f64::NAN);
    select(op, ny, nan, r)
}

translations! {
    /// clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor
    #[target("aten::clamp", "aten::clamp.Tensor")]
    fn clamp(
        op,
        self_: Tensor,
        min: Option<Scalar> = None,
        max: Option<Scalar> = None,
    ) -> OpResult<Value> {
        if min.is_none() && max.is_none() {
            bail!("torch.clamp needs at least one of min and max");
        }
        let t = out_t(op, self_);
        Ok(clamp_v(op, self_, min, max, t))
    }

    /// clamp_min(Tensor self, Scalar min) -> Tensor
    #[target("aten::clamp_min", "aten::clamp_min.Tensor")]
    fn clamp_min(op, self_: Tensor, min: Scalar) -> Value {
        let t = out_t(op, self_);
        clamp_v(op, self_, Some(min), None, t)
    }

    /// clamp_max(Tensor self, Scalar max) -> Tensor
    #[target("aten::clamp_max", "aten::clamp_max.Tensor")]
    fn clamp_max(op, self_: Tensor, max: Scalar) -> Value {
        let t = out_t(op, self_);
        clamp_v(op, self_, None, Some(max), t)
    }

    /// log(Tensor self) -> Tensor
    #[target("aten::log")]
    fn log(op, self_: Tensor) -> Value {
        unary_float(op, self_, |op, x, _| op.Log(x).out())
    }

    /// log2(Tensor self) -> Tensor
    #[target("aten::log2")]
    fn log2(op, self_: Tensor) -> Value {
        unary_float(op, self_, |op, x, t| {
            // In float64, then rounded once: exact powers of two stay exact.
            let xd = cast(op, x, DType::Double);
            let l = op.Log(xd).out();
            let c = k(op, DType::Double, std::f64::consts::LOG2_E);
            let r = op.Mul(l, c).out();
            cast(op, r, t)
        })
    }

    /// log10(Tensor self) -> Tensor
    #[target("aten::log10")]
    fn log10(op, self_: Tensor) -> Value {
        unary_float(op, self_, |op, x, t| {
            let xd = cast(op, x, DType::Double);
            let l = op.Log(xd).out();
            let c = k(op, DType::Double, std::f64::consts::LOG10_E);
            let r = op.Mul(l, c).out();
            cast(op, r, t)
        })
    }

    /// log1p(Tensor self) -> Tensor
    #[target("aten::log1p")]
    fn log1p(op, self_: Tensor) -> Value {
        unary_float(op, self_, log1p_f)
    }

    /// expm1(Tensor self) -> Tensor
    #[target("aten::expm1")]
    fn expm1(op, self_: Tensor) -> Value {
        unary_float(op, self_, expm1_f)
    }

    /// exp2(Tensor self) -> Tensor
    #[target("aten::exp2")]
    fn exp2(op, self_: Tensor) -> Value {
        unary_float(op, self_, |op, x, t| {
            let two = k(op, t, 2.0);
            op.Pow(two, x).out()
        })
    }

    /// reciprocal(Tensor self) -> Tensor
    #[target("aten::reciprocal")]
    fn reciprocal(op, self_: Tensor) -> Value {
        unary_float(op, self_, |op, x, _| op.Reciprocal(x).out())
    }

    /// tan(Tensor self) -> Tensor
    #[target("aten::tan")]
    fn tan(op, self_: Tensor) -> Value {
        unary_float(op, self_, |op, x, _| op.Tan(x).out())
    }

    /// asin(Tensor self) -> Tensor
    #[target("aten::asin")]
    fn asin(op, self_: Tensor) -> Value {
        unary_float(op, self_, |op, x, _| op.Asin(x).out())
    }

    /// acos(Tensor self) -> Tensor
    #[target("aten::acos")]
    fn acos(op, self_: Tensor) -> Value {
        unary_float(op, self_, |op, x, _| op.Acos(x).out())
    }

    /// atan(Tensor self) -> Tensor
    #[target("aten::atan")]
    fn atan(op, self_: Tensor) -> Value {
        unary_float(op, self_, |op, x, _| op.Atan(x).out())
    }

    /// sinh(Tensor self) -> Tensor
    #[target("aten::sinh")]
    fn sinh(op, self_: Tensor) -> Value {
        unary_float(op, self_, |op, x, _| op.Sinh(x).out())
    }

    /// cosh(Tensor self) -> Tensor
    #[target("aten::cosh")]
    fn cosh(op, self_: Tensor) -> Value {
        unary_float(op, self_, |op, x, _| op.Cosh(x).out())
    }

    /// asinh(Tensor self) -> Tensor
    #[target("aten::asinh")]
    fn asinh(op, self_: Tensor) -> Value {
        unary_float(op, self_, |op, x, _| op.Asinh(x).out())
    }

    /// acosh(Tensor self) -> Tensor
    #[target("aten::acosh")]
    fn acosh(op, self_: Tensor) -> Value {
        unary_float(op, self_, |op, x, _| op.Acosh(x).out())
    }

    /// atanh(Tensor self) -> Tensor
    #[target("aten::atanh")]
    fn atanh(op, self_: Tensor) -> Value {
        unary_float(op, self_, |op, x, _| op.Atanh(x).out())
    }

    /// deg2rad(Tensor self) -> Tensor
    #[target("aten::deg2rad")]
    fn deg2rad(op, self_: Tensor) -> Value {
        unary_float(op, self_, |op, x, t| {
            let c = k(op, t, std::f64::consts::PI / 180.0);
            op.Mul(x, c).out()
        })
    }

    /// rad2deg(Tensor self) -> Tensor
    #[target("aten::rad2deg")]
    fn rad2deg(op, self_: Tensor) -> Value {
        unary_float(op, self_, |op, x, t| {
            let c = k(op, t, 180.0 / std::f64::consts::PI);
            op.Mul(x, c).out()
        })
    }

    /// sinc(Tensor self) -> Tensor
    #[target("aten::sinc")]
    fn sinc(op, self_: Tensor) -> Value {
        unary_float(op, self_, |op, x, t| {
            // x == 0 ? 1 : sin(πx) / (πx), in the input's precision like torch.
            let pi = k(op, t, std::f64::consts::PI);
            let p = op.Mul(pi, x).out();
            let s = op.Sin(p).out();
            let q = op.Div(s, p).out();
            let zero = k(op, t, 0.0);
            let one = k(op, t, 1.0);
            let z = op_equal(op, x, zero);
            select(op, z, one, q)
        })
    }

    /// isnan(Tensor self) -> Tensor
    #[target("aten::isnan")]
    fn isnan(op, self_: Tensor) -> Value {
        if op.dtype(self_).is_some_and(|t| t.is_float()) {
            op.IsNaN(self_).out()
        } else {
            all_false(op, self_)
        }
    }

    /// isinf(Tensor self) -> Tensor
    #[target("aten::isinf")]
    fn isinf(op, self_: Tensor) -> Value {
        if op.dtype(self_).is_some_and(|t| t.is_float()) {
            op.IsInf(self_).out()
        } else {
            all_false(op, self_)
        }
    }

    /// isposinf(Tensor self) -> Tensor
    #[target("aten::isposinf")]
    fn isposinf(op, self_: Tensor) -> Value {
        if op.dtype(self_).is_some_and(|t| t.is_float()) {
            op.IsInf(self_).detect_negative(0).out()
        } else {
            all_false(op, self_)
        }
    }

    /// isneginf(Tensor self) -> Tensor
    #[target("aten::isneginf")]
    fn isneginf(op, self_: Tensor) -> Value {
        if op.dtype(self_).is_some_and(|t| t.is_float()) {
            op.IsInf(self_).detect_positive(0).out()
        } else {
            all_false(op, self_)
        }
    }

    /// isreal(Tensor self) -> Tensor
    #[target("aten::isreal")]
    fn isreal(op, self_: Tensor) -> Value {
        if op.info(self_).complex {
            // The imaginary part (last element of the real view) is zero.
            let axis = op.const_i64s(&[-1]);
            let (one, two) = (op.const_i64s(&[1]), op.const_i64s(&[2]));
            let im = op.Slice(self_, one, two, Some(axis), None).out();
            let im = op.Squeeze(im, Some(axis)).out();
            let t = op.dtype(im).unwrap_or(DType::Float);
            let zero = k(op, t, 0.0);
            return op.Equal(im, zero).out();
        }
        let f = all_false(op, self_);
        op.Not(f).out()
    }

    /// isclose(Tensor self, Tensor other, float rtol=1e-05, float atol=1e-08, bool equal_nan=False) -> Tensor
    #[target("aten::isclose")]
    fn isclose(
        op,
        self_: Tensor,
        other: Tensor,
        rtol: f64 = 1e-5,
        atol: f64 = 1e-8,
        equal_nan: bool = false,
    ) -> Value {
        let t = promote(op.dtype(self_).unwrap_or(DType::Float), op.dtype(other).unwrap_or(DType::Float));
        let (a, b) = (cast(op, self_, t), cast(op, other, t));
        let eq = op.Equal(a, b).out();
        if t == DType::Bool {
            return eq;
        }
        // |a - b| <= atol + rtol·|b|, for finite values (integers compare in float64).
        let w = if t.is_float() { t } else { DType::Double };
        let (a, b) = (cast(op, a, w), cast(op, b, w));
        let d = op.Sub(a, b).out();
        let d = op.Abs(d).out();
        let r = k(op, w, rtol);
        let rb = op.Mul(r, b).out();
        let rb = op.Abs(rb).out();
        let at = k(op, w, atol);
        let allowed = op.Add(at, rb).out();
        let close = op.LessOrEqual(d, allowed).out();
        let mut res = op.Or(eq, close).out();
        if t.is_float() {
            let fa = op.IsInf(a).out();
            let na = op.IsNaN(a).out();
            let fb = op.IsInf(b).out();
            let nb = op.IsNaN(b).out();
            let bad_a = op.Or(fa, na).out();
            let bad_b = op.Or(fb, nb).out();
            let bad = op.Or(bad_a, bad_b).out();
            let finite_close = op.Not(bad).out();
            let finite_close = op.And(finite_close, close).out();
            res = op.Or(eq, finite_close).out();
            if equal_nan {
                let both = op.And(na, nb).out();
                res = op.Or(res, both).out();
            }
        }
        res
    }

    /// nan_to_num(Tensor self, float? nan=None, float? posinf=None, float? neginf=None) -> Tensor
    #[target("aten::nan_to_num")]
    fn nan_to_num(
        op,
        self_: Tensor,
        nan: Option<f64> = None,
        posinf: Option<f64> = None,
        neginf: Option<f64> = None,
    ) -> OpResult<Value> {
        let t = dtype_of(op, self_)?;
        if !t.is_float() {
            return Ok(self_);
        }
        let big = match t {
            DType::Float => f32::MAX as f64,
            DType::Double => f64::MAX,
            DType::Float16 => 65504.0,
            DType::BFloat16 => 3.3895313892515355e38,
            other => bail!("nan_to_num on {other:?} is not supported"),
        };
        let nv = k(op, t, nan.unwrap_or(0.0));
        let pv = k(op, t, posinf.unwrap_or(big));
        let mv = k(op, t, neginf.unwrap_or(-big));
        let is_nan = op.IsNaN(self_).out();
        let is_pos = op.IsInf(self_).detect_negative(0).out();
        let is_neg = op.IsInf(self_).detect_positive(0).out();
        let r = select(op, is_nan, nv, self_);
        let r = select(op, is_pos, pv, r);
        Ok(select(op, is_neg, mv, r))
    }

    /// remainder.Tensor(Tensor self, Tensor other) -> Tensor
    #[target("aten::remainder.Tensor", "aten::remainder.Scalar", "aten::remainder.Scalar_Tensor")]
    fn remainder(op, self_: Scalar, other: Scalar) -> Value {
        let t = bin_t(op, self_, other);
        let (a, b) = pair(op, self_, other, t);
        remainder_v(op, a, b, t)
    }

    /// fmod.Tensor(Tensor self, Tensor other) -> Tensor
    #[target("aten::fmod.Tensor", "aten::fmod.Scalar")]
    fn fmod(op, self_: Scalar, other: Scalar) -> Value {
        let t = bin_t(op, self_, other);
        let (a, b) = pair(op, self_, other, t);
        op.Mod(a, b).fmod(1).out()
    }

    /// floor_divide(Tensor self, Tensor other) -> Tensor
    #[target("aten::floor_divide", "aten::floor_divide.Scalar")]
    fn floor_divide(op, self_: Scalar, other: Scalar) -> Value {
        let t = bin_t(op, self_, other);
        let (a, b) = pair(op, self_, other, t);
        if t.is_float() {
            floor_div_float(op, a, b, t)
        } else {
            floor_div_int(op, a, b, t)
        }
    }

    /// minimum(Tensor self, Tensor other) -> Tensor
    #[target("aten::minimum", "aten::min.other")]
    fn minimum(op, self_: Tensor, other: Tensor) -> Value {
        let t = bin_t(op, Scalar::Dyn(self_), Scalar::Dyn(other));
        let (a, b) = (cast(op, self_, t), cast(op, other, t));
        minimum_v(op, a, b, t)
    }

    /// maximum(Tensor self, Tensor other) -> Tensor
    #[target("aten::maximum", "aten::max.other")]
    fn maximum(op, self_: Tensor, other: Tensor) -> Value {
        let t = bin_t(op, Scalar::Dyn(self_), Scalar::Dyn(other));
        let (a, b) = (cast(op, self_, t), cast(op, other, t));
        maximum_v(op, a, b, t)
    }

    /// fmin(Tensor self, Tensor other) -> Tensor
    #[target("aten::fmin")]
    fn fmin(op, self_: Tensor, other: Tensor) -> Value {
        let t = bin_t(op, Scalar::Dyn(self_), Scalar::Dyn(other));
        let (a, b) = (cast(op, self_, t), cast(op, other, t));
        let m = minimum_v(op, a, b, t);
        if !t.is_float() {
            return m;
        }
        // NaN only when both are NaN.
        let na = op.IsNaN(a).out();
        let nb = op.IsNaN(b).out();
        let r = select(op, na, b, m);
        select(op, nb, a, r)
    }

    /// fmax(Tensor self, Tensor other) -> Tensor
    #[target("aten::fmax")]
    fn fmax(op, self_: Tensor, other: Tensor) -> Value {
        let t = bin_t(op, Scalar::Dyn(self_), Scalar::Dyn(other));
        let (a, b) = (cast(op, self_, t), cast(op, other, t));
        let m = maximum_v(op, a, b, t);
        if !t.is_float() {
            return m;
        }
        let na = op.IsNaN(a).out();
        let nb = op.IsNaN(b).out();
        let r = select(op, na, b, m);
        select(op, nb, a, r)
    }

    /// bitwise_and.Tensor(Tensor self, Tensor other) -> Tensor
    #[target(
        "aten::bitwise_and.Tensor",
        "aten::bitwise_and.Scalar",
        "aten::bitwise_and.Scalar_Tensor",
        "aten::__and__.Tensor",
        "aten::__and__.Scalar"
    )]
    fn bitwise_and(op, self_: Scalar, other: Scalar) -> OpResult<Value> {
        let t = bin_t(op, self_, other);
        let (a, b) = pair(op, self_, other, t);
        Ok(match t {
            DType::Bool => op.And(a, b).out(),
            t if t.is_int() => op.BitwiseAnd(a, b).out(),
            t => bail!("bitwise_and is not defined for {t:?}"),
        })
    }

    /// bitwise_or.Tensor(Tensor self, Tensor other) -> Tensor
    #[target(
        "aten::bitwise_or.Tensor",
        "aten::bitwise_or.Scalar",
        "aten::bitwise_or.Scalar_Tensor",
        "aten::__or__.Tensor",
        "aten::__or__.Scalar"
    )]
    fn bitwise_or(op, self_: Scalar, other: Scalar) -> OpResult<Value> {
        let t = bin_t(op, self_, other);
        let (a, b) = pair(op, self_, other, t);
        Ok(match t {
            DType::Bool => op.Or(a, b).out(),
            t if t.is_int() => op.BitwiseOr(a, b).out(),
            t => bail!("bitwise_or is not defined for {t:?}"),
        })
    }

    /// bitwise_xor.Tensor(Tensor self, Tensor other) -> Tensor
    #[target(
        "aten::bitwise_xor.Tensor",
        "aten::bitwise_xor.Scalar",
        "aten::bitwise_xor.Scalar_Tensor",
        "aten::__xor__.Tensor",
        "aten::__xor__.Scalar"
    )]
    fn bitwise_xor(op, self_: Scalar, other: Scalar) -> OpResult<Value> {
        let t = bin_t(op, self_, other);
        let (a, b) = pair(op, self_, other, t);
        Ok(match t {
            DType::Bool => op.Xor(a, b).out(),
            t if t.is_int() => op.BitwiseXor(a, b).out(),
            t => bail!("bitwise_xor is not defined for {t:?}"),
        })
    }

    /// bitwise_not(Tensor self) -> Tensor
    #[target("aten::bitwise_not")]
    fn bitwise_not(op, self_: Tensor) -> OpResult<Value> {
        Ok(match dtype_of(op, self_)? {
            DType::Bool => op.Not(self_).out(),
            t if t.is_int() => op.BitwiseNot(self_).out(),
            t => bail!("bitwise_not is not defined for {t:?}"),
        })
    }

    /// bitwise_left_shift.Tensor(Tensor self, Tensor other) -> Tensor
    #[target(
        "aten::bitwise_left_shift.Tensor",
        "aten::bitwise_left_shift.Tensor_Scalar",
        "aten::bitwise_left_shift.Scalar_Tensor",
        "aten::__lshift__.Tensor",
        "aten::__lshift__.Scalar"
    )]
    fn bitwise_left_shift(op, self_: Scalar, other: Scalar) -> OpResult<Value> {
        let t = bin_t(op, self_, other);
        if !t.is_int() {
            bail!("bitwise_left_shift is not defined for {t:?}");
        }
        let (a, b) = pair(op, self_, other, t);
        Ok(shift_left(op, a, b, t))
    }

    /// bitwise_right_shift.Tensor(Tensor self, Tensor other) -> Tensor
    #[target(
        "aten::bitwise_right_shift.Tensor",
        "aten::bitwise_right_shift.Tensor_Scalar",
        "aten::bitwise_right_shift.Scalar_Tensor",
        "aten::__rshift__.Tensor",
        "aten::__rshift__.Scalar"
    )]
    fn bitwise_right_shift(op, self_: Scalar, other: Scalar) -> OpResult<Value> {
        let t = bin_t(op, self_, other);
        if !t.is_int() {
            bail!("bitwise_right_shift is not defined for {t:?}");
        }
        let (a, b) = pair(op, self_, other, t);
        Ok(shift_right(op, a, b, t))
    }

    /// logical_xor(Tensor self, Tensor other) -> Tensor
    #[target("aten::logical_xor")]
    fn logical_xor(op, self_: Tensor, other: Tensor) -> Value {
        let (a, b) = (cast(op, self_, DType::Bool), cast(op, other, DType::Bool));
        op.Xor(a, b).out()
    }

    /// ceil(Tensor self) -> Tensor
    #[target("aten::ceil")]
    fn ceil(op, self_: Tensor) -> Value {
        if op.dtype(self_).is_some_and(|t| t.is_float()) {
            op.Ceil(self_).out()
        } else {
            self_
        }
    }

    /// floor(Tensor self) -> Tensor
    #[target("aten::floor")]
    fn floor(op, self_: Tensor) -> Value {
        if op.dtype(self_).is_some_and(|t| t.is_float()) {
            op.Floor(self_).out()
        } else {
            self_
        }
    }

    /// trunc(Tensor self) -> Tensor
    #[target("aten::trunc", "aten::fix")]
    fn trunc(op, self_: Tensor) -> Value {
        let Some(t) = op.dtype(self_).filter(|t| t.is_float()) else { return self_ };
        let zero = k(op, t, 0.0);
        let neg = op.Less(self_, zero).out();
        let (c, f) = (op.Ceil(self_).out(), op.Floor(self_).out());
        select(op, neg, c, f)
    }

    /// round(Tensor self) -> Tensor
    #[target("aten::round")]
    fn round(op, self_: Tensor) -> Value {
        if op.dtype(self_).is_some_and(|t| t.is_float()) {
            op.Round(self_).out()
        } else {
            self_
        }
    }

    /// round.decimals(Tensor self, *, int decimals) -> Tensor
    #[target("aten::round.decimals")]
    fn round_decimals(op, self_: Tensor, decimals: i64) -> OpResult<Value> {
        let t = dtype_of(op, self_)?;
        if !t.is_float() {
            bail!("round with decimals is only defined for floating point tensors");
        }
        // torch: nearbyint(x · 10^d) / 10^d, or nearbyint(x / 10^-d) · 10^-d for negative d.
        let p = k(op, t, 10f64.powi(decimals.unsigned_abs() as i32));
        Ok(if decimals >= 0 {
            let s = op.Mul(self_, p).out();
            let r = op.Round(s).out();
            op.Div(r, p).out()
        } else {
            let s = op.Div(self_, p).out();
            let r = op.Round(s).out();
            op.Mul(r, p).out()
        })
    }

    /// sign(Tensor self) -> Tensor
    #[target("aten::sign", "aten::sgn")]
    fn sign(op, self_: Tensor) -> OpResult<Value> {
        if op.info(self_).complex {
            bail!("sgn of complex tensors is not supported");
        }
        let t = dtype_of(op, self_)?;
        if t == DType::Bool {
            return Ok(self_);
        }
        let s = op.Sign(self_).out();
        if !t.is_float() {
            return Ok(s);
        }
        // torch: (0 < x) - (x < 0), so NaN gives 0.
        let n = op.IsNaN(self_).out();
        let zero = k(op, t, 0.0);
        Ok(select(op, n, zero, s))
    }

    /// signbit(Tensor self) -> Tensor
    #[target("aten::signbit")]
    fn signbit(op, self_: Tensor) -> OpResult<Value> {
        let t = dtype_of(op, self_)?;
        if t.is_float() {
            return Ok(signbit_f(op, self_, t));
        }
        if t == DType::Bool {
            return Ok(all_false(op, self_));
        }
        let zero = k(op, t, 0.0);
        Ok(op.Less(self_, zero).out())
    }

    /// logaddexp(Tensor self, Tensor other) -> Tensor
    #[target("aten::logaddexp")]
    fn logaddexp(op, self_: Tensor, other: Tensor) -> Value {
        let t = float_t(op, self_);
        let (a, b) = (cast(op, self_, t), cast(op, other, t));
        // torch: isinf(a) && a == b ? a : max(a, b) + log1p(exp(-|a - b|))
        let m = op.Max(&[a, b]).out();
        let d = op.Sub(a, b).out();
        let d = op.Abs(d).out();
        let nd = op.Neg(d).out();
        let e = op.Exp(nd).out();
        let l = log1p_f(op, e, t);
        let r = op.Add(m, l).out();
        let ia = op.IsInf(a).out();
        let eq = op.Equal(a, b).out();
        let same = op.And(ia, eq).out();
        select(op, same, a, r)
    }

    /// logaddexp2(Tensor self, Tensor other) -> Tensor
    #[target("aten::logaddexp2")]
    fn logaddexp2(op, self_: Tensor, other: Tensor) -> Value {
        let t = float_t(op, self_);
        let (a, b) = (cast(op, self_, t), cast(op, other, t));
        // torch: isinf(a) && a == b ? a : max(a, b) + log1p(exp2(-|a - b|)) / ln 2
        let m = op.Max(&[a, b]).out();
        let d = op.Sub(a, b).out();
        let d = op.Abs(d).out();
        let nd = op.Neg(d).out();
        let two = k(op, t, 2.0);
        let e = op.Pow(two, nd).out();
        let l = log1p_f(op, e, t);
        let c = k(op, t, std::f64::consts::LOG2_E);
        let l = op.Mul(l, c).out();
        let r = op.Add(m, l).out();
        let ia = op.IsInf(a).out();
        let eq = op.Equal(a, b).out();
        let same = op.And(ia, eq).out();
        select(op, same, a, r)
    }

    /// masked_fill.Scalar(Tensor self, Tensor mask, Scalar value) -> Tensor
    #[target("aten::masked_fill.Scalar", "aten::masked_fill.Tensor")]
    fn masked_fill(op, self_: Tensor, mask: Tensor, value: Scalar) -> Value {
        let t = out_t(op, self_);
        let x = cast(op, self_, t);
        let v = scalar_value(op, value, t);
        let m = cast(op, mask, DType::Bool);
        where_t(op, m, v, x, t)
    }

    /// atan2(Tensor self, Tensor other) -> Tensor
    #[target("aten::atan2", "aten::arctan2")]
    fn atan2(op, self_: Tensor, other: Tensor) -> Value {
        let t = float_t(op, self_);
        let (y, x) = (cast(op, self_, t), cast(op, other, t));
        let pi = std::f64::consts::PI;
        let zero = k(op, t, 0.0);
        let (kpi, kmpi) = (k(op, t, pi), k(op, t, -pi));
        let xneg = signbit_f(op, x, t);
        let yneg = signbit_f(op, y, t);
        // atan(y / x), moved to the left half-plane when x is negative.
        let q = op.Div(y, x).out();
        let base = op.Atan(q).out();
        let shift = select(op, yneg, kmpi, kpi);
        let shifted = op.Add(base, shift).out();
        let general = select(op, xneg, shifted, base);
        // x == ±0: ±π/2 for y ≠ 0; (signed) 0 or ±π for y == ±0.
        let (kh, kmh) = (k(op, t, pi / 2.0), k(op, t, -pi / 2.0));
        let half = select(op, yneg, kmh, kh);
        let neg_zero = k(op, t, -0.0);
        let zero_y_pos = select(op, xneg, kpi, zero);
        let zero_y_neg = select(op, xneg, kmpi, neg_zero);
        let zero_y = select(op, yneg, zero_y_neg, zero_y_pos);
        let y0 = op_equal(op, y, zero);
        let at_x0 = select(op, y0, zero_y, half);
        let x0 = op_equal(op, x, zero);
        let r = select(op, x0, at_x0, general);
        // Both infinite: ±π/4 or ±3π/4.
        let (q1, q3) = (k(op, t, pi / 4.0), k(op, t, 3.0 * pi / 4.0));
        let mag = select(op, xneg, q3, q1);
        let nmag = op.Neg(mag).out();
        let corner = select(op, yneg, nmag, mag);
        let ix = op.IsInf(x).out();
        let iy = op.IsInf(y).out();
        let both = op.And(ix, iy).out();
        let r = select(op, both, corner, r);
        // y == 0 with x NaN etc. stays NaN through `general`.
        let nx = op.IsNaN(x).out();
        let ny = op.IsNaN(y).out();
        let any_nan = op.Or(nx, ny).out();
        let nan = k(op, t, f64::NAN);
        select(op, any_nan, nan, r)
    }

    /// hypot(Tensor self, Tensor other) -> Tensor
    #[target("aten::hypot")]
    fn hypot(op, self_: Tensor, other: Tensor) -> Value {
        let t = float_t(op, self_);
        let d = DType::Double;
        let (a, b) = (cast(op, self_, d), cast(op, other, d));
        let (a, b) = (op.Abs(a).out(), op.Abs(b).out());
        // m · sqrt(1 + (n / m)²) with m = max, n = min: no overflow; inf wins over NaN.
        let m = op.Max(&[a, b]).out();
        let n = op.Min(&[a, b]).out();
        let zero = k(op, d, 0.0);
        let one = k(op, d, 1.0);
        let m0 = op_equal(op, m, zero);
        let safe = select(op, m0, one, m);
        let r = op.Div(n, safe).out();
        let r2 = op.Mul(r, r).out();
        let s = op.Add(one, r2).out();
        let s = op.Sqrt(s).out();
        let h = op.Mul(m, s).out();
        let h = select(op, m0, zero, h);
        let ia = op.IsInf(a).out();
        let ib = op.IsInf(b).out();
        let inf_any = op.Or(ia, ib).out();
        let inf = k(op, d, f64::INFINITY);
        let h = select(op, inf_any, inf, h);
        cast(op, h, t)
    }

    /// copysign.Tensor(Tensor self, Tensor other) -> Tensor
    #[target("aten::copysign.Tensor", "aten::copysign.Scalar")]
    fn copysign(op, self_: Tensor, other: Scalar) -> Value {
        let t = bin_t(op, Scalar::Dyn(self_), other);
        let t = if t.is_float() { t } else { DType::Float };
        let a = cast(op, self_, t);
        let b = scalar_value(op, other, t);
        let m = op.Abs(a).out();
        let nm = op.Neg(m).out();
        let neg = signbit_f(op, b, t);
        op.Where(neg, nm, m).out()
    }

    /// float_power.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor
    #[target("aten::float_power.Tensor_Tensor", "aten::float_power.Tensor_Scalar", "aten::float_power.Scalar")]
    fn float_power(op, self_: Scalar, exponent: Scalar) -> OpResult<Value> {
        if op.out_dtype(0).is_some_and(|t| t != DType::Double) {
            bail!("float_power of complex values is not supported");
        }
        let (a, b) = pair(op, self_, exponent, DType::Double);
        Ok(op.Pow(a, b).out())
    }

    /// xlogy.Tensor(Tensor self, Tensor other) -> Tensor
    #[target("aten::xlogy.Tensor", "aten::xlogy.Scalar_Other", "aten::xlogy.Scalar_Self", "aten::special_xlogy")]
    fn xlogy(op, self_: Scalar, other: Scalar) -> Value {
        let t = bin_t(op, self_, other);
        let t = if t.is_float() { t } else { DType::Float };
        let (x, y) = pair(op, self_, other, t);
        xlogy_v(op, x, y, t, false)
    }

    /// special_xlog1py(Tensor self, Tensor other) -> Tensor
    #[target("aten::special_xlog1py", "aten::special_xlog1py.other_scalar", "aten::special_xlog1py.self_scalar")]
    fn special_xlog1py(op, self_: Scalar, other: Scalar) -> Value {
        let t = bin_t(op, self_, other);
        let t = if t.is_float() { t } else { DType::Float };
        let (x, y) = pair(op, self_, other, t);
        xlogy_v(op, x, y, t, true)
    }

    /// special_entr(Tensor self) -> Tensor
    #[target("aten::special_entr")]
    fn special_entr(op, self_: Tensor) -> Value {
        unary_float(op, self_, |op, x, t| {
            // NaN stays; x > 0: -x·ln x; x == 0: 0; x < 0: -inf.
            let zero = k(op, t, 0.0);
            let minf = k(op, t, f64::NEG_INFINITY);
            let l = op.Log(x).out();
            let p = op.Mul(x, l).out();
            let p = op.Neg(p).out();
            let pos = op.Greater(x, zero).out();
            let is0 = op_equal(op, x, zero);
            let r = select(op, is0, zero, minf);
            let r = select(op, pos, p, r);
            let n = op.IsNaN(x).out();
            select(op, n, x, r)
        })
    }

    /// lerp.Scalar(Tensor self, Tensor end, Scalar weight) -> Tensor
    #[target("aten::lerp.Scalar", "aten::lerp.Tensor")]
    fn lerp(op, self_: Tensor, end: Tensor, weight: Scalar) -> Value {
        let t = out_t(op, self_);
        let (a, b) = (cast(op, self_, t), cast(op, end, t));
        let w = scalar_value(op, weight, t);
        // torch: |w| < 0.5 ? a + w·(b - a) : b - (b - a)·(1 - w)
        let d = op.Sub(b, a).out();
        let wd = op.Mul(w, d).out();
        let lo = op.Add(a, wd).out();
        let one = k(op, t, 1.0);
        let omw = op.Sub(one, w).out();
        let dm = op.Mul(d, omw).out();
        let hi = op.Sub(b, dm).out();
        let aw = op.Abs(w).out();
        let half = k(op, t, 0.5);
        let small = op.Less(aw, half).out();
        op.Where(small, lo, hi).out()
    }

    /// addcmul(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor
    #[target("aten::addcmul")]
    fn addcmul(
        op,
        self_: Tensor,
        tensor1: Tensor,
        tensor2: Tensor,
        value: Scalar = Scalar::Int(1),
    ) -> Value {
        let t = out_t(op, self_);
        let (s, a, b) = (cast(op, self_, t), cast(op, tensor1, t), cast(op, tensor2, t));
        let p = op.Mul(a, b).out();
        let p = if value == Scalar::Int(1) {
            p
        } else {
            let v = scalar_value(op, value, t);
            op.Mul(v, p).out()
        };
        op.Add(s, p).out()
    }

    /// addcdiv(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor
    #[target("aten::addcdiv")]
    fn addcdiv(
        op,
        self_: Tensor,
        tensor1: Tensor,
        tensor2: Tensor,
        value: Scalar = Scalar::Int(1),
    ) -> OpResult<Value> {
        let t = out_t(op, self_);
        if !t.is_float() {
            bail!("addcdiv does not support integer division");
        }
        let (s, a, b) = (cast(op, self_, t), cast(op, tensor1, t), cast(op, tensor2, t));
        let q = op.Div(a, b).out();
        let q = if value == Scalar::Int(1) {
            q
        } else {
            let v = scalar_value(op, value, t);
            op.Mul(v, q).out()
        };
        Ok(op.Add(s, q).out())
    }

    /// gcd(Tensor self, Tensor other) -> Tensor
    #[target("aten::gcd")]
    fn gcd(op, self_: Tensor, other: Tensor) -> OpResult<Value> {
        let t = bin_t(op, Scalar::Dyn(self_), Scalar::Dyn(other));
        if !t.is_int() {
            bail!("gcd is only defined for integer tensors");
        }
        let (a, b) = (cast(op, self_, t), cast(op, other, t));
        Ok(gcd_v(op, a, b, t))
    }

    /// lcm(Tensor self, Tensor other) -> Tensor
    #[target("aten::lcm")]
    fn lcm(op, self_: Tensor, other: Tensor) -> OpResult<Value> {
        let t = bin_t(op, Scalar::Dyn(self_), Scalar::Dyn(other));
        if !t.is_int() {
            bail!("lcm is only defined for integer tensors");
        }
        let (a, b) = (cast(op, self_, t), cast(op, other, t));
        let g = gcd_v(op, a, b, t);
        // g == 0 ? 0 : |a / g · b|
        let zero = k(op, t, 0.0);
        let one = k(op, t, 1.0);
        let g0 = op_equal(op, g, zero);
        let safe = select(op, g0, one, g);
        let q = op.Div(a, safe).out();
        let p = op.Mul(q, b).out();
        let p = op.Abs(p).out();
        Ok(select(op, g0, zero, p))
    }

    /// frexp.Tensor(Tensor self) -> (Tensor mantissa, Tensor exponent)
    #[target("aten::frexp.Tensor")]
    fn frexp(op, self_: Tensor) -> OpResult<(Value, Value)> {
        let t = dtype_of(op, self_)?;
        if !t.is_float() {
            bail!("frexp is only defined for floating point tensors");
        }
        let d = DType::Double;
        let x = cast(op, self_, d);
        let ax = op.Abs(x).out();
        // e = floor(log2|x|) + 1, corrected by one step either way so that 0.5 <= |x| / 2^e < 1.
        let l = op.Log(ax).out();
        let c = k(op, d, std::f64::consts::LOG2_E);
        let l = op.Mul(l, c).out();
        let e = op.Floor(l).out();
        let one = k(op, d, 1.0);
        let two = k(op, d, 2.0);
        let half = k(op, d, 0.5);
        let mut e = op.Add(e, one).out();
        for _ in 0..2 {
            let p = op.Pow(two, e).out();
            let m = op.Div(ax, p).out();
            let big = op.GreaterOrEqual(m, one).out();
            let small = op.Less(m, half).out();
            let ep = op.Add(e, one).out();
            let em = op.Sub(e, one).out();
            let e2 = select(op, big, ep, e);
            e = select(op, small, em, e2);
        }
        // 0, inf and NaN: mantissa x, exponent 0.
        let zero = k(op, d, 0.0);
        let z = op_equal(op, x, zero);
        let i = op.IsInf(x).out();
        let n = op.IsNaN(x).out();
        let special = op.Or(z, i).out();
        let special = op.Or(special, n).out();
        let e = select(op, special, zero, e);
        let p = op.Pow(two, e).out();
        let m = op.Div(x, p).out();
        let m = select(op, special, x, m);
        let m = cast(op, m, t);
        let e = cast(op, e, DType::Int32);
        Ok((m, e))
    }

    /// positive(Tensor(a) self) -> Tensor(a)
    #[target("aten::positive", "aten::resolve_neg")]
    fn positive(op, self_: Tensor) -> Value {
        self_
    }

    /// conj_physical(Tensor self) -> Tensor
    #[target("aten::conj_physical", "aten::_conj", "aten::conj", "aten::resolve_conj", "aten::_conj_physical")]
    fn conj_physical(op, self_: Tensor) -> Value {
        if !op.info(self_).complex {
            return self_;
        }
        // Negate the imaginary half of the real view.
        let t = op.dtype(self_).unwrap_or(DType::Float);
        let data = TensorData::from_f64_as(t, vec![2], &[1.0, -1.0]);
        let Some(data) = data else { return self_ };
        let s = op.constant_tensor(data);
        let v = op.Mul(self_, s).out();
        op.info_mut(v).complex = true;
        v
    }

    /// square(Tensor self) -> Tensor
    #[target("aten::square")]
    fn square(op, self_: Tensor) -> Value {
        let t = out_t(op, self_);
        let x = cast(op, self_, t);
        if t == DType::Bool {
            x
        } else {
            op.Mul(x, x).out()
        }
    }
}
