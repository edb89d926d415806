//! Reductions (sum, mean, any, max, amax, argmax), softmax, topk.

use crate::translate::prelude::*;
use crate::translations;

/// The axes of a reduction as a constant, `None` meaning all axes.
fn axes_of(op: &mut Builder, x: Value, dim: &Option<Vec<i64>>) -> OpResult<Option<Value>> {
    let r = rank_of(op, x)?;
    Ok(match dim {
        Some(d) if !d.is_empty() => {
            let axes: Vec<i64> = d.iter().map(|&a| normalize_axis(a, r.max(1))).collect();
            Some(op.const_i64s(&axes))
        }
        _ => None,
    })
}

translations! {
    /// sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor
    #[target("aten::sum.dim_IntList", "aten::sum")]
    fn sum(op, self_: Tensor, dim: Option<Vec<i64>> = None, keepdim: bool = false) -> OpResult<Value> {
        // torch sums bool and integer tensors as int64 (the node's output type).
        let t = op.out_dtype(0).unwrap_or(dtype_of(op, self_)?);
        let x = cast(op, self_, t);
        let axes = axes_of(op, x, &dim)?;
        Ok(op.ReduceSum(x, axes).keepdims(keepdim as i64).out())
    }

    /// mean.dim(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor
    #[target("aten::mean.dim", "aten::mean")]
    fn mean(op, self_: Tensor, dim: Option<Vec<i64>> = None, keepdim: bool = false) -> OpResult<Value> {
        let t = op.out_dtype(0).unwrap_or(dtype_of(op, self_)?);
        let x = cast(op, self_, t);
        let axes = axes_of(op, x, &dim)?;
        Ok(op.ReduceMean(x, axes).keepdims(keepdim as i64).out())
    }

    /// any.dim(Tensor self, int dim, bool keepdim=False) -> Tensor
    #[target("aten::any.dim", "aten::any.dims", "aten::any")]
    fn any(op, self_: Tensor, dim: Option<Vec<i64>> = None, keepdim: bool = false) -> OpResult<Value> {
        let b = cast(op, self_, DType::Bool);
        let x = cast(op, b, DType::Int64);
        let axes = axes_of(op, x, &dim)?;
        let m = op.ReduceMax(x, axes).keepdims(keepdim as i64).out();
        Ok(cast(op, m, DType::Bool))
    }

    /// all.dim(Tensor self, int dim, bool keepdim=False) -> Tensor
    #[target("aten::all.dim", "aten::all.dims", "aten::all")]
    fn all(op, self_: Tensor, dim: Option<Vec<i64>> = None, keepdim: bool = false) -> OpResult<Value> {
        let b = cast(op, self_, DType::Bool);
        let x = cast(op, b, DType::Int64);
        let axes = axes_of(op, x, &dim)?;
        let m = op.ReduceMin(x, axes).keepdims(keepdim as i64).out();
        Ok(cast(op, m, DType::Bool))
    }

    /// amax(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor
    #[target("aten::amax")]
    fn amax(op, self_: Tensor, dim: Option<Vec<i64>> = None, keepdim: bool = false) -> OpResult<Value> {
        let axes = axes_of(op, self_, &dim)?;
        Ok(op.ReduceMax(self_, axes).keepdims(keepdim as i64).out())
    }

    /// amin(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor
    #[target("aten::amin")]
    fn amin(op, self_: Tensor, dim: Option<Vec<i64>> = None, keepdim: bool = false) -> OpResult<Value> {
        let axes = axes_of(op, self_, &dim)?;
        Ok(op.ReduceMin(self_, axes).keepdims(keepdim as i64).out())
    }

    /// max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)
    #[target("aten::max.dim")]
    fn max_dim(op, self_: Tensor, dim: i64, keepdim: bool = false) -> OpResult<(Value, Value)> {
        let r = rank_of(op, self_)?;
        let axis = normalize_axis(dim, r.max(1));
        let axes = op.const_i64s(&[axis]);
        let values = op.ReduceMax(self_, Some(axes)).keepdims(keepdim as i64).out();
        let indices = op.ArgMax(self_).axis(axis).keepdims(keepdim as i64).select_last_index(0).out();
        Ok((values, indices))
    }

    /// min.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)
    #[target("aten::min.dim")]
    fn min_dim(op, self_: Tensor, dim: i64, keepdim: bool = false) -> OpResult<(Value, Value)> {
        let r = rank_of(op, self_)?;
        let axis = normalize_axis(dim, r.max(1));
        let axes = op.const_i64s(&[axis]);
        let values = op.ReduceMin(self_, Some(axes)).keepdims(keepdim as i64).out();
        let indices = op.ArgMin(self_).axis(axis).keepdims(keepdim as i64).select_last_index(0).out();
        Ok((values, indices))
    }

    /// argmax(Tensor self, int? dim=None, bool keepdim=False) -> Tensor
    #[target("aten::argmax")]
    fn argmax(op, self_: Tensor, dim: Option<i64> = None, keepdim: bool = false) -> OpResult<Value> {
        let r = rank_of(op, self_)?;
        Ok(match dim {
            Some(d) => op.ArgMax(self_).axis(normalize_axis(d, r.max(1))).keepdims(keepdim as i64).out(),
            None => {
                let flat = as_1d(op, self_);
                op.ArgMax(flat).axis(0).keepdims(0).out()
            }
        })
    }

    /// softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor
    #[target("aten::softmax.int", "aten::_softmax", "aten::_safe_softmax")]
    fn softmax(op, self_: Tensor, dim: i64) -> OpResult<Value> {
        let r = rank_of(op, self_)?;
        let t = op.out_dtype(0).unwrap_or(dtype_of(op, self_)?);
        let x = cast(op, self_, t);
        if r == 0 {
            let one = op.scalar(t, 1.0);
            let shape = op.Shape(x).out();
            return Ok(op.Expand(one, shape).out());
        }
        Ok(op.Softmax(x).axis(normalize_axis(dim, r)).out())
    }

    /// log_softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor
    #[target("aten::log_softmax.int", "aten::_log_softmax")]
    fn log_softmax(op, self_: Tensor, dim: i64) -> OpResult<Value> {
        let r = rank_of(op, self_)?;
        let t = op.out_dtype(0).unwrap_or(dtype_of(op, self_)?);
        let x = cast(op, self_, t);
        Ok(op.LogSoftmax(x).axis(normalize_axis(dim, r.max(1))).out())
    }

    /// topk(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True) -> (Tensor values, Tensor indices)
    #[target("aten::topk")]
    fn topk(op, self_: Tensor, k: SymInt, dim: i64 = -1, largest: bool = true, sorted: bool = true) -> OpResult<(Value, Value)> {
        let r = rank_of(op, self_)?;
        let k = sym_value(op, k);
        let k = as_1d(op, k);
        let [values, indices] = op.TopK(self_, k).axis(normalize_axis(dim, r.max(1))).largest(largest as i64).sorted(sorted as i64).outs::<2>();
        Ok((values, indices))
    }
}
