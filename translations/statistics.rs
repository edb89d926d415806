//! Order statistics: median / nanmedian (whole tensor and along a dim), mode, quantile / nanquantile,
//! histc, histogram / histogramdd, bincount, segment_reduce.
//!
//! Medians sort with TopK (NaN keyed as +inf, ties broken by the lower index) and pick torch's
//! lower median `sorted[(count - 1) / 2]`; `median` returns the first NaN of a slice that has one,
//! `nanmedian` counts only the non-NaN elements. `mode` counts equal pairs along the dim.

use crate::translate::prelude::*;
use crate::translations;

/// The sort key of `x` (NaN as +inf for floats), in a type TopK supports, and the NaN mask.
fn sort_key(op: &mut Builder, x: Value, t: DType) -> (Value, Option<Value>) {
    let w = cast(op, x, topk_type(t));
    if !t.is_float() {
        return (w, None);
    }
    let nan = op.IsNaN(w);
    let inf = op.scalar(t, f64::INFINITY);
    (op.Where(nan, inf, w), Some(nan))
}

/// Median of `x` along `axis` (kept as size 1): values and int64 indices.
fn median_impl(op: &mut Builder, x: Value, axis: i64, ignore_nan: bool) -> OpResult<(Value, Value)> {
    let t = dtype_of(op, x)?;
    let (key, nan) = sort_key(op, x, t);
    let n = dim_size(op, x, axis);
    let [_, order] = op.TopK(key, n).axis(axis).largest(0).sorted(1).outs::<2>();
    let one = op.scalar_i64(1);
    let zero = op.scalar_i64(0);
    let two = op.scalar_i64(2);
    let sel = match (ignore_nan, nan) {
        (true, Some(nan)) => {
            // k = max(count - 1, 0) / 2 over the non-NaN elements (all-NaN slices pick position 0).
            let ok = op.Not(nan);
            let ok = cast(op, ok, DType::Int64);
            let axes = op.const_i64s(&[axis]);
            let cnt = op.ReduceSum(ok, Some(axes)).keepdims(1).out();
            let c1 = op.Sub(cnt, one);
            let c1 = op.Max(&[c1, zero]);
            let pos = op.Div(c1, two);
            op.GatherElements(order, pos).axis(axis).out()
        }
        _ => {
            let c1 = op.Sub(n, one);
            let c1 = op.Max(&[c1, zero]);
            let pos = op.Div(c1, two);
            op.Gather(order, pos).axis(axis).out()
        }
    };
    let sel = match (ignore_nan, nan) {
        (false, Some(nan)) => {
            // A slice with a NaN has median NaN, at the first NaN's index.
            let ni = cast(op, nan, DType::Int32);
            let axes = op.const_i64s(&[axis]);
            let any = op.ReduceMax(ni, Some(axes)).keepdims(1).out();
            let any = cast(op, any, DType::Bool);
            let first = op.ArgMax(ni).axis(axis).keepdims(1).select_last_index(0).out();
            op.Where(any, first, sel)
        }
        _ => sel,
    };
    let v = op.GatherElements(x, sel).axis(axis).out();
    Ok((v, sel))
}

/// The axis a (value, index) reduction of `x` (rank `r`) over `dim` works on; `None` for a 0-d
/// `x`, whose result is `x` itself at index 0. An empty dimension is refused, as torch does.
fn reduced_axis(op: &Builder, x: Value, r: usize, dim: i64, what: &str) -> OpResult<Option<i64>> {
    if r == 0 {
        if dim != 0 && dim != -1 {
            bail!("dim {dim} is out of range for a 0-d tensor");
        }
        return Ok(None);
    }
    let axis = normalize_axis(dim, r)?;
    if let Some(s) = op.shape(x) {
        if s.get(axis as usize) == Some(&Dim::Fixed(0)) {
            bail!("{what} of an empty dimension is an error in torch");
        }
    }
    Ok(Some(axis))
}

fn median_dim(op: &mut Builder, x: Value, dim: i64, keepdim: bool, ignore_nan: bool) -> OpResult<(Value, Value)> {
    let r = rank_of(op, x)?;
    let Some(axis) = reduced_axis(op, x, r, dim, "median")? else {
        let z = op.scalar_i64(0);
        return Ok((x, z));
    };
    let (v, i) = median_impl(op, x, axis, ignore_nan)?;
    if keepdim {
        return Ok((v, i));
    }
    let axes = op.const_i64s(&[axis]);
    let v = op.Squeeze(v, Some(axes));
    let i = op.Squeeze(i, Some(axes));
    Ok((v, i))
}

