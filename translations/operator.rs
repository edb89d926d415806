//! Symbolic scalar arithmetic: `_operator.*`, `math.*` and `torch.sym_*` on SymInt / SymFloat /
//! SymBool values, which the graph holds as 0-d int64 / float32 / bool tensors.

use crate::translate::prelude::*;
use crate::translations;

/// The type a Python scalar operation computes in: float if either side is a float.
fn num_dtype(op: &Builder, a: Scalar, b: Scalar) -> DType {
    let f = |s: Scalar| scalar_dtype(op, s).is_float();
    if f(a) || f(b) {
        DType::Float
    } else if scalar_dtype(op, a) == DType::Bool && scalar_dtype(op, b) == DType::Bool {
        DType::Bool
    } else {
        DType::Int64
    }
}

fn both(op: &mut Builder, a: Scalar, b: Scalar) -> (Value, Value, DType) {
    let t = num_dtype(op, a, b);
    let t = if t == DType::Bool { DType::Int64 } else { t };
    (scalar_value(op, a, t), scalar_value(op, b, t), t)
}

/// `a << b` or `a >> b` on Python ints. ONNX BitShift is unsigned, so the right shift of a
/// negative number divides by 2^b and floors instead.
fn shift(op: &mut Builder, a: Scalar, b: Scalar, left: bool) -> Value {
    let (a, b) = (scalar_value(op, a, DType::Int64), scalar_value(op, b, DType::Int64));
    let two = op.scalar(DType::Double, 2.0);
    let factor = {
        let b = cast(op, b, DType::Double);
        op.Pow(two, b)
    };
    let x = cast(op, a, DType::Double);
    let y = if left {
        op.Mul(x, factor)
    } else {
        let q = op.Div(x, factor);
        op.Floor(q)
    };
    cast(op, y, DType::Int64)
}

/// A Python number truncated toward zero, as an int.
fn truncate(op: &mut Builder, a: Scalar) -> Value {
    let v = scalar_value(op, a, DType::Float);
    let (fl, ce) = (op.Floor(v), op.Ceil(v));
    let zero = op.scalar(DType::Float, 0.0);
    let neg = op.Less(v, zero);
    let t = op.Where(neg, ce, fl);
    cast(op, t, DType::Int64)
}

