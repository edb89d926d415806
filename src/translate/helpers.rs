//! Small building blocks shared by translations: casts, constants of a given type, shape vectors
//! from SymInts, torch's type promotion, axis normalisation.

use crate::onnx::builder::Builder;
use crate::onnx::ir::{DType, Dim, TensorData, Value};

use super::dsl::{OpError, OpResult, Operand, Scalar, SymInt};
use crate::bail;

/// `x` as `dtype` (no node when it already is).
pub fn cast(op: &mut Builder, x: Value, dtype: DType) -> Value {
    if op.dtype(x) == Some(dtype) {
        x
    } else {
        op.Cast(x).to(dtype as i64).out()
    }
}

/// A 0-d int64 value for a SymInt.
pub fn sym_value(op: &mut Builder, s: SymInt) -> Value {
    match s {
        SymInt::Const(c) => op.scalar_i64(c),
        SymInt::Dyn(v) => cast(op, v, DType::Int64),
    }
}

/// A 1-D int64 shape vector from SymInts: a constant when all are known, else a `Concat`.
pub fn shape_vec(op: &mut Builder, dims: &[SymInt]) -> Value {
    if let Some(c) = dims
        .iter()
        .map(|d| match d {
            SymInt::Const(c) => Some(*c),
            SymInt::Dyn(_) => None,
        })
        .collect::<Option<Vec<i64>>>()
    {
        return op.const_i64s(&c);
    }
    let zero = op.const_i64s(&[0]);
    let parts: Vec<Value> = dims
        .iter()
        .map(|d| match *d {
            SymInt::Const(c) => op.const_i64s(&[c]),
            SymInt::Dyn(v) => {
                let v = cast(op, v, DType::Int64);
                op.Unsqueeze(v, zero)
            }
        })
        .collect();
    op.Concat(&parts).axis(0).out()
}

/// A 0-d constant or value for a Scalar argument, in `dtype`.
pub fn scalar_value(op: &mut Builder, s: Scalar, dtype: DType) -> Value {
    match s {
        Scalar::Int(i) => op.scalar(dtype, i as f64),
        Scalar::Float(f) => op.scalar(dtype, f),
        Scalar::Bool(b) => op.scalar(dtype, b as i64 as f64),
        Scalar::Complex(re, _) => op.scalar(dtype, re),
        Scalar::Dyn(v) => cast(op, v, dtype),
    }
}

/// The element type torch gives a Scalar on its own (`int` → int64, `float` → float32 default).
pub fn scalar_dtype(op: &Builder, s: Scalar) -> DType {
    match s {
        Scalar::Int(_) => DType::Int64,
        Scalar::Float(_) | Scalar::Complex(..) => DType::Float,
        Scalar::Bool(_) => DType::Bool,
        Scalar::Dyn(v) => op.dtype(v).unwrap_or(DType::Float),
    }
}

/// An operand as a value of `dtype`: a tensor cast, a Scalar as [`scalar_value`].
pub fn operand_value(op: &mut Builder, x: Operand, dtype: DType) -> Value {
    match x {
        Operand::Tensor(v) => cast(op, v, dtype),
        Operand::Scalar(s) => scalar_value(op, s, dtype),
    }
}

/// An operand's element type: a tensor's own, a Scalar's as [`scalar_dtype`].
pub fn operand_dtype(op: &Builder, x: Operand) -> DType {
    match x {
        Operand::Tensor(v) => op.dtype(v).unwrap_or(DType::Float),
        Operand::Scalar(s) => scalar_dtype(op, s),
    }
}

fn category(d: DType) -> u8 {
    if d == DType::Bool {
        0
    } else if d.is_int() {
        1
    } else {
        2
    }
}

