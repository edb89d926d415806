//! Views and shape changes: view/reshape, permute, transpose, (un)squeeze, flatten, expand,
//! repeat, repeat_interleave, split, cat, select, slice, as_strided, embedding, embedding_bag, resize,
//! im2col, col2im.

use crate::translate::prelude::*;
use crate::translations;
use crate::translations::shared::norms::pnorm;
use crate::translations::shared::window::expand_param;

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

/// `x` reversed along `axes`.
fn flip_axes(op: &mut Builder, x: Value, axes: &[i64]) -> Value {
    if axes.is_empty() {
        return x;
    }
    let starts = op.const_i64s(&vec![-1; axes.len()]);
    let ends = op.const_i64s(&vec![i64::MIN; axes.len()]);
    let steps = op.const_i64s(&vec![-1; axes.len()]);
    let axes = op.const_i64s(axes);
    op.Slice(x, starts, ends, Some(axes), Some(steps))
}

/// `x` with axes `a` and `b` swapped (rank `r`).
fn swap_axes(op: &mut Builder, x: Value, r: usize, a: i64, b: i64) -> Value {
    if a == b {
        return x;
    }
    let mut perm: Vec<i64> = (0..r as i64).collect();
    perm.swap(a as usize, b as usize);
    op.Transpose(x).perm(&perm).out()
}

/// `torch.nn.functional.pad`'s list (last axis first, begin/end pairs) as ONNX `Pad`.
fn pad_impl(op: &mut Builder, x: Value, pad: &[SymInt], mode: &str, value: Option<Value>) -> OpResult<Value> {
    let r = rank_of(op, x)?;
    if !pad.len().is_multiple_of(2) || pad.len() / 2 > r {
        bail!("pad list of length {} for a tensor of rank {r}", pad.len());
    }
    let n = pad.len() / 2;
    if n == 0 {
        return Ok(x);
    }
    let axes: Vec<i64> = (0..n).map(|i| (r - 1 - i) as i64).collect();
    let mut v: Vec<SymInt> = (0..n).map(|i| pad[2 * i]).collect();
    v.extend((0..n).map(|i| pad[2 * i + 1]));
    let pads = shape_vec(op, &v);
    let axes = op.const_i64s(&axes);
    if mode == "constant" {
        return Ok(op.Pad(x, pads, value, Some(axes)).out());
    }
    // reflect / replicate / circular: gather each padded axis at torch's source positions
    // (this also covers negative pads, which crop).
    let mut y = x;
    for i in 0..n {
        let axis = (r - 1 - i) as i64;
        let (SymInt::Const(pl), SymInt::Const(pr)) = (pad[2 * i], pad[2 * i + 1]) else {
            bail!("{mode} padding with symbolic pad sizes is not supported");
        };
        if pl == 0 && pr == 0 {
            continue;
        }
        let len = dim_size(op, y, axis);
        let e = op.const_i64s(&[]);
        let len = op.Reshape(len, e).out();
        let (zero, one) = (op.scalar_i64(0), op.scalar_i64(1));
        let total = op.scalar_i64(pl + pr);
        let out_len = op.Add(len, total);
        let j = op.Range(zero, out_len, one);
        let last = op.Sub(len, one);
        let idx = match mode {
            "replicate" => {
                let s = op.scalar_i64(pl);
                let i = op.Sub(j, s);
                let i = op.Max(&[i, zero]);
                op.Min(&[i, last])
            }
            "reflect" => {
                let s = op.scalar_i64(pl);
                let i = op.Sub(j, s);
                let i = op.Abs(i);
                let d = op.Sub(last, i);
                let d = op.Abs(d);
                op.Sub(last, d)
            }
            "circular" => {
                let in0 = op.scalar_i64(0.max(-pl));
                let crop = op.scalar_i64(0.max(-pl) + 0.max(-pr));
                let m = op.Sub(len, crop);
                let m = op.Max(&[m, one]);
                let s = op.scalar_i64(0.max(pl));
                let i = op.Sub(j, s);
                let i = op.Mod(i, m).fmod(0).out();
                op.Add(i, in0)
            }
            other => bail!("unknown pad mode '{other}'"),
        };
        y = op.Gather(y, idx).axis(axis).out();
    }
    Ok(y)
}