fn median_all(op: &mut Builder, x: Value, ignore_nan: bool) -> OpResult<Value> {
    if let Some(s) = op.shape(x) {
        if s.contains(&Dim::Fixed(0)) {
            bail!("median of an empty tensor: torch returns NaN only for floats; not translated");
        }
    }
    let flat = as_1d(op, x);
    let (v, _) = median_impl(op, flat, 0, ignore_nan)?;
    let axes = op.const_i64s(&[0]);
    Ok(op.Squeeze(v, Some(axes)))
}

/// torch's `lerp(a, b, w)`: `a + w·(b - a)` for w < 0.5, else `b - (b - a)·(1 - w)`.
fn lerp(op: &mut Builder, a: Value, b: Value, w: Value, t: DType) -> Value {
    let d = op.Sub(b, a);
    let lo = op.Mul(w, d);
    let lo = op.Add(a, lo);
    let one = op.scalar(t, 1.0);
    let omw = op.Sub(one, w);
    let hi = op.Mul(d, omw);
    let hi = op.Sub(b, hi);
    let half = op.scalar(t, 0.5);
    let small = op.Less(w, half);
    op.Where(small, lo, hi)
}

/// `quantile` / `nanquantile` for a scalar q (ATen's `quantile_compute`).
fn quantile_impl(
    op: &mut Builder,
    x: Value,
    q: f64,
    dim: Option<i64>,
    keepdim: bool,
    interpolation: &str,
    ignore_nan: bool,
) -> OpResult<Value> {
    if !(0.0..=1.0).contains(&q) {
        bail!("quantile: q must be in [0, 1]");
    }
    let t = float_result_dtype(op, x)?;
    let r = rank_of(op, x)?;
    let xv = cast(op, x, t);
    let (xv, axis) = match dim {
        None => {
            let m1 = op.const_i64s(&[-1]);
            (op.Reshape(xv, m1).out(), 0)
        }
        Some(_) if r == 0 => {
            let m1 = op.const_i64s(&[-1]);
            (op.Reshape(xv, m1).out(), 0)
        }
        Some(d) => (xv, normalize_axis(d, r)?),
    };
    let axes = op.const_i64s(&[axis]);
    let isnan = op.IsNaN(xv);
    let inf = op.scalar(t, f64::INFINITY);
    let xs = op.Where(isnan, inf, xv);
    let n = op.Shape(xv).start(axis).end(axis + 1).out();
    let sorted = op.TopK(xs, n).axis(axis).largest(0).sorted(1).outs::<2>()[0];
    let nanf = cast(op, isnan, t);
    let qv = op.scalar(t, q);
    let one = op.scalar(t, 1.0);
    let zero = op.scalar(t, 0.0);
    // ranks (keepdims shape) and the condition under which the result is NaN.
    let (ranks, nan_result) = if ignore_nan {
        let valid = op.Not(isnan);
        let vf = cast(op, valid, t);
        let cnt = op.ReduceSum(vf, Some(axes)).keepdims(1).out();
        let km1 = op.Sub(cnt, one);
        let rk = op.Mul(qv, km1);
        let rk = op.Max(&[rk, zero]);
        (rk, op.Equal(cnt, zero))
    } else {
        let any = op.ReduceMax(nanf, Some(axes)).keepdims(1).out();
        let nf = cast(op, n, t);
        let last = op.Sub(nf, one);
        let rk = op.Mul(qv, last);
        let z = op.Mul(any, zero);
        let rk = op.Add(z, rk);
        (rk, op.Greater(any, zero))
    };
    let ranks = match interpolation {
        "lower" => op.Floor(ranks),
        "higher" => op.Ceil(ranks),
        "nearest" => op.Round(ranks),
        "linear" | "midpoint" => ranks,
        i => bail!("quantile: unknown interpolation {i:?}"),
    };
    let below_f = op.Floor(ranks);
    let below = op.Cast(below_f).to(DType::Int64 as i64).out();
    let vb = op.GatherElements(sorted, below).axis(axis).out();
    let v = if interpolation == "linear" || interpolation == "midpoint" {
        let w = if interpolation == "midpoint" {
            let half = op.scalar(t, 0.5);
            let z = op.Mul(ranks, zero);
            op.Add(z, half)
        } else {
            op.Sub(ranks, below_f)
        };
        let above = op.Ceil(ranks);
        let above = op.Cast(above).to(DType::Int64 as i64).out();
        let va = op.GatherElements(sorted, above).axis(axis).out();
        lerp(op, vb, va, w, t)
    } else {
        vb
    };
    let nan = op.scalar(t, f64::NAN);
    let v = op.Where(nan_result, nan, v);
    Ok(if dim.is_none() || r == 0 {
        let shape = if keepdim { vec![1i64; r] } else { vec![] };
        let s = op.const_i64s(&shape);
        op.Reshape(v, s).out()
    } else if keepdim {
        v
    } else {
        op.Squeeze(v, Some(axes))
    })
}

