//! Activation functions (`torch.nn.functional`): the formulas of torch's CPU kernels, including
//! how they treat thresholds, infinities and NaN.

use crate::translate::prelude::*;
use crate::translations;
use crate::translations::shared::pointwise::{clamp_v, expm1_f, float_input, log1p_f, maximum_v, out_t};

/// `scale · (x > 0 ? x : alpha · (exp(x · input_scale) - 1))`.
fn elu_v(op: &mut Builder, x: Value, t: DType, alpha: f64, scale: f64, input_scale: f64) -> Value {
    let zero = op.scalar(t, 0.0);
    let xi = if input_scale == 1.0 {
        x
    } else {
        let c = op.scalar(t, input_scale);
        op.Mul(x, c)
    };
    let e = expm1_f(op, xi, t);
    let neg = if alpha == 1.0 {
        e
    } else {
        let a = op.scalar(t, alpha);
        op.Mul(e, a)
    };
    let pos = op.Greater(x, zero);
    let r = op.Where(pos, x, neg);
    if scale == 1.0 {
        r
    } else {
        let s = op.scalar(t, scale);
        op.Mul(r, s)
    }
}

/// `x · beta > threshold ? x : log1p(exp(x · beta)) / beta`.
fn softplus_v(op: &mut Builder, x: Value, t: DType, beta: f64, threshold: f64) -> Value {
    let xb = if beta == 1.0 {
        x
    } else {
        let b = op.scalar(t, beta);
        op.Mul(x, b)
    };
    let e = op.Exp(xb);
    let l = log1p_f(op, e, t);
    let l = if beta == 1.0 {
        l
    } else {
        let b = op.scalar(t, beta);
        op.Div(l, b)
    };
    let th = op.scalar(t, threshold);
    let big = op.Greater(xb, th);
    op.Where(big, x, l)
}