/// Makes `x` at least `n`-dimensional the way atleast_{1,2,3}d do.
fn at_least(op: &mut Builder, x: Value, n: usize) -> OpResult<Value> {
    let r = rank_of(op, x)?;
    if r >= n {
        return Ok(x);
    }
    let axes: Vec<i64> = match (n, r) {
        (_, 0) => (0..n as i64).collect(),
        (2, 1) => vec![0],
        (3, 1) => vec![0, 2],
        (3, 2) => vec![2],
        _ => bail!("atleast_{n}d: no rule for an input of rank {r}"),
    };
    let axes = op.const_i64s(&axes);
    Ok(op.Unsqueeze(x, axes))
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

/// `repeat_interleave(repeats)`: i repeated repeats[i] times, for i in order.
fn repeated_positions(op: &mut Builder, repeats: Value) -> Value {
    // Position j of the result holds i when the running total of repeats[..=i-1] <= j <
    // total of repeats[..=i]: the count of inclusive running totals <= j.
    let r = cast(op, repeats, DType::Int64);
    let zero = op.scalar_i64(0);
    let totals = op.CumSum(r, zero).out();
    let total = op.ReduceSum(r, None).keepdims(0).out();
    let one = op.scalar_i64(1);
    let positions = op.Range(zero, total, one);
    let col = op.const_i64s(&[-1, 1]);
    let positions = op.Reshape(positions, col).out();
    let passed = op.LessOrEqual(totals, positions);
    let passed = cast(op, passed, DType::Int64);
    let axes = op.const_i64s(&[1]);
    op.ReduceSum(passed, Some(axes)).keepdims(0).out()
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

/// `x` repeated `repeats[i]` times along each axis; more repeats than axes add leading axes of size
/// one first (torch's `repeat`).
fn repeat_by(op: &mut Builder, x: Value, repeats: &[SymInt]) -> OpResult<Value> {
    let r = rank_of(op, x)?;
    let x = if repeats.len() > r {
        let axes: Vec<i64> = (0..(repeats.len() - r) as i64).collect();
        let axes = op.const_i64s(&axes);
        op.Unsqueeze(x, axes)
    } else {
        x
    };
    let reps = shape_vec(op, repeats);
    Ok(op.Tile(x, reps))
}

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

/// The padded-input positions every window reads along one axis, as `[k, out]`: `ki·d + i·s`.
/// A constant when the axis is static; else `Range(0, size + 2p - d(k-1), s)` plus the taps,
/// whose element count is the output length `(size + 2p - d(k-1) - 1) / s + 1`.
fn window_positions(op: &mut Builder, x: Value, axis: usize, [k, d, p, s]: [i64; 4]) -> OpResult<(Value, Option<i64>)> {
    let reach = d * (k - 1) + 1;
    if let Some(Dim::Fixed(size)) = op.shape(x).and_then(|sh| sh.get(axis)).cloned() {
        let out = (size + 2 * p - reach) / s + 1;
        if out < 1 {
            bail!("im2col: the kernel does not fit the input");
        }
        constant_elements(op, "the windows' positions", &[k, out])?;
        let taps: Vec<i64> = (0..k).flat_map(|ki| (0..out).map(move |i| ki * d + i * s)).collect();
        return Ok((op.constant_tensor(TensorData::from_i64s(vec![k, out], &taps)), Some(out)));
    }
    let shape = op.Shape(x).out();
    let axis = op.scalar_i64(axis as i64);
    let size = op.Gather(shape, axis).axis(0).out();
    let room = op.scalar_i64(reach - 1 - 2 * p);
    let limit = op.Sub(size, room);
    let (zero, step) = (op.scalar_i64(0), op.scalar_i64(s));
    let starts = op.Range(zero, limit, step);
    constant_elements(op, "the windows' taps", &[k])?;
    let taps: Vec<i64> = (0..k).map(|ki| ki * d).collect();
    let taps = op.constant_tensor(TensorData::from_i64s(vec![k, 1], &taps));
    Ok((op.Add(starts, taps), None))
}

/// `im2col` with symbolic sizes, one axis at a time: gather the rows every window reads
/// (`[.., C, kh, oh, W]`), then the columns (`[.., C, kh, oh, kw, ow]`), bring `kw` before `oh`
/// and merge. A column gather that reads every column once (kw = 1, stride 1) is skipped.
fn im2col_dynamic(
    op: &mut Builder,
    x: Value,
    [kh, kw]: [i64; 2],
    [dh, dw]: [i64; 2],
    [ph, pw]: [i64; 2],
    [sh, sw]: [i64; 2],
) -> OpResult<Value> {
    let r = rank_of(op, x)?;
    if r != 3 && r != 4 {
        bail!("im2col needs a 3-D or 4-D input");
    }
    let channels = match op.shape(x).map(|s| s[r - 3].clone()) {
        Some(Dim::Fixed(c)) => Some(c),
        _ => None,
    };
    let (rows, oh) = window_positions(op, x, r - 2, [kh, dh, ph, sh])?;
    let (cols, ow) = window_positions(op, x, r - 1, [kw, dw, pw, sw])?;
    let r = r as i64;
    let padded = if ph != 0 || pw != 0 {
        let pads = op.const_i64s(&[ph, pw, ph, pw]);
        let axes = op.const_i64s(&[r - 2, r - 1]);
        op.Pad(x, pads, None, Some(axes)).out()
    } else {
        x
    };
    let g = op.Gather(padded, rows).axis(r - 2).out();
    let g = if kw == 1 && sw == 1 {
        g
    } else {
        let g = op.Gather(g, cols).axis(r).out();
        if kw == 1 || oh == Some(1) {
            g
        } else {
            let mut perm: Vec<i64> = (0..r + 2).collect();
            perm.swap(r as usize - 1, r as usize);
            op.Transpose(g).perm(&perm).out()
        }
    };
    // [lead.., C·kh·kw, oh·ow]; Reshape's 0 copies the batch axis.
    let lead = vec![0; r as usize - 3];
    let target = |last_two: [i64; 2]| [lead.as_slice(), &last_two].concat();
    let merged = match (channels, oh.zip(ow)) {
        (Some(c), _) => target([c * kh * kw, -1]),
        (None, Some((oh, ow))) => target([-1, oh * ow]),
        (None, None) => {
            // Both the channels and the window count are symbolic: merge the windows first.
            let windows = op.const_i64s(&[lead.as_slice(), &[0, kh * kw, -1]].concat());
            let g = op.Reshape(g, windows).out();
            let l = op.Shape(g).start(-1).out();
            let head = op.const_i64s(&[lead.as_slice(), &[-1]].concat());
            let out = op.Concat(&[head, l]).axis(0).out();
            return Ok(op.Reshape(g, out).out());
        }
    };
    let merged = op.const_i64s(&merged);
    Ok(op.Reshape(g, merged).out())
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

    /// repeat(Tensor self, SymInt[] repeats) -> Tensor
    #[target("aten::repeat")]
    fn repeat(op, self_: Tensor, repeats: Vec<SymInt>) -> OpResult<Value> {
        repeat_by(op, self_, &repeats)
    }

    /// tile(Tensor self, SymInt[] dims) -> Tensor
    #[target("aten::tile")]
    fn tile(op, self_: Tensor, dims: Vec<SymInt>) -> OpResult<Value> {
        // torch pads `dims` with leading ones to the input's rank, then repeats.
        let r = rank_of(op, self_)?;
        let mut repeats = vec![SymInt::Const(1); r.saturating_sub(dims.len())];
        repeats.extend(dims);
        repeat_by(op, self_, &repeats)
    }

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

    /// size.int(Tensor self, int dim) -> int
    #[target("aten::size.int")]
    fn size_int(op, self_: Tensor, dim: i64) -> OpResult<Value> {
        let r = rank_of(op, self_)?;
        let s = dim_size(op, self_, normalize_axis(dim, r)?);
        let axes = op.const_i64s(&[0]);
        Ok(op.Squeeze(s, Some(axes)))
    }

    /// pad(Tensor self, SymInt[] pad, str mode="constant", float? value=None) -> Tensor
    #[target("aten::pad")]
    fn pad(
        op,
        self_: Tensor,
        pad: Vec<SymInt>,
        mode: &str = "constant",
        value: Option<f64> = None,
    ) -> OpResult<Value> {
        let v = match (mode, value) {
            ("constant", Some(v)) => {
                let t = dtype_of(op, self_)?;
                Some(op.scalar(t, v))
            }
            _ => None,
        };
        pad_impl(op, self_, &pad, mode, v)
    }

    /// constant_pad_nd(Tensor self, SymInt[] pad, Scalar value=0) -> Tensor
    #[target("aten::constant_pad_nd")]
    fn constant_pad_nd(
        op,
        self_: Tensor,
        pad: Vec<SymInt>,
        value: Scalar = Scalar::Int(0),
    ) -> OpResult<Value> {
        let t = dtype_of(op, self_)?;
        let v = scalar_value(op, value, t);
        pad_impl(op, self_, &pad, "constant", Some(v))
    }

    /// reflection_pad1d(Tensor self, SymInt[2] padding) -> Tensor
    #[target("aten::reflection_pad1d", "aten::reflection_pad2d", "aten::reflection_pad3d")]
    fn reflection_pad(op, self_: Tensor, padding: Vec<SymInt>) -> OpResult<Value> {
        pad_impl(op, self_, &padding, "reflect", None)
    }

    /// replication_pad1d(Tensor self, SymInt[2] padding) -> Tensor
    #[target("aten::replication_pad1d", "aten::replication_pad2d", "aten::replication_pad3d")]
    fn replication_pad(op, self_: Tensor, padding: Vec<SymInt>) -> OpResult<Value> {
        pad_impl(op, self_, &padding, "replicate", None)
    }

    /// flip(Tensor self, int[] dims) -> Tensor
    #[target("aten::flip")]
    fn flip(op, self_: Tensor, dims: Vec<i64>) -> OpResult<Value> {
        let r = rank_of(op, self_)?;
        if r == 0 {
            return Ok(self_);
        }
        let axes: Vec<i64> = dims.iter().map(|&d| normalize_axis(d, r)).collect::<OpResult<Vec<_>>>()?;
        Ok(flip_axes(op, self_, &axes))
    }

    /// flipud(Tensor self) -> Tensor
    #[target("aten::flipud")]
    fn flipud(op, self_: Tensor) -> Value {
        flip_axes(op, self_, &[0])
    }

    /// fliplr(Tensor self) -> Tensor
    #[target("aten::fliplr")]
    fn fliplr(op, self_: Tensor) -> Value {
        flip_axes(op, self_, &[1])
    }

    /// roll(Tensor self, SymInt[1] shifts, int[1] dims=[]) -> Tensor
    #[target("aten::roll")]
    fn roll(op, self_: Tensor, shifts: Vec<SymInt>, dims: Vec<i64> = vec![]) -> OpResult<Value> {
        let r = rank_of(op, self_)?;
        let (x, pairs, reshape) = if dims.is_empty() {
            let shape = op.Shape(self_).out();
            let m1 = op.const_i64s(&[-1]);
            (op.Reshape(self_, m1).out(), vec![(shifts[0], 0i64)], Some(shape))
        } else {
            if dims.len() != shifts.len() {
                bail!("roll: shifts and dims differ in length");
            }
            let pairs = shifts.iter().zip(&dims).map(|(&s, &d)| Ok((s, normalize_axis(d, r)?)));
            (self_, pairs.collect::<OpResult<Vec<_>>>()?, None)
        };
        // Rolling keeps the shape: the sizes are read once, before any Concat hides them.
        let sizes = op.shape(x).map(<[Dim]>::to_vec);
        let mut x = x;
        for (shift, axis) in pairs {
            // out = cat(x[n-s:], x[:n-s]) with s = shift mod n; static where n and the shift are.
            let static_n = sizes.as_ref().and_then(|sh| match sh.get(axis as usize) {
                Some(Dim::Fixed(n)) => Some(*n),
                _ => None,
            });
            let cut = match (static_n, shift) {
                (Some(0), _) => continue,
                (Some(n), SymInt::Const(s)) => op.const_i64s(&[n - s.rem_euclid(n)]),
                _ => {
                    let n = dim_size(op, x, axis);
                    let s = sym_value(op, shift);
                    let s = as_1d(op, s);
                    let one = op.const_i64s(&[1]);
                    let n1 = op.Max(&[n, one]);
                    let s = op.Mod(s, n1).fmod(0).out();
                    op.Sub(n, s)
                }
            };
            let axes = op.const_i64s(&[axis]);
            let big = op.const_i64s(&[i64::MAX]);
            let zero = op.const_i64s(&[0]);
            let tail = op.Slice(x, cut, big, Some(axes), None);
            let head = op.Slice(x, zero, cut, Some(axes), None);
            x = op.Concat(&[tail, head]).axis(axis).out();
        }
        Ok(match reshape {
            Some(s) => op.Reshape(x, s).out(),
            None => x,
        })
    }

    /// rot90(Tensor self, int k=1, int[] dims=[0, 1]) -> Tensor
    #[target("aten::rot90")]
    fn rot90(op, self_: Tensor, k: i64 = 1, dims: Vec<i64> = vec![0, 1]) -> OpResult<Value> {
        let r = rank_of(op, self_)?;
        if dims.len() != 2 {
            bail!("rot90 needs two dims");
        }
        let (d0, d1) = (normalize_axis(dims[0], r)?, normalize_axis(dims[1], r)?);
        Ok(match k.rem_euclid(4) {
            1 => {
                let f = flip_axes(op, self_, &[d1]);
                swap_axes(op, f, r, d0, d1)
            }
            2 => flip_axes(op, self_, &[d0, d1]),
            3 => {
                let f = flip_axes(op, self_, &[d0]);
                swap_axes(op, f, r, d0, d1)
            }
            _ => self_,
        })
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
        tensor_split(op, self_, axis, sections, indices)
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
        let axes = op.const_i64s(&[axis]);
        match op.shape(tensor_indices_or_sections).map(|s| s.to_vec()) {
            // A count of sections: the archive's outputs are that many, sized n/k, the first n%k one larger.
            Some(s) if s.is_empty() => {
                let k = (0..).take_while(|&i| op.out_dtype(i).is_some()).count() as i64;
                let n = fixed_dim(op, self_, axis, "tensor_split")?;
                if k == 0 {
                    bail!("tensor_split into no sections");
                }
                let mut start = 0;
                Ok((0..k)
                    .map(|i| {
                        let len = n / k + (i < n % k) as i64;
                        let (a, b) = (op.const_i64s(&[start]), op.const_i64s(&[start + len]));
                        start += len;
                        op.Slice(self_, a, b, Some(axes), None)
                    })
                    .collect())
            }
            // Split points: piece i is x[idx[i-1] : idx[i]] along dim (torch's slice rules).
            Some(s) if s.len() == 1 => {
                let Dim::Fixed(m) = s[0] else { bail!("tensor_split needs a static number of indices") };
                let idx = cast(op, tensor_indices_or_sections, DType::Int64);
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
        tensor_split(op, self_, 0, sections, indices)
    }

    /// dsplit.int(Tensor(a -> *) self, int sections) -> Tensor(a)[]
    #[target("aten::dsplit.int", "aten::dsplit.array")]
    fn dsplit(
        op,
        self_: Tensor,
        sections: Option<i64> = None,
        indices: Option<Vec<i64>> = None,
    ) -> OpResult<Vec<Value>> {
        tensor_split(op, self_, 2, sections, indices)
    }

    /// unfold(Tensor(a) self, int dimension, int size, int step) -> Tensor(a)
    #[target("aten::unfold", "aten::unfold_copy")]
    fn unfold(op, self_: Tensor, dimension: i64, size: i64, step: i64) -> OpResult<Value> {
        let r = rank_of(op, self_)?;
        if r == 0 {
            let one = op.const_i64s(&[1]);
            return Ok(op.Reshape(self_, one).out());
        }
        let axis = normalize_axis(dimension, r)?;
        // Window starts 0, step, ... up to n - size; window w takes start_w + [0, size).
        let n = dim_size(op, self_, axis);
        let e = op.const_i64s(&[]);
        let n0 = op.Reshape(n, e).out();
        let sz = op.scalar_i64(size);
        let lim = op.Sub(n0, sz);
        let one = op.scalar_i64(1);
        let lim = op.Add(lim, one);
        let zero = op.scalar_i64(0);
        let st = op.scalar_i64(step);
        let starts = op.Range(zero, lim, st);
        let col = op.const_i64s(&[-1, 1]);
        let starts = op.Reshape(starts, col).out();
        let within = op.Range(zero, sz, one);
        let idx = op.Add(starts, within);
        let g = op.Gather(self_, idx).axis(axis).out();
        // [pre, windows, size, post] → size last.
        let mut perm: Vec<i64> = (0..=axis).collect();
        perm.extend((axis + 2)..(r as i64 + 1));
        perm.push(axis + 1);
        let identity = perm.iter().enumerate().all(|(i, &p)| i as i64 == p);
        Ok(if identity { g } else { op.Transpose(g).perm(&perm).out() })
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

    /// pixel_shuffle(Tensor self, int upscale_factor) -> Tensor
    #[target("aten::pixel_shuffle")]
    fn pixel_shuffle(op, self_: Tensor, upscale_factor: i64) -> OpResult<Value> {
        pixel_impl(op, self_, upscale_factor, true)
    }

    /// pixel_unshuffle(Tensor self, int downscale_factor) -> Tensor
    #[target("aten::pixel_unshuffle")]
    fn pixel_unshuffle(op, self_: Tensor, downscale_factor: i64) -> OpResult<Value> {
        pixel_impl(op, self_, downscale_factor, false)
    }

    /// channel_shuffle(Tensor self, SymInt groups) -> Tensor
    #[target("aten::channel_shuffle", "aten::native_channel_shuffle")]
    fn channel_shuffle(op, self_: Tensor, groups: SymInt) -> OpResult<Value> {
        // [N, C, *] viewed as [N, g, C/g, *], the two group axes swapped, viewed back.
        let r = rank_of(op, self_)?;
        if r < 3 {
            bail!("channel_shuffle needs an input of at least 3 dims, got rank {r}");
        }
        let shape = op.Shape(self_).out();
        let n = op.Shape(self_).start(0).end(1).out();
        let c = op.Shape(self_).start(1).end(2).out();
        let rest = op.Shape(self_).start(2).out();
        let g = sym_value(op, groups);
        let g = as_1d(op, g);
        let per = op.Div(c, g);
        let mid = op.Concat(&[n, g, per, rest]).axis(0).out();
        let y = op.Reshape(self_, mid).out();
        let mut perm: Vec<i64> = (0..=r as i64).collect();
        perm.swap(1, 2);
        let y = op.Transpose(y).perm(&perm).out();
        Ok(op.Reshape(y, shape).out())
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
        let have: i64 = shape.iter().product();
        let want: i64 = new.iter().product();
        if want > have {
            bail!("resize to more elements than the tensor holds leaves them uninitialised");
        }
        let m1 = op.const_i64s(&[-1]);
        let flat = op.Reshape(self_, m1).out();
        let flat = if want < have {
            let (s, e) = (op.const_i64s(&[0]), op.const_i64s(&[want]));
            op.Slice(flat, s, e, None, None)
        } else {
            flat
        };
        let sv = op.const_i64s(&new);
        Ok(op.Reshape(flat, sv).out())
    }

    /// resize_as(Tensor self, Tensor the_template, *, MemoryFormat? memory_format=None) -> Tensor
    #[target("aten::resize_as", "aten::resize_as_")]
    fn resize_as(op, self_: Tensor, the_template: Tensor) -> OpResult<Value> {
        let shape = static_shape(op, self_, "resize_as")?;
        let new = static_shape(op, the_template, "resize_as")?;
        let have: i64 = shape.iter().product();
        let want: i64 = new.iter().product();
        if want > have {
            bail!("resize to more elements than the tensor holds leaves them uninitialised");
        }
        let m1 = op.const_i64s(&[-1]);
        let flat = op.Reshape(self_, m1).out();
        let flat = if want < have {
            let (s, e) = (op.const_i64s(&[0]), op.const_i64s(&[want]));
            op.Slice(flat, s, e, None, None)
        } else {
            flat
        };
        let sv = op.const_i64s(&new);
        Ok(op.Reshape(flat, sv).out())
    }

    /// im2col(Tensor self, int[2] kernel_size, int[2] dilation, int[2] padding, int[2] stride) -> Tensor
    #[target("aten::im2col")]
    fn im2col(
        op,
        self_: Tensor,
        kernel_size: Vec<i64>,
        dilation: Vec<i64>,
        padding: Vec<i64>,
        stride: Vec<i64>,
    ) -> OpResult<Value> {
        // [N?, C, H, W] → [N?, C·kh·kw, L]: gather each window position from the padded, flattened plane.
        let two = |v: &[i64], default| expand_param(v, 2, default).map(|p| (p[0], p[1]));
        let (kh, kw) = two(&kernel_size, 1)?;
        let ((dh, dw), (ph, pw), (sh, sw)) = (two(&dilation, 1)?, two(&padding, 0)?, two(&stride, 1)?);
        let Ok(shape) = static_shape(op, self_, "im2col") else {
            return im2col_dynamic(op, self_, [kh, kw], [dh, dw], [ph, pw], [sh, sw]);
        };
        let r = shape.len();
        if r != 3 && r != 4 {
            bail!("im2col needs a 3-D or 4-D input");
        }
        let (h, w) = (shape[r - 2] + 2 * ph, shape[r - 1] + 2 * pw);
        let oh = (h - (dh * (kh - 1) + 1)) / sh + 1;
        let ow = (w - (dw * (kw - 1) + 1)) / sw + 1;
        if oh < 1 || ow < 1 {
            bail!("im2col: the kernel does not fit the input");
        }
        let mut idx = Vec::with_capacity(constant_elements(op, "im2col's index", &[kh, kw, oh, ow])?);
        for ki in 0..kh {
            for kj in 0..kw {
                for i in 0..oh {
                    for j in 0..ow {
                        idx.push((i * sh + ki * dh) * w + j * sw + kj * dw);
                    }
                }
            }
        }
        let x = self_;
        let x = if ph != 0 || pw != 0 {
            let pads = op.const_i64s(&[ph, pw, ph, pw]);
            let axes = op.const_i64s(&[r as i64 - 2, r as i64 - 1]);
            op.Pad(x, pads, None, Some(axes)).out()
        } else {
            x
        };
        let lead: Vec<i64> = shape[..r - 2].to_vec();
        let mut flat = lead.clone();
        flat.push(h * w);
        let fs = op.const_i64s(&flat);
        let x = op.Reshape(x, fs).out();
        let iv = op.constant_tensor(TensorData::from_i64s(vec![kh * kw, oh * ow], &idx));
        let g = op.Gather(x, iv).axis(r as i64 - 2).out();
        let mut out: Vec<i64> = shape[..r - 3].to_vec();
        out.push(shape[r - 3] * kh * kw);
        out.push(oh * ow);
        let os = op.const_i64s(&out);
        Ok(op.Reshape(g, os).out())
    }

    /// col2im(Tensor self, SymInt[2] output_size, int[2] kernel_size, int[2] dilation, int[2] padding,
    ///     int[2] stride) -> Tensor
    #[target("aten::col2im")]
    fn col2im(
        op,
        self_: Tensor,
        output_size: Vec<SymInt>,
        kernel_size: Vec<i64>,
        dilation: Vec<i64>,
        padding: Vec<i64>,
        stride: Vec<i64>,
    ) -> OpResult<Value> {
        // ONNX Col2Im is torch's fold: [N, C·kh·kw, L] summed into [N, C, H, W]; unbatched inputs
        // ([C·kh·kw, L]) get a batch axis.
        let unbatched = match rank_of(op, self_)? {
            2 => true,
            3 => false,
            r => bail!("col2im needs a 2-D or 3-D input, got rank {r}"),
        };
        let p = expand_param(&padding, 2, 0)?;
        let (kernel, dilation, stride) =
            (expand_param(&kernel_size, 2, 1)?, expand_param(&dilation, 2, 1)?, expand_param(&stride, 2, 1)?);
        let zero = op.const_i64s(&[0]);
        let x = if unbatched { op.Unsqueeze(self_, zero) } else { self_ };
        // ONNX Runtime's Col2Im is float32 only: other types sum in float32 (the driver casts back).
        let t = dtype_of(op, x)?;
        let x = cast(op, x, DType::Float);
        let image = shape_vec(op, &output_size);
        let block = op.const_i64s(&kernel);
        let y = op.Col2Im(x, image, block).dilations(&dilation).pads(&[p[0], p[1], p[0], p[1]]).strides(&stride).out();
        let y = cast(op, y, t);
        Ok(if unbatched { op.Squeeze(y, Some(zero)) } else { y })
    }

    /// repeat_interleave.self_int(Tensor self, SymInt repeats, int? dim=None, *, SymInt? output_size=None) -> Tensor
    #[target("aten::repeat_interleave.self_int")]
    fn repeat_interleave(
        op,
        self_: Tensor,
        repeats: SymInt,
        dim: Option<i64> = None,
        // A hint saving torch a sync; the size follows from `repeats`.
        _output_size: Ignored,
    ) -> OpResult<Value> {
        let (x, axis, r) = match dim {
            None => {
                let m1 = op.const_i64s(&[-1]);
                (op.Reshape(self_, m1).out(), 0i64, 1usize)
            }
            Some(d) => {
                let r = rank_of(op, self_)?;
                if r == 0 {
                    let m1 = op.const_i64s(&[-1]);
                    (op.Reshape(self_, m1).out(), 0, 1)
                } else {
                    (self_, normalize_axis(d, r)?, r)
                }
            }
        };
        // [.., n, 1, ..] tiled to [.., n, repeats, ..], then the two axes merged.
        let a = op.const_i64s(&[axis + 1]);
        let xu = op.Unsqueeze(x, a);
        let mut reps = vec![SymInt::Const(1); r + 1];
        reps[axis as usize + 1] = repeats;
        let reps = shape_vec(op, &reps);
        let tiled = op.Tile(xu, reps);
        let mut parts = Vec::new();
        if axis > 0 {
            parts.push(op.Shape(x).start(0).end(axis).out());
        }
        parts.push(op.const_i64s(&[-1]));
        if (axis as usize) < r - 1 {
            parts.push(op.Shape(x).start(axis + 1).out());
        }
        let shape = if parts.len() == 1 { parts[0] } else { op.Concat(&parts).axis(0).out() };
        Ok(op.Reshape(tiled, shape).out())
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

    /// repeat_interleave.Tensor(Tensor repeats, *, SymInt? output_size=None) -> Tensor
    #[target("aten::repeat_interleave.Tensor")]
    fn repeat_interleave_counts(
        op,
        repeats: Tensor,
        // A hint saving torch a sync; the size follows from `repeats`.
        _output_size: Ignored,
    ) -> Value {
        repeated_positions(op, repeats)
    }

    /// repeat_interleave.self_Tensor(Tensor self, Tensor repeats, int? dim=None, *, SymInt? output_size=None) -> Tensor
    #[target("aten::repeat_interleave.self_Tensor")]
    fn repeat_interleave_tensor(
        op,
        self_: Tensor,
        repeats: Tensor,
        dim: Option<i64> = None,
        // A hint saving torch a sync; the size follows from `repeats`.
        _output_size: Ignored,
    ) -> OpResult<Value> {
        // x gathered along the axis at repeat_interleave(repeats); one repeat count serves every element.
        let r = rank_of(op, self_)?;
        let (x, axis) = match dim {
            Some(d) if r > 0 => (self_, normalize_axis(d, r)?),
            _ => {
                let m1 = op.const_i64s(&[-1]);
                (op.Reshape(self_, m1).out(), 0)
            }
        };
        let m1 = op.const_i64s(&[-1]);
        let counts = op.Reshape(repeats, m1).out();
        let n = dim_size(op, x, axis);
        let counts = op.Expand(counts, n);
        let pos = repeated_positions(op, counts);
        Ok(op.Gather(x, pos).axis(axis).out())
    }
}

/// `tensor_split` by a number of sections (sizes differ by at most one, larger first) or at indices.
fn tensor_split(
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
    let n = fixed_dim(op, x, axis, "hsplit/vsplit")?;
    let bounds: Vec<i64> = match (sections, indices) {
        (Some(k), _) => {
            if k <= 0 || n % k != 0 {
                bail!("cannot split {n} elements into {k} equal sections");
            }
            pieces(op, "the split", k)?;
            (1..k).map(|i| i * (n / k)).collect()
        }
        (None, Some(ix)) => ix,
        _ => bail!("split needs sections or indices"),
    };
    let mut sizes = Vec::new();
    let mut prev = 0i64;
    for b in bounds.into_iter().chain(std::iter::once(n)) {
        let b = b.clamp(prev, n);
        sizes.push(SymInt::Const(b - prev));
        prev = b;
    }
    if sizes.len() == 1 {
        return Ok(vec![x]);
    }
    let starts: Vec<i64> = {
        let mut acc = 0;
        sizes
            .iter()
            .map(|s| {
                let st = acc;
                if let SymInt::Const(c) = s {
                    acc += c;
                }
                st
            })
            .collect()
    };
    // Slices (Split rejects zero-sized pieces in some runtimes).
    let axes = op.const_i64s(&[axis]);
    Ok(sizes
        .iter()
        .zip(starts)
        .map(|(s, st)| {
            let SymInt::Const(c) = s else { unreachable!() };
            let a = op.const_i64s(&[st]);
            let b = op.const_i64s(&[st + c]);
            op.Slice(x, a, b, Some(axes), None)
        })
        .collect())
}

/// pixel_shuffle (`up`) / pixel_unshuffle with torch's channel order, any number of batch axes.
/// `pixel_impl` with symbolic sizes: the same reshapes, their shapes computed from `Shape(x)`.
fn pixel_impl_dynamic(op: &mut Builder, x: Value, r: usize, f: i64, up: bool) -> Value {
    let r = r as i64;
    let batch = op.Shape(x).end(r - 3).out();
    let c = op.Shape(x).start(r - 3).end(r - 2).out();
    let h = op.Shape(x).start(r - 2).end(r - 1).out();
    let w = op.Shape(x).start(r - 1).out();
    let (ff, fv, m1) = (op.const_i64s(&[f * f]), op.const_i64s(&[f]), op.const_i64s(&[-1]));
    let (mid, perm, fin) = if up {
        let oc = op.Div(c, ff);
        let (hf, wf) = (op.Mul(h, fv), op.Mul(w, fv));
        (vec![m1, oc, fv, fv, h, w], [0, 1, 4, 2, 5, 3], vec![batch, oc, hf, wf])
    } else {
        let (oh, ow) = (op.Div(h, fv), op.Div(w, fv));
        let cf = op.Mul(c, ff);
        (vec![m1, c, oh, fv, ow, fv], [0, 1, 3, 5, 2, 4], vec![batch, cf, oh, ow])
    };
    let mid = op.Concat(&mid).axis(0).out();
    let y = op.Reshape(x, mid).out();
    let y = op.Transpose(y).perm(&perm).out();
    let fin = op.Concat(&fin).axis(0).out();
    op.Reshape(y, fin).out()
}

fn pixel_impl(op: &mut Builder, x: Value, f: i64, up: bool) -> OpResult<Value> {
    let r = rank_of(op, x)?;
    if r < 3 {
        bail!("pixel_(un)shuffle needs at least 3 dims");
    }
    let shape: Option<Vec<i64>> = match op.shape(x) {
        Some(s) => s
            .iter()
            .map(|d| match d {
                Dim::Fixed(n) => Some(*n),
                _ => None,
            })
            .collect::<Option<Vec<i64>>>(),
        None => None,
    };
    let Some(shape) = shape else {
        return Ok(pixel_impl_dynamic(op, x, r, f, up));
    };
    let batch = &shape[..r - 3];
    let (c, h, w) = (shape[r - 3], shape[r - 2], shape[r - 1]);
    let b: i64 = batch.iter().product();
    let (mid, perm, fin): (Vec<i64>, [i64; 6], Vec<i64>) = if up {
        let oc = c / (f * f);
        (vec![b, oc, f, f, h, w], [0, 1, 4, 2, 5, 3], vec![oc, h * f, w * f])
    } else {
        let (oh, ow) = (h / f, w / f);
        (vec![b, c, oh, f, ow, f], [0, 1, 3, 5, 2, 4], vec![c * f * f, oh, ow])
    };
    let mut out_shape = batch.to_vec();
    out_shape.extend(fin);
    // Reshape reads a 0 as "keep the input's size": right only where that size is 0 too.
    let keeps = |to: &[i64], from: &[i64]| to.iter().enumerate().all(|(i, &d)| d != 0 || from.get(i) == Some(&0));
    let moved: Vec<i64> = perm.iter().map(|&p| mid[p as usize]).collect();
    if !keeps(&mid, &shape) || !keeps(&out_shape, &moved) {
        // An empty input: the result is empty too.
        let zero = constant_data(dtype_of(op, x)?, vec![1], &[0.0])?;
        let s = op.const_i64s(&out_shape);
        return Ok(op.ConstantOfShape(s).value(zero).out());
    }
    let s = op.const_i64s(&mid);
    let y = op.Reshape(x, s).out();
    let y = op.Transpose(y).perm(&perm).out();
    let s = op.const_i64s(&out_shape);
    Ok(op.Reshape(y, s).out())
}
