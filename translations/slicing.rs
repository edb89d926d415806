//! Parts of a tensor and their scatters: select, slice, narrow, as_strided, diagonals (diagonal,
//! diag, diag_embed, diagflat), triangles (tril, triu), and the *_scatter ops that write them back.

use crate::translate::prelude::*;
use crate::translations;

/// The 1-D positions `arange(size)[start:end:step]` along `axis` of `x`, shaped to broadcast along
/// `axis` of a rank-`r` tensor and expanded to `like`'s shape.
fn positions_like(
    op: &mut Builder,
    x: Value,
    axis: i64,
    r: usize,
    (start, end, step): (SymInt, SymInt, SymInt),
    like: Value,
) -> Value {
    let n = dim_size(op, x, axis);
    let n0 = {
        let e = op.const_i64s(&[]);
        op.Reshape(n, e).out()
    };
    let (zero, one) = (op.scalar_i64(0), op.scalar_i64(1));
    let ar = op.Range(zero, n0, one);
    let starts = shape_vec(op, &[start]);
    let ends = shape_vec(op, &[end]);
    let steps = shape_vec(op, &[step]);
    let a0 = op.const_i64s(&[0]);
    let idx = op.Slice(ar, starts, ends, Some(a0), Some(steps));
    expand_along(op, idx, axis, r, like)
}

/// Flat positions (row-major) of the diagonal `offset` of the last two axes (sizes a × b) and its
/// length, as values.
fn diag_positions(op: &mut Builder, xt: Value, offset: i64) -> Value {
    let a = op.Shape(xt).start(-2).end(-1).out();
    let b = op.Shape(xt).start(-1).out();
    let (ro, co) = (op.scalar_i64(0.max(-offset)), op.scalar_i64(0.max(offset)));
    let ra = op.Sub(a, ro);
    let cb = op.Sub(b, co);
    let l = op.Min(&[ra, cb]);
    let zero1 = op.const_i64s(&[0]);
    let l = op.Max(&[l, zero1]);
    let e = op.const_i64s(&[]);
    let l0 = op.Reshape(l, e).out();
    let (zero, one) = (op.scalar_i64(0), op.scalar_i64(1));
    let k = op.Range(zero, l0, one);
    let rows = op.Add(k, ro);
    let cols = op.Add(k, co);
    let b0 = op.Reshape(b, e).out();
    let flat = op.Mul(rows, b0);
    op.Add(flat, cols)
}

/// `x` with `d1`, `d2` moved to the end (in that order) and the permutation used.
fn to_last_two(op: &mut Builder, x: Value, r: usize, d1: i64, d2: i64) -> (Value, Vec<i64>) {
    let mut perm: Vec<i64> = (0..r as i64).filter(|&d| d != d1 && d != d2).collect();
    perm.push(d1);
    perm.push(d2);
    let identity = perm.iter().enumerate().all(|(i, &p)| i as i64 == p);
    (if identity { x } else { op.Transpose(x).perm(&perm).out() }, perm)
}

/// `x` ([..., a, b]) with the last two axes merged.
fn merge_last_two(op: &mut Builder, x: Value, r: usize) -> Value {
    let shape = if r > 2 {
        let lead = op.Shape(x).start(0).end(r as i64 - 2).out();
        let m1 = op.const_i64s(&[-1]);
        op.Concat(&[lead, m1]).axis(0).out()
    } else {
        op.const_i64s(&[-1])
    };
    op.Reshape(x, shape).out()
}

/// `diagonal(x, offset, dim1, dim2)`: the diagonal, last.
fn diagonal_of(op: &mut Builder, x: Value, offset: i64, dim1: i64, dim2: i64) -> OpResult<Value> {
    let r = rank_of(op, x)?;
    let (d1, d2) = (normalize_axis(dim1, r)?, normalize_axis(dim2, r)?);
    let (xt, _) = to_last_two(op, x, r, d1, d2);
    let pos = diag_positions(op, xt, offset);
    let flat = merge_last_two(op, xt, r);
    Ok(op.Gather(flat, pos).axis(-1).out())
}

