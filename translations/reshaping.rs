//! Reshaping: torch's view ops and the other shape changes that keep every element in place:
//! view/reshape, unflatten, flatten, ravel, permute, transpose, movedim, (un)squeeze, expand and
//! broadcasts, atleast_{1,2,3}d, meshgrid, size, resize.

use crate::translate::prelude::*;
use crate::translations;
use crate::translations::shared::axes::{at_least, swap_axes};

/// `x` viewed as `size`. ONNX Reshape reads a 0 as "keep the input's size" unless `allowzero` is
/// set: a 0 where the input's size is not a known 0 is a real empty axis.
fn reshape_to(op: &mut Builder, x: Value, size: &[SymInt]) -> Value {
    let input = op.shape(x).map(|s| s.to_vec());
    let real_zero = size
        .iter()
        .enumerate()
        .any(|(i, s)| *s == SymInt::Const(0) && input.as_ref().and_then(|d| d.get(i)) != Some(&Dim::Fixed(0)));
    let shape = shape_vec(op, size);
    if real_zero && !size.contains(&SymInt::Const(-1)) {
        op.Reshape(x, shape).allowzero(1).out()
    } else {
        op.Reshape(x, shape).out()
    }
}

translations! {
    /// view(Tensor(a) self, SymInt[] size) -> Tensor(a)
    #[target("aten::view", "aten::_unsafe_view", "aten::view_copy")]
    fn view(op, self_: Tensor, size: Vec<SymInt>) -> Value {
        reshape_to(op, self_, &size)
    }

    /// reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a)
    #[target("aten::reshape")]
    fn reshape(op, self_: Tensor, shape: Vec<SymInt>) -> Value {
        reshape_to(op, self_, &shape)
    }

    /// unflatten.int(Tensor(a) self, int dim, SymInt[] sizes) -> Tensor(a)
    #[target("aten::unflatten.int")]
    fn unflatten(op, self_: Tensor, dim: i64, sizes: Vec<SymInt>) -> OpResult<Value> {
        // [dims before, *sizes, dims after]; a -1 in `sizes` is resolved by Reshape.
        let r = rank_of(op, self_)?;
        let axis = normalize_axis(dim, r)?;
        let mut parts = Vec::with_capacity(3);
        if axis > 0 {
            parts.push(op.Shape(self_).start(0).end(axis).out());
        }
        parts.push(shape_vec(op, &sizes));
        if (axis as usize) + 1 < r {
            parts.push(op.Shape(self_).start(axis + 1).out());
        }
        let shape = if parts.len() == 1 { parts[0] } else { op.Concat(&parts).axis(0).out() };
        Ok(op.Reshape(self_, shape).out())
    }

    /// permute(Tensor(a) self, int[] dims) -> Tensor(a)
    #[target("aten::permute", "aten::permute_copy")]
    fn permute(op, self_: Tensor, dims: Vec<i64>) -> OpResult<Value> {
        let r = dims.len();
        let complex = op.info(self_).complex;
        if rank_of(op, self_).is_ok_and(|full| full != r + complex as usize) {
            bail!("permute: {r} dims for a tensor of rank {}", rank_of(op, self_)? - complex as usize);
        }
        let mut perm: Vec<i64> = dims.iter().map(|&d| normalize_axis(d, r)).collect::<OpResult<Vec<_>>>()?;
        let mut sorted = perm.clone();
        sorted.sort_unstable();
        if sorted.iter().enumerate().any(|(i, &d)| d != i as i64) {
            bail!("permute: dims {dims:?} are not a permutation");
        }
        // A complex tensor's real view keeps its trailing [re, im] axis last.
        if complex {
            perm.push(r as i64);
        }
        let v = op.Transpose(self_).perm(&perm).out();
        op.info_mut(v).complex = complex;
        Ok(v)
    }

    /// transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)
    #[target("aten::transpose.int", "aten::transpose_copy.int")]
    fn transpose(op, self_: Tensor, dim0: i64, dim1: i64) -> OpResult<Value> {
        let complex = op.info(self_).complex;
        let full = rank_of(op, self_)?;
        // A complex tensor's real view has a trailing [re, im] axis outside torch's dims.
        let r = full - complex as usize;
        if r < 2 {
            return Ok(self_);
        }
        let mut perm: Vec<i64> = (0..full as i64).collect();
        perm.swap(normalize_axis(dim0, r)? as usize, normalize_axis(dim1, r)? as usize);
        let v = op.Transpose(self_).perm(&perm).out();
        op.info_mut(v).complex = complex;
        Ok(v)
    }

    /// t(Tensor(a) self) -> Tensor(a)
    #[target("aten::t", "aten::numpy_T", "aten::t_copy")]
    fn t(op, self_: Tensor) -> OpResult<Value> {
        let r = rank_of(op, self_)?;
        Ok(if r < 2 { self_ } else { op.Transpose(self_).perm(&[1, 0]).out() })
    }

    /// unsqueeze(Tensor(a) self, int dim) -> Tensor(a)
    #[target("aten::unsqueeze", "aten::unsqueeze_copy")]
    fn unsqueeze(op, self_: Tensor, dim: i64) -> OpResult<Value> {
        let r = rank_of(op, self_)?;
        let axes = op.const_i64s(&[normalize_axis(dim, r + 1)?]);
        Ok(op.Unsqueeze(self_, axes))
    }

    /// squeeze.dims(Tensor(a) self, int[] dim) -> Tensor(a)
    #[target(
        "aten::squeeze.dims",
        "aten::squeeze.dim",
        "aten::squeeze",
        "aten::squeeze_copy.dims",
        "aten::squeeze_copy.dim",
        "aten::squeeze_copy"
    )]
    fn squeeze(op, self_: Tensor, dim: Option<Vec<i64>> = None) -> OpResult<Value> {
        let r = rank_of(op, self_)?;
        let shape = op.shape(self_).map(|s| s.to_vec());
        let dims: Vec<i64> = match dim {
            Some(d) => d.iter().map(|&x| normalize_axis(x, r)).collect::<OpResult<Vec<_>>>()?,
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
        Ok(op.Squeeze(self_, Some(axes)))
    }

    /// flatten.using_ints(Tensor(a) self, int start_dim=0, int end_dim=-1) -> Tensor(a)
    #[target("aten::flatten.using_ints")]
    fn flatten(op, self_: Tensor, start_dim: i64 = 0, end_dim: i64 = -1) -> OpResult<Value> {
        let r = rank_of(op, self_)?;
        if r == 0 {
            let one = op.const_i64s(&[1]);
            return Ok(op.Reshape(self_, one).out());
        }
        let (s, e) = (normalize_axis(start_dim, r)?, normalize_axis(end_dim, r)?);
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
    fn expand(op, self_: Tensor, size: Vec<SymInt>, _implicit: Ignored) -> Value {
        // `implicit` only marks the expands broadcasting inserted, for the tracer.
        // -1 keeps the input's size: Expand broadcasts with 1 in those places.
        let size: Vec<SymInt> =
            size.into_iter().map(|s| if s == SymInt::Const(-1) { SymInt::Const(1) } else { s }).collect();
        let shape = shape_vec(op, &size);
        op.Expand(self_, shape)
    }

    /// expand_as(Tensor(a) self, Tensor other) -> Tensor(a)
    #[target("aten::expand_as")]
    fn expand_as(op, self_: Tensor, other: Tensor) -> Value {
        let shape = op.Shape(other).out();
        op.Expand(self_, shape)
    }

    /// view_as(Tensor(a) self, Tensor other) -> Tensor(a)
    #[target("aten::view_as", "aten::reshape_as")]
    fn view_as(op, self_: Tensor, other: Tensor) -> Value {
        let shape = op.Shape(other).out();
        op.Reshape(self_, shape).out()
    }

    /// size.int(Tensor self, int dim) -> int
    #[target("aten::size.int")]
    fn size_int(op, self_: Tensor, dim: i64) -> OpResult<Value> {
        let r = rank_of(op, self_)?;
        let s = dim_size(op, self_, normalize_axis(dim, r)?);
        let axes = op.const_i64s(&[0]);
        Ok(op.Squeeze(s, Some(axes)))
    }

    /// broadcast_tensors(Tensor[] tensors) -> Tensor[]
    #[target("aten::broadcast_tensors")]
    fn broadcast_tensors(op, tensors: Vec<Tensor>) -> OpResult<Vec<Value>> {
        let Some(&first) = tensors.first() else { return Ok(vec![]) };
        let s0 = op.Shape(first).out();
        let mut acc = op.ConstantOfShape(s0).value(TensorData::from_i64s(vec![1], &[0])).out();
        for &t in &tensors[1..] {
            let s = op.Shape(t).out();
            acc = op.Expand(acc, s);
        }
        let shape = op.Shape(acc).out();
        Ok(tensors.iter().map(|&t| op.Expand(t, shape)).collect())
    }

    /// broadcast_to(Tensor(a) self, SymInt[] size) -> Tensor(a)
    #[target("aten::broadcast_to")]
    fn broadcast_to(op, self_: Tensor, size: Vec<SymInt>) -> Value {
        let size: Vec<SymInt> =
            size.into_iter().map(|s| if s == SymInt::Const(-1) { SymInt::Const(1) } else { s }).collect();
        let shape = shape_vec(op, &size);
        op.Expand(self_, shape)
    }

    /// meshgrid.indexing(Tensor[] tensors, *, str indexing) -> Tensor[]
    #[target("aten::meshgrid.indexing", "aten::meshgrid")]
    fn meshgrid(op, tensors: Vec<Tensor>, indexing: &str = "ij") -> OpResult<Vec<Value>> {
        let n = tensors.len();
        if n == 0 {
            bail!("meshgrid expects a non-empty list of tensors");
        }
        // "xy" swaps the first two output axes: tensor 0 varies along axis 1, tensor 1 along axis 0.
        let swap = match indexing {
            "ij" => false,
            "xy" => n >= 2,
            other => bail!("meshgrid: indexing must be 'ij' or 'xy', got {other:?}"),
        };
        let axis_of = |i: usize| if swap && i < 2 { 1 - i } else { i };
        let m1 = op.const_i64s(&[-1]);
        let flat: Vec<Value> = tensors.iter().map(|&t| op.Reshape(t, m1).out()).collect();
        let mut sizes = vec![flat[0]; n];
        for (i, &f) in flat.iter().enumerate() {
            sizes[axis_of(i)] = op.Shape(f).out();
        }
        let shape = if n == 1 { sizes[0] } else { op.Concat(&sizes).axis(0).out() };
        Ok(flat
            .iter()
            .enumerate()
            .map(|(i, &f)| {
                let mut s = vec![1i64; n];
                s[axis_of(i)] = -1;
                let s = op.const_i64s(&s);
                let v = op.Reshape(f, s).out();
                op.Expand(v, shape)
            })
            .collect())
    }

    /// atleast_1d(Tensor self) -> Tensor
    #[target("aten::atleast_1d")]
    fn atleast_1d(op, self_: Tensor) -> OpResult<Value> {
        at_least(op, self_, 1)
    }

    /// atleast_2d(Tensor self) -> Tensor
    #[target("aten::atleast_2d")]
    fn atleast_2d(op, self_: Tensor) -> OpResult<Value> {
        at_least(op, self_, 2)
    }

    /// atleast_3d(Tensor self) -> Tensor
    #[target("aten::atleast_3d")]
    fn atleast_3d(op, self_: Tensor) -> OpResult<Value> {
        at_least(op, self_, 3)
    }

    /// ravel(Tensor(a) self) -> Tensor(a)
    #[target("aten::ravel")]
    fn ravel(op, self_: Tensor) -> Value {
        let s = op.const_i64s(&[-1]);
        op.Reshape(self_, s).out()
    }

    /// mT(Tensor(a) self) -> Tensor(a)
    #[target("aten::mT", "aten::mH", "aten::matrix_H", "aten::adjoint")]
    fn m_t(op, self_: Tensor) -> OpResult<Value> {
        let r = rank_of(op, self_)?;
        if op.dtype(self_).is_some_and(|t| t.is_complex()) || op.info(self_).complex {
            bail!("conjugate transpose of complex tensors is not supported");
        }
        if r < 2 {
            bail!("mT needs a tensor of rank >= 2");
        }
        Ok(swap_axes(op, self_, r, r as i64 - 2, r as i64 - 1))
    }

    /// alias_copy(Tensor self) -> Tensor
    #[target("aten::alias_copy")]
    fn alias_copy(op, self_: Tensor) -> Value {
        self_
    }

    /// set_.source_Tensor(Tensor(a!) self, Tensor source) -> Tensor(a!)
    #[target("aten::set_.source_Tensor")]
    fn set_(op, _self: Ignored, source: Tensor) -> Value {
        // The tensor becomes `source` (its storage, sizes and strides); the in-place binding
        // makes every later read of `self` read it.
        source
    }

    /// resize(Tensor self, SymInt[] size, *, MemoryFormat? memory_format=None) -> Tensor
    #[target("aten::resize", "aten::resize_")]
    fn resize(op, self_: Tensor, size: Vec<SymInt>) -> OpResult<Value> {
        // Keeps the first prod(size) elements; growing would expose uninitialised memory.
        let shape = static_shape(op, self_, "resize")?;
        let mut new = Vec::new();
        for s in &size {
            let SymInt::Const(c) = s else { bail!("resize needs static sizes") };
            new.push(*c);
        }
        resized(op, self_, &shape, &new)
    }

    /// resize_as(Tensor self, Tensor the_template, *, MemoryFormat? memory_format=None) -> Tensor
    #[target("aten::resize_as", "aten::resize_as_")]
    fn resize_as(op, self_: Tensor, the_template: Tensor) -> OpResult<Value> {
        let shape = static_shape(op, self_, "resize_as")?;
        let new = static_shape(op, the_template, "resize_as")?;
        resized(op, self_, &shape, &new)
    }

    /// prims::broadcast_in_dim(Tensor(a) a, SymInt[] shape, int[] broadcast_dimensions) -> Tensor(a)
    #[target("prims::broadcast_in_dim")]
    fn prims_broadcast_in_dim(op, a: Tensor, shape: Vec<SymInt>, broadcast_dimensions: Vec<i64>) -> Value {
        // Input dim i becomes output dim broadcast_dimensions[i]; the others are new, of size 1 first.
        let new_axes: Vec<i64> = (0..shape.len() as i64).filter(|d| !broadcast_dimensions.contains(d)).collect();
        let x = if new_axes.is_empty() {
            a
        } else {
            let axes = op.const_i64s(&new_axes);
            op.Unsqueeze(a, axes)
        };
        let shape = shape_vec(op, &shape);
        op.Expand(x, shape)
    }

    /// movedim.intlist(Tensor(a) self, int[] source, int[] destination) -> Tensor(a)
    #[target("aten::movedim.intlist", "aten::movedim.int")]
    fn movedim(op, self_: Tensor, source: Vec<i64>, destination: Vec<i64>) -> OpResult<Value> {
        let r = rank_of(op, self_)?;
        let src: Vec<i64> = source.iter().map(|&d| normalize_axis(d, r)).collect::<OpResult<Vec<_>>>()?;
        let dst: Vec<i64> = destination.iter().map(|&d| normalize_axis(d, r)).collect::<OpResult<Vec<_>>>()?;
        if src.len() != dst.len() {
            bail!("movedim: {} source dims but {} destination dims", src.len(), dst.len());
        }
        // The moved dims take their destinations; the rest keep their order in the places left.
        let mut rest = (0..r as i64).filter(|d| !src.contains(d));
        let mut perm = Vec::with_capacity(r);
        for out_dim in 0..r as i64 {
            match dst.iter().position(|&d| d == out_dim) {
                Some(i) => perm.push(src[i]),
                None => perm.extend(rest.next()),
            }
        }
        Ok(op.Transpose(self_).perm(&perm).out())
    }

    /// atleast_1d.Sequence(Tensor[] tensors) -> Tensor[]
    #[target("aten::atleast_1d.Sequence")]
    fn atleast_1d_sequence(op, tensors: Vec<Tensor>) -> OpResult<Vec<Value>> {
        tensors.into_iter().map(|x| at_least(op, x, 1)).collect()
    }

    /// atleast_2d.Sequence(Tensor[] tensors) -> Tensor[]
    #[target("aten::atleast_2d.Sequence")]
    fn atleast_2d_sequence(op, tensors: Vec<Tensor>) -> OpResult<Vec<Value>> {
        tensors.into_iter().map(|x| at_least(op, x, 2)).collect()
    }

    /// atleast_3d.Sequence(Tensor[] tensors) -> Tensor[]
    #[target("aten::atleast_3d.Sequence")]
    fn atleast_3d_sequence(op, tensors: Vec<Tensor>) -> OpResult<Vec<Value>> {
        tensors.into_iter().map(|x| at_least(op, x, 3)).collect()
    }
}

/// `x` (of static `shape`) resized to `new`: its first prod(new) elements, which must be no more
/// than it holds (growing would expose uninitialised memory).
fn resized(op: &mut Builder, x: Value, shape: &[i64], new: &[i64]) -> OpResult<Value> {
    let have: i64 = shape.iter().product();
    let want: i64 = new.iter().product();
    if want > have {
        bail!("resize to more elements than the tensor holds leaves them uninitialised");
    }
    let m1 = op.const_i64s(&[-1]);
    let flat = op.Reshape(x, m1).out();
    let flat = if want < have {
        let (s, e) = (op.const_i64s(&[0]), op.const_i64s(&[want]));
        op.Slice(flat, s, e, None, None)
    } else {
        flat
    };
    let sv = op.const_i64s(new);
    Ok(op.Reshape(flat, sv).out())
}
