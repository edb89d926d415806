//! Embeddings: embedding, embedding_bag (sum, mean, max; per-sample weights), embedding_renorm, and the
//! embedding's gradient (embedding_dense_backward).

use crate::translate::prelude::*;
use crate::translations;
use crate::translations::shared::norms::pnorm;

/// torch's embedding_bag: bag `b` reduces the rows of `indices[offsets[b]..offsets[b + 1]]` (the last
/// bag runs to the end, or `include_last_offset` makes the last offset its end) by sum (rows scaled by
/// `per_sample_weights`), mean or max; entries equal to `padding_idx` (when not negative) do not
/// count, and an empty bag gives zeros. The bags are a [bags, n] mask over the index positions: a
/// MatMul sums them, a masked ReduceMax takes their maximum. Only the output is computed: offset2bag,
/// bag_size and max_indices are the kernel's bookkeeping for the gradient, and a program that reads
/// them fails.
#[allow(clippy::too_many_arguments)]
fn embedding_bag_of(
    op: &mut Builder,
    weight: Value,
    indices: Value,
    offsets: Value,
    mode: i64,
    per_sample_weights: Option<Value>,
    include_last_offset: bool,
    padding_idx: Option<i64>,
) -> OpResult<Vec<Option<Value>>> {
    if rank_of(op, indices)? != 1 || rank_of(op, offsets)? != 1 {
        bail!("embedding_bag takes 1-D indices and offsets (2-D inputs are flattened by F.embedding_bag)");
    }
    if per_sample_weights.is_some() && mode != 0 {
        bail!("embedding_bag: per_sample_weights need mode='sum'");
    }
    let t = dtype_of(op, weight)?;
    let idx = cast(op, indices, DType::Int64);
    let off = cast(op, offsets, DType::Int64);
    let n = op.Shape(idx).out();
    let zero = op.const_i64s(&[0]);
    let n0 = op.Squeeze(n, Some(zero));
    let (z, one) = (op.scalar_i64(0), op.scalar_i64(1));
    let pos = op.Range(z, n0, one);
    let (starts, ends) = if include_last_offset {
        let starts = slice_along(op, off, 0, 0, -1);
        (starts, slice_along(op, off, 0, 1, i64::MAX))
    } else {
        let next = slice_along(op, off, 0, 1, i64::MAX);
        (off, op.Concat(&[next, n]).axis(0).out())
    };
    let last = op.const_i64s(&[1]);
    let (starts, ends) = (op.Unsqueeze(starts, last), op.Unsqueeze(ends, last));
    let before = op.Less(pos, starts);
    let inside = op.Not(before);
    let below = op.Less(pos, ends);
    let mut mask = op.And(inside, below);
    if let Some(p) = padding_idx.filter(|p| *p >= 0) {
        let p = op.scalar_i64(p);
        let pad = op.Equal(idx, p);
        let keep = op.Not(pad);
        mask = op.And(mask, keep);
    }
    let rows = op.Gather(weight, idx).axis(0).out();
    let maskf = cast(op, mask, t);
    let y = match mode {
        0 | 1 => {
            let rows = match per_sample_weights {
                Some(w) => {
                    let w = cast(op, w, t);
                    let w = op.Unsqueeze(w, last);
                    op.Mul(rows, w)
                }
                None => rows,
            };
            let sum = op.MatMul(maskf, rows);
            if mode == 0 {
                sum
            } else {
                let count = op.ReduceSum(maskf, Some(last)).keepdims(1).out();
                let one = op.scalar(t, 1.0);
                let count = op.Max(&[count, one]);
                op.Div(sum, count)
            }
        }
        2 => {
            // [bags, n, 1] against [1, n, D].
            let two = op.const_i64s(&[2]);
            let m = op.Unsqueeze(mask, two);
            let r = op.Unsqueeze(rows, zero);
            let ninf = op.scalar(t, f64::NEG_INFINITY);
            let masked = op.Where(m, r, ninf);
            let mx = op.ReduceMax(masked, Some(last)).keepdims(0).out();
            let any = op.ReduceMax(maskf, Some(last)).keepdims(1).out();
            let fz = op.scalar(t, 0.0);
            let empty = op.Equal(any, fz);
            op.Where(empty, fz, mx)
        }
        m => bail!("unknown embedding_bag mode {m}"),
    };
    Ok(vec![Some(y), None, None, None])
}