/// `diag_embed(x, offset, dim1, dim2)` of `x` of rank `r`: its last axis as the diagonal of new axes
/// `dim1`, `dim2`.
fn diag_embed_of(op: &mut Builder, self_: Value, r: usize, offset: i64, dim1: i64, dim2: i64) -> OpResult<Value> {
    if r == 0 {
        bail!("diag_embed needs an input of at least 1 dimension, got a 0-d tensor");
    }
    let t = dtype_of(op, self_)?;
    let (d1, d2) = (normalize_axis(dim1, r + 1)?, normalize_axis(dim2, r + 1)?);
    // Row i of the m×m result (m = n + |offset|) holds xpad[i] at column i + offset.
    let k = offset.abs();
    let pads = if offset >= 0 { [0, k] } else { [k, 0] };
    let pads = op.const_i64s(&pads);
    let last = op.const_i64s(&[-1]);
    let zero_t = op.scalar(t, 0.0);
    let xp = op.Pad(self_, pads, Some(zero_t), Some(last)).out();
    let m = op.Shape(xp).start(-1).out();
    let e = op.const_i64s(&[]);
    let m0 = op.Reshape(m, e).out();
    let (zero, one) = (op.scalar_i64(0), op.scalar_i64(1));
    let ar = op.Range(zero, m0, one);
    let col = op.const_i64s(&[-1, 1]);
    let i = op.Reshape(ar, col).out();
    let off = op.scalar_i64(offset);
    let want = op.Add(i, off);
    let mask = op.Equal(ar, want);
    let xu = op.Unsqueeze(xp, last);
    let grid = op.Where(mask, xu, zero_t);
    // grid is [batch..., rows, cols]; place rows at d1 and cols at d2.
    let mut perm = Vec::with_capacity(r + 1);
    let mut b = 0i64;
    for p in 0..(r + 1) as i64 {
        if p == d1 {
            perm.push((r - 1) as i64);
        } else if p == d2 {
            perm.push(r as i64);
        } else {
            perm.push(b);
            b += 1;
        }
    }
    let identity = perm.iter().enumerate().all(|(i, &p)| i as i64 == p);
    Ok(if identity { grid } else { op.Transpose(grid).perm(&perm).out() })
}

/// Flat storage positions of `as_strided(size, stride, offset)` (shape `size`).
fn strided_index(op: &mut Builder, size: &[SymInt], stride: &[SymInt], storage_offset: Option<SymInt>) -> Value {
    let k = size.len();
    let mut index = sym_value(op, storage_offset.unwrap_or(SymInt::Const(0)));
    let (zero, one) = (op.scalar_i64(0), op.scalar_i64(1));
    for (d, (&n, &s)) in size.iter().zip(stride).enumerate() {
        let n = sym_value(op, n);
        let s = sym_value(op, s);
        let r = op.Range(zero, n, one);
        let r = op.Mul(r, s);
        let mut shape = vec![1i64; k];
        shape[d] = -1;
        let shape = op.const_i64s(&shape);
        let r = op.Reshape(r, shape).out();
        index = op.Add(index, r);
    }
    if k == 0 {
        return index;
    }
    // Give the index its full shape even where every stride is 0.
    let shape = shape_vec(op, size);
    op.Expand(index, shape)
}