translations! {
    /// operator.add(a, b)
    #[target("_operator.add")]
    fn sym_add(op, a: Scalar, b: Scalar) -> Value {
        let (a, b, _) = both(op, a, b);
        op.Add(a, b)
    }

    /// operator.sub(a, b)
    #[target("_operator.sub")]
    fn sym_sub(op, a: Scalar, b: Scalar) -> Value {
        let (a, b, _) = both(op, a, b);
        op.Sub(a, b)
    }

    /// operator.mul(a, b)
    #[target("_operator.mul", "aten::mul")]
    fn sym_mul(op, a: Scalar, b: Scalar) -> Value {
        let (a, b, _) = both(op, a, b);
        op.Mul(a, b)
    }

    /// operator.truediv(a, b): always a float.
    #[target("_operator.truediv")]
    fn sym_truediv(op, a: Scalar, b: Scalar) -> Value {
        let (a, b) = (scalar_value(op, a, DType::Float), scalar_value(op, b, DType::Float));
        op.Div(a, b)
    }

    /// operator.floordiv(a, b): Python floor division.
    #[target("_operator.floordiv")]
    fn sym_floordiv(op, a: Scalar, b: Scalar) -> Value {
        let t = num_dtype(op, a, b);
        let (x, y) = (scalar_value(op, a, DType::Double), scalar_value(op, b, DType::Double));
        let q = op.Div(x, y);
        let q = op.Floor(q);
        cast(op, q, if t.is_float() { DType::Float } else { DType::Int64 })
    }

    /// operator.mod(a, b): Python modulo (the sign of the divisor).
    #[target("_operator.mod")]
    fn sym_mod(op, a: Scalar, b: Scalar) -> Value {
        let (a, b, t) = both(op, a, b);
        op.Mod(a, b).fmod(if t.is_float() { 1 } else { 0 }).out()
    }

    /// operator.pow(a, b)
    #[target("_operator.pow")]
    fn sym_pow(op, a: Scalar, b: Scalar) -> Value {
        let (a, b, t) = both(op, a, b);
        if t.is_float() {
            op.Pow(a, b)
        } else {
            // ONNX Pow on int64 is not universally implemented: compute in float64.
            let (x, y) = (cast(op, a, DType::Double), cast(op, b, DType::Double));
            let p = op.Pow(x, y);
            cast(op, p, DType::Int64)
        }
    }

    /// operator.neg(a)
    #[target("_operator.neg")]
    fn sym_neg(op, a: Scalar) -> Value {
        let t = scalar_dtype(op, a);
        let v = scalar_value(op, a, t);
        op.Neg(v)
    }

    /// operator.eq(a, b)
    #[target("_operator.eq", "aten::eq")]
    fn sym_eq(op, a: Scalar, b: Scalar) -> Value {
        let (a, b, _) = both(op, a, b);
        op.Equal(a, b)
    }

    /// operator.ne(a, b)
    #[target("_operator.ne", "aten::ne")]
    fn sym_ne(op, a: Scalar, b: Scalar) -> Value {
        let (a, b, _) = both(op, a, b);
        let e = op.Equal(a, b);
        op.Not(e)
    }

    /// operator.gt(a, b)
    #[target("_operator.gt")]
    fn sym_gt(op, a: Scalar, b: Scalar) -> Value {
        let (a, b, _) = both(op, a, b);
        op.Greater(a, b)
    }

    /// operator.ge(a, b)
    #[target("_operator.ge")]
    fn sym_ge(op, a: Scalar, b: Scalar) -> Value {
        let (a, b, _) = both(op, a, b);
        op.GreaterOrEqual(a, b)
    }

    /// operator.lt(a, b)
    #[target("_operator.lt")]
    fn sym_lt(op, a: Scalar, b: Scalar) -> Value {
        let (a, b, _) = both(op, a, b);
        op.Less(a, b)
    }

    /// operator.le(a, b)
    #[target("_operator.le")]
    fn sym_le(op, a: Scalar, b: Scalar) -> Value {
        let (a, b, _) = both(op, a, b);
        op.LessOrEqual(a, b)
    }

    /// operator.and_(a, b)
    #[target("_operator.and_")]
    fn sym_and(op, a: Scalar, b: Scalar) -> Value {
        let (a, b) = (scalar_value(op, a, DType::Bool), scalar_value(op, b, DType::Bool));
        op.And(a, b)
    }

    /// operator.or_(a, b)
    #[target("_operator.or_")]
    fn sym_or(op, a: Scalar, b: Scalar) -> Value {
        let (a, b) = (scalar_value(op, a, DType::Bool), scalar_value(op, b, DType::Bool));
        op.Or(a, b)
    }

    /// operator.lshift(a, b): ints only.
    #[target("_operator.lshift")]
    fn sym_lshift(op, a: Scalar, b: Scalar) -> Value {
        shift(op, a, b, true)
    }

    /// operator.rshift(a, b): ints only (arithmetic shift: Python ints are signed).
    #[target("_operator.rshift")]
    fn sym_rshift(op, a: Scalar, b: Scalar) -> Value {
        shift(op, a, b, false)
    }

    /// abs(a)
    #[target("builtins.abs")]
    fn sym_abs(op, a: Scalar) -> Value {
        let t = scalar_dtype(op, a);
        let v = scalar_value(op, a, t);
        op.Abs(v)
    }

    /// torch.sym_sum(args): the sum of a list of SymInts, a chain of Add as torch.onnx writes it
    /// (the optimizer folds the constant terms).
    #[target("torch.sym_sum")]
    fn sym_sum(op, args: Vec<SymInt>) -> Value {
        let values: Vec<Value> = args.into_iter().map(|s| sym_value(op, s)).collect();
        match values.split_first() {
            None => op.scalar_i64(0),
            Some((&first, rest)) => rest.iter().fold(first, |acc, &v| op.Add(acc, v)),
        }
    }

    /// torch.sym_not(a)
    #[target("torch.sym_not")]
    fn sym_not(op, a: Scalar) -> Value {
        let a = scalar_value(op, a, DType::Bool);
        op.Not(a)
    }

    /// torch.sym_max(a, b)
    #[target("torch.sym_max")]
    fn sym_max(op, a: Scalar, b: Scalar) -> Value {
        let (a, b, _) = both(op, a, b);
        op.Max(&[a, b])
    }

    /// torch.sym_min(a, b)
    #[target("torch.sym_min")]
    fn sym_min(op, a: Scalar, b: Scalar) -> Value {
        let (a, b, _) = both(op, a, b);
        op.Min(&[a, b])
    }

    /// torch.sym_float(a)
    #[target("torch.sym_float")]
    fn sym_float(op, a: Scalar) -> Value {
        scalar_value(op, a, DType::Float)
    }

    /// torch.sym_int(a): truncates toward zero.
    #[target("torch.sym_int")]
    fn sym_int(op, a: Scalar) -> Value {
        truncate(op, a)
    }

    /// math.trunc(x)
    #[target("math.trunc")]
    fn math_trunc(op, x: Scalar) -> Value {
        truncate(op, x)
    }

    /// math.floor(x)
    #[target("math.floor")]
    fn math_floor(op, x: Scalar) -> Value {
        let v = scalar_value(op, x, DType::Float);
        let f = op.Floor(v);
        cast(op, f, DType::Int64)
    }

    /// math.ceil(x)
    #[target("math.ceil")]
    fn math_ceil(op, x: Scalar) -> Value {
        let v = scalar_value(op, x, DType::Float);
        let f = op.Ceil(v);
        cast(op, f, DType::Int64)
    }

    /// torch.sym_sqrt(a)
    #[target("torch.sym_sqrt")]
    fn sym_sqrt(op, a: Scalar) -> Value {
        let v = scalar_value(op, a, DType::Float);
        op.Sqrt(v)
    }

    /// math.sqrt(x)
    #[target("math.sqrt")]
    fn math_sqrt(op, x: Scalar) -> Value {
        let v = scalar_value(op, x, DType::Float);
        op.Sqrt(v)
    }

    /// torch.sym_ite(b, t, f)
    #[target("torch.sym_ite")]
    fn sym_ite(op, b: Scalar, t: Scalar, f: Scalar) -> Value {
        let (x, y, _) = both(op, t, f);
        let c = scalar_value(op, b, DType::Bool);
        op.Where(c, x, y)
    }

    /// sym_size.int(Tensor self, int dim) -> SymInt
    #[target("aten::sym_size.int")]
    fn sym_size(op, self_: Tensor, dim: i64) -> OpResult<Value> {
        let r = rank_of(op, self_)?;
        let d = normalize_axis(dim, r)?;
        let s = op.Shape(self_).start(d).end(d + 1).out();
        let axes = op.const_i64s(&[0]);
        Ok(op.Squeeze(s, Some(axes)))
    }

    /// sym_storage_offset(Tensor self) -> SymInt
    #[target("aten::sym_storage_offset")]
    fn sym_storage_offset[ctx](
        op,
        // Read through `ctx`: the offset is the FX tensor's metadata, not its ONNX value.
        _self: Ignored,
    ) -> OpResult<Value> {
        // ONNX tensors have no storage: only an offset torch recorded as a constant can be given.
        let offset = match ctx.arg("self", 0) {
            Some(Argument::Tensor(t)) => ctx.fx_storage_offset(&t.name),
            _ => None,
        };
        match offset {
            Some(o) => Ok(op.scalar_i64(o)),
            None => bail!(
                "the storage offset of this tensor is not a constant in the archive, and ONNX tensors have no \
                 strides or storage offset to read it from"
            ),
        }
    }

    /// sym_numel(Tensor self) -> SymInt
    #[target("aten::sym_numel")]
    fn sym_numel(op, self_: Tensor) -> Value {
        op.Size(self_)
    }

    /// item(Tensor self) -> Scalar
    #[target("aten::item", "aten::_local_scalar_dense")]
    fn item(op, self_: Tensor) -> Value {
        let empty = op.const_i64s(&[]);
        op.Reshape(self_, empty).out()
    }
}