/// The `n` points of `x` ([..., k] viewed as [n, k]) and their coordinate count `k`: a histogram's
/// samples, of element type `t`.
fn hist_points(op: &mut Builder, x: Value, t: DType, k: usize) -> Value {
    let x = cast(op, x, t);
    let s = op.const_i64s(&[-1, k as i64]);
    op.Reshape(x, s).out()
}

/// The `bins + 1` edges torch's histogram puts over coordinate `d` of `pts`: `linspace` from the
/// range's ends (the data's min and max without a range, 0 and 0 when there is no data: `empty`),
/// a flat range widened by 0.5 on each side.
fn hist_edges(
    op: &mut Builder,
    pts: Value,
    d: usize,
    bins: i64,
    range: Option<(f64, f64)>,
    t: DType,
    empty: bool,
) -> OpResult<Value> {
    if bins < 1 {
        bail!("histogram needs at least one bin, got {bins}");
    }
    let (lo, hi) = match range {
        Some((lo, hi)) => {
            if lo > hi || !lo.is_finite() || !hi.is_finite() {
                bail!("histogram: the range [{lo}, {hi}] must be finite with min <= max");
            }
            let (lo, hi) = if lo == hi { (lo - 0.5, hi + 0.5) } else { (lo, hi) };
            (op.scalar(t, lo), op.scalar(t, hi))
        }
        None if empty => (op.scalar(t, -0.5), op.scalar(t, 0.5)),
        None => {
            let i = op.scalar_i64(d as i64);
            let col = op.Gather(pts, i).axis(1).out();
            let lo = op.ReduceMin(col, None).keepdims(0).out();
            let hi = op.ReduceMax(col, None).keepdims(0).out();
            let flat = op.Equal(lo, hi);
            let half = op.scalar(t, 0.5);
            let (lo1, hi1) = (op.Sub(lo, half), op.Add(hi, half));
            (op.Where(flat, lo1, lo), op.Where(flat, hi1, hi))
        }
    };
    // torch's linspace: start + i·step in the first half, end - (bins - i)·step in the second.
    let steps = bins + 1;
    let (zero, n, one) = (op.scalar_i64(0), op.scalar_i64(steps), op.scalar_i64(1));
    let i = op.Range(zero, n, one);
    let fi = cast(op, i, t);
    let nb = op.scalar(t, bins as f64);
    let span = op.Sub(hi, lo);
    let step = op.Div(span, nb);
    let a = op.Mul(fi, step);
    let a = op.Add(lo, a);
    let back = op.Sub(nb, fi);
    let b = op.Mul(back, step);
    let b = op.Sub(hi, b);
    let half = op.scalar_i64(steps / 2);
    let first = op.Less(i, half);
    Ok(op.Where(first, a, b))
}

/// The histogram of `pts` ([n, k]) over the per-coordinate `edges` (1-D, ascending), shape
/// [bins...]: a point falls in the bin whose left edge is the last edge <= it (the last bin also
/// holds its right edge); points outside the edges or NaN are not counted.
fn hist_counts(
    op: &mut Builder,
    pts: Value,
    edges: &[Value],
    bins: &[i64],
    weight: Option<Value>,
    density: bool,
    t: DType,
) -> OpResult<Value> {
    let total: i64 = bins.iter().product();
    let mut flat_idx: Option<Value> = None;
    let mut valid: Option<Value> = None;
    let col_shape = op.const_i64s(&[-1, 1]);
    let axis1 = op.const_i64s(&[1]);
    for (d, (&e, &nb)) in edges.iter().zip(bins).enumerate() {
        let i = op.scalar_i64(d as i64);
        let x = op.Gather(pts, i).axis(1).out();
        let xc = op.Reshape(x, col_shape).out();
        let le = op.LessOrEqual(e, xc);
        let le = cast(op, le, DType::Int64);
        let pos = op.ReduceSum(le, Some(axis1)).keepdims(0).out();
        let one = op.scalar_i64(1);
        let pos = op.Sub(pos, one);
        let last = op.scalar_i64(nb - 1);
        let pos = op.Min(&[pos, last]);
        let (s0, s1, e0, e1) =
            (op.const_i64s(&[0]), op.const_i64s(&[1]), op.const_i64s(&[-1]), op.const_i64s(&[i64::MAX]));
        let first_e = op.Slice(e, s0, s1, None, None);
        let last_e = op.Slice(e, e0, e1, None, None);
        let ge = op.GreaterOrEqual(x, first_e);
        let le = op.LessOrEqual(x, last_e);
        let inside = op.And(ge, le);
        let stride: i64 = bins[d + 1..].iter().product();
        let sv = op.scalar_i64(stride);
        let term = op.Mul(pos, sv);
        flat_idx = Some(match flat_idx {
            None => term,
            Some(acc) => op.Add(acc, term),
        });
        valid = Some(match valid {
            None => inside,
            Some(acc) => op.And(acc, inside),
        });
    }
    let (Some(idx), Some(valid)) = (flat_idx, valid) else { bail!("histogram of points without coordinates") };
    let idx = op.Reshape(idx, col_shape).out();
    let (zero, n, one) = (op.scalar_i64(0), op.scalar_i64(total), op.scalar_i64(1));
    let all = op.Range(zero, n, one);
    let hit = op.Equal(idx, all);
    let vc = op.Reshape(valid, col_shape).out();
    let hit = op.And(hit, vc);
    let mut hit = cast(op, hit, t);
    if let Some(w) = weight {
        let w = cast(op, w, t);
        let w = op.Reshape(w, col_shape).out();
        hit = op.Mul(hit, w);
    }
    let axis0 = op.const_i64s(&[0]);
    let hist = op.ReduceSum(hit, Some(axis0)).keepdims(0).out();
    let shape = op.const_i64s(bins);
    let mut hist = op.Reshape(hist, shape).out();
    if density {
        let sum = op.ReduceSum(hist, None).keepdims(0).out();
        hist = op.Div(hist, sum);
        for (d, &e) in edges.iter().enumerate() {
            let (s0, s1, e0, e1) =
                (op.const_i64s(&[0]), op.const_i64s(&[1]), op.const_i64s(&[-1]), op.const_i64s(&[i64::MAX]));
            let right = op.Slice(e, s1, e1, None, None);
            let left = op.Slice(e, s0, e0, None, None);
            let width = op.Sub(right, left);
            let mut ws = vec![1i64; bins.len()];
            ws[d] = -1;
            let ws = op.const_i64s(&ws);
            let width = op.Reshape(width, ws).out();
            hist = op.Div(hist, width);
        }
    }
    Ok(hist)
}