/// torch's promotion of two tensor types (`torch.promote_types`) for the types ONNX shares.
pub fn promote(a: DType, b: DType) -> DType {
    use DType::*;
    if a == b {
        return a;
    }
    let (ca, cb) = (category(a), category(b));
    if ca != cb {
        return if ca > cb { a } else { b };
    }
    let rank = |d: DType| match d {
        Bool => 0,
        Uint8 => 1,
        Int8 => 2,
        Int16 => 3,
        Int32 => 4,
        Int64 => 5,
        Float16 | BFloat16 => 6,
        Float => 7,
        Double => 8,
        _ => 9,
    };
    match (a, b) {
        (Uint8, Int8) | (Int8, Uint8) => Int16,
        (Float16, BFloat16) | (BFloat16, Float16) => Float,
        _ => {
            if rank(a) >= rank(b) {
                a
            } else {
                b
            }
        }
    }
}

/// The type torch computes `tensor ∘ other` in when `other` is a number or a 0-d tensor: it only
/// lifts the category (int → float). An `other` of unknown rank promotes as a tensor.
pub fn promote_with_scalar(tensor: DType, other: Operand, op: &Builder) -> DType {
    let sd = match other {
        Operand::Tensor(v) | Operand::Scalar(Scalar::Dyn(v)) if op.rank(v) != Some(0) => {
            return promote(tensor, op.dtype(v).unwrap_or(tensor))
        }
        other => operand_dtype(op, other),
    };
    if category(sd) > category(tensor) {
        if sd.is_float() {
            DType::Float
        } else {
            DType::Int64
        }
    } else {
        tensor
    }
}

/// The element count of a constant of shape `dims` that a translation is about to build, or an
/// error naming `what` when a size is negative or the count overflows, or when building it (at 8
/// bytes an element, the widest a translation computes in) would pass the export's memory bound
/// ([`crate::ExportOptions::max_memory`], or the default: 64 MiB a constant). Checked before
/// anything is allocated.
pub fn constant_elements(op: &Builder, what: &str, dims: &[i64]) -> OpResult<usize> {
    let n = dims
        .iter()
        .try_fold(1u64, |n, &d| u64::try_from(d).ok().and_then(|d| n.checked_mul(d)))
        .filter(|&n| n <= u64::MAX / 8)
        .ok_or_else(|| OpError::new(format!("{what} of shape {dims:?} would be larger than any real model needs")))?;
    op.bound.room(&format!("{what} of shape {dims:?}"), n * 8).map_err(OpError::new)?;
    usize::try_from(n).map_err(|_| OpError::new(format!("{what} of shape {dims:?} does not fit this machine's memory")))
}

/// An empty vector with room for the elements of a constant of shape `dims` (checked as
/// [`constant_elements`] checks them): the memory is reserved up front, and a failed reservation
/// is an error naming `what`, not an abort.
pub fn constant_vec<T>(op: &Builder, what: &str, dims: &[i64]) -> OpResult<Vec<T>> {
    let n = constant_elements(op, what, dims)?;
    let mut v = Vec::new();
    v.try_reserve_exact(n)
        .map_err(|_| OpError::new(format!("{what} of shape {dims:?}: out of memory reserving {n} elements")))?;
    Ok(v)
}

/// `count`, the pieces a translation splits a tensor into, when the node lists as many outputs
/// (one per piece): a recorded size or an argument asking for more (an axis of 2^32 split by 1)
/// makes the archive inconsistent, and is an error before anything is built.
pub fn pieces(op: &Builder, what: &str, count: i64) -> OpResult<usize> {
    let listed = op.out_types.len().max(1);
    match usize::try_from(count) {
        Ok(n) if n <= listed => Ok(n),
        _ => Err(OpError::new(format!(
            "{what} makes {count} pieces of the input's recorded size, but the node has {listed} output(s); the \
             archive's metadata is inconsistent (corrupt or edited)"
        ))),
    }
}

/// How many times a translation may repeat its nodes for one count of its arguments (windows,
/// terms, matrices): more than any real model asks for, small enough that the export of a
/// hostile count ends at once.
pub const MAX_UNROLL: i64 = 4096;

