//! Small building blocks shared by translations: casts, constants of a given type, shape vectors
//! from SymInts, torch's type promotion, axis normalisation.

use crate::onnx::builder::Builder;
use crate::onnx::ir::{DType, Value};

use super::dsl::{OpError, OpResult, Scalar, SymInt};

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
                op.Unsqueeze(v, zero).out()
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

/// The type torch computes `tensor ∘ scalar` in: a Scalar only lifts the category (int → float).
pub fn promote_with_scalar(tensor: DType, scalar: Scalar, op: &Builder) -> DType {
    let sd = match scalar {
        Scalar::Dyn(v) if op.rank(v) != Some(0) => return promote(tensor, op.dtype(v).unwrap_or(tensor)),
        other => scalar_dtype(op, other),
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

/// `dim` in `0..rank` (torch accepts negative dims).
pub fn normalize_axis(dim: i64, rank: usize) -> i64 {
    if dim < 0 {
        dim + rank as i64
    } else {
        dim
    }
}

/// The rank of `x`, or an error naming what needed it.
pub fn rank_of(op: &Builder, x: Value) -> OpResult<usize> {
    op.rank(x).ok_or_else(|| OpError::new("the input's rank is unknown"))
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
