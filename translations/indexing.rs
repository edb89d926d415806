//! Indexing, gather/scatter and masks: index_put, gather, index_select, scatter (+ _add, _reduce),
//! index_add/copy/reduce, masked_scatter/select, take, take_along_dim, put, count_nonzero, argwhere,
//! nonzero.

use crate::translate::prelude::*;
use crate::translations;

/// `x` reshaped to 1-D.
fn flat(op: &mut Builder, x: Value) -> Value {
    let s = op.const_i64s(&[-1]);
    op.Reshape(x, s).out()
}

/// `x` reshaped to 0-d.
fn to_scalar(op: &mut Builder, x: Value) -> Value {
    let s = op.const_i64s(&[]);
    op.Reshape(x, s).out()
}

/// Index values of an axis of size `size` with negative ones wrapped (`i < 0 → i + size`).
fn wrap_index(op: &mut Builder, idx: Value, size: Value) -> Value {
    let zero = op.scalar_i64(0);
    let neg = op.Less(idx, zero);
    let shifted = op.Add(idx, size);
    op.Where(neg, shifted, idx)
}

/// The index tensors of an advanced-indexing expression as (self axis, int64 index) pairs: boolean
/// masks over k axes become k index vectors (their `NonZero` rows).
fn int_indices(op: &mut Builder, indices: &[Option<Value>]) -> OpResult<Vec<(usize, Value)>> {
    let mut out = Vec::new();
    let mut axis = 0usize;
    for t in indices {
        match t {
            None => axis += 1,
            Some(t) if op.dtype(*t) == Some(DType::Bool) || op.dtype(*t) == Some(DType::Uint8) => {
                let k = rank_of(op, *t)?;
                if k == 0 {
                    bail!("indexing with a 0-d boolean mask is not supported");
                }
                let m = cast(op, *t, DType::Bool);
                let nz = op.NonZero(m);
                for j in 0..k {
                    let row = op.const_i64s(&[j as i64]);
                    let r = op.Gather(nz, row).axis(0).out();
                    let axes = op.const_i64s(&[0]);
                    out.push((axis + j, op.Squeeze(r, Some(axes))));
                }
                axis += k;
            }
            Some(t) => {
                out.push((axis, cast(op, *t, DType::Int64)));
                axis += 1;
            }
        }
    }
    Ok(out)
}

/// How an advanced index maps onto GatherND/ScatterND: the input with its indexed axes moved to the
/// front, the stacked (broadcast) indices `[*B, k]`, and the layout of torch's result.
struct AdvIndex {
    /// Transposed input: indexed axes first, then the others in order.
    xt: Value,
    /// `perm` that made `xt` (identity when `None`).
    perm: Option<Vec<i64>>,
    /// Stacked indices `[*B, k]`.
    idx: Value,
    /// Rank of the broadcast index shape B.
    nb: usize,
    /// Where torch puts B in its result: at the first indexed axis when the indexed axes are
    /// adjacent, else at the front.
    b_at: usize,
}

/// Whether index values must be wrapped (`i < 0 → i + size`): GatherND takes negative indices as
/// torch does, ScatterND's are wrapped so that no runtime has to.
#[derive(Clone, Copy, PartialEq)]
enum Negatives {
    Native,
    Wrap,
}

/// The index tensors broadcast to their common shape B. An index whose recorded shape already is
/// B is left alone; two indices broadcast each other (`a + 0·b`, `b + 0·a`), more go through a
/// zero tensor of shape B.
fn broadcast_indices(op: &mut Builder, given: &[Value], nb: usize) -> Vec<Value> {
    let padded = |op: &Builder, t: Value| -> Option<Vec<Dim>> {
        let s = op.shape(t)?;
        Some([vec![Dim::Fixed(1); nb - s.len()], s.to_vec()].concat())
    };
    let shapes: Vec<Option<Vec<Dim>>> = given.iter().map(|&t| padded(op, t)).collect();
    // B per axis: the one size other than 1, unknown when two differ or a shape is missing.
    let b: Option<Vec<Dim>> = (0..nb)
        .map(|d| {
            let mut out = Dim::Fixed(1);
            for s in &shapes {
                let dim = s.as_ref()?[d].clone();
                if dim != Dim::Fixed(1) {
                    if out != Dim::Fixed(1) && out != dim {
                        return None;
                    }
                    out = dim;
                }
            }
            Some(out)
        })
        .collect();
    let needs: Vec<bool> = shapes.iter().map(|s| b.is_none() || s != &b).collect();
    if !needs.contains(&true) {
        return given.to_vec();
    }
    let zero = op.scalar_i64(0);
    if let [a, c] = given {
        let (za, zc) = (op.Mul(*a, zero), op.Mul(*c, zero));
        let a = if needs[0] { op.Add(*a, zc) } else { *a };
        let c = if needs[1] { op.Add(*c, za) } else { *c };
        return vec![a, c];
    }
    let mut zeros_b = op.Mul(given[0], zero);
    for t in &given[1..] {
        let z = op.Mul(*t, zero);
        zeros_b = op.Add(zeros_b, z);
    }
    given.iter().zip(&needs).map(|(&t, &need)| if need { op.Add(t, zeros_b) } else { t }).collect()
}

