//! Splits and joins along an axis: split, chunk, unbind, tensor_split and its h/v/d forms, cat,
//! stack and its h/v/d/column forms, _chunk_cat.

use crate::translate::prelude::*;
use crate::translations;
use crate::translations::shared::axes::at_least;

/// `Split` of `x` along `axis` into pieces of the given sizes (SymInts allowed).
fn split_into(op: &mut Builder, x: Value, sizes: &[SymInt], axis: i64) -> Vec<Value> {
    let s = shape_vec(op, sizes);
    op.Split(x, Some(s)).axis(axis).outs_vec(sizes.len())
}

/// Sizes of `split(split_size)` of an axis of `total` elements, as many as the node has outputs.
fn chunk_sizes(op: &Builder, total: i64, chunk: i64) -> OpResult<Vec<SymInt>> {
    pieces(op, "the split", if chunk > 0 { total / chunk + i64::from(total % chunk != 0) } else { 0 })?;
    let mut sizes = Vec::new();
    let mut left = total;
    while left > 0 {
        sizes.push(SymInt::Const(chunk.min(left)));
        left -= chunk;
    }
    if sizes.is_empty() {
        sizes.push(SymInt::Const(0));
    }
    Ok(sizes)
}

/// The fixed size of `x` along `axis`, or an error naming `what`.
fn fixed_dim(op: &Builder, x: Value, axis: i64, what: &str) -> OpResult<i64> {
    match op.shape(x).and_then(|s| s.get(axis as usize)).cloned() {
        Some(Dim::Fixed(n)) => Ok(n),
        _ => bail!("{what} needs a static size along the split axis"),
    }
}

/// Concat after casting every part to the node's output type.
fn concat_as_out(op: &mut Builder, parts: Vec<Value>, axis: i64) -> Value {
    let out = op.out_dtype(0);
    let parts: Vec<Value> = parts
        .into_iter()
        .map(|t| match out {
            Some(d) => cast(op, t, d),
            None => t,
        })
        .collect();
    if parts.len() == 1 {
        return parts[0];
    }
    op.Concat(&parts).axis(axis).out()
}

/// The pieces of `x` between consecutive split points along `axis`: `x[:p0]`, `x[p0:p1]`, ...,
/// `x[pk:]`. Slice clamps and counts negative points from the end as torch's slice does, and a
/// piece whose end comes before its start is empty, so the points are used as they are, symbolic
/// ones included.
fn pieces_between(op: &mut Builder, x: Value, axis: i64, points: &[SymInt]) -> Vec<Value> {
    let axes = op.const_i64s(&[axis]);
    let mut bounds = vec![op.const_i64s(&[0])];
    bounds.extend(points.iter().map(|&p| shape_vec(op, &[p])));
    bounds.push(op.const_i64s(&[i64::MAX]));
    bounds.windows(2).map(|w| op.Slice(x, w[0], w[1], Some(axes), None)).collect()
}

/// `x` in `k` pieces along `axis`: n/k elements each, the first n%k one more (torch's
/// `tensor_split` into sections; fewer elements than sections leave the last pieces empty).
fn into_sections(op: &mut Builder, x: Value, axis: i64, k: i64) -> OpResult<Vec<Value>> {
    let count = pieces(op, "tensor_split", k)?;
    if count == 1 {
        return Ok(vec![x]);
    }
    let sizes = match op.shape(x).and_then(|s| s.get(axis as usize)).cloned() {
        Some(Dim::Fixed(n)) => op.const_i64s(&(0..k).map(|i| n / k + i64::from(i < n % k)).collect::<Vec<_>>()),
        // The size is known at run time only: size i is n/k plus one where i < n%k. ONNX
        // Runtime's Split takes the empty pieces a short axis gives.
        _ => {
            let n = op.Shape(x).start(axis).end(axis + 1).out();
            let k_ = op.const_i64s(&[k]);
            let quotient = op.Div(n, k_);
            let rest = op.Mod(n, k_).out();
            let index = op.const_i64s(&(0..k).collect::<Vec<_>>());
            let longer = op.Less(index, rest);
            let longer = cast(op, longer, DType::Int64);
            op.Add(quotient, longer)
        }
    };
    Ok(op.Split(x, Some(sizes)).axis(axis).outs_vec(count))
}