/// `count`, when a translation may write its nodes that many times ([`MAX_UNROLL`]); else an error
/// naming `what` ("adaptive_max_pool2d's output_size [2, 1000000000]").
pub fn unroll_count(count: i64, what: &str) -> OpResult<usize> {
    if !(0..=MAX_UNROLL).contains(&count) {
        return Err(OpError::new(format!(
            "{what} asks for {count} repetitions of the translation's nodes, more than any real model needs (at most \
             {MAX_UNROLL})"
        )));
    }
    Ok(count as usize)
}

/// `dim` in `0..rank` (torch accepts negative dims, and a 0-d tensor takes 0 and -1). A dim out
/// of range cannot come from a program torch traced: the archive is corrupt, and that is an error,
/// never an index past an array.
pub fn normalize_axis(dim: i64, rank: usize) -> OpResult<i64> {
    let r = rank.max(1) as i64;
    if !(-r..r).contains(&dim) {
        return Err(OpError::new(format!("dim {dim} is out of range for a tensor of rank {rank}")));
    }
    Ok(if rank == 0 {
        0
    } else if dim < 0 {
        dim + r
    } else {
        dim
    })
}

/// The rank of `x`, or an error naming what needed it.
pub fn rank_of(op: &Builder, x: Value) -> OpResult<usize> {
    op.rank(x).ok_or_else(|| OpError::new("the input's rank is unknown (the archive records no shape for it)"))
}

/// The element type of `x`, or an error.
pub fn dtype_of(op: &Builder, x: Value) -> OpResult<DType> {
    op.dtype(x).ok_or_else(|| OpError::new("the input's element type is unknown"))
}

/// `x` reshaped to 1-D (for scalars that must become list elements).
pub fn as_1d(op: &mut Builder, x: Value) -> Value {
    let minus_one = op.const_i64s(&[-1]);
    op.Reshape(x, minus_one).out()
}

/// The size of `x` along `axis` as a 1-D int64 of one element.
pub fn dim_size(op: &mut Builder, x: Value, axis: i64) -> Value {
    op.Shape(x).start(axis).end(axis + 1).out()
}

/// Every dimension of `x`, which must be static; the errors name `what` needed them.
pub fn static_shape(op: &Builder, x: Value, what: &str) -> OpResult<Vec<i64>> {
    let Some(shape) = op.shape(x) else {
        return Err(OpError::new(format!("{what} needs the input's shape, which the archive does not record")));
    };
    shape
        .iter()
        .map(|d| match d {
            Dim::Fixed(n) => Ok(*n),
            Dim::Param(p) => {
                Err(OpError::new(format!("{what} is translated for static shapes only; dimension {p} is symbolic")))
            }
        })
        .collect()
}

/// The sizes of `x`'s axes from `from` on, which must be static (a convolution's or pooling's
/// spatial sizes); the errors name `what` needed them.
pub fn static_tail(op: &Builder, x: Value, from: usize, what: &str) -> OpResult<Vec<i64>> {
    let Some(tail) = op.shape(x).and_then(|s| s.get(from..)) else {
        return Err(OpError::new(format!("{what} needs the input's shape, which the archive does not record")));
    };
    tail.iter()
        .map(|d| match d {
            Dim::Fixed(n) => Ok(*n),
            _ => Err(OpError::new(format!("{what} needs static spatial sizes"))),
        })
        .collect()
}

/// The broadcast of two static shapes (numpy rules), or `None` when they do not broadcast.
pub fn broadcast_shapes(a: &[i64], b: &[i64]) -> Option<Vec<i64>> {
    let r = a.len().max(b.len());
    let get = |s: &[i64], i: usize| if i + s.len() >= r { s[i + s.len() - r] } else { 1 };
    (0..r)
        .map(|i| match (get(a, i), get(b, i)) {
            (x, y) if x == y || y == 1 => Some(x),
            (1, y) => Some(y),
            _ => None,
        })
        .collect()
}

