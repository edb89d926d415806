//! Order statistics: median / nanmedian (whole tensor and along a dim), mode, quantile / nanquantile,
//! histc, bincount, segment_reduce.
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
    let axis = normalize_axis(dim, r);
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
        Some(d) => (xv, normalize_axis(d, r)),
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
        if normalize_axis(axis, r) != 0 {
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
