//! Pointwise arithmetic (add, sub, mul, div, neg, abs, pow), comparisons, logic, where, casts and
//! no-op copies.

use crate::translate::prelude::*;
use crate::translations;
use crate::translations::shared::pointwise::{floor_div_float, floor_div_int, where_t};

fn is_complex(op: &Builder, x: Operand) -> bool {
    matches!(x, Operand::Scalar(Scalar::Complex(..))) || x.value().is_some_and(|v| op.info(v).complex)
}

/// Real and imaginary parts of a complex operand (a real view `[..., 2]` or a complex scalar).
fn complex_parts(op: &mut Builder, x: Operand, dtype: DType) -> (Value, Value) {
    match x {
        Operand::Scalar(Scalar::Complex(re, im)) => (op.scalar(dtype, re), op.scalar(dtype, im)),
        Operand::Tensor(v) | Operand::Scalar(Scalar::Dyn(v)) if op.info(v).complex => {
            let axis = op.const_i64s(&[-1]);
            let (zero, one, two) = (op.const_i64s(&[0]), op.const_i64s(&[1]), op.const_i64s(&[2]));
            let re = op.Slice(v, zero, one, Some(axis), None);
            let im = op.Slice(v, one, two, Some(axis), None);
            (op.Squeeze(re, Some(axis)), op.Squeeze(im, Some(axis)))
        }
        other => (operand_value(op, other, dtype), op.scalar(dtype, 0.0)),
    }
}

/// `[re, im]` stacked back into a real view.
fn complex_pack(op: &mut Builder, re: Value, im: Value) -> Value {
    let axis = op.const_i64s(&[-1]);
    let re = op.Unsqueeze(re, axis);
    let im = op.Unsqueeze(im, axis);
    let v = op.Concat(&[re, im]).axis(-1).out();
    op.info_mut(v).complex = true;
    v
}