/// The permutation that undoes `perm`.
pub fn inverse_perm(perm: &[i64]) -> Vec<i64> {
    let mut inv = vec![0i64; perm.len()];
    for (i, &p) in perm.iter().enumerate() {
        inv[p as usize] = i as i64;
    }
    inv
}

/// The type TopK runs in for `t` (it has no kernels for bool and small integers).
pub fn topk_type(t: DType) -> DType {
    match t {
        DType::Bool | DType::Int8 | DType::Uint8 | DType::Int16 => DType::Int32,
        _ => t,
    }
}

/// The node's result type (output 0, from the archive), else `x`'s type.
pub fn result_dtype(op: &Builder, x: Value) -> OpResult<DType> {
    match op.out_dtype(0) {
        Some(t) => Ok(t),
        None => dtype_of(op, x),
    }
}

/// The type torch computes `a ∘ b` in (`torch.result_type`): tensors promote with each other, a
/// scalar only lifts the category.
pub fn binary_result_type(op: &Builder, a: Operand, b: Operand) -> DType {
    let tensor = |x: Operand| match x {
        Operand::Tensor(v) | Operand::Scalar(Scalar::Dyn(v)) if op.rank(v).is_some_and(|r| r > 0) => op.dtype(v),
        _ => None,
    };
    match (tensor(a), tensor(b)) {
        (Some(x), Some(y)) => promote(x, y),
        (Some(x), None) => promote_with_scalar(x, b, op),
        (None, Some(y)) => promote_with_scalar(y, a, op),
        (None, None) => promote(operand_dtype(op, a), operand_dtype(op, b)),
    }
}

/// The type a binary node computes in: its result type from the archive, else
/// [`binary_result_type`].
pub fn binary_type(op: &Builder, a: Operand, b: Operand) -> DType {
    op.out_dtype(0).unwrap_or_else(|| binary_result_type(op, a, b))
}

/// Both operands of a binary op as values of `dtype`.
pub fn operands(op: &mut Builder, a: Operand, b: Operand, dtype: DType) -> (Value, Value) {
    (operand_value(op, a, dtype), operand_value(op, b, dtype))
}

/// `x[start:end]` along `axis` (`x[..., start:end, :]` for `axis` -2).
pub fn slice_along(op: &mut Builder, x: Value, axis: i64, start: i64, end: i64) -> Value {
    let s = op.const_i64s(&[start]);
    let e = op.const_i64s(&[end]);
    let a = op.const_i64s(&[axis]);
    op.Slice(x, s, e, Some(a), None)
}

/// The node's result type (else `x`'s), which must be floating-point.
pub fn float_result_dtype(op: &Builder, x: Value) -> OpResult<DType> {
    let t = match op.out_dtype(0) {
        Some(t) => t,
        None => dtype_of(op, x)?,
    };
    if !t.is_float() {
        bail!("needs a floating-point result type");
    }
    Ok(t)
}

/// A 1-D `v` laid along `axis` of a rank-`r` tensor (shape `[1, .., n, .., 1]`) and expanded to
/// `like`'s shape.
pub fn expand_along(op: &mut Builder, v: Value, axis: i64, r: usize, like: Value) -> Value {
    let mut shape = vec![1i64; r];
    shape[axis as usize] = -1;
    let shape = op.const_i64s(&shape);
    let v = op.Reshape(v, shape).out();
    let s = op.Shape(like).out();
    op.Expand(v, s)
}

/// `values` as constant tensor data of `dtype` and shape `dims`, or an error naming the element
/// type no constant can be written in.
pub fn constant_data(dtype: DType, dims: Vec<i64>, values: &[f64]) -> OpResult<TensorData> {
    TensorData::from_f64_as(dtype, dims, values)
        .ok_or_else(|| OpError::new(format!("needs a constant of element type {dtype:?}, which fxonnx cannot write")))
}