/// A histogram range given as [min, max] (or [min0, max0, min1, ...]) as pairs for `k` coordinates.
fn hist_ranges(range: Option<Vec<f64>>, k: usize) -> OpResult<Vec<Option<(f64, f64)>>> {
    match range {
        None => Ok(vec![None; k]),
        Some(r) if r.len() == 2 * k => Ok(r.chunks(2).map(|p| Some((p[0], p[1]))).collect()),
        Some(r) => bail!("histogram: a range of {} values for {k} coordinates", r.len()),
    }
}

/// The number of coordinates of histogramdd's points: the size of the input's last axis.
fn hist_coords(op: &Builder, x: Value) -> OpResult<usize> {
    match op.shape(x).and_then(|s| s.last().cloned()) {
        Some(Dim::Fixed(k)) if k > 0 => Ok(k as usize),
        _ => bail!("histogramdd needs a static, non-zero size of the input's last axis"),
    }
}

/// histogramdd with `bins` counted bins per coordinate: the histogram and the edges.
fn histogramdd_cts(
    op: &mut Builder,
    x: Value,
    bins: &[i64],
    range: Option<Vec<f64>>,
    weight: Option<Value>,
    density: bool,
) -> OpResult<(Value, Vec<Value>)> {
    let t = float_result_dtype(op, x)?;
    let k = bins.len();
    let empty = op.shape(x).is_some_and(|s| s.contains(&Dim::Fixed(0)));
    let pts = hist_points(op, x, t, k);
    let ranges = hist_ranges(range, k)?;
    let edges = (0..k).map(|d| hist_edges(op, pts, d, bins[d], ranges[d], t, empty)).collect::<OpResult<Vec<_>>>()?;
    let hist = hist_counts(op, pts, &edges, bins, weight, density, t)?;
    Ok((hist, edges))
}

/// histogramdd over given edges: the histogram.
fn histogramdd_edges(
    op: &mut Builder,
    x: Value,
    bins: &[Value],
    weight: Option<Value>,
    density: bool,
) -> OpResult<Value> {
    let t = float_result_dtype(op, x)?;
    let k = bins.len();
    let counts = bins
        .iter()
        .map(|&b| match op.shape(b) {
            Some([Dim::Fixed(n)]) if *n >= 2 => Ok(n - 1),
            _ => bail!("histogram needs 1-D bin edges of a static size of at least 2"),
        })
        .collect::<OpResult<Vec<i64>>>()?;
    let pts = hist_points(op, x, t, k);
    let edges: Vec<Value> = bins.iter().map(|&b| cast(op, b, t)).collect();
    hist_counts(op, pts, &edges, &counts, weight, density, t)
}