/// hsplit / vsplit / dsplit: `tensor_split` along `axis`, into equal sections or at indices.
fn split_along(
    op: &mut Builder,
    x: Value,
    axis: i64,
    sections: Option<i64>,
    indices: Option<Vec<i64>>,
) -> OpResult<Vec<Value>> {
    let r = rank_of(op, x)?;
    if (axis as usize) >= r {
        bail!("split along axis {axis} of a rank-{r} tensor");
    }
    match (sections, indices) {
        (Some(k), _) => {
            // torch requires equal sections; a symbolic size it has checked divides.
            if let Some(Dim::Fixed(n)) = op.shape(x).and_then(|s| s.get(axis as usize)).cloned() {
                if k <= 0 || n % k != 0 {
                    bail!("cannot split {n} elements into {k} equal sections");
                }
            }
            into_sections(op, x, axis, k)
        }
        (None, Some(ix)) => {
            let points: Vec<SymInt> = ix.into_iter().map(SymInt::Const).collect();
            Ok(pieces_between(op, x, axis, &points))
        }
        _ => bail!("split needs sections or indices"),
    }
}

translations! {
    /// split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]
    #[target("aten::split.Tensor", "aten::split_copy.Tensor", "aten::unsafe_split.Tensor")]
    fn split(op, self_: Tensor, split_size: SymInt, dim: i64 = 0) -> OpResult<Vec<Value>> {
        let r = rank_of(op, self_)?;
        let axis = normalize_axis(dim, r)?;
        let (SymInt::Const(chunk), Some(Dim::Fixed(total))) =
            (split_size, op.shape(self_).and_then(|s| s.get(axis as usize)).cloned())
        else {
            bail!("split with a dynamic size along the split axis is not supported yet");
        };
        if chunk <= 0 {
            bail!("split_size must be positive, got {chunk}");
        }
        let sizes = chunk_sizes(op, total, chunk)?;
        if sizes.len() <= 1 {
            return Ok(vec![self_]);
        }
        Ok(split_into(op, self_, &sizes, axis))
    }

    /// split_with_sizes(Tensor(a -> *) self, SymInt[] split_sizes, int dim=0) -> Tensor(a)[]
    #[target("aten::split_with_sizes", "aten::split_with_sizes_copy", "aten::split.default")]
    fn split_with_sizes(
        op,
        self_: Tensor,
        split_sizes: Vec<SymInt>,
        dim: i64 = 0,
    ) -> OpResult<Vec<Value>> {
        let r = rank_of(op, self_)?;
        let axis = normalize_axis(dim, r)?;
        if split_sizes.len() == 1 {
            return Ok(vec![self_]);
        }
        Ok(split_into(op, self_, &split_sizes, axis))
    }

    /// cat(Tensor[] tensors, int dim=0) -> Tensor
    #[target("aten::cat")]
    fn cat(op, tensors: Vec<Tensor>, dim: i64 = 0) -> OpResult<Value> {
        let out = op.out_dtype(0);
        // torch skips 1-D empty tensors in cat (legacy behaviour).
        let kept: Vec<Value> = tensors.into_iter().filter(|&t| !matches!(op.shape(t), Some([Dim::Fixed(0)]))).collect();
        let parts: Vec<Value> = kept
            .into_iter()
            .map(|t| match out {
                Some(d) => cast(op, t, d),
                None => t,
            })
            .collect();
        let Some(&first) = parts.first() else { bail!("cat of no non-empty tensors") };
        let r = rank_of(op, first)?;
        if parts.len() == 1 {
            return Ok(first);
        }
        Ok(op.Concat(&parts).axis(normalize_axis(dim, r)?).out())
    }

    /// stack(Tensor[] tensors, int dim=0) -> Tensor
    #[target("aten::stack")]
    fn stack(op, tensors: Vec<Tensor>, dim: i64 = 0) -> OpResult<Value> {
        let Some(&first) = tensors.first() else { bail!("stack of no tensors") };
        let r = rank_of(op, first)?;
        let axis = normalize_axis(dim, r + 1)?;
        let axes = op.const_i64s(&[axis]);
        let parts: Vec<Value> = tensors.iter().map(|&t| op.Unsqueeze(t, axes)).collect();
        Ok(op.Concat(&parts).axis(axis).out())
    }

    /// unbind.int(Tensor(a -> *) self, int dim=0) -> Tensor(a)[]
    #[target("aten::unbind.int", "aten::unbind_copy.int")]
    fn unbind(op, self_: Tensor, dim: i64 = 0) -> OpResult<Vec<Value>> {
        let r = rank_of(op, self_)?;
        let axis = normalize_axis(dim, r)?;
        let n = fixed_dim(op, self_, axis, "unbind")?;
        pieces(op, "unbind", n)?;
        let axes = op.const_i64s(&[axis]);
        if n == 1 {
            return Ok(vec![op.Squeeze(self_, Some(axes))]);
        }
        let sizes = vec![SymInt::Const(1); n as usize];
        let parts = split_into(op, self_, &sizes, axis);
        Ok(parts.into_iter().map(|p| op.Squeeze(p, Some(axes))).collect())
    }

    /// chunk(Tensor(a -> *) self, int chunks, int dim=0) -> Tensor(a)[]
    #[target("aten::chunk", "aten::unsafe_chunk")]
    fn chunk(op, self_: Tensor, chunks: i64, dim: i64 = 0) -> OpResult<Vec<Value>> {
        let r = rank_of(op, self_)?;
        let axis = normalize_axis(dim, r)?;
        let n = fixed_dim(op, self_, axis, "chunk")?;
        if chunks <= 0 {
            bail!("chunk expects a positive number of chunks");
        }
        let size = (n + chunks - 1) / chunks;
        if size == 0 {
            return Ok(vec![self_]);
        }
        let sizes = chunk_sizes(op, n, size)?;
        if sizes.len() == 1 {
            return Ok(vec![self_]);
        }
        Ok(split_into(op, self_, &sizes, axis))
    }

    /// hsplit.int(Tensor(a -> *) self, int sections) -> Tensor(a)[]
    #[target("aten::hsplit.int", "aten::hsplit.array")]
    fn hsplit(
        op,
        self_: Tensor,
        sections: Option<i64> = None,
        indices: Option<Vec<i64>> = None,
    ) -> OpResult<Vec<Value>> {
        let r = rank_of(op, self_)?;
        let axis = if r == 1 { 0 } else { 1 };
        split_along(op, self_, axis, sections, indices)
    }

    /// tensor_split.sections(Tensor(a -> *) self, SymInt sections, int dim=0) -> Tensor(a)[]
    #[target("aten::tensor_split.sections")]
    fn tensor_split_sections(op, self_: Tensor, sections: SymInt, dim: i64 = 0) -> OpResult<Vec<Value>> {
        let axis = normalize_axis(dim, rank_of(op, self_)?)?;
        // The count is the node's number of outputs, which the graph fixes.
        let SymInt::Const(k) = sections else { bail!("tensor_split into a symbolic number of sections") };
        if k <= 0 {
            bail!("tensor_split needs a positive number of sections, got {k}");
        }
        into_sections(op, self_, axis, k)
    }

    /// tensor_split.indices(Tensor(a -> *) self, SymInt[] indices, int dim=0) -> Tensor(a)[]
    #[target("aten::tensor_split.indices")]
    fn tensor_split_indices(op, self_: Tensor, indices: Vec<SymInt>, dim: i64 = 0) -> OpResult<Vec<Value>> {
        let axis = normalize_axis(dim, rank_of(op, self_)?)?;
        Ok(pieces_between(op, self_, axis, &indices))
    }

    /// tensor_split.tensor_indices_or_sections(Tensor(a -> *) self, Tensor tensor_indices_or_sections, int dim=0)
    ///     -> Tensor(a)[]
    #[target("aten::tensor_split.tensor_indices_or_sections")]
    fn tensor_split_by_tensor(
        op,
        self_: Tensor,
        tensor_indices_or_sections: Tensor,
        dim: i64 = 0,
    ) -> OpResult<Vec<Value>> {
        let r = rank_of(op, self_)?;
        let axis = normalize_axis(dim, r)?;
        match op.shape(tensor_indices_or_sections).map(|s| s.to_vec()) {
            // A count of sections: the archive's outputs are that many.
            Some(s) if s.is_empty() => {
                let k = (0..).take_while(|&i| op.out_dtype(i).is_some()).count() as i64;
                if k == 0 {
                    bail!("tensor_split into no sections");
                }
                into_sections(op, self_, axis, k)
            }
            // Split points: piece i is x[idx[i-1] : idx[i]] along dim (torch's slice rules).
            Some(s) if s.len() == 1 => {
                let Dim::Fixed(m) = s[0] else { bail!("tensor_split needs a static number of indices") };
                let idx = cast(op, tensor_indices_or_sections, DType::Int64);
                let axes = op.const_i64s(&[axis]);
                let at = |op: &mut Builder, i: i64| {
                    let (a, b) = (op.const_i64s(&[i]), op.const_i64s(&[i + 1]));
                    op.Slice(idx, a, b, None, None)
                };
                Ok((0..=m)
                    .map(|i| {
                        let a = if i == 0 { op.const_i64s(&[0]) } else { at(op, i - 1) };
                        let b = if i == m { op.const_i64s(&[i64::MAX]) } else { at(op, i) };
                        op.Slice(self_, a, b, Some(axes), None)
                    })
                    .collect())
            }
            _ => bail!("tensor_split needs a 0-d or 1-D tensor_indices_or_sections of known shape"),
        }
    }

    /// vsplit.int(Tensor(a -> *) self, int sections) -> Tensor(a)[]
    #[target("aten::vsplit.int", "aten::vsplit.array")]
    fn vsplit(
        op,
        self_: Tensor,
        sections: Option<i64> = None,
        indices: Option<Vec<i64>> = None,
    ) -> OpResult<Vec<Value>> {
        split_along(op, self_, 0, sections, indices)
    }

    /// dsplit.int(Tensor(a -> *) self, int sections) -> Tensor(a)[]
    #[target("aten::dsplit.int", "aten::dsplit.array")]
    fn dsplit(
        op,
        self_: Tensor,
        sections: Option<i64> = None,
        indices: Option<Vec<i64>> = None,
    ) -> OpResult<Vec<Value>> {
        split_along(op, self_, 2, sections, indices)
    }

    /// hstack(Tensor[] tensors) -> Tensor
    #[target("aten::hstack")]
    fn hstack(op, tensors: Vec<Tensor>) -> OpResult<Value> {
        let mut parts = Vec::new();
        for t in tensors {
            parts.push(at_least(op, t, 1)?);
        }
        let Some(&first) = parts.first() else { bail!("hstack of no tensors") };
        let axis = if op.rank(first) == Some(1) { 0 } else { 1 };
        Ok(concat_as_out(op, parts, axis))
    }

    /// vstack(Tensor[] tensors) -> Tensor
    #[target("aten::vstack", "aten::row_stack")]
    fn vstack(op, tensors: Vec<Tensor>) -> OpResult<Value> {
        let mut parts = Vec::new();
        for t in tensors {
            parts.push(at_least(op, t, 2)?);
        }
        Ok(concat_as_out(op, parts, 0))
    }

    /// dstack(Tensor[] tensors) -> Tensor
    #[target("aten::dstack")]
    fn dstack(op, tensors: Vec<Tensor>) -> OpResult<Value> {
        let mut parts = Vec::new();
        for t in tensors {
            parts.push(at_least(op, t, 3)?);
        }
        Ok(concat_as_out(op, parts, 2))
    }

    /// column_stack(Tensor[] tensors) -> Tensor
    #[target("aten::column_stack")]
    fn column_stack(op, tensors: Vec<Tensor>) -> OpResult<Value> {
        let mut parts = Vec::new();
        for t in tensors {
            parts.push(if rank_of(op, t)? <= 1 {
                let s = op.const_i64s(&[-1, 1]);
                op.Reshape(t, s).out()
            } else {
                t
            });
        }
        Ok(concat_as_out(op, parts, 1))
    }

    /// _chunk_cat(Tensor[] tensors, int dim, int num_chunks) -> Tensor
    #[target("aten::_chunk_cat")]
    fn _chunk_cat(op, tensors: Vec<Tensor>, dim: i64, num_chunks: i64) -> OpResult<Value> {
        if tensors.is_empty() || num_chunks < 1 {
            bail!("_chunk_cat needs tensors and a positive num_chunks");
        }
        let t = float_result_dtype(op, tensors[0]).or_else(|_| dtype_of(op, tensors[0]))?;
        let r = rank_of(op, tensors[0])?;
        let d = normalize_axis(dim, r)?;
        let mut parts = Vec::new();
        for &x in &tensors {
            let s = static_shape(op, x, "_chunk_cat")?;
            if d < 0 || d as usize >= s.len() {
                bail!("_chunk_cat: dim {dim} out of range");
            }
            let x = cast(op, x, t);
            let n = s[d as usize];
            let chunk = (n + num_chunks - 1) / num_chunks;
            let padded = chunk * num_chunks;
            let x = if padded != n {
                let pads = op.const_i64s(&[0, padded - n]);
                let axes = op.const_i64s(&[d]);
                op.Pad(x, pads, None, Some(axes)).out()
            } else {
                x
            };
            let mut shape: Vec<i64> = s[..d as usize].to_vec();
            shape.push(num_chunks);
            shape.push(chunk * s[d as usize + 1..].iter().product::<i64>());
            let sv = op.const_i64s(&shape);
            parts.push(op.Reshape(x, sv).out());
        }
        Ok(op.Concat(&parts).axis(d + 1).out())
    }
}
