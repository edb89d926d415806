//! Pointwise math: clamps, logarithms and exponentials, rounding, remainders, minimum / maximum,
//! bitwise and logical ops, trigonometry, and the small composites built from them (lerp, addcmul,
//! gradient, ...).
//!
//! Where ONNX has no operator, the translation composes the same formula torch's CPU kernel
//! evaluates (including its special cases for zeros, infinities and NaN).

use crate::translate::prelude::*;
use crate::translations;
use crate::translations::shared::pointwise::*;

/// A bool tensor of `x`'s shape, all false (integers are never NaN or infinite).
fn all_false(op: &mut Builder, x: Value) -> Value {
    let e = op.Equal(x, x);
    op.Not(e)
}

/// Python-style remainder (sign of the divisor), as torch computes it.
fn remainder_v(op: &mut Builder, a: Value, b: Value, t: DType) -> Value {
    if !t.is_float() {
        return op.Mod(a, b).fmod(0).out();
    }
    let zero = op.scalar(t, 0.0);
    let md = op.Mod(a, b).fmod(1).out();
    let md_nz = op.Equal(md, zero);
    let md_nz = op.Not(md_nz);
    let b_neg = op.Less(b, zero);
    let m_neg = op.Less(md, zero);
    let differ = op.Xor(b_neg, m_neg);
    let adjust = op.And(md_nz, differ);
    let sum = op.Add(md, b);
    op.Where(adjust, sum, md)
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
    let neg = op.Less(b64, zero);
    let big = op.GreaterOrEqual(b64, w);
    let out_of_range = op.Or(neg, big);
    let safe = op.Where(out_of_range, zero, b64);
    let su = cast(op, safe, DType::Uint64);
    let r = op.BitShift(au, su).direction("LEFT").out();
    let r = cast(op, r, DType::Int64);
    let r = op.Where(out_of_range, zero, r);
    cast(op, r, t)
}

/// Arithmetic right shift with torch's rules: shifts outside `0..bits` shift by `bits - 1`.
fn shift_right(op: &mut Builder, a: Value, b: Value, t: DType) -> Value {
    let a64 = cast(op, a, DType::Int64);
    let b64 = cast(op, b, DType::Int64);
    let zero = op.scalar_i64(0);
    let w = op.scalar_i64(bits(t));
    let wm1 = op.scalar_i64(bits(t) - 1);
    let neg = op.Less(b64, zero);
    let big = op.GreaterOrEqual(b64, w);
    let out_of_range = op.Or(neg, big);
    let sh = op.Where(out_of_range, wm1, b64);
    // Negative values: ~((~a) >> b) shifts in ones.
    let a_neg = op.Less(a64, zero);
    let na = op.BitwiseNot(a64);
    let pos = op.Where(a_neg, na, a64);
    let pu = cast(op, pos, DType::Uint64);
    let su = cast(op, sh, DType::Uint64);
    let r = op.BitShift(pu, su).direction("RIGHT").out();
    let r = cast(op, r, DType::Int64);
    let nr = op.BitwiseNot(r);
    let r = op.Where(a_neg, nr, r);
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
    let zero = op.scalar(t, 0.0);
    let one = op.scalar(t, 1.0);
    let mut a = op.Abs(a);
    let mut b = op.Abs(b);
    // while a != 0: (a, b) = (b % a, a)
    for _ in 0..steps {
        let done = op.Equal(a, zero);
        let safe = op.Where(done, one, a);
        let r = op.Mod(b, safe).fmod(0).out();
        let na = op.Where(done, a, r);
        let nb = op.Where(done, b, a);
        a = na;
        b = nb;
    }
    b
}

/// `x · log(y)` with torch's xlogy rules (`x == 0` gives 0 unless `y` is NaN).
fn xlogy_v(op: &mut Builder, x: Value, y: Value, t: DType, log1p: bool) -> Value {
    let zero = op.scalar(t, 0.0);
    let ly = if log1p { log1p_f(op, y, t) } else { op.Log(y) };
    let p = op.Mul(x, ly);
    let x0 = op.Equal(x, zero);
    let r = op.Where(x0, zero, p);
    let ny = op.IsNaN(y);
    let nan = op.scalar(t, f64::NAN);
    op.Where(ny, nan, r)
}

/// A complex value (its real view, last dim 2) from its real and imaginary parts.
fn complex_from_parts(op: &mut Builder, re: Value, im: Value) -> OpResult<Value> {
    let axes = op.const_i64s(&[-1]);
    let (re, im) = (op.Unsqueeze(re, axes), op.Unsqueeze(im, axes));
    let v = op.Concat(&[re, im]).axis(-1).out();
    op.info_mut(v).complex = true;
    Ok(v)
}

/// Whether every element of a bool tensor is true, as a 0-d bool (true when empty).
fn all_of(op: &mut Builder, x: Value) -> Value {
    let n = op.Not(x);
    let n = cast(op, n, DType::Int64);
    let any_false = op.ReduceMax(n, None).keepdims(0).out();
    // ReduceMax of an empty tensor is the lowest int64, which is not 1 either.
    let one = op.scalar_i64(1);
    let hit = op.Equal(any_false, one);
    op.Not(hit)
}

/// torch's fake quantization: (clamp(round(x / scale) + zero_point, qmin, qmax) - zero_point) * scale,
/// rounding half to even as ONNX Round does; x / scale as x * (1 / scale), torch's order.
fn fake_quantize(op: &mut Builder, x: Value, scale: Value, zero_point: Value, qmin: i64, qmax: i64, t: DType) -> Value {
    let one = op.scalar(t, 1.0);
    let inv = op.Div(one, scale);
    let scaled = op.Mul(x, inv);
    let rounded = op.Round(scaled);
    let shifted = op.Add(rounded, zero_point);
    let (lo, hi) = (op.scalar(t, qmin as f64), op.scalar(t, qmax as f64));
    let clamped = op.Clip(shifted, Some(lo), Some(hi));
    let centered = op.Sub(clamped, zero_point);
    op.Mul(centered, scale)
}

/// torch's isclose: |a - b| <= atol + rtol * |b|, or equal; infinities only equal to themselves.
fn isclose_v(op: &mut Builder, self_: Value, other: Value, rtol: f64, atol: f64, equal_nan: bool) -> Value {
    let t = promote(op.dtype(self_).unwrap_or(DType::Float), op.dtype(other).unwrap_or(DType::Float));
    let (a, b) = (cast(op, self_, t), cast(op, other, t));
    let eq = op.Equal(a, b);
    if t == DType::Bool {
        return eq;
    }
    // |a - b| <= atol + rtol·|b|, for finite values (integers compare in float64).
    let w = if t.is_float() { t } else { DType::Double };
    let (a, b) = (cast(op, a, w), cast(op, b, w));
    let d = op.Sub(a, b);
    let d = op.Abs(d);
    let r = op.scalar(w, rtol);
    let rb = op.Mul(r, b);
    let rb = op.Abs(rb);
    let at = op.scalar(w, atol);
    let allowed = op.Add(at, rb);
    let close = op.LessOrEqual(d, allowed);
    let mut res = op.Or(eq, close);
    if t.is_float() {
        let fa = op.IsInf(a).out();
        let na = op.IsNaN(a);
        let fb = op.IsInf(b).out();
        let nb = op.IsNaN(b);
        let bad_a = op.Or(fa, na);
        let bad_b = op.Or(fb, nb);
        let bad = op.Or(bad_a, bad_b);
        let finite_close = op.Not(bad);
        let finite_close = op.And(finite_close, close);
        res = op.Or(eq, finite_close);
        if equal_nan {
            let both = op.And(na, nb);
            res = op.Or(res, both);
        }
    }
    res
}