fn adv_index(op: &mut Builder, x: Value, indices: &[Option<Value>], negatives: Negatives) -> OpResult<AdvIndex> {
    let r = rank_of(op, x)?;
    let given = int_indices(op, indices)?;
    if given.is_empty() {
        bail!("advanced indexing without index tensors");
    }
    if given.iter().any(|(a, _)| *a >= r) {
        bail!("too many indices for a tensor of rank {r}");
    }
    let positions: Vec<usize> = given.iter().map(|(a, _)| *a).collect();
    let mut ranks = Vec::new();
    for (_, t) in &given {
        ranks.push(rank_of(op, *t).unwrap_or(1));
    }
    let nb = *ranks.iter().max().unwrap_or(&1);
    let mut values: Vec<Value> = given.iter().map(|(_, t)| *t).collect();
    if negatives == Negatives::Wrap {
        for ((a, _), t) in given.iter().zip(values.iter_mut()) {
            let size = dim_size(op, x, *a as i64);
            *t = wrap_index(op, *t, size);
        }
    }
    let last = op.const_i64s(&[-1]);
    let parts: Vec<Value> = broadcast_indices(op, &values, nb).into_iter().map(|t| op.Unsqueeze(t, last)).collect();
    let idx = if parts.len() == 1 { parts[0] } else { op.Concat(&parts).axis(-1).out() };
    let mut perm: Vec<i64> = positions.iter().map(|&p| p as i64).collect();
    perm.extend((0..r as i64).filter(|d| !positions.contains(&(*d as usize))));
    let identity = perm.iter().enumerate().all(|(i, &p)| i as i64 == p);
    let xt = if identity { x } else { op.Transpose(x).perm(&perm).out() };
    let adjacent = positions.windows(2).all(|w| w[1] == w[0] + 1);
    let b_at = if adjacent { positions[0] } else { 0 };
    Ok(AdvIndex { xt, perm: if identity { None } else { Some(perm) }, idx, nb, b_at })
}

/// Moves `n` axes at `from` of a rank-`r` layout to position `to` (a permutation).
fn move_block(r: usize, from: usize, n: usize, to: usize) -> Vec<i64> {
    let mut rest: Vec<i64> = (0..r as i64).filter(|&d| (d as usize) < from || (d as usize) >= from + n).collect();
    let block: Vec<i64> = (from as i64..(from + n) as i64).collect();
    let tail = rest.split_off(to.min(rest.len()));
    rest.extend(block);
    rest.extend(tail);
    rest
}

/// torch's `x[indices]` (advanced indexing).
fn index_tensor(op: &mut Builder, x: Value, indices: &[Option<Value>]) -> OpResult<Value> {
    let r = rank_of(op, x)?;
    let used = r - rank_after_index(op, x, indices)?;
    let a = adv_index(op, x, indices, Negatives::Native)?;
    let g = op.GatherND(a.xt, a.idx).out();
    // GatherND gives [*B, rest...]; torch puts B at b_at.
    let out_rank = a.nb + r - used;
    if a.b_at == 0 {
        return Ok(g);
    }
    let perm = move_block(out_rank, 0, a.nb, a.b_at);
    Ok(op.Transpose(g).perm(&perm).out())
}

/// The number of self axes an index list leaves unindexed.
fn rank_after_index(op: &Builder, x: Value, indices: &[Option<Value>]) -> OpResult<usize> {
    let r = rank_of(op, x)?;
    let mut used = 0;
    for t in indices.iter().flatten() {
        used +=
            if op.dtype(*t) == Some(DType::Bool) || op.dtype(*t) == Some(DType::Uint8) { rank_of(op, *t)? } else { 1 };
    }
    r.checked_sub(used).ok_or_else(|| OpError::new(format!("{used} indexed dims for a tensor of rank {r}")))
}