translations! {
    /// median(Tensor self) -> Tensor
    #[target("aten::median")]
    fn median(op, self_: Tensor) -> OpResult<Value> {
        median_all(op, self_, false)
    }

    /// nanmedian(Tensor self) -> Tensor
    #[target("aten::nanmedian")]
    fn nanmedian(op, self_: Tensor) -> OpResult<Value> {
        median_all(op, self_, true)
    }

    /// median.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)
    #[target("aten::median.dim")]
    fn median_dim_(op, self_: Tensor, dim: i64, keepdim: bool = false) -> OpResult<(Value, Value)> {
        median_dim(op, self_, dim, keepdim, false)
    }

    /// nanmedian.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)
    #[target("aten::nanmedian.dim")]
    fn nanmedian_dim(op, self_: Tensor, dim: i64, keepdim: bool = false) -> OpResult<(Value, Value)> {
        median_dim(op, self_, dim, keepdim, true)
    }

    /// mode(Tensor self, int dim=-1, bool keepdim=False) -> (Tensor values, Tensor indices)
    #[target("aten::mode")]
    fn mode(op, self_: Tensor, dim: i64 = -1, keepdim: bool = false) -> OpResult<(Value, Value)> {
        let x = self_;
        let r = rank_of(op, x)?;
        let t = dtype_of(op, x)?;
        let Some(axis) = reduced_axis(op, x, r, dim, "mode")? else {
            let z = op.scalar_i64(0);
            return Ok((x, z));
        };
        // Sort ascending (stable), count each sorted element's equals along the dim, and take the
        // first value with the highest count (torch: the smallest such value) and the last index
        // of its run (torch scans the sorted run to its end).
        let (key, _) = sort_key(op, x, t);
        let n = dim_size(op, x, axis);
        let [_, order] = op.TopK(key, n).axis(axis).largest(0).sorted(1).outs::<2>();
        let sorted = op.GatherElements(x, order).axis(axis).out();
        let a1 = op.const_i64s(&[axis + 1]);
        let a0 = op.const_i64s(&[axis]);
        let xa = op.Unsqueeze(sorted, a1);
        let xb = op.Unsqueeze(sorted, a0);
        let eq = op.Equal(xa, xb);
        let eq = cast(op, eq, DType::Int64);
        let cnt = op.ReduceSum(eq, Some(a1)).keepdims(0).out();
        let maxc = op.ReduceMax(cnt, Some(a0)).keepdims(1).out();
        let best = op.Equal(cnt, maxc);
        let best = cast(op, best, DType::Int32);
        let first = op.ArgMax(best).axis(axis).keepdims(1).select_last_index(0).out();
        let one = op.scalar_i64(1);
        let run = op.Sub(maxc, one);
        let last = op.Add(first, run);
        let v = op.GatherElements(sorted, first).axis(axis).out();
        let i = op.GatherElements(order, last).axis(axis).out();
        if keepdim {
            return Ok((v, i));
        }
        let v = op.Squeeze(v, Some(a0));
        let i = op.Squeeze(i, Some(a0));
        Ok((v, i))
    }

    /// segment_reduce(Tensor data, str reduce, *, Tensor? lengths=None, Tensor? indices=None, Tensor? offsets=None,
    ///     int axis=0, bool unsafe=False, Scalar? initial=None) -> Tensor
    #[target("aten::segment_reduce")]
    fn segment_reduce(
        op,
        data: Tensor,
        reduce: &str,
        lengths: Option<Tensor>,
        indices: Option<Tensor>,
        offsets: Option<Tensor>,
        axis: i64 = 0,
        // `unsafe` only skips torch's validation of the lengths.
        _unsafe: Ignored,
        initial: Option<Scalar>,
    ) -> OpResult<Value> {
        if indices.is_some() {
            bail!("segment_reduce with indices is not implemented in torch either");
        }
        let t = dtype_of(op, data)?;
        if !t.is_float() {
            bail!("segment_reduce: only floating data is translated, got {t:?}");
        }
        let r = rank_of(op, data)?;
        let (starts, ends) = match (lengths, offsets) {
            (Some(l), _) => {
                if rank_of(op, l)? != 1 {
                    bail!("segment_reduce: only 1-D lengths are translated");
                }
                let l = cast(op, l, DType::Int64);
                let z = op.scalar_i64(0);
                let s = op.CumSum(l, z).exclusive(1).out();
                let e = op.Add(s, l);
                (s, e)
            }
            (None, Some(o)) => {
                if rank_of(op, o)? != 1 {
                    bail!("segment_reduce: only 1-D offsets are translated");
                }
                let o = cast(op, o, DType::Int64);
                let zero = op.const_i64s(&[0]);
                let one = op.const_i64s(&[1]);
                let m1 = op.const_i64s(&[-1]);
                let big = op.const_i64s(&[i64::MAX]);
                let s = op.Slice(o, zero, m1, None, None);
                let e = op.Slice(o, one, big, None, None);
                (s, e)
            }
            _ => bail!("segment_reduce needs lengths or offsets"),
        };
        if normalize_axis(axis, r)? != 0 {
            bail!("segment_reduce: with 1-D lengths/offsets the axis must be 0, got {axis}");
        }
        if r == 0 {
            bail!("segment_reduce needs data of rank >= 1");
        }
        // mask[s, j] = starts[s] <= j < ends[s], shaped [S, N, 1, ...] against data [1, N, ...].
        let n = dim_size(op, data, 0);
        let n0 = op.Squeeze(n, None);
        let z = op.scalar_i64(0);
        let one = op.scalar_i64(1);
        let j = op.Range(z, n0, one);
        let a1 = op.const_i64s(&[1]);
        let s2 = op.Unsqueeze(starts, a1);
        let e2 = op.Unsqueeze(ends, a1);
        let ge = op.GreaterOrEqual(j, s2);
        let lt = op.Less(j, e2);
        let mut mask = op.And(ge, lt);
        if r > 1 {
            let tail: Vec<i64> = (2..(r as i64 + 1)).collect();
            let ax = op.const_i64s(&tail);
            mask = op.Unsqueeze(mask, ax);
        }
        let a0 = op.const_i64s(&[0]);
        let d = op.Unsqueeze(data, a0);
        let len = op.Sub(ends, starts);
        let len = cast(op, len, t);
        let mut len_b = len;
        if r > 1 {
            let tail: Vec<i64> = (1..(r as i64)).collect();
            let ax = op.const_i64s(&tail);
            len_b = op.Unsqueeze(len, ax);
        }
        let init = initial.map(|s| scalar_value(op, s, t));
        // NaN in a segment propagates for every reduction.
        let nan = op.IsNaN(d);
        let nan_m = op.And(nan, mask);
        let nan_i = cast(op, nan_m, DType::Int32);
        let any_nan = op.ReduceMax(nan_i, Some(a1)).keepdims(0).out();
        let any_nan = cast(op, any_nan, DType::Bool);
        let fill = |op: &mut Builder, v: f64| {
            let c = op.scalar(t, v);
            op.Where(mask, d, c)
        };
        let out = match reduce {
            "max" | "min" => {
                let is_max = reduce == "max";
                let w = fill(op, if is_max { f64::NEG_INFINITY } else { f64::INFINITY });
                let m = if is_max {
                    op.ReduceMax(w, Some(a1)).keepdims(0).out()
                } else {
                    op.ReduceMin(w, Some(a1)).keepdims(0).out()
                };
                match init {
                    Some(i) if is_max => op.Max(&[m, i]),
                    Some(i) => op.Min(&[m, i]),
                    None => m,
                }
            }
            "sum" | "mean" => {
                let w = fill(op, 0.0);
                let mut s = op.ReduceSum(w, Some(a1)).keepdims(0).out();
                if let Some(i) = init {
                    s = op.Add(s, i);
                }
                if reduce == "sum" {
                    s
                } else {
                    // An empty segment keeps `initial` (0 / 0 = NaN without one, as torch).
                    let q = op.Div(s, len_b);
                    let Some(i) = init else {
                        return Ok(q);
                    };
                    let zero = op.scalar(t, 0.0);
                    let empty = op.Equal(len_b, zero);
                    let qs = op.Shape(q).out();
                    let ib = op.Expand(i, qs);
                    op.Where(empty, ib, q)
                }
            }
            "prod" => {
                let w = fill(op, 1.0);
                let p = op.ReduceProd(w, Some(a1)).keepdims(0).out();
                match init {
                    Some(i) => op.Mul(p, i),
                    None => p,
                }
            }
            other => bail!("segment_reduce: unknown reduction {other:?}"),
        };
        let nanv = op.scalar(t, f64::NAN);
        Ok(op.Where(any_nan, nanv, out))
    }

    /// bincount(Tensor self, Tensor? weights=None, SymInt minlength=0) -> Tensor
    #[target("aten::bincount")]
    fn bincount(
        op,
        self_: Tensor,
        weights: Option<Tensor> = None,
        minlength: SymInt = SymInt::Const(0),
    ) -> OpResult<Value> {
        // Bin k counts (or sums the weights of) the elements equal to k; there are max(self) + 1 bins,
        // at least minlength (torch's data-dependent size: a computed shape here).
        if rank_of(op, self_)? != 1 {
            bail!("bincount takes a 1-D input");
        }
        let x = cast(op, self_, DType::Int64);
        let one = op.scalar_i64(1);
        let x1 = op.Add(x, one);
        let m = sym_value(op, minlength);
        let m = as_1d(op, m);
        // minlength joins the candidates, so an empty input gives minlength bins.
        let all = op.Concat(&[x1, m]).axis(0).out();
        let size = op.ReduceMax(all, None).keepdims(1).out();
        let t = match weights {
            Some(w) => result_dtype(op, w)?,
            None => DType::Int64,
        };
        let zeros = op.ConstantOfShape(size).value(constant_data(t, vec![1], &[0.0])?).out();
        let updates = match weights {
            Some(w) => cast(op, w, t),
            None => {
                let one = op.scalar(t, 1.0);
                let s = op.Shape(x).out();
                op.Expand(one, s)
            }
        };
        Ok(op.ScatterElements(zeros, x, updates).axis(0).reduction("add").out())
    }

    /// histogram.bin_ct(Tensor self, int bins=100, *, float[]? range=None, Tensor? weight=None,
    ///     bool density=False) -> (Tensor hist, Tensor bin_edges)
    #[target("aten::histogram.bin_ct")]
    fn histogram(
        op,
        self_: Tensor,
        bins: i64 = 100,
        range: Option<Vec<f64>> = None,
        weight: Option<Tensor> = None,
        density: bool = false,
    ) -> OpResult<(Value, Value)> {
        let (hist, edges) = histogramdd_cts(op, self_, &[bins], range, weight, density)?;
        Ok((hist, edges[0]))
    }

    /// histogram.bins_tensor(Tensor self, Tensor bins, *, Tensor? weight=None, bool density=False)
    ///     -> (Tensor hist, Tensor bin_edges)
    #[target("aten::histogram.bins_tensor")]
    fn histogram_edges(
        op,
        self_: Tensor,
        bins: Tensor,
        weight: Option<Tensor> = None,
        density: bool = false,
    ) -> OpResult<(Value, Value)> {
        let hist = histogramdd_edges(op, self_, &[bins], weight, density)?;
        let t = float_result_dtype(op, self_)?;
        Ok((hist, cast(op, bins, t)))
    }

    /// histogramdd(Tensor self, int[] bins, float[]? range=None, Tensor? weight=None, bool density=False)
    ///     -> (Tensor hist, Tensor[] bin_edges)
    #[target("aten::histogramdd", "aten::histogramdd.int_bins")]
    fn histogramdd(
        op,
        self_: Tensor,
        bins: Vec<i64>,
        range: Option<Vec<f64>> = None,
        weight: Option<Tensor> = None,
        density: bool = false,
    ) -> OpResult<Vec<Value>> {
        // One bin count serves every coordinate.
        let k = hist_coords(op, self_)?;
        let bins = if bins.len() == 1 { vec![bins[0]; k] } else { bins };
        let (hist, edges) = histogramdd_cts(op, self_, &bins, range, weight, density)?;
        Ok([hist].into_iter().chain(edges).collect())
    }

    /// histogramdd.TensorList_bins(Tensor self, Tensor[] bins, float[]? range=None, Tensor? weight=None,
    ///     bool density=False) -> (Tensor hist, Tensor[] bin_edges)
    #[target("aten::histogramdd.TensorList_bins")]
    fn histogramdd_tensors(
        op,
        self_: Tensor,
        bins: Vec<Tensor>,
        // The edges are given: torch reads `range` only to make them from bin counts.
        _range: Ignored,
        weight: Option<Tensor> = None,
        density: bool = false,
    ) -> OpResult<Vec<Value>> {
        let hist = histogramdd_edges(op, self_, &bins, weight, density)?;
        let t = float_result_dtype(op, self_)?;
        Ok([hist].into_iter().chain(bins.into_iter().map(|b| cast(op, b, t))).collect())
    }

    /// _histogramdd_bin_edges(Tensor self, int[] bins, *, float[]? range=None, Tensor? weight=None,
    ///     bool density=False) -> Tensor[]
    #[target("aten::_histogramdd_bin_edges")]
    fn _histogramdd_bin_edges(
        op,
        self_: Tensor,
        bins: Vec<i64>,
        range: Option<Vec<f64>> = None,
        // The edges depend on the points and the range only.
        _weight: Ignored,
        _density: Ignored,
    ) -> OpResult<Vec<Value>> {
        let t = float_result_dtype(op, self_)?;
        let k = bins.len();
        let empty = op.shape(self_).is_some_and(|s| s.contains(&Dim::Fixed(0)));
        let pts = hist_points(op, self_, t, k);
        let ranges = hist_ranges(range, k)?;
        (0..k).map(|d| hist_edges(op, pts, d, bins[d], ranges[d], t, empty)).collect()
    }

    /// _histogramdd_from_bin_cts(Tensor self, int[] bins, *, float[]? range=None, Tensor? weight=None,
    ///     bool density=False) -> Tensor
    #[target("aten::_histogramdd_from_bin_cts")]
    fn _histogramdd_from_bin_cts(
        op,
        self_: Tensor,
        bins: Vec<i64>,
        range: Option<Vec<f64>> = None,
        weight: Option<Tensor> = None,
        density: bool = false,
    ) -> OpResult<Value> {
        Ok(histogramdd_cts(op, self_, &bins, range, weight, density)?.0)
    }

    /// _histogramdd_from_bin_tensors(Tensor self, Tensor[] bins, *, Tensor? weight=None, bool density=False) -> Tensor
    #[target("aten::_histogramdd_from_bin_tensors")]
    fn _histogramdd_from_bin_tensors(
        op,
        self_: Tensor,
        bins: Vec<Tensor>,
        weight: Option<Tensor> = None,
        density: bool = false,
    ) -> OpResult<Value> {
        histogramdd_edges(op, self_, &bins, weight, density)
    }

    /// histc(Tensor self, int bins=100, Scalar min=0, Scalar max=0) -> Tensor
    #[target("aten::histc")]
    fn histc(
        op,
        self_: Tensor,
        bins: i64 = 100,
        min: Scalar = Scalar::Int(0),
        max: Scalar = Scalar::Int(0),
    ) -> OpResult<Value> {
        // Bin k holds min + k·w ≤ x < min + (k+1)·w (the last one includes max); values outside
        // [min, max] and NaN are not counted. min == max means the data's range (widened by 1 if flat).
        let t = float_result_dtype(op, self_)?;
        if bins < 1 {
            bail!("histc needs bins > 0");
        }
        let m1 = op.const_i64s(&[-1]);
        let x = cast(op, self_, t);
        let x = op.Reshape(x, m1).out();
        let as_f = |s: Scalar| match s {
            Scalar::Int(i) => Some(i as f64),
            Scalar::Float(f) => Some(f),
            Scalar::Bool(b) => Some(b as i64 as f64),
            _ => None,
        };
        let (Some(lo_c), Some(hi_c)) = (as_f(min), as_f(max)) else { bail!("histc needs constant min and max") };
        let (lo, hi) = if lo_c == hi_c {
            let lo = op.ReduceMin(x, None).keepdims(0).out();
            let hi = op.ReduceMax(x, None).keepdims(0).out();
            let eq = op.Equal(lo, hi);
            let one = op.scalar(t, 1.0);
            let lo1 = op.Sub(lo, one);
            let hi1 = op.Add(hi, one);
            (op.Where(eq, lo1, lo), op.Where(eq, hi1, hi))
        } else {
            if lo_c > hi_c {
                bail!("histc: max must be larger than min");
            }
            (op.scalar(t, lo_c), op.scalar(t, hi_c))
        };
        let ge = op.GreaterOrEqual(x, lo);
        let le = op.LessOrEqual(x, hi);
        let valid = op.And(ge, le);
        let nb = op.scalar(t, bins as f64);
        let d = op.Sub(x, lo);
        let d = op.Mul(d, nb);
        let range = op.Sub(hi, lo);
        let q = op.Div(d, range);
        let zero = op.scalar(t, 0.0);
        let q = op.Where(valid, q, zero);
        let q = op.Floor(q);
        let idx = op.Cast(q).to(DType::Int64 as i64).out();
        let last = op.scalar_i64(bins - 1);
        let idx = op.Min(&[idx, last]);
        let depth = op.scalar_i64(bins);
        let Some(vals) = TensorData::from_f64_as(t, vec![2], &[0.0, 1.0]) else {
            bail!("histc of {t:?} is not supported")
        };
        let vals = op.constant_tensor(vals);
        let oh = op.OneHot(idx, depth, vals).axis(-1).out();
        let vf = cast(op, valid, t);
        let one_axis = op.const_i64s(&[1]);
        let vf = op.Unsqueeze(vf, one_axis);
        let oh = op.Mul(oh, vf);
        let axes = op.const_i64s(&[0]);
        Ok(op.ReduceSum(oh, Some(axes)).keepdims(0).out())
    }

    /// quantile.scalar(Tensor self, float q, int? dim=None, bool keepdim=False, *,
    ///     str interpolation="linear") -> Tensor
    #[target("aten::quantile.scalar")]
    fn quantile(
        op,
        self_: Tensor,
        q: f64,
        dim: Option<i64> = None,
        keepdim: bool = false,
        interpolation: &str = "linear",
    ) -> OpResult<Value> {
        quantile_impl(op, self_, q, dim, keepdim, interpolation, false)
    }

    /// nanquantile.scalar(Tensor self, float q, int? dim=None, bool keepdim=False, *,
    ///     str interpolation="linear") -> Tensor
    #[target("aten::nanquantile.scalar")]
    fn nanquantile(
        op,
        self_: Tensor,
        q: f64,
        dim: Option<i64> = None,
        keepdim: bool = false,
        interpolation: &str = "linear",
    ) -> OpResult<Value> {
        quantile_impl(op, self_, q, dim, keepdim, interpolation, true)
    }
}