translations! {
    /// select.int(Tensor(a) self, int dim, SymInt index) -> Tensor(a)
    #[target("aten::select.int", "aten::select_copy.int")]
    fn select(op, self_: Tensor, dim: i64, index: SymInt) -> OpResult<Value> {
        let r = rank_of(op, self_)?;
        let idx = sym_value(op, index);
        Ok(op.Gather(self_, idx).axis(normalize_axis(dim, r)?).out())
    }

    /// slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> Tensor(a)
    #[target("aten::slice.Tensor", "aten::slice_copy.Tensor")]
    fn slice(
        op,
        self_: Tensor,
        dim: i64 = 0,
        start: Option<SymInt> = None,
        end: Option<SymInt> = None,
        step: SymInt = SymInt::Const(1),
    ) -> OpResult<Value> {
        let r = rank_of(op, self_)?;
        let axis = normalize_axis(dim, r)?;
        let start = start.unwrap_or(SymInt::Const(0));
        let end = end.unwrap_or(SymInt::Const(i64::MAX));
        if start == SymInt::Const(0) && end == SymInt::Const(i64::MAX) && step == SymInt::Const(1) {
            return Ok(self_);
        }
        let starts = shape_vec(op, &[start]);
        let ends = shape_vec(op, &[end]);
        let axes = op.const_i64s(&[axis]);
        let steps = shape_vec(op, &[step]);
        Ok(op.Slice(self_, starts, ends, Some(axes), Some(steps)))
    }

    /// narrow(Tensor(a) self, int dim, SymInt start, SymInt length) -> Tensor(a)
    #[target("aten::narrow", "aten::narrow_copy")]
    fn narrow(op, self_: Tensor, dim: i64, start: SymInt, length: SymInt) -> OpResult<Value> {
        let r = rank_of(op, self_)?;
        let s = sym_value(op, start);
        let l = sym_value(op, length);
        let e = op.Add(s, l);
        let starts = as_1d(op, s);
        let ends = as_1d(op, e);
        let axes = op.const_i64s(&[normalize_axis(dim, r)?]);
        Ok(op.Slice(self_, starts, ends, Some(axes), None))
    }

    /// as_strided(Tensor(a) self, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None) -> Tensor(a)
    #[target("aten::as_strided", "aten::as_strided_copy")]
    fn as_strided(
        op,
        self_: Tensor,
        size: Vec<SymInt>,
        stride: Vec<SymInt>,
        storage_offset: Option<SymInt> = None,
    ) -> OpResult<Value> {
        // Gather from the row-major flattened input at offset + Σ_d arange(size_d)·stride_d.
        let index = strided_index(op, &size, &stride, storage_offset);
        let flat_shape = op.const_i64s(&[-1]);
        let flat = op.Reshape(self_, flat_shape).out();
        Ok(op.Gather(flat, index).axis(0).out())
    }

    /// tril(Tensor self, SymInt diagonal=0) -> Tensor
    #[target("aten::tril")]
    fn tril(op, self_: Tensor, diagonal: SymInt = SymInt::Const(0)) -> Value {
        let k = sym_value(op, diagonal);
        op.Trilu(self_, Some(k)).upper(0).out()
    }

    /// triu(Tensor self, SymInt diagonal=0) -> Tensor
    #[target("aten::triu")]
    fn triu(op, self_: Tensor, diagonal: SymInt = SymInt::Const(0)) -> Value {
        let k = sym_value(op, diagonal);
        op.Trilu(self_, Some(k)).upper(1).out()
    }

    /// diagonal(Tensor(a) self, int offset=0, int dim1=0, int dim2=1) -> Tensor(a)
    #[target("aten::diagonal", "aten::diagonal_copy")]
    fn diagonal(
        op,
        self_: Tensor,
        offset: i64 = 0,
        dim1: i64 = 0,
        dim2: i64 = 1,
    ) -> OpResult<Value> {
        diagonal_of(op, self_, offset, dim1, dim2)
    }

    /// linalg_diagonal(Tensor(a) A, *, int offset=0, int dim1=-2, int dim2=-1) -> Tensor(a)
    #[target("aten::linalg_diagonal")]
    fn linalg_diagonal(op, A: Tensor, offset: i64 = 0, dim1: i64 = -2, dim2: i64 = -1) -> OpResult<Value> {
        diagonal_of(op, A, offset, dim1, dim2)
    }

    /// diagonal_scatter(Tensor self, Tensor src, int offset=0, int dim1=0, int dim2=1) -> Tensor
    #[target("aten::diagonal_scatter")]
    fn diagonal_scatter(
        op,
        self_: Tensor,
        src: Tensor,
        offset: i64 = 0,
        dim1: i64 = 0,
        dim2: i64 = 1,
    ) -> OpResult<Value> {
        let r = rank_of(op, self_)?;
        let t = dtype_of(op, self_)?;
        let (d1, d2) = (normalize_axis(dim1, r)?, normalize_axis(dim2, r)?);
        let (xt, perm) = to_last_two(op, self_, r, d1, d2);
        let tshape = op.Shape(xt).out();
        let pos = diag_positions(op, xt, offset);
        let flat = merge_last_two(op, xt, r);
        let src = cast(op, src, t);
        let ss = op.Shape(src).out();
        let idx = op.Expand(pos, ss);
        let out = op.ScatterElements(flat, idx, src).axis(-1).out();
        let out = op.Reshape(out, tshape).out();
        let identity = perm.iter().enumerate().all(|(i, &p)| i as i64 == p);
        Ok(if identity { out } else { op.Transpose(out).perm(&inverse_perm(&perm)).out() })
    }

    /// diag_embed(Tensor self, int offset=0, int dim1=-2, int dim2=-1) -> Tensor
    #[target("aten::diag_embed")]
    fn diag_embed(
        op,
        self_: Tensor,
        offset: i64 = 0,
        dim1: i64 = -2,
        dim2: i64 = -1,
    ) -> OpResult<Value> {
        let r = rank_of(op, self_)?;
        diag_embed_of(op, self_, r, offset, dim1, dim2)
    }

    /// diag(Tensor self, int diagonal=0) -> Tensor
    #[target("aten::diag")]
    fn diag(op, self_: Tensor, diagonal: i64 = 0) -> OpResult<Value> {
        // A vector becomes the diagonal of a matrix; a matrix gives its diagonal.
        match rank_of(op, self_)? {
            1 => diag_embed_of(op, self_, 1, diagonal, 0, 1),
            2 => diagonal_of(op, self_, diagonal, 0, 1),
            r => bail!("diag needs a 1-D or 2-D input, got rank {r}"),
        }
    }

    /// diagflat(Tensor self, int offset=0) -> Tensor
    #[target("aten::diagflat")]
    fn diagflat(op, self_: Tensor, offset: i64 = 0) -> OpResult<Value> {
        let m1 = op.const_i64s(&[-1]);
        let v = op.Reshape(self_, m1).out();
        diag_embed_of(op, v, 1, offset, 0, 1)
    }

    /// slice_scatter(Tensor self, Tensor src, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> Tensor
    #[target("aten::slice_scatter")]
    fn slice_scatter(
        op,
        self_: Tensor,
        src: Tensor,
        dim: i64 = 0,
        start: Option<SymInt> = None,
        end: Option<SymInt> = None,
        step: SymInt = SymInt::Const(1),
    ) -> OpResult<Value> {
        let r = rank_of(op, self_)?;
        let t = dtype_of(op, self_)?;
        let axis = normalize_axis(dim, r)?;
        let src = cast(op, src, t);
        let start = start.unwrap_or(SymInt::Const(0));
        let end = end.unwrap_or(SymInt::Const(i64::MAX));
        let idx = positions_like(op, self_, axis, r, (start, end, step), src);
        Ok(op.ScatterElements(self_, idx, src).axis(axis).out())
    }

    /// select_scatter(Tensor self, Tensor src, int dim, SymInt index) -> Tensor
    #[target("aten::select_scatter")]
    fn select_scatter(op, self_: Tensor, src: Tensor, dim: i64, index: SymInt) -> OpResult<Value> {
        let r = rank_of(op, self_)?;
        let t = dtype_of(op, self_)?;
        let axis = normalize_axis(dim, r)?;
        let src = cast(op, src, t);
        let a = op.const_i64s(&[axis]);
        let src = op.Unsqueeze(src, a);
        let n = dim_size(op, self_, axis);
        let i = sym_value(op, index);
        let i = as_1d(op, i);
        let zero = op.const_i64s(&[0]);
        let neg = op.Less(i, zero);
        let wrapped = op.Add(i, n);
        let i = op.Where(neg, wrapped, i);
        let shape = op.const_i64s(&vec![1; r]);
        let i = op.Reshape(i, shape).out();
        let ss = op.Shape(src).out();
        let idx = op.Expand(i, ss);
        Ok(op.ScatterElements(self_, idx, src).axis(axis).out())
    }

    /// as_strided_scatter(Tensor self, Tensor src, SymInt[] size, SymInt[] stride,
    ///     SymInt? storage_offset=None) -> Tensor
    #[target("aten::as_strided_scatter")]
    fn as_strided_scatter(
        op,
        self_: Tensor,
        src: Tensor,
        size: Vec<SymInt>,
        stride: Vec<SymInt>,
        storage_offset: Option<SymInt> = None,
    ) -> OpResult<Value> {
        let t = dtype_of(op, self_)?;
        let index = strided_index(op, &size, &stride, storage_offset);
        let m1 = op.const_i64s(&[-1]);
        let shape = op.Shape(self_).out();
        let flat = op.Reshape(self_, m1).out();
        let idx = op.Reshape(index, m1).out();
        let src = cast(op, src, t);
        let upd = op.Reshape(src, m1).out();
        let out = op.ScatterElements(flat, idx, upd).axis(0).out();
        Ok(op.Reshape(out, shape).out())
    }
}
