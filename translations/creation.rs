//! Factories: zeros / ones / full (and their `_like` forms), arange, scalar_tensor.

use crate::translate::prelude::*;
use crate::translations;

/// A tensor of `shape` filled with `value`, in the node's output type.
fn filled(op: &mut Builder, shape: Value, value: Scalar) -> OpResult<Value> {
    let t = op.out_dtype(0).unwrap_or(DType::Float);
    let v = match value {
        Scalar::Dyn(v) => {
            let v = cast(op, v, t);
            return Ok(op.Expand(v, shape).out());
        }
        Scalar::Int(i) => i as f64,
        Scalar::Float(f) => f,
        Scalar::Bool(b) => b as i64 as f64,
        Scalar::Complex(..) => bail!("complex fill values are not supported"),
    };
    let Some(fill) = TensorData::from_f64_as(t, vec![1], &[v]) else {
        bail!("cannot fill a tensor of type {}", t.name())
    };
    Ok(op.ConstantOfShape(shape).value(fill).out())
}

translations! {
    /// zeros(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
    #[target("aten::zeros", "aten::new_zeros", "aten::empty.memory_format", "aten::new_empty")]
    fn zeros(op, size: Vec<SymInt>) -> OpResult<Value> {
        // empty() is uninitialised in torch; zeros are one valid content.
        let shape = shape_vec(op, &size);
        filled(op, shape, Scalar::Int(0))
    }

    /// ones(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
    #[target("aten::ones", "aten::new_ones")]
    fn ones(op, size: Vec<SymInt>) -> OpResult<Value> {
        let shape = shape_vec(op, &size);
        filled(op, shape, Scalar::Int(1))
    }

    /// full(SymInt[] size, Scalar fill_value, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
    #[target("aten::full", "aten::new_full")]
    fn full(op, size: Vec<SymInt>, fill_value: Scalar) -> OpResult<Value> {
        let shape = shape_vec(op, &size);
        filled(op, shape, fill_value)
    }

    /// zeros_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor
    #[target("aten::zeros_like", "aten::empty_like")]
    fn zeros_like(op, self_: Tensor) -> OpResult<Value> {
        let shape = op.Shape(self_).out();
        filled(op, shape, Scalar::Int(0))
    }

    /// ones_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor
    #[target("aten::ones_like")]
    fn ones_like(op, self_: Tensor) -> OpResult<Value> {
        let shape = op.Shape(self_).out();
        filled(op, shape, Scalar::Int(1))
    }

    /// full_like(Tensor self, Scalar fill_value, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor
    #[target("aten::full_like")]
    fn full_like(op, self_: Tensor, fill_value: Scalar) -> OpResult<Value> {
        let shape = op.Shape(self_).out();
        filled(op, shape, fill_value)
    }

    /// scalar_tensor(Scalar s, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
    #[target("aten::scalar_tensor")]
    fn scalar_tensor(op, s: Scalar) -> Value {
        let t = op.out_dtype(0).unwrap_or(DType::Float);
        scalar_value(op, s, t)
    }

    /// arange.start_step(Scalar start, Scalar end, Scalar step=1, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
    #[target("aten::arange.start_step", "aten::arange.start", "aten::arange")]
    fn arange(op, start: Scalar = Scalar::Int(0), end: Scalar, step: Scalar = Scalar::Int(1)) -> Value {
        let t = op.out_dtype(0).unwrap_or(DType::Int64);
        // Range in the output type; float ranges are computed in float64 for torch's accuracy.
        let work = if t.is_float() { DType::Double } else { DType::Int64 };
        let (s, e, d) = (scalar_value(op, start, work), scalar_value(op, end, work), scalar_value(op, step, work));
        let r = op.Range(s, e, d).out();
        cast(op, r, t)
    }
}
