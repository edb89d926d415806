//! Views and shape changes: view/reshape, permute, transpose, (un)squeeze, flatten, expand,
//! repeat, split, cat, select, slice, as_strided, advanced indexing, embedding.

use crate::translate::prelude::*;
use crate::translations;

/// `Split` of `x` along `axis` into pieces of the given sizes (SymInts allowed).
fn split_into(op: &mut Builder, x: Value, sizes: &[SymInt], axis: i64) -> Vec<Value> {
    let s = shape_vec(op, sizes);
    op.Split(x, Some(s)).axis(axis).outs_vec(sizes.len())
}

/// The size of `x` along `axis` as a 1-D int64 of one element.
fn dim_size(op: &mut Builder, x: Value, axis: i64) -> Value {
    op.Shape(x).start(axis).end(axis + 1).out()
}

translations! {
    /// view(Tensor(a) self, SymInt[] size) -> Tensor(a)
    #[target("aten::view", "aten::_unsafe_view", "aten::view_copy")]
    fn view(op, self_: Tensor, size: Vec<SymInt>) -> Value {
        let shape = shape_vec(op, &size);
        op.Reshape(self_, shape).out()
    }

    /// reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a)
    #[target("aten::reshape")]
    fn reshape(op, self_: Tensor, shape: Vec<SymInt>) -> Value {
        let shape = shape_vec(op, &shape);
        op.Reshape(self_, shape).out()
    }

    /// permute(Tensor(a) self, int[] dims) -> Tensor(a)
    #[target("aten::permute", "aten::permute_copy")]
    fn permute(op, self_: Tensor, dims: Vec<i64>) -> Value {
        let r = dims.len();
        let perm: Vec<i64> = dims.iter().map(|&d| normalize_axis(d, r)).collect();
        op.Transpose(self_).perm(&perm).out()
    }

    /// transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)
    #[target("aten::transpose.int", "aten::transpose_copy.int")]
    fn transpose(op, self_: Tensor, dim0: i64, dim1: i64) -> OpResult<Value> {
        let r = rank_of(op, self_)?;
        if r < 2 {
            return Ok(self_);
        }
        let mut perm: Vec<i64> = (0..r as i64).collect();
        perm.swap(normalize_axis(dim0, r) as usize, normalize_axis(dim1, r) as usize);
        Ok(op.Transpose(self_).perm(&perm).out())
    }

    /// t(Tensor(a) self) -> Tensor(a)
    #[target("aten::t", "aten::numpy_T")]
    fn t(op, self_: Tensor) -> OpResult<Value> {
        let r = rank_of(op, self_)?;
        Ok(if r < 2 { self_ } else { op.Transpose(self_).perm(&[1, 0]).out() })
    }

    /// unsqueeze(Tensor(a) self, int dim) -> Tensor(a)
    #[target("aten::unsqueeze", "aten::unsqueeze_copy")]
    fn unsqueeze(op, self_: Tensor, dim: i64) -> OpResult<Value> {
        let r = rank_of(op, self_)?;
        let axes = op.const_i64s(&[normalize_axis(dim, r + 1)]);
        Ok(op.Unsqueeze(self_, axes).out())
    }

    /// squeeze.dims(Tensor(a) self, int[] dim) -> Tensor(a)
    #[target("aten::squeeze.dims", "aten::squeeze.dim", "aten::squeeze", "aten::squeeze_copy.dims")]
    fn squeeze(op, self_: Tensor, dim: Option<Vec<i64>> = None) -> OpResult<Value> {
        let r = rank_of(op, self_)?;
        let shape = op.shape(self_).map(|s| s.to_vec());
        let dims: Vec<i64> = match dim {
            Some(d) => d.iter().map(|&x| normalize_axis(x, r)).collect(),
            None => (0..r as i64).collect(),
        };
        // torch ignores dims that are not 1; ONNX rejects them, so keep only known 1s.
        let keep: Vec<i64> = match &shape {
            Some(s) => dims.into_iter().filter(|&d| s.get(d as usize) == Some(&Dim::Fixed(1))).collect(),
            None => bail!("squeeze needs the input shape"),
        };
        if keep.is_empty() {
            return Ok(self_);
        }
        let axes = op.const_i64s(&keep);
        Ok(op.Squeeze(self_, Some(axes)).out())
    }

    /// flatten.using_ints(Tensor(a) self, int start_dim=0, int end_dim=-1) -> Tensor(a)
    #[target("aten::flatten.using_ints")]
    fn flatten(op, self_: Tensor, start_dim: i64 = 0, end_dim: i64 = -1) -> OpResult<Value> {
        let r = rank_of(op, self_)?;
        if r == 0 {
            let one = op.const_i64s(&[1]);
            return Ok(op.Reshape(self_, one).out());
        }
        let (s, e) = (normalize_axis(start_dim, r), normalize_axis(end_dim, r));
        if s == e {
            return Ok(self_);
        }
        // [dims before s, -1, dims after e]
        let mut parts = Vec::new();
        if s > 0 {
            parts.push(op.Shape(self_).start(0).end(s).out());
        }
        parts.push(op.const_i64s(&[-1]));
        if (e as usize) < r - 1 {
            parts.push(op.Shape(self_).start(e + 1).out());
        }
        let shape = if parts.len() == 1 { parts[0] } else { op.Concat(&parts).axis(0).out() };
        Ok(op.Reshape(self_, shape).out())
    }

    /// expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)
    #[target("aten::expand", "aten::expand_copy")]
    fn expand(op, self_: Tensor, size: Vec<SymInt>, implicit: bool = false) -> Value {
        // -1 keeps the input's size: Expand broadcasts with 1 in those places.
        let size: Vec<SymInt> = size.into_iter().map(|s| if s == SymInt::Const(-1) { SymInt::Const(1) } else { s }).collect();
        let shape = shape_vec(op, &size);
        op.Expand(self_, shape).out()
    }

    /// expand_as(Tensor(a) self, Tensor other) -> Tensor(a)
    #[target("aten::expand_as")]
    fn expand_as(op, self_: Tensor, other: Tensor) -> Value {
        let shape = op.Shape(other).out();
        op.Expand(self_, shape).out()
    }

    /// repeat(Tensor self, SymInt[] repeats) -> Tensor
    #[target("aten::repeat")]
    fn repeat(op, self_: Tensor, repeats: Vec<SymInt>) -> OpResult<Value> {
        let r = rank_of(op, self_)?;
        let x = if repeats.len() > r {
            // Leading new dims of size 1, then tile.
            let axes: Vec<i64> = (0..(repeats.len() - r) as i64).collect();
            let axes = op.const_i64s(&axes);
            op.Unsqueeze(self_, axes).out()
        } else {
            self_
        };
        let reps = shape_vec(op, &repeats);
        Ok(op.Tile(x, reps).out())
    }

    /// split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]
    #[target("aten::split.Tensor", "aten::split_copy.Tensor")]
    fn split(op, self_: Tensor, split_size: SymInt, dim: i64 = 0) -> OpResult<Vec<Value>> {
        let r = rank_of(op, self_)?;
        let axis = normalize_axis(dim, r);
        let (SymInt::Const(chunk), Some(Dim::Fixed(total))) = (split_size, op.shape(self_).and_then(|s| s.get(axis as usize)).cloned()) else {
            bail!("split with a dynamic size along the split axis is not supported yet");
        };
        if chunk <= 0 {
            bail!("split_size must be positive, got {chunk}");
        }
        let mut sizes = Vec::new();
        let mut left = total;
        while left > 0 {
            sizes.push(SymInt::Const(chunk.min(left)));
            left -= chunk;
        }
        if sizes.len() <= 1 {
            return Ok(vec![self_]);
        }
        Ok(split_into(op, self_, &sizes, axis))
    }

    /// split_with_sizes(Tensor(a -> *) self, SymInt[] split_sizes, int dim=0) -> Tensor(a)[]
    #[target("aten::split_with_sizes", "aten::split_with_sizes_copy")]
    fn split_with_sizes(op, self_: Tensor, split_sizes: Vec<SymInt>, dim: i64 = 0) -> OpResult<Vec<Value>> {
        let r = rank_of(op, self_)?;
        let axis = normalize_axis(dim, r);
        if split_sizes.len() == 1 {
            return Ok(vec![self_]);
        }
        Ok(split_into(op, self_, &split_sizes, axis))
    }

    /// cat(Tensor[] tensors, int dim=0) -> Tensor
    #[target("aten::cat", "aten::concat", "aten::concatenate")]
    fn cat(op, tensors: Vec<Tensor>, dim: i64 = 0) -> OpResult<Value> {
        let out = op.out_dtype(0);
        // torch skips 1-D empty tensors in cat (legacy behaviour).
        let kept: Vec<Value> = tensors.into_iter().filter(|&t| !matches!(op.shape(t), Some([Dim::Fixed(0)]))).collect();
        let parts: Vec<Value> = kept.into_iter().map(|t| match out { Some(d) => cast(op, t, d), None => t }).collect();
        let Some(&first) = parts.first() else { bail!("cat of no non-empty tensors") };
        let r = rank_of(op, first)?;
        if parts.len() == 1 {
            return Ok(first);
        }
        Ok(op.Concat(&parts).axis(normalize_axis(dim, r)).out())
    }

    /// stack(Tensor[] tensors, int dim=0) -> Tensor
    #[target("aten::stack")]
    fn stack(op, tensors: Vec<Tensor>, dim: i64 = 0) -> OpResult<Value> {
        let Some(&first) = tensors.first() else { bail!("stack of no tensors") };
        let r = rank_of(op, first)?;
        let axis = normalize_axis(dim, r + 1);
        let axes = op.const_i64s(&[axis]);
        let parts: Vec<Value> = tensors.iter().map(|&t| op.Unsqueeze(t, axes).out()).collect();
        Ok(op.Concat(&parts).axis(axis).out())
    }

    /// select.int(Tensor(a) self, int dim, SymInt index) -> Tensor(a)
    #[target("aten::select.int", "aten::select_copy.int")]
    fn select(op, self_: Tensor, dim: i64, index: SymInt) -> OpResult<Value> {
        let r = rank_of(op, self_)?;
        let idx = sym_value(op, index);
        Ok(op.Gather(self_, idx).axis(normalize_axis(dim, r)).out())
    }

    /// slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> Tensor(a)
    #[target("aten::slice.Tensor", "aten::slice_copy.Tensor")]
    fn slice(op, self_: Tensor, dim: i64 = 0, start: Option<SymInt> = None, end: Option<SymInt> = None, step: SymInt = SymInt::Const(1)) -> OpResult<Value> {
        let r = rank_of(op, self_)?;
        let axis = normalize_axis(dim, r);
        let start = start.unwrap_or(SymInt::Const(0));
        let end = end.unwrap_or(SymInt::Const(i64::MAX));
        if start == SymInt::Const(0) && end == SymInt::Const(i64::MAX) && step == SymInt::Const(1) {
            return Ok(self_);
        }
        let starts = shape_vec(op, &[start]);
        let ends = shape_vec(op, &[end]);
        let axes = op.const_i64s(&[axis]);
        let steps = shape_vec(op, &[step]);
        Ok(op.Slice(self_, starts, ends, Some(axes), Some(steps)).out())
    }

    /// narrow(Tensor(a) self, int dim, SymInt start, SymInt length) -> Tensor(a)
    #[target("aten::narrow")]
    fn narrow(op, self_: Tensor, dim: i64, start: SymInt, length: SymInt) -> OpResult<Value> {
        let r = rank_of(op, self_)?;
        let s = sym_value(op, start);
        let l = sym_value(op, length);
        let e = op.Add(s, l).out();
        let starts = as_1d(op, s);
        let ends = as_1d(op, e);
        let axes = op.const_i64s(&[normalize_axis(dim, r)]);
        Ok(op.Slice(self_, starts, ends, Some(axes), None).out())
    }

    /// as_strided(Tensor(a) self, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None) -> Tensor(a)
    #[target("aten::as_strided", "aten::as_strided_copy")]
    fn as_strided(op, self_: Tensor, size: Vec<SymInt>, stride: Vec<SymInt>, storage_offset: Option<SymInt> = None) -> OpResult<Value> {
        // Gather from the row-major flattened input at offset + Σ_d arange(size_d)·stride_d,
        // each term broadcast along its own axis.
        let k = size.len();
        let mut index = sym_value(op, storage_offset.unwrap_or(SymInt::Const(0)));
        let (zero, one) = (op.scalar_i64(0), op.scalar_i64(1));
        for (d, (&n, &s)) in size.iter().zip(&stride).enumerate() {
            let n = sym_value(op, n);
            let s = sym_value(op, s);
            let r = op.Range(zero, n, one).out();
            let r = op.Mul(r, s).out();
            let mut shape = vec![1i64; k];
            shape[d] = -1;
            let shape = op.const_i64s(&shape);
            let r = op.Reshape(r, shape).out();
            index = op.Add(index, r).out();
        }
        let flat_shape = op.const_i64s(&[-1]);
        let flat = op.Reshape(self_, flat_shape).out();
        Ok(op.Gather(flat, index).axis(0).out())
    }

    /// embedding(Tensor weight, Tensor indices, SymInt padding_idx=-1, bool scale_grad_by_freq=False, bool sparse=False) -> Tensor
    #[target("aten::embedding")]
    fn embedding(op, weight: Tensor, indices: Tensor, padding_idx: Ignored, scale_grad_by_freq: Ignored, sparse: Ignored) -> Value {
        op.Gather(weight, indices).axis(0).out()
    }

    /// size.int(Tensor self, int dim) -> int
    #[target("aten::size.int")]
    fn size_int(op, self_: Tensor, dim: i64) -> OpResult<Value> {
        let r = rank_of(op, self_)?;
        let s = dim_size(op, self_, normalize_axis(dim, r));
        let axes = op.const_i64s(&[0]);
        Ok(op.Squeeze(s, Some(axes)).out())
    }
}