/// ScatterElements of `src` (same shape as `index`) into `x`; rank-0 tensors go through rank 1.
fn scatter_elements(
    op: &mut Builder,
    x: Value,
    r: usize,
    axis: i64,
    index: Value,
    src: Value,
    reduction: &str,
) -> OpResult<Value> {
    let index = cast(op, index, DType::Int64);
    if r == 0 {
        let (x1, i1, s1) = (flat(op, x), flat(op, index), flat(op, src));
        let out = op.ScatterElements(x1, i1, s1).axis(0).reduction(reduction).out();
        return Ok(to_scalar(op, out));
    }
    Ok(op.ScatterElements(x, index, src).axis(axis).reduction(reduction).out())
}

/// `src` cut to the shape of `index` (torch lets src be larger than index along any axis).
fn src_like_index(op: &mut Builder, src: Value, index: Value) -> Value {
    if op.shape(src).is_some() && op.shape(src) == op.shape(index) {
        return src;
    }
    let r = op.rank(index).unwrap_or(0);
    if r == 0 {
        return src;
    }
    let zeros = op.const_i64s(&vec![0; r]);
    let ends = op.Shape(index).out();
    op.Slice(src, zeros, ends, None, None)
}

/// `a // b` rounding toward -inf for integer `a` and positive integer `b`.
fn floor_div_pos(op: &mut Builder, a: Value, b: Value) -> Value {
    let m = op.Mod(a, b).fmod(0).out();
    let d = op.Sub(a, m);
    op.Div(d, b)
}

/// scatter_reduce with torch's reductions, `index` already the shape of `src`.
fn scatter_reduce_impl(
    op: &mut Builder,
    x: Value,
    axis: i64,
    index: Value,
    src: Value,
    reduce: &str,
    include_self: bool,
) -> OpResult<Value> {
    let t = dtype_of(op, x)?;
    let r = rank_of(op, x)?;
    let src = cast(op, src, t);
    let index = cast(op, index, DType::Int64);
    let (red, ident) = match reduce {
        "sum" | "mean" => ("add", 0.0),
        "prod" => ("mul", 1.0),
        "amax" => ("max", if t == DType::Bool { 0.0 } else { f64::NEG_INFINITY }),
        "amin" => ("min", if t == DType::Bool { 1.0 } else { f64::INFINITY }),
        other => bail!("unknown scatter reduction '{other}'"),
    };
    let ishape = op.Shape(index).out();
    let base = if include_self {
        x
    } else {
        let id = op.scalar(t, ident);
        let fill = op.Expand(id, ishape);
        scatter_elements(op, x, r, axis, index, fill, "none")?
    };
    let out = scatter_elements(op, base, r, axis, index, src, red)?;
    if reduce != "mean" {
        return Ok(out);
    }
    let ct = if t.is_float() { t } else { DType::Int64 };
    let one = op.scalar(ct, 1.0);
    let ones = op.Expand(one, ishape);
    let xshape = op.Shape(x).out();
    let c0 = op.scalar(ct, if include_self { 1.0 } else { 0.0 });
    let c0 = op.Expand(c0, xshape);
    let count = scatter_elements(op, c0, r, axis, index, ones, "add")?;
    let count = op.Max(&[count, one]);
    if t.is_float() {
        Ok(op.Div(out, count))
    } else {
        let o = cast(op, out, DType::Int64);
        let q = floor_div_pos(op, o, count);
        Ok(cast(op, q, t))
    }
}

/// A 1-D `index` along `axis` of `source` broadcast to `source`'s shape (index_add & co).
fn index_along(op: &mut Builder, index: Value, source: Value, axis: i64, r: usize) -> Value {
    let index = cast(op, index, DType::Int64);
    if r == 0 {
        return flat(op, index);
    }
    expand_along(op, index, axis, r, source)
}

/// `source` in the rank of `x` (torch allows a 0-d source for a 0-d self, or 1-element 1-D).
fn source_for(op: &mut Builder, source: Value, r: usize) -> Value {
    if r == 0 {
        flat(op, source)
    } else {
        source
    }
}