translations! {
    /// add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
    #[target("aten::add.Tensor", "aten::add.Scalar")]
    fn add(op, self_: Operand, other: Operand, alpha: Scalar = Scalar::Int(1)) -> Value {
        let t = binary_type(op, self_, other);
        let (a, b) = operands(op, self_, other, t);
        let b = if alpha == Scalar::Int(1) {
            b
        } else {
            let k = scalar_value(op, alpha, t);
            op.Mul(b, k)
        };
        if t == DType::Bool {
            op.Or(a, b)
        } else {
            op.Add(a, b)
        }
    }

    /// sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
    #[target("aten::sub.Tensor", "aten::sub.Scalar")]
    fn sub(op, self_: Operand, other: Operand, alpha: Scalar = Scalar::Int(1)) -> Value {
        let t = binary_type(op, self_, other);
        let (a, b) = operands(op, self_, other, t);
        let b = if alpha == Scalar::Int(1) {
            b
        } else {
            let k = scalar_value(op, alpha, t);
            op.Mul(b, k)
        };
        op.Sub(a, b)
    }

    /// rsub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
    #[target("aten::rsub.Tensor", "aten::rsub.Scalar")]
    fn rsub(op, self_: Operand, other: Operand, alpha: Scalar = Scalar::Int(1)) -> Value {
        let t = binary_type(op, self_, other);
        let (a, b) = operands(op, self_, other, t);
        let a = if alpha == Scalar::Int(1) {
            a
        } else {
            let k = scalar_value(op, alpha, t);
            op.Mul(a, k)
        };
        op.Sub(b, a)
    }

    /// mul.Tensor(Tensor self, Tensor other) -> Tensor
    #[target("aten::mul.Tensor", "aten::mul.Scalar")]
    fn mul(op, self_: Operand, other: Operand) -> Value {
        let t = binary_type(op, self_, other);
        if is_complex(op, self_) || is_complex(op, other) {
            // (a + bi)(c + di) = (ac - bd) + (ad + bc)i on the real views.
            let (a, b) = complex_parts(op, self_, t);
            let (c, d) = complex_parts(op, other, t);
            let (ac, bd) = (op.Mul(a, c), op.Mul(b, d));
            let (ad, bc) = (op.Mul(a, d), op.Mul(b, c));
            let re = op.Sub(ac, bd);
            let im = op.Add(ad, bc);
            return complex_pack(op, re, im);
        }
        let (a, b) = operands(op, self_, other, t);
        if t == DType::Bool {
            op.And(a, b)
        } else {
            op.Mul(a, b)
        }
    }

    /// div.Tensor(Tensor self, Tensor other) -> Tensor
    #[target("aten::div.Tensor", "aten::div.Scalar")]
    fn div(op, self_: Operand, other: Operand) -> Value {
        let t = op.out_dtype(0).unwrap_or(DType::Float);
        let (a, b) = operands(op, self_, other, t);
        op.Div(a, b)
    }

    /// div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor
    #[target("aten::div.Tensor_mode", "aten::div.Scalar_mode")]
    fn div_mode(op, self_: Operand, other: Operand, rounding_mode: Option<&str> = None) -> OpResult<Value> {
        let t = op.out_dtype(0).unwrap_or(DType::Float);
        if !t.is_float() && rounding_mode.is_some() {
            // Integers divide exactly: ONNX Div truncates, floor adjusts inexact negative quotients.
            let (a, b) = operands(op, self_, other, t);
            return match rounding_mode {
                Some("trunc") => Ok(op.Div(a, b)),
                Some("floor") => Ok(floor_div_int(op, a, b, t)),
                Some(other) => bail!("unknown rounding_mode {other:?}"),
                None => unreachable!(),
            };
        }
        let work = if t.is_float() { t } else { DType::Float };
        let (a, b) = operands(op, self_, other, work);
        let q = match rounding_mode {
            None => op.Div(a, b),
            // torch's div_floor_floating (fmod-based, exact where floor(a / b) is not).
            Some("floor") => floor_div_float(op, a, b, work),
            Some("trunc") => {
                let q = op.Div(a, b);
                let (fl, ce) = (op.Floor(q), op.Ceil(q));
                let zero = op.scalar(work, 0.0);
                let neg = op.Less(q, zero);
                op.Where(neg, ce, fl)
            }
            Some(other) => bail!("unknown rounding_mode {other:?}"),
        };
        Ok(cast(op, q, t))
    }

    /// neg(Tensor self) -> Tensor
    #[target("aten::neg")]
    fn neg(op, self_: Tensor) -> Value {
        op.Neg(self_)
    }

    /// abs(Tensor self) -> Tensor
    #[target("aten::abs")]
    fn abs(op, self_: Tensor) -> Value {
        if op.info(self_).complex {
            // |a + bi| = sqrt(a² + b²) over the real view's last axis.
            let sq = op.Mul(self_, self_);
            let axis = op.const_i64s(&[-1]);
            let s = op.ReduceSum(sq, Some(axis)).keepdims(0).out();
            return op.Sqrt(s);
        }
        if op.dtype(self_) == Some(DType::Bool) {
            self_
        } else {
            op.Abs(self_)
        }
    }

    /// pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor
    #[target("aten::pow.Tensor_Scalar", "aten::pow.Tensor_Tensor", "aten::pow.Scalar")]
    fn pow(op, self_: Operand, exponent: Operand) -> Value {
        let t = binary_type(op, self_, exponent);
        let (a, b) = operands(op, self_, exponent, t);
        op.Pow(a, b)
    }

    /// eq.Tensor(Tensor self, Tensor other) -> Tensor
    #[target("aten::eq.Tensor", "aten::eq.Scalar")]
    fn eq(op, self_: Operand, other: Operand) -> Value {
        let t = binary_result_type(op, self_, other);
        let (a, b) = operands(op, self_, other, t);
        op.Equal(a, b)
    }

    /// ne.Tensor(Tensor self, Tensor other) -> Tensor
    #[target("aten::ne.Tensor", "aten::ne.Scalar")]
    fn ne(op, self_: Operand, other: Operand) -> Value {
        let t = binary_result_type(op, self_, other);
        let (a, b) = operands(op, self_, other, t);
        let e = op.Equal(a, b);
        op.Not(e)
    }

    /// gt.Tensor(Tensor self, Tensor other) -> Tensor
    #[target("aten::gt.Tensor", "aten::gt.Scalar")]
    fn gt(op, self_: Operand, other: Operand) -> Value {
        let t = binary_result_type(op, self_, other);
        let (a, b) = operands(op, self_, other, t);
        op.Greater(a, b)
    }

    /// ge.Tensor(Tensor self, Tensor other) -> Tensor
    #[target("aten::ge.Tensor", "aten::ge.Scalar")]
    fn ge(op, self_: Operand, other: Operand) -> Value {
        let t = binary_result_type(op, self_, other);
        let (a, b) = operands(op, self_, other, t);
        op.GreaterOrEqual(a, b)
    }

    /// lt.Tensor(Tensor self, Tensor other) -> Tensor
    #[target("aten::lt.Tensor", "aten::lt.Scalar")]
    fn lt(op, self_: Operand, other: Operand) -> Value {
        let t = binary_result_type(op, self_, other);
        let (a, b) = operands(op, self_, other, t);
        op.Less(a, b)
    }

    /// le.Tensor(Tensor self, Tensor other) -> Tensor
    #[target("aten::le.Tensor", "aten::le.Scalar")]
    fn le(op, self_: Operand, other: Operand) -> Value {
        let t = binary_result_type(op, self_, other);
        let (a, b) = operands(op, self_, other, t);
        op.LessOrEqual(a, b)
    }

    /// logical_and(Tensor self, Tensor other) -> Tensor
    #[target("aten::logical_and")]
    fn logical_and(op, self_: Tensor, other: Tensor) -> Value {
        let (a, b) = (cast(op, self_, DType::Bool), cast(op, other, DType::Bool));
        op.And(a, b)
    }

    /// logical_or(Tensor self, Tensor other) -> Tensor
    #[target("aten::logical_or")]
    fn logical_or(op, self_: Tensor, other: Tensor) -> Value {
        let (a, b) = (cast(op, self_, DType::Bool), cast(op, other, DType::Bool));
        op.Or(a, b)
    }

    /// logical_not(Tensor self) -> Tensor
    #[target("aten::logical_not")]
    fn logical_not(op, self_: Tensor) -> Value {
        let a = cast(op, self_, DType::Bool);
        op.Not(a)
    }

    /// where.self(Tensor condition, Tensor self, Tensor other) -> Tensor
    #[target("aten::where.self", "aten::where.ScalarSelf", "aten::where.ScalarOther", "aten::where.Scalar")]
    fn where_(op, condition: Tensor, self_: Operand, other: Operand) -> Value {
        let t = binary_type(op, self_, other);
        let (a, b) = operands(op, self_, other, t);
        let c = cast(op, condition, DType::Bool);
        where_t(op, c, a, b, t)
    }

    /// clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor
    #[target("aten::clone", "aten::contiguous", "aten::lift_fresh_copy", "aten::detach", "aten::alias")]
    fn clone(op, self_: Tensor, _memory_format: Ignored) -> Value {
        // ONNX tensors have no memory format.
        // Memory formats are a storage layout; ONNX values have none.
        self_
    }

    /// to.dtype(Tensor self, ScalarType dtype, bool non_blocking=False, bool copy=False,
    ///     MemoryFormat? memory_format=None) -> Tensor
    #[target("aten::to.dtype", "aten::to.dtype_layout", "aten::_to_copy", "aten::to.device", "aten::type_as")]
    fn to[ctx](op, self_: Tensor) -> Value {
        // The target type is the node's output type, which the lowering enforces with a Cast.
        let x = match op.out_dtype(0) {
            Some(t) => cast(op, self_, t),
            None => self_,
        };
        // real → complex: the real view needs its zero imaginary half.
        let out_complex = match ctx.node.outputs.first() {
            Some(Argument::Tensor(t)) => ctx.fx_dtype(&t.name).is_some_and(|d| d.is_complex()),
            _ => false,
        };
        if out_complex && !op.info(self_).complex {
            let t = op.dtype(x).unwrap_or(DType::Float);
            let zero = op.scalar(t, 0.0);
            let shape = op.Shape(x).out();
            let im = op.Expand(zero, shape);
            return complex_pack(op, x, im);
        }
        x
    }

    /// _assert_tensor_metadata(Tensor a, SymInt[]? size=None, SymInt[]? stride=None, ScalarType? dtype=None, *,
    ///     Device? device=None, Layout? layout=None) -> ()
    #[target(
        "aten::_assert_tensor_metadata",
        "aten::_assert_scalar",
        "aten::_assert_async",
        "aten::_assert_async.msg",
        "aten::sym_constrain_range_for_size",
        "aten::sym_constrain_range"
    )]
    fn assert_(op) -> () {
        // Checks torch ran at export time; the ONNX graph has no runtime assertions.
    }

    /// prims::convert_element_type(Tensor a, ScalarType dtype) -> Tensor
    #[target("prims::convert_element_type")]
    fn prims_convert_element_type(op, a: Tensor, dtype: ScalarType) -> Value {
        cast(op, a, onnx_dtype(dtype))
    }

    /// prims::div(Tensor self, Tensor other) -> Tensor: true division of floats, and of integers
    /// division rounded toward zero (C's), unlike `aten::div`.
    #[target("prims::div")]
    fn prims_div(op, self_: Tensor, other: Tensor) -> OpResult<Value> {
        let t = dtype_of(op, self_)?;
        if t.is_float() {
            return Ok(op.Div(self_, other));
        }
        // Through float64 (exact below 2^53): ONNX does not say how integer Div rounds.
        let (a, b) = (cast(op, self_, DType::Double), cast(op, other, DType::Double));
        let q = op.Div(a, b);
        let (fl, ce) = (op.Floor(q), op.Ceil(q));
        let neg = op.Less(q, 0.0);
        let q = op.Where(neg, ce, fl);
        Ok(cast(op, q, t))
    }

    /// prims::device_put(Tensor a, Device device, bool non_blocking=False) -> Tensor
    #[target("prims::device_put")]
    fn prims_device_put(op, a: Tensor, _device: Ignored, _non_blocking: Ignored) -> Value {
        // An ONNX graph has one device: moving a tensor is the identity.
        op.Identity(a)
    }
}