translations! {
    /// embedding(Tensor weight, Tensor indices, SymInt padding_idx=-1, bool scale_grad_by_freq=False,
    ///     bool sparse=False) -> Tensor
    #[target("aten::embedding")]
    fn embedding(
        op,
        weight: Tensor,
        indices: Tensor,
        // These three shape the gradient only.
        _padding_idx: Ignored,
        _scale_grad_by_freq: Ignored,
        _sparse: Ignored,
    ) -> Value {
        op.Gather(weight, indices).axis(0).out()
    }

    /// embedding_bag(Tensor weight, Tensor indices, Tensor offsets, bool scale_grad_by_freq=False, int mode=0,
    ///     bool sparse=False, Tensor? per_sample_weights=None, bool include_last_offset=False) -> (Tensor, Tensor,
    ///     Tensor, Tensor)
    #[target("aten::embedding_bag")]
    fn embedding_bag(
        op,
        weight: Tensor,
        indices: Tensor,
        offsets: Tensor,
        // These two shape the gradient only.
        _scale_grad_by_freq: Ignored,
        mode: i64 = 0,
        _sparse: Ignored,
        per_sample_weights: Option<Tensor> = None,
        include_last_offset: bool = false,
    ) -> OpResult<Vec<Option<Value>>> {
        embedding_bag_of(op, weight, indices, offsets, mode, per_sample_weights, include_last_offset, None)
    }

    /// embedding_bag.padding_idx(Tensor weight, Tensor indices, Tensor offsets, bool scale_grad_by_freq, int mode,
    ///     bool sparse, Tensor? per_sample_weights, bool include_last_offset, int? padding_idx) -> (Tensor, Tensor,
    ///     Tensor, Tensor)
    #[target("aten::embedding_bag.padding_idx")]
    fn embedding_bag_padding_idx(
        op,
        weight: Tensor,
        indices: Tensor,
        offsets: Tensor,
        // These two shape the gradient only.
        _scale_grad_by_freq: Ignored,
        mode: i64,
        _sparse: Ignored,
        per_sample_weights: Option<Tensor>,
        include_last_offset: bool,
        padding_idx: Option<i64>,
    ) -> OpResult<Vec<Option<Value>>> {
        // This overload wraps a negative padding_idx (-1 is the last row); None means none.
        let padding_idx = match padding_idx {
            Some(p) if p < 0 => {
                let rows = static_shape(op, weight, "embedding_bag with a negative padding_idx")?[0];
                Some(p + rows)
            }
            p => p,
        };
        embedding_bag_of(op, weight, indices, offsets, mode, per_sample_weights, include_last_offset, padding_idx)
    }

    /// _embedding_bag(Tensor weight, Tensor indices, Tensor offsets, bool scale_grad_by_freq=False, int mode=0,
    ///     bool sparse=False, Tensor? per_sample_weights=None, bool include_last_offset=False, int padding_idx=-1)
    ///     -> (Tensor, Tensor, Tensor, Tensor)
    #[target("aten::_embedding_bag", "aten::_embedding_bag_forward_only")]
    fn _embedding_bag(
        op,
        weight: Tensor,
        indices: Tensor,
        offsets: Tensor,
        // These two shape the gradient only.
        _scale_grad_by_freq: Ignored,
        mode: i64 = 0,
        _sparse: Ignored,
        per_sample_weights: Option<Tensor> = None,
        include_last_offset: bool = false,
        padding_idx: i64 = -1,
    ) -> OpResult<Vec<Option<Value>>> {
        // Here a negative padding_idx means none (the public overload has wrapped it).
        let padding_idx = Some(padding_idx);
        embedding_bag_of(op, weight, indices, offsets, mode, per_sample_weights, include_last_offset, padding_idx)
    }

    /// embedding_dense_backward(Tensor grad_output, Tensor indices, SymInt num_weights, SymInt padding_idx, bool
    ///     scale_grad_by_freq) -> Tensor
    #[target("aten::embedding_dense_backward")]
    fn embedding_dense_backward(
        op,
        grad_output: Tensor,
        indices: Tensor,
        num_weights: SymInt,
        padding_idx: SymInt,
        scale_grad_by_freq: bool,
    ) -> OpResult<Value> {
        // Each looked-up row's gradient is added into the row it read: a ScatterND with "add" (an
        // index read twice adds twice). Rows of padding_idx get none; scale_grad_by_freq divides
        // each by how often its index occurs.
        let t = float_result_dtype(op, grad_output)?;
        let g = cast(op, grad_output, t);
        let flat = op.const_i64s(&[-1]);
        let idx = cast(op, indices, DType::Int64);
        let idx = op.Reshape(idx, flat).out();
        let width = op.Shape(g).start(-1).out();
        let rows_shape = op.Concat(&[flat, width]).axis(0).out();
        let mut rows = op.Reshape(g, rows_shape).out();
        let last = op.const_i64s(&[-1]);
        if !matches!(padding_idx, SymInt::Const(p) if p < 0) {
            let pad = sym_value(op, padding_idx);
            let is_pad = op.Equal(idx, pad);
            let is_pad = op.Unsqueeze(is_pad, last);
            rows = op.Where(is_pad, 0.0, rows);
        }
        let table = shape_vec(op, &[num_weights]);
        let (zero, one) = (op.scalar(t, 0.0), op.scalar(t, 1.0));
        if scale_grad_by_freq {
            let zeros = op.Expand(zero, table);
            let n = op.Shape(idx).out();
            let ones = op.Expand(one, n);
            let counts = op.ScatterElements(zeros, idx, ones).axis(0).reduction("add").out();
            let freq = op.Gather(counts, idx).axis(0).out();
            let freq = op.Unsqueeze(freq, last);
            rows = op.Div(rows, freq);
        }
        let out_shape = op.Concat(&[table, width]).axis(0).out();
        let zeros = op.Expand(zero, out_shape);
        let at = op.Unsqueeze(idx, last);
        Ok(op.ScatterND(zeros, at, rows).reduction("add").out())
    }

    /// embedding_renorm(Tensor self, Tensor indices, float max_norm, float norm_type) -> Tensor
    #[target("aten::embedding_renorm")]
    fn embedding_renorm(op, self_: Tensor, indices: Tensor, max_norm: f64, norm_type: f64) -> OpResult<Value> {
        // Rows that `indices` names and whose norm exceeds max_norm are scaled to max_norm / (norm + 1e-7)
        // (torch's constant); the other rows are unchanged.
        let t = dtype_of(op, self_)?;
        let norms = pnorm(op, self_, norm_type, &[1], true)?;
        let rows = dim_size(op, self_, 0);
        let zero = op.scalar_i64(0);
        let one = op.scalar_i64(1);
        let ids = op.Range(zero, rows, one);
        let col = op.const_i64s(&[-1, 1]);
        let ids = op.Reshape(ids, col).out();
        let flat = op.const_i64s(&[1, -1]);
        let named = op.Reshape(indices, flat).out();
        let named = cast(op, named, DType::Int64);
        let hits = op.Equal(ids, named);
        let hits = cast(op, hits, DType::Int64);
        let axes = op.const_i64s(&[1]);
        let hit_count = op.ReduceMax(hits, Some(axes)).keepdims(1).out();
        let used = cast(op, hit_count, DType::Bool);
        let limit = op.scalar(t, max_norm);
        let too_long = op.Greater(norms, limit);
        let rescale = op.And(used, too_long);
        let eps = op.scalar(t, 1e-7);
        let denom = op.Add(norms, eps);
        let scale = op.Div(limit, denom);
        let one_t = op.scalar(t, 1.0);
        let factor = op.Where(rescale, scale, one_t);
        Ok(op.Mul(self_, factor))
    }
}