translations! {
    /// index.Tensor(Tensor self, Tensor?[] indices) -> Tensor
    #[target("aten::index.Tensor", "aten::_unsafe_index.Tensor")]
    fn index(op, self_: Tensor, indices: Vec<Option<Tensor>>) -> OpResult<Value> {
        index_tensor(op, self_, &indices)
    }

    /// index_put(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor
    #[target("aten::index_put", "aten::_unsafe_index_put", "aten::_index_put_impl")]
    fn index_put(
        op,
        self_: Tensor,
        indices: Vec<Option<Tensor>>,
        values: Tensor,
        accumulate: bool = false,
    ) -> OpResult<Value> {
        let t = dtype_of(op, self_)?;
        let r = rank_of(op, self_)?;
        let values = cast(op, values, t);
        let used = r - rank_after_index(op, self_, &indices)?;
        let a = adv_index(op, self_, &indices, Negatives::Wrap)?;
        // The shape of x[indices] in torch's layout, then moved to ScatterND's [*B, rest...].
        let bshape = op.Shape(a.idx).end(-1).out();
        let tshape = if a.b_at == 0 {
            let rest = op.Shape(a.xt).start(used as i64).out();
            op.Concat(&[bshape, rest]).axis(0).out()
        } else {
            let pre = op.Shape(self_).start(0).end(a.b_at as i64).out();
            let post = op.Shape(self_).start((a.b_at + used) as i64).out();
            op.Concat(&[pre, bshape, post]).axis(0).out()
        };
        let upd = op.Expand(values, tshape);
        let out_rank = a.nb + r - used;
        let upd = if a.b_at == 0 {
            upd
        } else {
            let perm = move_block(out_rank, a.b_at, a.nb, 0);
            op.Transpose(upd).perm(&perm).out()
        };
        let red = if accumulate { "add" } else { "none" };
        let out = op.ScatterND(a.xt, a.idx, upd).reduction(red).out();
        Ok(match &a.perm {
            Some(p) => op.Transpose(out).perm(&inverse_perm(p)).out(),
            None => out,
        })
    }

    /// gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor
    #[target("aten::gather")]
    fn gather(op, self_: Tensor, dim: i64, index: Tensor, _sparse_grad: Ignored) -> OpResult<Value> {
        // sparse_grad shapes the gradient only.
        let r = rank_of(op, self_)?;
        let index = cast(op, index, DType::Int64);
        if r == 0 {
            let (x, i) = (flat(op, self_), flat(op, index));
            let g = op.GatherElements(x, i).axis(0).out();
            return Ok(if op.rank(index) == Some(0) { to_scalar(op, g) } else { g });
        }
        Ok(op.GatherElements(self_, index).axis(normalize_axis(dim, r)?).out())
    }

    /// index_select(Tensor self, int dim, Tensor index) -> Tensor
    #[target("aten::index_select")]
    fn index_select(op, self_: Tensor, dim: i64, index: Tensor) -> OpResult<Value> {
        let r = rank_of(op, self_)?;
        let index = cast(op, index, DType::Int64);
        let index = flat(op, index);
        if r == 0 {
            let x = flat(op, self_);
            let g = op.Gather(x, index).axis(0).out();
            return Ok(to_scalar(op, g));
        }
        Ok(op.Gather(self_, index).axis(normalize_axis(dim, r)?).out())
    }

    /// scatter.src(Tensor self, int dim, Tensor index, Tensor src) -> Tensor
    #[target("aten::scatter.src", "aten::scatter.value", "aten::scatter.reduce", "aten::scatter.value_reduce")]
    fn scatter(
        op,
        self_: Tensor,
        dim: i64,
        index: Tensor,
        src: Option<Tensor> = None,
        value: Option<Scalar> = None,
        reduce: Option<&str> = None,
    ) -> OpResult<Value> {
        let t = dtype_of(op, self_)?;
        let r = rank_of(op, self_)?;
        let updates = match (src, value) {
            (Some(s), _) => {
                let s = cast(op, s, t);
                src_like_index(op, s, index)
            }
            (None, Some(v)) => {
                let v = scalar_value(op, v, t);
                let s = op.Shape(index).out();
                op.Expand(v, s)
            }
            _ => bail!("scatter needs src or value"),
        };
        let red = match reduce {
            None => "none",
            Some("add") => "add",
            Some("multiply") => "mul",
            Some(o) => bail!("unknown scatter reduce '{o}'"),
        };
        scatter_elements(op, self_, r, normalize_axis(dim, r.max(1))?, index, updates, red)
    }

    /// scatter_add(Tensor self, int dim, Tensor index, Tensor src) -> Tensor
    #[target("aten::scatter_add")]
    fn scatter_add(op, self_: Tensor, dim: i64, index: Tensor, src: Tensor) -> OpResult<Value> {
        let t = dtype_of(op, self_)?;
        let r = rank_of(op, self_)?;
        let s = cast(op, src, t);
        let s = src_like_index(op, s, index);
        scatter_elements(op, self_, r, normalize_axis(dim, r.max(1))?, index, s, "add")
    }

    /// scatter_reduce.two(Tensor self, int dim, Tensor index, Tensor src, str reduce, *,
    ///     bool include_self=True) -> Tensor
    #[target("aten::scatter_reduce.two")]
    fn scatter_reduce(
        op,
        self_: Tensor,
        dim: i64,
        index: Tensor,
        src: Tensor,
        reduce: &str,
        include_self: bool = true,
    ) -> OpResult<Value> {
        let r = rank_of(op, self_)?;
        let s = src_like_index(op, src, index);
        scatter_reduce_impl(op, self_, normalize_axis(dim, r.max(1))?, index, s, reduce, include_self)
    }

    /// index_reduce(Tensor self, int dim, Tensor index, Tensor source, str reduce, *, bool include_self=True) -> Tensor
    #[target("aten::index_reduce")]
    fn index_reduce(
        op,
        self_: Tensor,
        dim: i64,
        index: Tensor,
        source: Tensor,
        reduce: &str,
        include_self: bool = true,
    ) -> OpResult<Value> {
        let r = rank_of(op, self_)?;
        let axis = normalize_axis(dim, r.max(1))?;
        let source = source_for(op, source, r);
        let idx = index_along(op, index, source, axis, r);
        scatter_reduce_impl(op, self_, axis, idx, source, reduce, include_self)
    }

    /// index_add(Tensor self, int dim, Tensor index, Tensor source, *, Scalar alpha=1) -> Tensor
    #[target("aten::index_add")]
    fn index_add(
        op,
        self_: Tensor,
        dim: i64,
        index: Tensor,
        source: Tensor,
        alpha: Scalar = Scalar::Int(1),
    ) -> OpResult<Value> {
        let t = dtype_of(op, self_)?;
        let r = rank_of(op, self_)?;
        let axis = normalize_axis(dim, r.max(1))?;
        let source = source_for(op, source, r);
        let mut s = cast(op, source, t);
        if alpha != Scalar::Int(1) {
            let a = scalar_value(op, alpha, t);
            s = op.Mul(s, a);
        }
        let idx = index_along(op, index, source, axis, r);
        scatter_elements(op, self_, r, axis, idx, s, "add")
    }

    /// index_copy(Tensor self, int dim, Tensor index, Tensor source) -> Tensor
    #[target("aten::index_copy")]
    fn index_copy(op, self_: Tensor, dim: i64, index: Tensor, source: Tensor) -> OpResult<Value> {
        let t = dtype_of(op, self_)?;
        let r = rank_of(op, self_)?;
        let axis = normalize_axis(dim, r.max(1))?;
        let source = source_for(op, source, r);
        let s = cast(op, source, t);
        let idx = index_along(op, index, source, axis, r);
        scatter_elements(op, self_, r, axis, idx, s, "none")
    }

    /// index_fill.int_Scalar(Tensor self, int dim, Tensor index, Scalar value) -> Tensor
    #[target("aten::index_fill.int_Scalar", "aten::index_fill.int_Tensor")]
    fn index_fill(op, self_: Tensor, dim: i64, index: Tensor, value: Operand) -> OpResult<Value> {
        let t = dtype_of(op, self_)?;
        let r = rank_of(op, self_)?;
        if r == 0 {
            // Any valid index selects the only element.
            return Ok(operand_value(op, value, t));
        }
        let axis = normalize_axis(dim, r)?;
        let index = cast(op, index, DType::Int64);
        let index = flat(op, index);
        // Positions along `axis` whose index is listed: a mask of the axis length.
        let n = dim_size(op, self_, axis);
        let zero = op.scalar_i64(0);
        let one = op.scalar_i64(1);
        let n0 = to_scalar(op, n);
        let ar = op.Range(zero, n0, one);
        let index = wrap_index(op, index, n);
        let col = op.const_i64s(&[-1, 1]);
        let ar2 = op.Reshape(ar, col).out();
        let eq = op.Equal(ar2, index);
        let eqi = cast(op, eq, DType::Int64);
        let axes = op.const_i64s(&[1]);
        let hit = op.ReduceMax(eqi, Some(axes)).keepdims(0).out();
        let hit = cast(op, hit, DType::Bool);
        let mut shape = vec![1i64; r];
        shape[axis as usize] = -1;
        let shape = op.const_i64s(&shape);
        let mask = op.Reshape(hit, shape).out();
        let v = operand_value(op, value, t);
        Ok(op.Where(mask, v, self_))
    }

    /// masked_select(Tensor self, Tensor mask) -> Tensor
    #[target("aten::masked_select")]
    fn masked_select(op, self_: Tensor, mask: Tensor) -> Value {
        let (sx, sm) = (op.Shape(self_).out(), op.Shape(mask).out());
        let xb = op.Expand(self_, sm);
        let m = cast(op, mask, DType::Bool);
        let mb = op.Expand(m, sx);
        let (fx, fm) = (flat(op, xb), flat(op, mb));
        op.Compress(fx, fm).axis(0).out()
    }

    /// masked_scatter(Tensor self, Tensor mask, Tensor source) -> Tensor
    #[target("aten::masked_scatter")]
    fn masked_scatter(op, self_: Tensor, mask: Tensor, source: Tensor) -> OpResult<Value> {
        let t = dtype_of(op, self_)?;
        let (sx, sm) = (op.Shape(self_).out(), op.Shape(mask).out());
        let xb = op.Expand(self_, sm);
        let m = cast(op, mask, DType::Bool);
        let mb = op.Expand(m, sx);
        let shape = op.Shape(xb).out();
        let (fx, fm) = (flat(op, xb), flat(op, mb));
        // The k-th true position takes source's k-th element (row-major).
        let mi = cast(op, fm, DType::Int64);
        let zero = op.scalar_i64(0);
        let pos = op.CumSum(mi, zero).out();
        let one = op.scalar_i64(1);
        let pos = op.Sub(pos, one);
        let pos = op.Max(&[pos, zero]);
        let s = cast(op, source, t);
        let s = flat(op, s);
        // One spare element so that an empty source with an all-false mask still gathers.
        let pad = op.const_i64s(&[1]);
        let spare = op
            .ConstantOfShape(pad)
            .value(constant_data(t, vec![1], &[0.0])?)
            .out();
        let s = op.Concat(&[s, spare]).axis(0).out();
        let g = op.Gather(s, pos).axis(0).out();
        let out = op.Where(fm, g, fx);
        Ok(op.Reshape(out, shape).out())
    }

    /// take(Tensor self, Tensor index) -> Tensor
    #[target("aten::take")]
    fn take(op, self_: Tensor, index: Tensor) -> Value {
        let x = flat(op, self_);
        let i = cast(op, index, DType::Int64);
        op.Gather(x, i).axis(0).out()
    }

    /// take_along_dim(Tensor self, Tensor indices, int? dim=None) -> Tensor
    #[target("aten::take_along_dim")]
    fn take_along_dim(op, self_: Tensor, indices: Tensor, dim: Option<i64> = None) -> OpResult<Value> {
        let i = cast(op, indices, DType::Int64);
        let Some(dim) = dim else {
            let (x, i) = (flat(op, self_), flat(op, i));
            return Ok(op.GatherElements(x, i).axis(0).out());
        };
        let r = rank_of(op, self_)?;
        if r == 0 {
            let (x, i1) = (flat(op, self_), flat(op, i));
            let g = op.GatherElements(x, i1).axis(0).out();
            return Ok(to_scalar(op, g));
        }
        let axis = normalize_axis(dim, r)?;
        // Broadcast every axis but `axis` between self and indices.
        let one = op.const_i64s(&[1]);
        let starts = op.const_i64s(&[axis]);
        let si = op.Shape(i).out();
        let si1 = op.ScatterElements(si, starts, one).axis(0).out();
        let sx = op.Shape(self_).out();
        let sx1 = op.ScatterElements(sx, starts, one).axis(0).out();
        let x = op.Expand(self_, si1);
        let i = op.Expand(i, sx1);
        Ok(op.GatherElements(x, i).axis(axis).out())
    }

    /// put(Tensor self, Tensor index, Tensor source, bool accumulate=False) -> Tensor
    #[target("aten::put")]
    fn put(op, self_: Tensor, index: Tensor, source: Tensor, accumulate: bool = false) -> OpResult<Value> {
        let t = dtype_of(op, self_)?;
        let shape = op.Shape(self_).out();
        let x = flat(op, self_);
        let i = cast(op, index, DType::Int64);
        let i = flat(op, i);
        let s = cast(op, source, t);
        let s = flat(op, s);
        let out = op.ScatterElements(x, i, s).axis(0).reduction(if accumulate { "add" } else { "none" }).out();
        Ok(op.Reshape(out, shape).out())
    }

    /// count_nonzero(Tensor self, int? dim=None) -> Tensor
    #[target("aten::count_nonzero", "aten::count_nonzero.dim_IntList")]
    fn count_nonzero(op, self_: Tensor, dim: Option<Vec<i64>> = None) -> OpResult<Value> {
        let r = rank_of(op, self_)?;
        let nz = if op.dtype(self_) == Some(DType::Bool) {
            self_
        } else {
            let t = dtype_of(op, self_)?;
            let z = op.scalar(t, 0.0);
            let e = op.Equal(self_, z);
            op.Not(e)
        };
        let n = cast(op, nz, DType::Int64);
        if r == 0 {
            return Ok(n);
        }
        let axes = match dim {
            Some(d) if !d.is_empty() => {
                let a: Vec<i64> = d.iter().map(|&x| normalize_axis(x, r)).collect::<OpResult<Vec<_>>>()?;
                Some(op.const_i64s(&a))
            }
            Some(_) => return Ok(n),
            None => None,
        };
        Ok(op.ReduceSum(n, axes).keepdims(0).out())
    }

    /// argwhere(Tensor self) -> Tensor
    #[target("aten::argwhere")]
    fn argwhere(op, self_: Tensor) -> OpResult<Value> {
        let r = rank_of(op, self_)?;
        if r == 0 {
            // [n, 0] with n = 1 if the scalar is non-zero.
            let x = flat(op, self_);
            let nz = op.NonZero(x);
            let n = op.Shape(nz).start(1).end(2).out();
            let z = op.const_i64s(&[0]);
            let s = op.Concat(&[n, z]).axis(0).out();
            return Ok(op.ConstantOfShape(s).value(TensorData::from_i64s(vec![1], &[0])).out());
        }
        let nz = op.NonZero(self_);
        Ok(op.Transpose(nz).perm(&[1, 0]).out())
    }

    /// nonzero_static(Tensor self, *, SymInt size, int fill_value=-1) -> Tensor
    #[target("aten::nonzero_static")]
    fn nonzero_static(op, self_: Tensor, size: SymInt, fill_value: i64 = -1) -> OpResult<Value> {
        let r = rank_of(op, self_)?;
        let SymInt::Const(size) = size else { bail!("nonzero_static with a symbolic size") };
        let x = if r == 0 { flat(op, self_) } else { self_ };
        let nz = op.NonZero(x);
        let nz = op.Transpose(nz).perm(&[1, 0]).out();
        let nz = if r == 0 {
            let starts = op.const_i64s(&[0]);
            let ends = op.const_i64s(&[0]);
            let axes = op.const_i64s(&[1]);
            op.Slice(nz, starts, ends, Some(axes), None)
        } else {
            nz
        };
        // Pad with fill_value rows to `size`, then keep the first `size` rows.
        let cols = r as i64;
        let fill_shape = op.const_i64s(&[size, cols]);
        let fill = op.ConstantOfShape(fill_shape).value(TensorData::from_i64s(vec![1], &[fill_value])).out();
        let both = op.Concat(&[nz, fill]).axis(0).out();
        let starts = op.const_i64s(&[0]);
        let ends = op.const_i64s(&[size]);
        let axes = op.const_i64s(&[0]);
        Ok(op.Slice(both, starts, ends, Some(axes), None))
    }

    /// nonzero(Tensor self) -> Tensor
    #[target("aten::nonzero")]
    fn nonzero(op, self_: Tensor) -> OpResult<Value> {
        if rank_of(op, self_)? == 0 {
            // A 0-d input gives [n, 0] (n = 1 when it is nonzero).
            let x = as_1d(op, self_);
            let nz = op.NonZero(x);
            let t = op.Transpose(nz).perm(&[1, 0]).out();
            let (s, e, ax) = (op.const_i64s(&[0]), op.const_i64s(&[0]), op.const_i64s(&[1]));
            return Ok(op.Slice(t, s, e, Some(ax), None));
        }
        let nz = op.NonZero(self_);
        Ok(op.Transpose(nz).perm(&[1, 0]).out())
    }

    /// nonzero_numpy(Tensor self) -> Tensor[]
    #[target("aten::nonzero_numpy")]
    fn nonzero_numpy(op, self_: Tensor) -> OpResult<Vec<Value>> {
        nonzero_rows(op, self_)
    }

    /// where(Tensor condition) -> Tensor[]
    #[target("aten::where")]
    fn where_nonzero(op, condition: Tensor) -> OpResult<Vec<Value>> {
        // `torch.where(c)` is `nonzero(c, as_tuple=True)`.
        nonzero_rows(op, condition)
    }

    /// _unsafe_masked_index(Tensor self, Tensor mask, Tensor?[] indices, Scalar fill) -> Tensor
    #[target("aten::_unsafe_masked_index")]
    fn _unsafe_masked_index(
        op,
        self_: Tensor,
        mask: Tensor,
        indices: Vec<Option<Tensor>>,
        fill: Scalar,
    ) -> OpResult<Value> {
        // torch: _unsafe_index(self, indices clamped to [0, size - 1]).masked_fill(~mask, fill).
        let t = match op.out_dtype(0) {
            Some(t) => t,
            None => dtype_of(op, self_)?,
        };
        let r = rank_of(op, self_)?;
        if indices.len() > r {
            bail!("{} indices for a tensor of rank {r}", indices.len());
        }
        if op.shape(self_).is_some_and(|s| s.contains(&Dim::Fixed(0))) {
            bail!("_unsafe_masked_index of an empty tensor is not supported");
        }
        let mut clamped = Vec::with_capacity(indices.len());
        for (i, ix) in indices.iter().enumerate() {
            clamped.push(match ix {
                None => None,
                Some(ix) => {
                    let ix = cast(op, *ix, DType::Int64);
                    let n = dim_size(op, self_, i as i64);
                    let one = op.const_i64s(&[1]);
                    let hi = op.Sub(n, one);
                    let hi = to_scalar(op, hi);
                    let lo = op.scalar_i64(0);
                    let ix = op.Max(&[ix, lo]);
                    Some(op.Min(&[ix, hi]))
                }
            });
        }
        let g = index_tensor(op, self_, &clamped)?;
        let g = cast(op, g, t);
        let f = scalar_value(op, fill, t);
        let m = cast(op, mask, DType::Bool);
        Ok(op.Where(m, g, f))
    }

    /// _unsafe_masked_index_put_accumulate(Tensor self, Tensor mask, Tensor?[] indices, Tensor values) -> Tensor
    #[target("aten::_unsafe_masked_index_put_accumulate")]
    fn _unsafe_masked_index_put_accumulate(
        op,
        self_: Tensor,
        mask: Tensor,
        indices: Vec<Option<Tensor>>,
        values: Tensor,
    ) -> OpResult<Value> {
        // index_put(self, clamp(indices), where(mask, values, 0), accumulate=True)
        let t = match op.out_dtype(0) {
            Some(t) => t,
            None => dtype_of(op, self_)?,
        };
        let shape = static_shape(op, self_, "_unsafe_masked_index_put_accumulate")?;
        let mut idx = Vec::new();
        for (i, ix) in indices.iter().enumerate() {
            let Some(ix) = ix else { bail!("_unsafe_masked_index_put_accumulate with None indices is not supported") };
            if i >= shape.len() {
                bail!("{} indices for a tensor of rank {}", indices.len(), shape.len());
            }
            let n = shape[i];
            let ix = cast(op, *ix, DType::Int64);
            let (lo, hi) = (op.scalar_i64(-n), op.scalar_i64(n - 1));
            let ix = op.Max(&[ix, lo]);
            let ix = op.Min(&[ix, hi]);
            let z = op.scalar_i64(0);
            let neg = op.Less(ix, z);
            let nv = op.scalar_i64(n);
            let wrapped = op.Add(ix, nv);
            idx.push(op.Where(neg, wrapped, ix));
        }
        if idx.is_empty() {
            bail!("_unsafe_masked_index_put_accumulate needs indices");
        }
        let k = idx.len();
        // The broadcast index shape B, each index expanded to it and stacked on a new last axis.
        let z = op.scalar_i64(0);
        let mut acc = op.Mul(idx[0], z);
        for &ix in &idx[1..] {
            let zi = op.Mul(ix, z);
            acc = op.Add(acc, zi);
        }
        let bshape = op.Shape(acc).out();
        let m1 = op.const_i64s(&[-1]);
        let stacked: Vec<Value> = idx
            .iter()
            .map(|&ix| {
                let e = op.Expand(ix, bshape);
                op.Unsqueeze(e, m1)
            })
            .collect();
        let nd = op.Concat(&stacked).axis(-1).out();
        let x = cast(op, self_, t);
        let v = cast(op, values, t);
        let fz = op.scalar(t, 0.0);
        let v = op.Where(mask, v, fz);
        let trail = op.const_i64s(&shape[k..]);
        let ushape = op.Concat(&[bshape, trail]).axis(0).out();
        let v = op.Expand(v, ushape);
        Ok(op.ScatterND(x, nd, v).reduction("add").out())
    }
}

/// One index vector per axis of `x`'s nonzero elements (a 0-d input counts as 1-D): the rows of
/// NonZero.
fn nonzero_rows(op: &mut Builder, x: Value) -> OpResult<Vec<Value>> {
    let r = rank_of(op, x)?;
    let x = if r == 0 { as_1d(op, x) } else { x };
    let nz = op.NonZero(x);
    let axes = op.const_i64s(&[0]);
    Ok((0..r.max(1) as i64)
        .map(|j| {
            let row = op.const_i64s(&[j]);
            let v = op.Gather(nz, row).axis(0).out();
            op.Squeeze(v, Some(axes))
        })
        .collect())
}