/// torch.gradient along `dims` (every dim when None) with uniform spacing: `spacing` holds one value
/// per dim, or one for all.
fn gradient_of(
    op: &mut Builder,
    self_: Value,
    spacing: &[f64],
    dim: Option<Vec<i64>>,
    edge_order: i64,
) -> OpResult<Vec<Value>> {
    // Central differences (x[i+1] - x[i-1]) / h / 2 inside; one-sided first or second order at the ends.
    let t = float_result_dtype(op, self_)?;
    let shape = static_shape(op, self_, "gradient")?;
    let r = shape.len();
    if edge_order != 1 && edge_order != 2 {
        bail!("gradient: edge_order must be 1 or 2");
    }
    let dims: Vec<i64> = match dim {
        Some(d) => d.iter().map(|&d| normalize_axis(d, r)).collect::<OpResult<Vec<_>>>()?,
        None => (0..r as i64).collect(),
    };
    if spacing.len() != 1 && spacing.len() != dims.len() {
        bail!("gradient: {} spacings for {} dims", spacing.len(), dims.len());
    }
    let x = cast(op, self_, t);
    let hs: Vec<Value> = spacing.iter().map(|&h| op.scalar(t, h)).collect();
    let mut outs = Vec::new();
    for (k, d) in dims.into_iter().enumerate() {
        let hv = hs[if hs.len() == 1 { 0 } else { k }];
        let n = shape[d as usize];
        if n < edge_order + 1 {
            bail!("gradient needs at least edge_order + 1 elements along each dim");
        }
        let axes = op.const_i64s(&[d]);
        let sl = |op: &mut Builder, a: i64, b: i64| {
            let (s, e) = (op.const_i64s(&[a]), op.const_i64s(&[b]));
            op.Slice(x, s, e, Some(axes), None)
        };
        let hi = sl(op, 2, n);
        let lo = sl(op, 0, n - 2);
        let c = op.Sub(hi, lo);
        let c = op.Div(c, hv);
        let two = op.scalar(t, 2.0);
        let c = op.Div(c, two);
        let (pre, app) = if edge_order == 1 {
            let (x1, x0) = (sl(op, 1, 2), sl(op, 0, 1));
            let p = op.Sub(x1, x0);
            let (xl, xm) = (sl(op, n - 1, n), sl(op, n - 2, n - 1));
            let a = op.Sub(xl, xm);
            (op.Div(p, hv), op.Div(a, hv))
        } else {
            let (c15, c2, c05) = (op.scalar(t, -1.5), op.scalar(t, 2.0), op.scalar(t, 0.5));
            let (x0, x1, x2) = (sl(op, 0, 1), sl(op, 1, 2), sl(op, 2, 3));
            let a0 = op.Mul(c15, x0);
            let a1 = op.Mul(c2, x1);
            let a2 = op.Mul(c05, x2);
            let p = op.Add(a0, a1);
            let p = op.Sub(p, a2);
            let (y0, y1, y2) = (sl(op, n - 3, n - 2), sl(op, n - 2, n - 1), sl(op, n - 1, n));
            let c15p = op.scalar(t, 1.5);
            let b0 = op.Mul(c05, y0);
            let b1 = op.Mul(c2, y1);
            let b2 = op.Mul(c15p, y2);
            let a = op.Sub(b0, b1);
            let a = op.Add(a, b2);
            (op.Div(p, hv), op.Div(a, hv))
        };
        outs.push(op.Concat(&[pre, c, app]).axis(d).out());
    }
    Ok(outs)
}

/// The exponent `e` of a float64 `ax >= 0` with `ax = m·2^e`, `0.5 <= m < 1`: floor(log2 ax) + 1,
/// corrected by one step either way (log2 is inexact near powers of two). Zero, inf and NaN give
/// what the logarithm does; callers mask them.
fn binary_exponent(op: &mut Builder, ax: Value) -> Value {
    let d = DType::Double;
    let (one, two, half) = (op.scalar(d, 1.0), op.scalar(d, 2.0), op.scalar(d, 0.5));
    let l = op.Log(ax);
    let c = op.scalar(d, std::f64::consts::LOG2_E);
    let l = op.Mul(l, c);
    let e = op.Floor(l);
    let mut e = op.Add(e, one);
    for _ in 0..2 {
        let p = op.Pow(two, e);
        let m = op.Div(ax, p);
        let big = op.GreaterOrEqual(m, one);
        let small = op.Less(m, half);
        let ep = op.Add(e, one);
        let em = op.Sub(e, one);
        let e2 = op.Where(big, ep, e);
        e = op.Where(small, em, e2);
    }
    e
}