translations! {
    /// elu(Tensor self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) -> Tensor
    #[target("aten::elu")]
    fn elu(
        op,
        self_: Tensor,
        alpha: f64 = 1.0,
        scale: f64 = 1.0,
        input_scale: f64 = 1.0,
    ) -> Value {
        let (x, t) = float_input(op, self_);
        elu_v(op, x, t, alpha, scale, input_scale)
    }

    /// selu(Tensor self) -> Tensor
    #[target("aten::selu")]
    fn selu(op, self_: Tensor) -> Value {
        let (x, t) = float_input(op, self_);
        elu_v(op, x, t, 1.673_263_242_354_377_2, 1.050_700_987_355_480_5, 1.0)
    }

    /// celu(Tensor self, Scalar alpha=1.) -> Tensor
    #[target("aten::celu")]
    fn celu(op, self_: Tensor, alpha: f64 = 1.0) -> Value {
        let (x, t) = float_input(op, self_);
        elu_v(op, x, t, alpha, 1.0, 1.0 / alpha)
    }

    /// leaky_relu(Tensor self, Scalar negative_slope=0.01) -> Tensor
    #[target("aten::leaky_relu")]
    fn leaky_relu(op, self_: Tensor, negative_slope: Scalar = Scalar::Float(0.01)) -> Value {
        let t = out_t(op, self_);
        let x = cast(op, self_, t);
        let zero = op.scalar(t, 0.0);
        let s = scalar_value(op, negative_slope, t);
        let xs = op.Mul(x, s);
        let pos = op.Greater(x, zero);
        op.Where(pos, x, xs)
    }

    /// hardsigmoid(Tensor self) -> Tensor
    #[target("aten::hardsigmoid")]
    fn hardsigmoid(op, self_: Tensor) -> Value {
        let (x, t) = float_input(op, self_);
        // float32: ONNX's HardSigmoid(x/6 + 1/2), as torch.onnx emits (ONNX Runtime's CPU kernel is
        // float32-only, so other types keep the exact formula below).
        if t == DType::Float {
            return op.HardSigmoid(x).alpha(1.0 / 6.0).beta(0.5).out();
        }
        // min(max(x + 3, 0), 6) / 6
        let three = op.scalar(t, 3.0);
        let six = op.scalar(t, 6.0);
        let zero = op.scalar(t, 0.0);
        let s = op.Add(x, three);
        let c = op.Clip(s, Some(zero), Some(six));
        op.Div(c, six)
    }

    /// hardswish(Tensor self) -> Tensor
    #[target("aten::hardswish")]
    fn hardswish(op, self_: Tensor) -> Value {
        let (x, t) = float_input(op, self_);
        // float32: ONNX's HardSwish, as torch.onnx emits (other types: the formula, see hardsigmoid).
        if t == DType::Float {
            return op.HardSwish(x);
        }
        // x · min(max(x + 3, 0), 6) / 6
        let three = op.scalar(t, 3.0);
        let six = op.scalar(t, 6.0);
        let zero = op.scalar(t, 0.0);
        let s = op.Add(x, three);
        let c = op.Clip(s, Some(zero), Some(six));
        let p = op.Mul(x, c);
        op.Div(p, six)
    }

    /// hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor
    #[target("aten::hardtanh")]
    fn hardtanh(
        op,
        self_: Tensor,
        min_val: Scalar = Scalar::Int(-1),
        max_val: Scalar = Scalar::Int(1),
    ) -> Value {
        let t = out_t(op, self_);
        clamp_v(op, self_, Some(min_val.into()), Some(max_val.into()), t)
    }

    /// relu6(Tensor self) -> Tensor
    #[target("aten::relu6")]
    fn relu6(op, self_: Tensor) -> Value {
        let t = out_t(op, self_);
        clamp_v(op, self_, Some(Scalar::Int(0).into()), Some(Scalar::Int(6).into()), t)
    }

    /// hardshrink(Tensor self, Scalar lambd=0.5) -> Tensor
    #[target("aten::hardshrink")]
    fn hardshrink(op, self_: Tensor, lambd: f64 = 0.5) -> Value {
        let t = out_t(op, self_);
        let x = cast(op, self_, t);
        // -lambd <= x <= lambd ? 0 : x
        let (lo, hi, zero) = (op.scalar(t, -lambd), op.scalar(t, lambd), op.scalar(t, 0.0));
        let a = op.GreaterOrEqual(x, lo);
        let b = op.LessOrEqual(x, hi);
        let inside = op.And(a, b);
        op.Where(inside, zero, x)
    }

    /// softshrink(Tensor self, Scalar lambd=0.5) -> Tensor
    #[target("aten::softshrink")]
    fn softshrink(op, self_: Tensor, lambd: f64 = 0.5) -> Value {
        let t = out_t(op, self_);
        let x = cast(op, self_, t);
        // x > lambd ? x - lambd : (x < -lambd ? x + lambd : 0); NaN stays NaN.
        let (l, ml, zero) = (op.scalar(t, lambd), op.scalar(t, -lambd), op.scalar(t, 0.0));
        let sub = op.Sub(x, l);
        let add = op.Add(x, l);
        let above = op.Greater(x, l);
        let below = op.Less(x, ml);
        let r = op.Where(below, add, zero);
        let r = op.Where(above, sub, r);
        if t.is_float() {
            let n = op.IsNaN(x);
            op.Where(n, x, r)
        } else {
            r
        }
    }

    /// threshold(Tensor self, Scalar threshold, Scalar value) -> Tensor
    #[target("aten::threshold")]
    fn threshold(op, self_: Tensor, threshold: Scalar, value: Scalar) -> Value {
        let t = out_t(op, self_);
        let x = cast(op, self_, t);
        // x <= threshold ? value : x
        let th = scalar_value(op, threshold, t);
        let v = scalar_value(op, value, t);
        let le = op.LessOrEqual(x, th);
        op.Where(le, v, x)
    }

    /// softplus(Tensor self, Scalar beta=1, Scalar threshold=20) -> Tensor
    #[target("aten::softplus")]
    fn softplus(op, self_: Tensor, beta: f64 = 1.0, threshold: f64 = 20.0) -> Value {
        let (x, t) = float_input(op, self_);
        softplus_v(op, x, t, beta, threshold)
    }

    /// mish(Tensor self) -> Tensor
    #[target("aten::mish")]
    fn mish(op, self_: Tensor) -> Value {
        let (x, t) = float_input(op, self_);
        // x · tanh(log1p(exp(x)))
        let e = op.Exp(x);
        let sp = log1p_f(op, e, t);
        let th = op.Tanh(sp);
        op.Mul(x, th)
    }

    /// log_sigmoid(Tensor self) -> Tensor
    #[target("aten::log_sigmoid")]
    fn log_sigmoid(op, self_: Tensor) -> Value {
        let (x, t) = float_input(op, self_);
        // min(x, 0) - log1p(exp(-|x|))
        let zero = op.scalar(t, 0.0);
        let m = op.Min(&[x, zero]);
        let a = op.Abs(x);
        let na = op.Neg(a);
        let e = op.Exp(na);
        let l = log1p_f(op, e, t);
        op.Sub(m, l)
    }

    /// log_sigmoid_forward(Tensor self) -> (Tensor output, Tensor buffer)
    #[target("aten::log_sigmoid_forward")]
    fn log_sigmoid_forward(op, self_: Tensor) -> Vec<Option<Value>> {
        let (x, t) = float_input(op, self_);
        let zero = op.scalar(t, 0.0);
        let m = op.Min(&[x, zero]);
        let a = op.Abs(x);
        let na = op.Neg(a);
        let e = op.Exp(na);
        let l = log1p_f(op, e, t);
        // The buffer is only read by the backward kernel.
        vec![Some(op.Sub(m, l)), None]
    }

    /// silu(Tensor self) -> Tensor
    #[target("aten::silu")]
    fn silu(op, self_: Tensor) -> Value {
        let (x, _) = float_input(op, self_);
        let s = op.Sigmoid(x);
        op.Mul(x, s)
    }

    /// glu(Tensor self, int dim=-1) -> Tensor
    #[target("aten::glu")]
    fn glu(op, self_: Tensor, dim: i64 = -1) -> OpResult<Value> {
        let r = rank_of(op, self_)?;
        if r == 0 {
            bail!("glu does not support scalars");
        }
        let axis = normalize_axis(dim, r)?;
        if let Some(Dim::Fixed(n)) = op.shape(self_).map(|s| s[axis as usize].clone()) {
            if n % 2 != 0 {
                bail!("glu: halving dimension {dim} must be even, got {n}");
            }
        }
        let (x, _) = float_input(op, self_);
        let [a, b] = op.Split(x, None).axis(axis).num_outputs(2).outs::<2>();
        let s = op.Sigmoid(b);
        Ok(op.Mul(a, s))
    }

    /// prelu(Tensor self, Tensor weight) -> Tensor
    #[target("aten::prelu")]
    fn prelu(op, self_: Tensor, weight: Tensor) -> OpResult<Value> {
        let t = out_t(op, self_);
        let x = cast(op, self_, t);
        let w = cast(op, weight, t);
        let r = rank_of(op, x)?;
        // A per-channel weight applies along dim 1: shape [C, 1, ..., 1].
        let w = if r >= 2 && op.rank(w) == Some(1) {
            let mut shape = vec![-1];
            shape.extend(std::iter::repeat_n(1, r - 2));
            let s = op.const_i64s(&shape);
            op.Reshape(w, s).out()
        } else if r == 0 {
            // A 0-d input keeps its rank: the one-element weight becomes 0-d too.
            let s = op.const_i64s(&[]);
            op.Reshape(w, s).out()
        } else {
            w
        };
        let zero = op.scalar(t, 0.0);
        let xw = op.Mul(x, w);
        let pos = op.Greater(x, zero);
        Ok(op.Where(pos, x, xw))
    }

    /// _prelu_kernel(Tensor self, Tensor weight) -> Tensor
    #[target("aten::_prelu_kernel")]
    fn prelu_kernel(op, self_: Tensor, weight: Tensor) -> Value {
        let t = out_t(op, self_);
        let x = cast(op, self_, t);
        let w = cast(op, weight, t);
        let zero = op.scalar(t, 0.0);
        let xw = op.Mul(x, w);
        let pos = op.Greater(x, zero);
        op.Where(pos, x, xw)
    }

    /// relu(Tensor self) -> Tensor
    #[target("aten::relu")]
    #[when(|node| node.is_float("self"))]
    fn relu(op, self_: Tensor) -> Value {
        op.Relu(self_)
    }

    /// relu(Tensor self) -> Tensor, on integer tensors: onnxruntime has Relu kernels for floats
    /// (and int8/int32) only, so it is a maximum with 0.
    #[target("aten::relu")]
    fn relu_int(op, self_: Tensor) -> OpResult<Value> {
        let t = dtype_of(op, self_)?;
        let zero = op.scalar(t, 0.0);
        Ok(maximum_v(op, self_, zero, t))
    }

    /// sigmoid(Tensor self) -> Tensor
    #[target("aten::sigmoid")]
    fn sigmoid(op, self_: Tensor) -> Value {
        let (x, _) = float_input(op, self_);
        op.Sigmoid(x)
    }

    /// gelu(Tensor self, *, str approximate='none') -> Tensor
    #[target("aten::gelu")]
    fn gelu(op, self_: Tensor, approximate: &str = "none") -> OpResult<Value> {
        if !matches!(approximate, "none" | "tanh") {
            bail!("unknown approximate mode {approximate:?}");
        }
        if op.opset() >= 20 {
            return Ok(op.Gelu(self_).approximate(approximate).out());
        }
        // Numbers below are constants of the input's type, which must be known.
        dtype_of(op, self_)?;
        let inner = if approximate == "tanh" {
            // 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))
            let x2 = op.Mul(self_, self_);
            let x3 = op.Mul(x2, self_);
            let kx3 = op.Mul(0.044715, x3);
            let s = op.Add(self_, kx3);
            let cs = op.Mul((2.0 / std::f64::consts::PI).sqrt(), s);
            op.Tanh(cs)
        } else {
            // 0.5·x·(1 + erf(x/√2))
            let xr = op.Mul(self_, std::f64::consts::FRAC_1_SQRT_2);
            op.Erf(xr)
        };
        let p = op.Add(1.0, inner);
        let hx = op.Mul(0.5, self_);
        Ok(op.Mul(hx, p))
    }

    /// hardtanh_backward(Tensor grad_output, Tensor self, Scalar min_val, Scalar max_val) -> Tensor
    #[target("aten::hardtanh_backward")]
    fn hardtanh_backward(op, grad_output: Tensor, self_: Tensor, min_val: Scalar, max_val: Scalar) -> Value {
        // The gradient passes where min_val < x < max_val (strictly, as torch's kernel), else 0.
        let t = out_t(op, grad_output);
        let x_t = out_t(op, self_);
        let (lo, hi) = (scalar_value(op, min_val, x_t), scalar_value(op, max_val, x_t));
        let above = op.Greater(self_, lo);
        let below = op.Less(self_, hi);
        let inside = op.And(above, below);
        let zero = op.scalar(t, 0.0);
        let g = cast(op, grad_output, t);
        op.Where(inside, g, zero)
    }
}