translations! {
    /// clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor
    #[target("aten::clamp", "aten::clamp.Tensor")]
    fn clamp(
        op,
        self_: Tensor,
        min: Option<Operand> = None,
        max: Option<Operand> = None,
    ) -> OpResult<Value> {
        if min.is_none() && max.is_none() {
            bail!("torch.clamp needs at least one of min and max");
        }
        let t = out_t(op, self_);
        Ok(clamp_v(op, self_, min, max, t))
    }

    /// clamp_min(Tensor self, Scalar min) -> Tensor
    #[target("aten::clamp_min", "aten::clamp_min.Tensor")]
    fn clamp_min(op, self_: Tensor, min: Operand) -> Value {
        let t = out_t(op, self_);
        clamp_v(op, self_, Some(min), None, t)
    }

    /// clamp_max(Tensor self, Scalar max) -> Tensor
    #[target("aten::clamp_max", "aten::clamp_max.Tensor")]
    fn clamp_max(op, self_: Tensor, max: Operand) -> Value {
        let t = out_t(op, self_);
        clamp_v(op, self_, None, Some(max), t)
    }

    /// log(Tensor self) -> Tensor
    #[target("aten::log")]
    fn log(op, self_: Tensor) -> Value {
        unary_float(op, self_, |op, x, _| op.Log(x))
    }

    /// log2(Tensor self) -> Tensor
    #[target("aten::log2")]
    fn log2(op, self_: Tensor) -> Value {
        unary_float(op, self_, |op, x, t| {
            // In float64, then rounded once: exact powers of two stay exact.
            let xd = cast(op, x, DType::Double);
            let l = op.Log(xd);
            let c = op.scalar(DType::Double, std::f64::consts::LOG2_E);
            let r = op.Mul(l, c);
            cast(op, r, t)
        })
    }

    /// log10(Tensor self) -> Tensor
    #[target("aten::log10")]
    fn log10(op, self_: Tensor) -> Value {
        unary_float(op, self_, |op, x, t| {
            let xd = cast(op, x, DType::Double);
            let l = op.Log(xd);
            let c = op.scalar(DType::Double, std::f64::consts::LOG10_E);
            let r = op.Mul(l, c);
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
            let two = op.scalar(t, 2.0);
            op.Pow(two, x)
        })
    }

    /// reciprocal(Tensor self) -> Tensor
    #[target("aten::reciprocal")]
    fn reciprocal(op, self_: Tensor) -> Value {
        unary_float(op, self_, |op, x, _| op.Reciprocal(x))
    }

    /// tan(Tensor self) -> Tensor
    #[target("aten::tan")]
    fn tan(op, self_: Tensor) -> Value {
        unary_float(op, self_, |op, x, _| op.Tan(x))
    }

    /// asin(Tensor self) -> Tensor
    #[target("aten::asin")]
    fn asin(op, self_: Tensor) -> Value {
        unary_float(op, self_, |op, x, _| op.Asin(x))
    }

    /// acos(Tensor self) -> Tensor
    #[target("aten::acos")]
    fn acos(op, self_: Tensor) -> Value {
        unary_float(op, self_, |op, x, _| op.Acos(x))
    }

    /// atan(Tensor self) -> Tensor
    #[target("aten::atan")]
    fn atan(op, self_: Tensor) -> Value {
        unary_float(op, self_, |op, x, _| op.Atan(x))
    }

    /// sinh(Tensor self) -> Tensor
    #[target("aten::sinh")]
    fn sinh(op, self_: Tensor) -> Value {
        unary_float(op, self_, |op, x, _| op.Sinh(x))
    }

    /// cosh(Tensor self) -> Tensor
    #[target("aten::cosh")]
    fn cosh(op, self_: Tensor) -> Value {
        unary_float(op, self_, |op, x, _| op.Cosh(x))
    }

    /// asinh(Tensor self) -> Tensor
    #[target("aten::asinh")]
    fn asinh(op, self_: Tensor) -> Value {
        unary_float(op, self_, |op, x, _| op.Asinh(x))
    }

    /// acosh(Tensor self) -> Tensor
    #[target("aten::acosh")]
    fn acosh(op, self_: Tensor) -> Value {
        unary_float(op, self_, |op, x, _| op.Acosh(x))
    }

    /// atanh(Tensor self) -> Tensor
    #[target("aten::atanh")]
    fn atanh(op, self_: Tensor) -> Value {
        unary_float(op, self_, |op, x, _| op.Atanh(x))
    }

    /// deg2rad(Tensor self) -> Tensor
    #[target("aten::deg2rad")]
    fn deg2rad(op, self_: Tensor) -> Value {
        unary_float(op, self_, |op, x, t| {
            let c = op.scalar(t, std::f64::consts::PI / 180.0);
            op.Mul(x, c)
        })
    }

    /// rad2deg(Tensor self) -> Tensor
    #[target("aten::rad2deg")]
    fn rad2deg(op, self_: Tensor) -> Value {
        unary_float(op, self_, |op, x, t| {
            let c = op.scalar(t, 180.0 / std::f64::consts::PI);
            op.Mul(x, c)
        })
    }

    /// sinc(Tensor self) -> Tensor
    #[target("aten::sinc")]
    fn sinc(op, self_: Tensor) -> Value {
        unary_float(op, self_, |op, x, t| {
            // x == 0 ? 1 : sin(πx) / (πx), in the input's precision like torch.
            let pi = op.scalar(t, std::f64::consts::PI);
            let p = op.Mul(pi, x);
            let s = op.Sin(p);
            let q = op.Div(s, p);
            let zero = op.scalar(t, 0.0);
            let one = op.scalar(t, 1.0);
            let z = op.Equal(x, zero);
            op.Where(z, one, q)
        })
    }

    /// isnan(Tensor self) -> Tensor
    #[target("aten::isnan")]
    fn isnan(op, self_: Tensor) -> Value {
        if op.dtype(self_).is_some_and(|t| t.is_float()) {
            op.IsNaN(self_)
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

    /// isfinite(Tensor self) -> Tensor
    #[target("aten::isfinite")]
    fn isfinite(op, self_: Tensor) -> Value {
        let bad = if op.dtype(self_).is_some_and(|t| t.is_float()) {
            let inf = op.IsInf(self_).out();
            let nan = op.IsNaN(self_);
            op.Or(inf, nan)
        } else {
            all_false(op, self_)
        };
        op.Not(bad)
    }

    /// frac(Tensor self) -> Tensor
    #[target("aten::frac")]
    fn frac(op, self_: Tensor) -> OpResult<Value> {
        let t = dtype_of(op, self_)?;
        if !t.is_float() {
            bail!("frac is defined for floating-point tensors, not {}", t.name());
        }
        // x - trunc(x)
        let neg = op.Less(self_, 0.0);
        let (c, f) = (op.Ceil(self_), op.Floor(self_));
        let whole = op.Where(neg, c, f);
        Ok(op.Sub(self_, whole))
    }

    /// heaviside(Tensor self, Tensor values) -> Tensor
    #[target("aten::heaviside")]
    fn heaviside(op, self_: Tensor, values: Tensor) -> Value {
        let t = out_t(op, self_);
        let (x, v) = (cast(op, self_, t), cast(op, values, t));
        let at_zero = op.Equal(x, 0.0);
        let positive = op.Greater(x, 0.0);
        let step = cast(op, positive, t);
        op.Where(at_zero, v, step)
    }

    /// logit(Tensor self, float? eps=None) -> Tensor
    #[target("aten::logit")]
    fn logit(op, self_: Tensor, eps: Option<f64> = None) -> OpResult<Value> {
        let t = out_t(op, self_);
        if !t.is_float() {
            bail!("logit gives a floating-point result, not {}", t.name());
        }
        let x = cast(op, self_, t);
        // log(x / (1 - x)), x clamped to [eps, 1 - eps] when eps is given.
        let x = match eps {
            Some(e) => {
                let (lo, hi) = (op.scalar(t, e), op.scalar(t, 1.0 - e));
                op.Clip(x, Some(lo), Some(hi))
            }
            None => x,
        };
        let rest = op.Sub(1.0, x);
        let odds = op.Div(x, rest);
        Ok(op.Log(odds))
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
            let im = op.Slice(self_, one, two, Some(axis), None);
            let im = op.Squeeze(im, Some(axis));
            let t = op.dtype(im).unwrap_or(DType::Float);
            let zero = op.scalar(t, 0.0);
            return op.Equal(im, zero);
        }
        let f = all_false(op, self_);
        op.Not(f)
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
        isclose_v(op, self_, other, rtol, atol, equal_nan)
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
        let nv = op.scalar(t, nan.unwrap_or(0.0));
        let pv = op.scalar(t, posinf.unwrap_or(big));
        let mv = op.scalar(t, neginf.unwrap_or(-big));
        let is_nan = op.IsNaN(self_);
        let is_pos = op.IsInf(self_).detect_negative(0).out();
        let is_neg = op.IsInf(self_).detect_positive(0).out();
        let r = op.Where(is_nan, nv, self_);
        let r = op.Where(is_pos, pv, r);
        Ok(op.Where(is_neg, mv, r))
    }

    /// remainder.Tensor(Tensor self, Tensor other) -> Tensor
    #[target("aten::remainder.Tensor", "aten::remainder.Scalar", "aten::remainder.Scalar_Tensor")]
    fn remainder(op, self_: Operand, other: Operand) -> Value {
        let t = binary_type(op, self_, other);
        let (a, b) = operands(op, self_, other, t);
        remainder_v(op, a, b, t)
    }

    /// fmod.Tensor(Tensor self, Tensor other) -> Tensor
    #[target("aten::fmod.Tensor", "aten::fmod.Scalar")]
    fn fmod(op, self_: Operand, other: Operand) -> Value {
        let t = binary_type(op, self_, other);
        let (a, b) = operands(op, self_, other, t);
        op.Mod(a, b).fmod(1).out()
    }

    /// floor_divide(Tensor self, Tensor other) -> Tensor
    #[target("aten::floor_divide", "aten::floor_divide.Scalar")]
    fn floor_divide(op, self_: Operand, other: Operand) -> Value {
        let t = binary_type(op, self_, other);
        let (a, b) = operands(op, self_, other, t);
        if t.is_float() {
            floor_div_float(op, a, b, t)
        } else {
            floor_div_int(op, a, b, t)
        }
    }

    /// minimum(Tensor self, Tensor other) -> Tensor
    #[target("aten::minimum", "aten::min.other")]
    fn minimum(op, self_: Tensor, other: Tensor) -> Value {
        let t = binary_type(op, Operand::Tensor(self_), Operand::Tensor(other));
        let (a, b) = (cast(op, self_, t), cast(op, other, t));
        minimum_v(op, a, b, t)
    }

    /// maximum(Tensor self, Tensor other) -> Tensor
    #[target("aten::maximum", "aten::max.other")]
    fn maximum(op, self_: Tensor, other: Tensor) -> Value {
        let t = binary_type(op, Operand::Tensor(self_), Operand::Tensor(other));
        let (a, b) = (cast(op, self_, t), cast(op, other, t));
        maximum_v(op, a, b, t)
    }

    /// fmin(Tensor self, Tensor other) -> Tensor
    #[target("aten::fmin")]
    fn fmin(op, self_: Tensor, other: Tensor) -> Value {
        let t = binary_type(op, Operand::Tensor(self_), Operand::Tensor(other));
        let (a, b) = (cast(op, self_, t), cast(op, other, t));
        let m = minimum_v(op, a, b, t);
        if !t.is_float() {
            return m;
        }
        // NaN only when both are NaN.
        let na = op.IsNaN(a);
        let nb = op.IsNaN(b);
        let r = op.Where(na, b, m);
        op.Where(nb, a, r)
    }

    /// fmax(Tensor self, Tensor other) -> Tensor
    #[target("aten::fmax")]
    fn fmax(op, self_: Tensor, other: Tensor) -> Value {
        let t = binary_type(op, Operand::Tensor(self_), Operand::Tensor(other));
        let (a, b) = (cast(op, self_, t), cast(op, other, t));
        let m = maximum_v(op, a, b, t);
        if !t.is_float() {
            return m;
        }
        let na = op.IsNaN(a);
        let nb = op.IsNaN(b);
        let r = op.Where(na, b, m);
        op.Where(nb, a, r)
    }

    /// bitwise_and.Tensor(Tensor self, Tensor other) -> Tensor
    #[target(
        "aten::bitwise_and.Tensor",
        "aten::bitwise_and.Scalar",
        "aten::bitwise_and.Scalar_Tensor",
        "aten::__and__.Tensor",
        "aten::__and__.Scalar"
    )]
    fn bitwise_and(op, self_: Operand, other: Operand) -> OpResult<Value> {
        let t = binary_type(op, self_, other);
        let (a, b) = operands(op, self_, other, t);
        Ok(match t {
            DType::Bool => op.And(a, b),
            t if t.is_int() => op.BitwiseAnd(a, b),
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
    fn bitwise_or(op, self_: Operand, other: Operand) -> OpResult<Value> {
        let t = binary_type(op, self_, other);
        let (a, b) = operands(op, self_, other, t);
        Ok(match t {
            DType::Bool => op.Or(a, b),
            t if t.is_int() => op.BitwiseOr(a, b),
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
    fn bitwise_xor(op, self_: Operand, other: Operand) -> OpResult<Value> {
        let t = binary_type(op, self_, other);
        let (a, b) = operands(op, self_, other, t);
        Ok(match t {
            DType::Bool => op.Xor(a, b),
            t if t.is_int() => op.BitwiseXor(a, b),
            t => bail!("bitwise_xor is not defined for {t:?}"),
        })
    }

    /// bitwise_not(Tensor self) -> Tensor
    #[target("aten::bitwise_not")]
    fn bitwise_not(op, self_: Tensor) -> OpResult<Value> {
        Ok(match dtype_of(op, self_)? {
            DType::Bool => op.Not(self_),
            t if t.is_int() => op.BitwiseNot(self_),
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
    fn bitwise_left_shift(op, self_: Operand, other: Operand) -> OpResult<Value> {
        let t = binary_type(op, self_, other);
        if !t.is_int() {
            bail!("bitwise_left_shift is not defined for {t:?}");
        }
        let (a, b) = operands(op, self_, other, t);
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
    fn bitwise_right_shift(op, self_: Operand, other: Operand) -> OpResult<Value> {
        let t = binary_type(op, self_, other);
        if !t.is_int() {
            bail!("bitwise_right_shift is not defined for {t:?}");
        }
        let (a, b) = operands(op, self_, other, t);
        Ok(shift_right(op, a, b, t))
    }

    /// logical_xor(Tensor self, Tensor other) -> Tensor
    #[target("aten::logical_xor")]
    fn logical_xor(op, self_: Tensor, other: Tensor) -> Value {
        let (a, b) = (cast(op, self_, DType::Bool), cast(op, other, DType::Bool));
        op.Xor(a, b)
    }

    /// ceil(Tensor self) -> Tensor
    #[target("aten::ceil")]
    fn ceil(op, self_: Tensor) -> Value {
        if op.dtype(self_).is_some_and(|t| t.is_float()) {
            op.Ceil(self_)
        } else {
            self_
        }
    }

    /// floor(Tensor self) -> Tensor
    #[target("aten::floor")]
    fn floor(op, self_: Tensor) -> Value {
        if op.dtype(self_).is_some_and(|t| t.is_float()) {
            op.Floor(self_)
        } else {
            self_
        }
    }

    /// trunc(Tensor self) -> Tensor
    #[target("aten::trunc")]
    fn trunc(op, self_: Tensor) -> Value {
        let Some(t) = op.dtype(self_).filter(|t| t.is_float()) else { return self_ };
        let zero = op.scalar(t, 0.0);
        let neg = op.Less(self_, zero);
        let (c, f) = (op.Ceil(self_), op.Floor(self_));
        op.Where(neg, c, f)
    }

    /// round(Tensor self) -> Tensor
    #[target("aten::round")]
    fn round(op, self_: Tensor) -> Value {
        if op.dtype(self_).is_some_and(|t| t.is_float()) {
            op.Round(self_)
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
        let p = op.scalar(t, 10f64.powi(decimals.unsigned_abs() as i32));
        Ok(if decimals >= 0 {
            let s = op.Mul(self_, p);
            let r = op.Round(s);
            op.Div(r, p)
        } else {
            let s = op.Div(self_, p);
            let r = op.Round(s);
            op.Mul(r, p)
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
        let s = op.Sign(self_);
        if !t.is_float() {
            return Ok(s);
        }
        // torch: (0 < x) - (x < 0), so NaN gives 0.
        let n = op.IsNaN(self_);
        let zero = op.scalar(t, 0.0);
        Ok(op.Where(n, zero, s))
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
        let zero = op.scalar(t, 0.0);
        Ok(op.Less(self_, zero))
    }

    /// logaddexp(Tensor self, Tensor other) -> Tensor
    #[target("aten::logaddexp")]
    fn logaddexp(op, self_: Tensor, other: Tensor) -> Value {
        let t = float_t(op, self_);
        let (a, b) = (cast(op, self_, t), cast(op, other, t));
        // torch: isinf(a) && a == b ? a : max(a, b) + log1p(exp(-|a - b|))
        let m = op.Max(&[a, b]);
        let d = op.Sub(a, b);
        let d = op.Abs(d);
        let nd = op.Neg(d);
        let e = op.Exp(nd);
        let l = log1p_f(op, e, t);
        let r = op.Add(m, l);
        let ia = op.IsInf(a).out();
        let eq = op.Equal(a, b);
        let same = op.And(ia, eq);
        op.Where(same, a, r)
    }

    /// logaddexp2(Tensor self, Tensor other) -> Tensor
    #[target("aten::logaddexp2")]
    fn logaddexp2(op, self_: Tensor, other: Tensor) -> Value {
        let t = float_t(op, self_);
        let (a, b) = (cast(op, self_, t), cast(op, other, t));
        // torch: isinf(a) && a == b ? a : max(a, b) + log1p(exp2(-|a - b|)) / ln 2
        let m = op.Max(&[a, b]);
        let d = op.Sub(a, b);
        let d = op.Abs(d);
        let nd = op.Neg(d);
        let two = op.scalar(t, 2.0);
        let e = op.Pow(two, nd);
        let l = log1p_f(op, e, t);
        let c = op.scalar(t, std::f64::consts::LOG2_E);
        let l = op.Mul(l, c);
        let r = op.Add(m, l);
        let ia = op.IsInf(a).out();
        let eq = op.Equal(a, b);
        let same = op.And(ia, eq);
        op.Where(same, a, r)
    }

    /// masked_fill.Scalar(Tensor self, Tensor mask, Scalar value) -> Tensor
    #[target("aten::masked_fill.Scalar", "aten::masked_fill.Tensor")]
    fn masked_fill(op, self_: Tensor, mask: Tensor, value: Operand) -> Value {
        let t = out_t(op, self_);
        let x = cast(op, self_, t);
        let v = operand_value(op, value, t);
        let m = cast(op, mask, DType::Bool);
        where_t(op, m, v, x, t)
    }

    /// atan2(Tensor self, Tensor other) -> Tensor
    #[target("aten::atan2", "aten::arctan2")]
    fn atan2(op, self_: Tensor, other: Tensor) -> Value {
        let t = float_t(op, self_);
        let (y, x) = (cast(op, self_, t), cast(op, other, t));
        let pi = std::f64::consts::PI;
        let zero = op.scalar(t, 0.0);
        let (kpi, kmpi) = (op.scalar(t, pi), op.scalar(t, -pi));
        let xneg = signbit_f(op, x, t);
        let yneg = signbit_f(op, y, t);
        // atan(y / x), moved to the left half-plane when x is negative.
        let q = op.Div(y, x);
        let base = op.Atan(q);
        let shift = op.Where(yneg, kmpi, kpi);
        let shifted = op.Add(base, shift);
        let general = op.Where(xneg, shifted, base);
        // x == ±0: ±π/2 for y ≠ 0; (signed) 0 or ±π for y == ±0.
        let (kh, kmh) = (op.scalar(t, pi / 2.0), op.scalar(t, -pi / 2.0));
        let half = op.Where(yneg, kmh, kh);
        let neg_zero = op.scalar(t, -0.0);
        let zero_y_pos = op.Where(xneg, kpi, zero);
        let zero_y_neg = op.Where(xneg, kmpi, neg_zero);
        let zero_y = op.Where(yneg, zero_y_neg, zero_y_pos);
        let y0 = op.Equal(y, zero);
        let at_x0 = op.Where(y0, zero_y, half);
        let x0 = op.Equal(x, zero);
        let r = op.Where(x0, at_x0, general);
        // Both infinite: ±π/4 or ±3π/4.
        let (q1, q3) = (op.scalar(t, pi / 4.0), op.scalar(t, 3.0 * pi / 4.0));
        let mag = op.Where(xneg, q3, q1);
        let nmag = op.Neg(mag);
        let corner = op.Where(yneg, nmag, mag);
        let ix = op.IsInf(x).out();
        let iy = op.IsInf(y).out();
        let both = op.And(ix, iy);
        let r = op.Where(both, corner, r);
        // y == 0 with x NaN etc. stays NaN through `general`.
        let nx = op.IsNaN(x);
        let ny = op.IsNaN(y);
        let any_nan = op.Or(nx, ny);
        let nan = op.scalar(t, f64::NAN);
        op.Where(any_nan, nan, r)
    }

    /// hypot(Tensor self, Tensor other) -> Tensor
    #[target("aten::hypot")]
    fn hypot(op, self_: Tensor, other: Tensor) -> Value {
        let t = float_t(op, self_);
        let d = DType::Double;
        let (a, b) = (cast(op, self_, d), cast(op, other, d));
        let (a, b) = (op.Abs(a), op.Abs(b));
        // m · sqrt(1 + (n / m)²) with m = max, n = min: no overflow; inf wins over NaN.
        let m = op.Max(&[a, b]);
        let n = op.Min(&[a, b]);
        let zero = op.scalar(d, 0.0);
        let one = op.scalar(d, 1.0);
        let m0 = op.Equal(m, zero);
        let safe = op.Where(m0, one, m);
        let r = op.Div(n, safe);
        let r2 = op.Mul(r, r);
        let s = op.Add(one, r2);
        let s = op.Sqrt(s);
        let h = op.Mul(m, s);
        let h = op.Where(m0, zero, h);
        let ia = op.IsInf(a).out();
        let ib = op.IsInf(b).out();
        let inf_any = op.Or(ia, ib);
        let inf = op.scalar(d, f64::INFINITY);
        let h = op.Where(inf_any, inf, h);
        cast(op, h, t)
    }

    /// copysign.Tensor(Tensor self, Tensor other) -> Tensor
    #[target("aten::copysign.Tensor", "aten::copysign.Scalar")]
    fn copysign(op, self_: Tensor, other: Operand) -> Value {
        let t = binary_type(op, Operand::Tensor(self_), other);
        let t = if t.is_float() { t } else { DType::Float };
        let a = cast(op, self_, t);
        let b = operand_value(op, other, t);
        let m = op.Abs(a);
        let nm = op.Neg(m);
        let neg = signbit_f(op, b, t);
        op.Where(neg, nm, m)
    }

    /// float_power.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor
    #[target("aten::float_power.Tensor_Tensor", "aten::float_power.Tensor_Scalar", "aten::float_power.Scalar")]
    fn float_power(op, self_: Operand, exponent: Operand) -> OpResult<Value> {
        if op.out_dtype(0).is_some_and(|t| t != DType::Double) {
            bail!("float_power of complex values is not supported");
        }
        let (a, b) = operands(op, self_, exponent, DType::Double);
        Ok(op.Pow(a, b))
    }

    /// xlogy.Tensor(Tensor self, Tensor other) -> Tensor
    #[target("aten::xlogy.Tensor", "aten::xlogy.Scalar_Other", "aten::xlogy.Scalar_Self", "aten::special_xlogy")]
    fn xlogy(op, self_: Operand, other: Operand) -> Value {
        let t = binary_type(op, self_, other);
        let t = if t.is_float() { t } else { DType::Float };
        let (x, y) = operands(op, self_, other, t);
        xlogy_v(op, x, y, t, false)
    }

    /// special_xlog1py(Tensor self, Tensor other) -> Tensor
    #[target("aten::special_xlog1py", "aten::special_xlog1py.other_scalar", "aten::special_xlog1py.self_scalar")]
    fn special_xlog1py(op, self_: Operand, other: Operand) -> Value {
        let t = binary_type(op, self_, other);
        let t = if t.is_float() { t } else { DType::Float };
        let (x, y) = operands(op, self_, other, t);
        xlogy_v(op, x, y, t, true)
    }

    /// special_entr(Tensor self) -> Tensor
    #[target("aten::special_entr")]
    fn special_entr(op, self_: Tensor) -> Value {
        unary_float(op, self_, |op, x, t| {
            // NaN stays; x > 0: -x·ln x; x == 0: 0; x < 0: -inf.
            let zero = op.scalar(t, 0.0);
            let minf = op.scalar(t, f64::NEG_INFINITY);
            let l = op.Log(x);
            let p = op.Mul(x, l);
            let p = op.Neg(p);
            let pos = op.Greater(x, zero);
            let is0 = op.Equal(x, zero);
            let r = op.Where(is0, zero, minf);
            let r = op.Where(pos, p, r);
            let n = op.IsNaN(x);
            op.Where(n, x, r)
        })
    }

    /// lerp.Scalar(Tensor self, Tensor end, Scalar weight) -> Tensor
    #[target("aten::lerp.Scalar", "aten::lerp.Tensor")]
    fn lerp(op, self_: Tensor, end: Tensor, weight: Operand) -> Value {
        let t = out_t(op, self_);
        let (a, b) = (cast(op, self_, t), cast(op, end, t));
        let w = operand_value(op, weight, t);
        // torch: |w| < 0.5 ? a + w·(b - a) : b - (b - a)·(1 - w)
        let d = op.Sub(b, a);
        let wd = op.Mul(w, d);
        let lo = op.Add(a, wd);
        let one = op.scalar(t, 1.0);
        let omw = op.Sub(one, w);
        let dm = op.Mul(d, omw);
        let hi = op.Sub(b, dm);
        let aw = op.Abs(w);
        let half = op.scalar(t, 0.5);
        let small = op.Less(aw, half);
        op.Where(small, lo, hi)
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
        let p = op.Mul(a, b);
        let p = if value == Scalar::Int(1) {
            p
        } else {
            let v = scalar_value(op, value, t);
            op.Mul(v, p)
        };
        op.Add(s, p)
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
        let q = op.Div(a, b);
        let q = if value == Scalar::Int(1) {
            q
        } else {
            let v = scalar_value(op, value, t);
            op.Mul(v, q)
        };
        Ok(op.Add(s, q))
    }

    /// gcd(Tensor self, Tensor other) -> Tensor
    #[target("aten::gcd")]
    fn gcd(op, self_: Tensor, other: Tensor) -> OpResult<Value> {
        let t = binary_type(op, Operand::Tensor(self_), Operand::Tensor(other));
        if !t.is_int() {
            bail!("gcd is only defined for integer tensors");
        }
        let (a, b) = (cast(op, self_, t), cast(op, other, t));
        Ok(gcd_v(op, a, b, t))
    }

    /// lcm(Tensor self, Tensor other) -> Tensor
    #[target("aten::lcm")]
    fn lcm(op, self_: Tensor, other: Tensor) -> OpResult<Value> {
        let t = binary_type(op, Operand::Tensor(self_), Operand::Tensor(other));
        if !t.is_int() {
            bail!("lcm is only defined for integer tensors");
        }
        let (a, b) = (cast(op, self_, t), cast(op, other, t));
        let g = gcd_v(op, a, b, t);
        // g == 0 ? 0 : |a / g · b|
        let zero = op.scalar(t, 0.0);
        let one = op.scalar(t, 1.0);
        let g0 = op.Equal(g, zero);
        let safe = op.Where(g0, one, g);
        let q = op.Div(a, safe);
        let p = op.Mul(q, b);
        let p = op.Abs(p);
        Ok(op.Where(g0, zero, p))
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
        let ax = op.Abs(x);
        let e = binary_exponent(op, ax);
        let two = op.scalar(d, 2.0);
        // 0, inf and NaN: mantissa x, exponent 0.
        let zero = op.scalar(d, 0.0);
        let z = op.Equal(x, zero);
        let i = op.IsInf(x).out();
        let n = op.IsNaN(x);
        let special = op.Or(z, i);
        let special = op.Or(special, n);
        let e = op.Where(special, zero, e);
        let p = op.Pow(two, e);
        let m = op.Div(x, p);
        let m = op.Where(special, x, m);
        let m = cast(op, m, t);
        let e = cast(op, e, DType::Int32);
        Ok((m, e))
    }

    /// positive(Tensor(a) self) -> Tensor(a)
    ///
    /// Also `resolve_neg` and `resolve_conj`, which only materialize a lazy negation or conjugation:
    /// their values are their inputs' (conjugation is never lazy here).
    #[target("aten::positive", "aten::resolve_neg", "aten::resolve_conj")]
    fn positive(op, self_: Tensor) -> Value {
        self_
    }

    /// conj_physical(Tensor self) -> Tensor
    #[target("aten::conj_physical", "aten::_conj", "aten::conj", "aten::_conj_physical")]
    fn conj_physical(op, self_: Tensor) -> Value {
        if !op.info(self_).complex {
            return self_;
        }
        // Negate the imaginary half of the real view.
        let t = op.dtype(self_).unwrap_or(DType::Float);
        let data = TensorData::from_f64_as(t, vec![2], &[1.0, -1.0]);
        let Some(data) = data else { return self_ };
        let s = op.constant_tensor(data);
        let v = op.Mul(self_, s);
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
            op.Mul(x, x)
        }
    }

    /// tanh(Tensor self) -> Tensor
    #[target("aten::tanh")]
    fn tanh(op, self_: Tensor) -> Value {
        let (x, _) = float_input(op, self_);
        op.Tanh(x)
    }

    /// sin(Tensor self) -> Tensor
    #[target("aten::sin")]
    fn sin(op, self_: Tensor) -> Value {
        let (x, _) = float_input(op, self_);
        op.Sin(x)
    }

    /// cos(Tensor self) -> Tensor
    #[target("aten::cos")]
    fn cos(op, self_: Tensor) -> Value {
        let (x, _) = float_input(op, self_);
        op.Cos(x)
    }

    /// exp(Tensor self) -> Tensor
    #[target("aten::exp")]
    fn exp(op, self_: Tensor) -> Value {
        let (x, _) = float_input(op, self_);
        op.Exp(x)
    }

    /// sqrt(Tensor self) -> Tensor
    #[target("aten::sqrt")]
    fn sqrt(op, self_: Tensor) -> Value {
        let (x, _) = float_input(op, self_);
        op.Sqrt(x)
    }

    /// rsqrt(Tensor self) -> Tensor
    #[target("aten::rsqrt")]
    fn rsqrt(op, self_: Tensor) -> Value {
        let (x, _) = float_input(op, self_);
        let s = op.Sqrt(x);
        op.Reciprocal(s)
    }

    /// gradient.scalarint(Tensor self, *, Scalar? spacing=None, int? dim=None, int edge_order=1) -> Tensor[]
    #[target("aten::gradient.scalarint")]
    fn gradient(
        op,
        self_: Tensor,
        spacing: Option<f64> = None,
        dim: Option<i64> = None,
        edge_order: i64 = 1,
    ) -> OpResult<Vec<Value>> {
        let dims = dim.map(|d| vec![d]);
        gradient_of(op, self_, &[spacing.unwrap_or(1.0)], dims, edge_order)
    }

    /// gradient.scalararray(Tensor self, *, Scalar spacing, int[] dim, int edge_order=1) -> Tensor[]
    #[target("aten::gradient.scalararray")]
    fn gradient_dims(op, self_: Tensor, spacing: f64, dim: Vec<i64>, edge_order: i64 = 1) -> OpResult<Vec<Value>> {
        gradient_of(op, self_, &[spacing], Some(dim), edge_order)
    }

    /// gradient.array(Tensor self, *, int[] dim, int edge_order=1) -> Tensor[]
    #[target("aten::gradient.array")]
    fn gradient_unit(op, self_: Tensor, dim: Vec<i64>, edge_order: i64 = 1) -> OpResult<Vec<Value>> {
        gradient_of(op, self_, &[1.0], Some(dim), edge_order)
    }

    /// gradient.scalarrayint(Tensor self, *, Scalar[] spacing, int? dim=None, int edge_order=1) -> Tensor[]
    #[target("aten::gradient.scalarrayint", "aten::gradient.scalarrayarray")]
    fn gradient_spacings(
        op,
        self_: Tensor,
        spacing: Vec<f64>,
        dim: Option<Vec<i64>> = None,
        edge_order: i64 = 1,
    ) -> OpResult<Vec<Value>> {
        // One spacing per differentiated dim.
        gradient_of(op, self_, &spacing, dim, edge_order)
    }

    /// diff(Tensor self, int n=1, int dim=-1, Tensor? prepend=None, Tensor? append=None) -> Tensor
    #[target("aten::diff")]
    fn diff(
        op,
        self_: Tensor,
        n: i64 = 1,
        dim: i64 = -1,
        prepend: Option<Tensor> = None,
        append: Option<Tensor> = None,
    ) -> OpResult<Value> {
        // x[1:] - x[:-1] along dim, n times, on cat(prepend, self, append); of booleans, x[1:] != x[:-1].
        let r = rank_of(op, self_)?;
        if r == 0 {
            bail!("diff expects an input of at least one dimension");
        }
        if n < 0 {
            bail!("diff expects n to be non-negative, got {n}");
        }
        let t = result_dtype(op, self_)?;
        let axis = normalize_axis(dim, r)?;
        let parts: Vec<Value> = prepend.into_iter().chain([self_]).chain(append).map(|v| cast(op, v, t)).collect();
        let mut x = if parts.len() == 1 { parts[0] } else { op.Concat(&parts).axis(axis).out() };
        let axes = op.const_i64s(&[axis]);
        let (zero, one, m1, end) =
            (op.const_i64s(&[0]), op.const_i64s(&[1]), op.const_i64s(&[-1]), op.const_i64s(&[i64::MAX]));
        // Each step shortens the axis by one: past its length the result stays empty, so the steps
        // stop there; along a symbolic axis, `n` itself is bounded.
        let steps = match op.shape(x).and_then(|s| s.get(axis as usize)) {
            Some(Dim::Fixed(len)) => n.min(*len),
            _ => unroll_count(n, "diff's n")? as i64,
        };
        for _ in 0..steps {
            let hi = op.Slice(x, one, end, Some(axes), None);
            let lo = op.Slice(x, zero, m1, Some(axes), None);
            x = if t == DType::Bool { op.Xor(hi, lo) } else { op.Sub(hi, lo) };
        }
        Ok(x)
    }

    /// ldexp.Tensor(Tensor self, Tensor other) -> Tensor
    #[target("aten::ldexp.Tensor")]
    fn ldexp(op, self_: Tensor, other: Tensor) -> Value {
        // torch: self * 2 ** other, in the floating result type.
        let t = op.out_dtype(0).filter(|t| t.is_float()).unwrap_or(DType::Float);
        let x = cast(op, self_, t);
        let e = cast(op, other, t);
        let two = op.scalar(t, 2.0);
        let p = op.Pow(two, e);
        op.Mul(x, p)
    }

    /// nextafter(Tensor self, Tensor other) -> Tensor
    #[target("aten::nextafter")]
    fn nextafter(op, self_: Tensor, other: Tensor) -> OpResult<Value> {
        // x moved by one unit in the last place towards y, computed exactly in float64: with
        // |x| = m·2^e (0.5 <= m < 1), the spacing of the floats of |x|'s binade is
        // 2^(max(e - 1, emin) - p); towards zero from a power of two (m = 0.5) it is half that.
        let t = match op.out_dtype(0) {
            Some(t) => t,
            None => dtype_of(op, self_)?,
        };
        let (p, emin, max) = match t {
            DType::Float => (23, -126, f32::MAX as f64),
            DType::Double => (52, -1022, f64::MAX),
            DType::Float16 => (10, -14, 65504.0),
            DType::BFloat16 => (7, -126, 3.3895313892515355e38),
            _ => bail!("nextafter is only defined for floating-point tensors"),
        };
        let d = DType::Double;
        let x = cast(op, self_, t);
        let y = cast(op, other, t);
        let (x, y) = (cast(op, x, d), cast(op, y, d));
        let ax = op.Abs(x);
        let (one, two, half) = (op.scalar(d, 1.0), op.scalar(d, 2.0), op.scalar(d, 0.5));
        let e = binary_exponent(op, ax);
        let lo = op.Sub(e, one);
        let emin_v = op.scalar(d, emin as f64);
        let lo = op.Max(&[lo, emin_v]);
        let pv = op.scalar(d, p as f64);
        let k = op.Sub(lo, pv);
        let ulp = op.Pow(two, k);
        let below = op.Pow(two, lo);
        let at_pow2 = op.Equal(ax, below);
        let above_min = op.Greater(lo, emin_v);
        let halve = op.And(at_pow2, above_min);
        let zero = op.scalar(d, 0.0);
        let gx = op.Greater(x, zero);
        let up = op.Greater(y, x);
        let outward = op.Equal(gx, up);
        let inward = op.Not(outward);
        let halve = op.And(halve, inward);
        let hu = op.Mul(ulp, half);
        let step = op.Where(halve, hu, ulp);
        let neg_step = op.Neg(step);
        let signed = op.Where(up, step, neg_step);
        let moved = op.Add(x, signed);
        // From zero: the smallest subnormal with y's side; from ±inf: ±max; x == y or NaN: y (x + y).
        let tiny = op.scalar(d, 2f64.powi(emin - p));
        let ntiny = op.scalar(d, -(2f64.powi(emin - p)));
        let from_zero = op.Where(up, tiny, ntiny);
        let is_zero = op.Equal(x, zero);
        let moved = op.Where(is_zero, from_zero, moved);
        let (mx, nmx) = (op.scalar(d, max), op.scalar(d, -max));
        let to_max = op.Where(gx, mx, nmx);
        let inf = op.IsInf(x).out();
        let moved = op.Where(inf, to_max, moved);
        let same = op.Equal(x, y);
        let moved = op.Where(same, y, moved);
        let nan_x = op.IsNaN(x);
        let nan_y = op.IsNaN(y);
        let nan = op.Or(nan_x, nan_y);
        let sum = op.Add(x, y);
        let out = op.Where(nan, sum, moved);
        Ok(cast(op, out, t))
    }

    /// angle(Tensor self) -> Tensor
    #[target("aten::angle")]
    fn angle(op, self_: Tensor) -> OpResult<Value> {
        let t = op.out_dtype(0).unwrap_or(DType::Float);
        if op.info(self_).complex {
            bail!("angle of a complex tensor is not supported yet");
        }
        // Of a real number: pi if negative, else 0, and NaN stays NaN.
        let x = cast(op, self_, t);
        let zero = op.scalar(t, 0.0);
        let pi = op.scalar(t, std::f64::consts::PI);
        let neg = op.Less(x, zero);
        let a = op.Where(neg, pi, zero);
        let nan = op.IsNaN(x);
        Ok(op.Where(nan, x, a))
    }

    /// complex(Tensor real, Tensor imag) -> Tensor
    #[target("aten::complex")]
    fn complex(op, real: Tensor, imag: Tensor) -> OpResult<Value> {
        // A complex tensor travels as its real view: real and imaginary parts in a last dim of 2.
        let t = dtype_of(op, real)?;
        let (re, im) = (cast(op, real, t), cast(op, imag, t));
        complex_from_parts(op, re, im)
    }

    /// polar(Tensor abs, Tensor angle) -> Tensor
    #[target("aten::polar")]
    fn polar(op, abs: Tensor, angle: Tensor) -> OpResult<Value> {
        let t = dtype_of(op, abs)?;
        let a = cast(op, angle, t);
        let (c, s) = (op.Cos(a), op.Sin(a));
        let (re, im) = (op.Mul(abs, c), op.Mul(abs, s));
        complex_from_parts(op, re, im)
    }

    /// allclose(Tensor self, Tensor other, float rtol=1e-05, float atol=1e-08, bool equal_nan=False) -> bool
    #[target("aten::allclose")]
    fn allclose(
        op,
        self_: Tensor,
        other: Tensor,
        rtol: f64 = 1e-5,
        atol: f64 = 1e-8,
        equal_nan: bool = false,
    ) -> Value {
        let close = isclose_v(op, self_, other, rtol, atol, equal_nan);
        all_of(op, close)
    }

    /// equal(Tensor self, Tensor other) -> bool
    #[target("aten::equal")]
    fn equal(op, self_: Tensor, other: Tensor) -> OpResult<Value> {
        // Same shape and same values; different shapes are unequal, not broadcast.
        let t = promote(dtype_of(op, self_)?, dtype_of(op, other)?);
        let (a, b) = (cast(op, self_, t), cast(op, other, t));
        let (sa, sb) = (op.Shape(a).out(), op.Shape(b).out());
        let (ra, rb) = (rank_of(op, a)?, rank_of(op, b)?);
        if ra != rb {
            return Ok(op.scalar(DType::Bool, 0.0));
        }
        let same_dims = op.Equal(sa, sb);
        let same_shape = all_of(op, same_dims);
        // Compare on the first tensor's shape only when the shapes agree (Expand would fail otherwise).
        let b_like_a = {
            let b_shape = op.Where(same_shape, sa, sb);
            op.Reshape(b, b_shape).out()
        };
        let eq = op.Equal(a, b_like_a);
        let same_values = all_of(op, eq);
        Ok(op.And(same_shape, same_values))
    }

    /// is_nonzero(Tensor self) -> bool
    #[target("aten::is_nonzero")]
    fn is_nonzero(op, self_: Tensor) -> OpResult<Value> {
        let t = dtype_of(op, self_)?;
        let zero = op.scalar(t, 0.0);
        let m1 = op.const_i64s(&[]);
        let x = op.Reshape(self_, m1).out();
        let eq = op.Equal(x, zero);
        Ok(op.Not(eq))
    }

    /// fake_quantize_per_tensor_affine(Tensor self, float scale, int zero_point, int quant_min, int quant_max) ->
    ///     Tensor
    #[target("aten::fake_quantize_per_tensor_affine", "aten::fake_quantize_per_tensor_affine.tensor_qparams")]
    fn fake_quantize_per_tensor_affine(
        op,
        self_: Tensor,
        scale: Operand,
        zero_point: Operand,
        quant_min: i64,
        quant_max: i64,
    ) -> OpResult<Value> {
        let t = dtype_of(op, self_)?;
        let (s, z) = (operand_value(op, scale, t), operand_value(op, zero_point, t));
        Ok(fake_quantize(op, self_, s, z, quant_min, quant_max, t))
    }

    /// fake_quantize_per_channel_affine(Tensor self, Tensor scale, Tensor zero_point, int axis, int quant_min,
    ///     int quant_max) -> Tensor
    #[target("aten::fake_quantize_per_channel_affine")]
    fn fake_quantize_per_channel_affine(
        op,
        self_: Tensor,
        scale: Tensor,
        zero_point: Tensor,
        axis: i64,
        quant_min: i64,
        quant_max: i64,
    ) -> OpResult<Value> {
        let t = dtype_of(op, self_)?;
        let r = rank_of(op, self_)?;
        let axis = normalize_axis(axis, r)?;
        // The per-channel parameters broadcast along `axis`.
        let (s, z) = (cast(op, scale, t), cast(op, zero_point, t));
        let (s, z) = (expand_along(op, s, axis, r, self_), expand_along(op, z, axis, r, self_));
        Ok(fake_quantize(op, self_, s, z, quant_min, quant_max, t))
    }
}
