//! Ops that fit no other family: backward helpers, distances, histograms, chunked concatenation.

use crate::translate::prelude::*;
use crate::translations;

/// The vector p-norm of `x` over `axes` (torch's `linalg_vector_norm`).
pub fn pnorm(op: &mut Builder, x: Value, p: f64, axes: &[i64], keepdim: bool) -> OpResult<Value> {
    let t = dtype_of(op, x)?;
    let a = op.const_i64s(axes);
    let k = keepdim as i64;
    let ax = op.Abs(x).out();
    Ok(if p == 2.0 {
        op.ReduceL2(x, Some(a)).keepdims(k).out()
    } else if p == 1.0 {
        op.ReduceL1(x, Some(a)).keepdims(k).out()
    } else if p == f64::INFINITY {
        op.ReduceMax(ax, Some(a)).keepdims(k).out()
    } else if p == f64::NEG_INFINITY {
        op.ReduceMin(ax, Some(a)).keepdims(k).out()
    } else if p == 0.0 {
        let z = op.scalar(t, 0.0);
        let nz = op.Equal(x, z).out();
        let nz = op.Not(nz).out();
        let nz = cast(op, nz, t);
        op.ReduceSum(nz, Some(a)).keepdims(k).out()
    } else {
        let pv = op.scalar(t, p);
        let pw = op.Pow(ax, pv).out();
        let s = op.ReduceSum(pw, Some(a)).keepdims(k).out();
        let inv = op.scalar(t, 1.0 / p);
        op.Pow(s, inv).out()
    })
}

/// Every dimension of `x`, which must be static.
fn fixed_shape(op: &Builder, x: Value) -> OpResult<Vec<i64>> {
    let Some(s) = op.shape(x) else { bail!("needs the input's shape") };
    s.iter()
        .map(|d| match d {
            Dim::Fixed(n) => Ok(*n),
            Dim::Param(p) => Err(OpError::new(format!("needs static sizes; dimension {p} is symbolic"))),
        })
        .collect()
}

/// The float type the node computes in.
fn float_out(op: &Builder, x: Value) -> OpResult<DType> {
    let t = match op.out_dtype(0) {
        Some(t) => t,
        None => dtype_of(op, x)?,
    };
    if !t.is_float() {
        bail!("needs a floating-point result type");
    }
    Ok(t)
}

/// `avg_pool` with `divisor_override`: the window sums (padding adds zeros) divided by `divisor`.
/// The sums are a depthwise convolution with a ones kernel; ceil_mode's extra windows get right
/// padding (zeros, which add nothing).
pub fn sum_pool_divided(
    op: &mut Builder,
    x: Value,
    kernel: &[i64],
    strides: &[i64],
    padding: &[i64],
    ceil_mode: bool,
    divisor: i64,
) -> OpResult<Value> {
    if divisor == 0 {
        bail!("avg_pool: divisor_override must be non-zero");
    }
    let t = float_out(op, x)?;
    let shape = fixed_shape(op, x)?;
    let k = kernel.len();
    let r = shape.len();
    let unbatched = r == k + 1;
    let zero = op.const_i64s(&[0]);
    let xv = cast(op, x, t);
    let xv = if unbatched { op.Unsqueeze(xv, zero).out() } else { xv };
    let c = shape[r - k - 1];
    let mut pads_begin = Vec::new();
    let mut pads_end = Vec::new();
    for i in 0..k {
        let (l, kk, s, p) = (shape[r - k + i], kernel[i], strides[i], padding[i]);
        let mut out = (l + 2 * p - kk + if ceil_mode { s - 1 } else { 0 }).div_euclid(s) + 1;
        if ceil_mode && (out - 1) * s >= l + p {
            out -= 1;
        }
        if out < 1 {
            bail!("avg_pool: the kernel does not fit the input");
        }
        pads_begin.push(p);
        pads_end.push(((out - 1) * s + kk - l - p).max(0));
    }
    let n: i64 = kernel.iter().product();
    let mut wshape = vec![c, 1];
    wshape.extend_from_slice(kernel);
    let Some(w) = TensorData::from_f64_as(t, wshape, &vec![1.0; (c * n) as usize]) else {
        bail!("avg_pool of {t:?} is not supported")
    };
    let w = op.constant_tensor(w);
    let pads: Vec<i64> = pads_begin.into_iter().chain(pads_end).collect();
    let y = op.Conv(xv, w, None).kernel_shape(kernel).strides(strides).pads(&pads).group(c).out();
    let d = op.scalar(t, divisor as f64);
    let y = op.Div(y, d).out();
    Ok(if unbatched { op.Squeeze(y, Some(zero)).out() } else { y })
}

/// `pairwise_distance`: the p-norm of `x1 - x2 + eps` over the last dim.
pub fn pairwise(op: &mut Builder, x1: Value, x2: Value, p: f64, eps: f64, keepdim: bool, t: DType) -> OpResult<Value> {
    let r = rank_of(op, x1)?.max(rank_of(op, x2)?);
    let (a, b) = (cast(op, x1, t), cast(op, x2, t));
    let d = op.Sub(a, b).out();
    let e = op.scalar(t, eps);
    let d = op.Add(d, e).out();
    if r == 0 {
        // A 0-d difference: the norm of one element.
        let d1 = as_1d(op, d);
        let n = pnorm(op, d1, p, &[0], false)?;
        return Ok(n);
    }
    pnorm(op, d, p, &[r as i64 - 1], keepdim)
}

/// torch's `lerp(a, b, w)`: `a + w·(b - a)` for w < 0.5, else `b - (b - a)·(1 - w)`.
fn lerp(op: &mut Builder, a: Value, b: Value, w: Value, t: DType) -> Value {
    let d = op.Sub(b, a).out();
    let lo = op.Mul(w, d).out();
    let lo = op.Add(a, lo).out();
    let one = op.scalar(t, 1.0);
    let omw = op.Sub(one, w).out();
    let hi = op.Mul(d, omw).out();
    let hi = op.Sub(b, hi).out();
    let half = op.scalar(t, 0.5);
    let small = op.Less(w, half).out();
    op.Where(small, lo, hi).out()
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
    let t = float_out(op, x)?;
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
    let isnan = op.IsNaN(xv).out();
    let inf = op.scalar(t, f64::INFINITY);
    let xs = op.Where(isnan, inf, xv).out();
    let n = op.Shape(xv).start(axis).end(axis + 1).out();
    let sorted = op.TopK(xs, n).axis(axis).largest(0).sorted(1).outs::<2>()[0];
    let nanf = cast(op, isnan, t);
    let qv = op.scalar(t, q);
    let one = op.scalar(t, 1.0);
    let zero = op.scalar(t, 0.0);
    // ranks (keepdims shape) and the condition under which the result is NaN.
    let (ranks, nan_result) = if ignore_nan {
        let valid = op.Not(isnan).out();
        let vf = cast(op, valid, t);
        let cnt = op.ReduceSum(vf, Some(axes)).keepdims(1).out();
        let km1 = op.Sub(cnt, one).out();
        let rk = op.Mul(qv, km1).out();
        let rk = op.Max(&[rk, zero]).out();
        (rk, op.Equal(cnt, zero).out())
    } else {
        let any = op.ReduceMax(nanf, Some(axes)).keepdims(1).out();
        let nf = cast(op, n, t);
        let last = op.Sub(nf, one).out();
        let rk = op.Mul(qv, last).out();
        let z = op.Mul(any, zero).out();
        let rk = op.Add(z, rk).out();
        (rk, op.Greater(any, zero).out())
    };
    let ranks = match interpolation {
        "lower" => op.Floor(ranks).out(),
        "higher" => op.Ceil(ranks).out(),
        "nearest" => op.Round(ranks).out(),
        "linear" | "midpoint" => ranks,
        i => bail!("quantile: unknown interpolation {i:?}"),
    };
    let below_f = op.Floor(ranks).out();
    let below = op.Cast(below_f).to(DType::Int64 as i64).out();
    let vb = op.GatherElements(sorted, below).axis(axis).out();
    let v = if interpolation == "linear" || interpolation == "midpoint" {
        let w = if interpolation == "midpoint" {
            let half = op.scalar(t, 0.5);
            let z = op.Mul(ranks, zero).out();
            op.Add(z, half).out()
        } else {
            op.Sub(ranks, below_f).out()
        };
        let above = op.Ceil(ranks).out();
        let above = op.Cast(above).to(DType::Int64 as i64).out();
        let va = op.GatherElements(sorted, above).axis(axis).out();
        lerp(op, vb, va, w, t)
    } else {
        vb
    };
    let nan = op.scalar(t, f64::NAN);
    let v = op.Where(nan_result, nan, v).out();
    Ok(if dim.is_none() || r == 0 {
        let shape = if keepdim { vec![1i64; r] } else { vec![] };
        let s = op.const_i64s(&shape);
        op.Reshape(v, s).out()
    } else if keepdim {
        v
    } else {
        op.Squeeze(v, Some(axes)).out()
    })
}

translations! {
    /// _chunk_cat(Tensor[] tensors, int dim, int num_chunks) -> Tensor
    #[target("aten::_chunk_cat")]
    fn _chunk_cat(op, tensors: Vec<Tensor>, dim: i64, num_chunks: i64) -> OpResult<Value> {
        if tensors.is_empty() || num_chunks < 1 {
            bail!("_chunk_cat needs tensors and a positive num_chunks");
        }
        let t = float_out(op, tensors[0]).or_else(|_| dtype_of(op, tensors[0]))?;
        let r = rank_of(op, tensors[0])?;
        let d = normalize_axis(dim, r);
        let mut parts = Vec::new();
        for &x in &tensors {
            let s = fixed_shape(op, x)?;
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

    /// _softmax_backward_data(Tensor grad_output, Tensor output, int dim, ScalarType input_dtype) -> Tensor
    #[target("aten::_softmax_backward_data")]
    fn _softmax_backward_data(op, grad_output: Tensor, output: Tensor, dim: i64) -> OpResult<Value> {
        // output · (grad - Σ_dim grad·output)
        let t = float_out(op, grad_output)?;
        let r = rank_of(op, output)?;
        let (g, y) = (cast(op, grad_output, t), cast(op, output, t));
        let gy = op.Mul(g, y).out();
        let out = if r == 0 {
            let d = op.Sub(g, gy).out();
            op.Mul(y, d).out()
        } else {
            let axes = op.const_i64s(&[normalize_axis(dim, r)]);
            let s = op.ReduceSum(gy, Some(axes)).keepdims(1).out();
            let d = op.Sub(g, s).out();
            op.Mul(y, d).out()
        };
        Ok(out)
    }

    /// native_dropout_backward(Tensor grad_output, Tensor mask, float scale) -> Tensor
    #[target("aten::native_dropout_backward")]
    fn native_dropout_backward(op, grad_output: Tensor, mask: Tensor, scale: f64) -> OpResult<Value> {
        let t = float_out(op, grad_output)?;
        let g = cast(op, grad_output, t);
        let m = cast(op, mask, t);
        let s = op.scalar(t, scale);
        let g = op.Mul(g, m).out();
        Ok(op.Mul(g, s).out())
    }

    /// cosine_similarity(Tensor x1, Tensor x2, int dim=1, float eps=1e-08) -> Tensor
    #[target("aten::cosine_similarity")]
    fn cosine_similarity(
        op,
        x1: Tensor,
        x2: Tensor,
        dim: i64 = 1,
        eps: f64 = 1e-8,
    ) -> OpResult<Value> {
        // Σ (x1 / max(‖x1‖, eps)) · (x2 / max(‖x2‖, eps)) over dim, on broadcast operands.
        let t = float_out(op, x1)?;
        let r = rank_of(op, x1)?.max(rank_of(op, x2)?);
        let (a, b) = (cast(op, x1, t), cast(op, x2, t));
        let sa = op.Shape(a).out();
        let sb = op.Shape(b).out();
        let one = op.scalar(t, 1.0);
        let ones_a = op.Expand(one, sa).out();
        let ones = op.Expand(ones_a, sb).out();
        let a = op.Mul(a, ones).out();
        let b = op.Mul(b, ones).out();
        let axis = normalize_axis(dim, r);
        let e = op.scalar(t, eps);
        let na = pnorm(op, a, 2.0, &[axis], true)?;
        let na = op.Max(&[na, e]).out();
        let nb = pnorm(op, b, 2.0, &[axis], true)?;
        let nb = op.Max(&[nb, e]).out();
        let a = op.Div(a, na).out();
        let b = op.Div(b, nb).out();
        let p = op.Mul(a, b).out();
        let axes = op.const_i64s(&[axis]);
        Ok(op.ReduceSum(p, Some(axes)).keepdims(0).out())
    }

    /// pairwise_distance(Tensor x1, Tensor x2, float p=2., float eps=9.9999999999999995e-07,
    ///     bool keepdim=False) -> Tensor
    #[target("aten::pairwise_distance")]
    fn pairwise_distance(
        op,
        x1: Tensor,
        x2: Tensor,
        p: f64 = 2.0,
        eps: f64 = 1e-6,
        keepdim: bool = false,
    ) -> OpResult<Value> {
        let t = float_out(op, x1)?;
        pairwise(op, x1, x2, p, eps, keepdim, t)
    }

    /// renorm(Tensor self, Scalar p, int dim, Scalar maxnorm) -> Tensor
    #[target("aten::renorm")]
    fn renorm(op, self_: Tensor, p: f64, dim: i64, maxnorm: f64) -> OpResult<Value> {
        // Slices along dim whose p-norm exceeds maxnorm are scaled by maxnorm / (norm + 1e-7).
        let t = float_out(op, self_)?;
        let r = rank_of(op, self_)?;
        let d = normalize_axis(dim, r);
        let x = cast(op, self_, t);
        let axes: Vec<i64> = (0..r as i64).filter(|&a| a != d).collect();
        let norm = pnorm(op, x, p, &axes, true)?;
        let mx = op.scalar(t, maxnorm);
        let gt = op.Greater(norm, mx).out();
        let tiny = op.scalar(t, 1e-7);
        let den = op.Add(norm, tiny).out();
        let f = op.Div(mx, den).out();
        let one = op.scalar(t, 1.0);
        let f = op.Where(gt, f, one).out();
        Ok(op.Mul(x, f).out())
    }

    /// bilinear(Tensor input1, Tensor input2, Tensor weight, Tensor? bias=None) -> Tensor
    #[target("aten::bilinear")]
    fn bilinear(
        op,
        input1: Tensor,
        input2: Tensor,
        weight: Tensor,
        bias: Option<Tensor> = None,
    ) -> OpResult<Value> {
        // y[..., o] = Σ_ij x1[..., i] W[o, i, j] x2[..., j] + b[o]
        let t = float_out(op, input1)?;
        let (a, b, w) = (cast(op, input1, t), cast(op, input2, t), cast(op, weight, t));
        let y = op.Einsum(&[a, w, b]).equation("...i,oij,...j->...o").out();
        Ok(match bias {
            Some(bias) => {
                let bias = cast(op, bias, t);
                op.Add(y, bias).out()
            }
            None => y,
        })
    }

    /// cumulative_trapezoid.x(Tensor y, Tensor x, *, int dim=-1) -> Tensor
    #[target("aten::cumulative_trapezoid.x")]
    fn cumulative_trapezoid(op, y: Tensor, x: Tensor, dim: i64 = -1) -> OpResult<Value> {
        // cumsum(dx · (y[:-1] + y[1:]) / 2) along dim, dx = diff(x) (a 1-D x lies along dim).
        let t = float_out(op, y)?;
        let ry = rank_of(op, y)?;
        let rx = rank_of(op, x)?;
        let d = normalize_axis(dim, ry);
        if d < 0 || d as usize >= ry {
            bail!("cumulative_trapezoid: dim {dim} out of range");
        }
        let (yv, xv) = (cast(op, y, t), cast(op, x, t));
        let xv = if rx == 1 && ry > 1 {
            let mut shape = vec![1i64; ry];
            shape[d as usize] = -1;
            let s = op.const_i64s(&shape);
            op.Reshape(xv, s).out()
        } else if rx < ry {
            let lead: Vec<i64> = (0..(ry - rx) as i64).collect();
            let a = op.const_i64s(&lead);
            op.Unsqueeze(xv, a).out()
        } else {
            xv
        };
        let axes = op.const_i64s(&[d]);
        let (z, one, m1, big) =
            (op.const_i64s(&[0]), op.const_i64s(&[1]), op.const_i64s(&[-1]), op.const_i64s(&[i64::MAX]));
        let xl = op.Slice(xv, z, m1, Some(axes), None).out();
        let xr = op.Slice(xv, one, big, Some(axes), None).out();
        let dx = op.Sub(xr, xl).out();
        let yl = op.Slice(yv, z, m1, Some(axes), None).out();
        let yr = op.Slice(yv, one, big, Some(axes), None).out();
        let s = op.Add(yl, yr).out();
        let p = op.Mul(dx, s).out();
        let two = op.scalar(t, 2.0);
        let p = op.Div(p, two).out();
        let ax = op.scalar_i64(d);
        Ok(op.CumSum(p, ax).out())
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
        let t = float_out(op, self_)?;
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
            let eq = op.Equal(lo, hi).out();
            let one = op.scalar(t, 1.0);
            let lo1 = op.Sub(lo, one).out();
            let hi1 = op.Add(hi, one).out();
            (op.Where(eq, lo1, lo).out(), op.Where(eq, hi1, hi).out())
        } else {
            if lo_c > hi_c {
                bail!("histc: max must be larger than min");
            }
            (op.scalar(t, lo_c), op.scalar(t, hi_c))
        };
        let ge = op.GreaterOrEqual(x, lo).out();
        let le = op.LessOrEqual(x, hi).out();
        let valid = op.And(ge, le).out();
        let nb = op.scalar(t, bins as f64);
        let d = op.Sub(x, lo).out();
        let d = op.Mul(d, nb).out();
        let range = op.Sub(hi, lo).out();
        let q = op.Div(d, range).out();
        let zero = op.scalar(t, 0.0);
        let q = op.Where(valid, q, zero).out();
        let q = op.Floor(q).out();
        let idx = op.Cast(q).to(DType::Int64 as i64).out();
        let last = op.scalar_i64(bins - 1);
        let idx = op.Min(&[idx, last]).out();
        let depth = op.scalar_i64(bins);
        let Some(vals) = TensorData::from_f64_as(t, vec![2], &[0.0, 1.0]) else {
            bail!("histc of {t:?} is not supported")
        };
        let vals = op.constant_tensor(vals);
        let oh = op.OneHot(idx, depth, vals).axis(-1).out();
        let vf = cast(op, valid, t);
        let one_axis = op.const_i64s(&[1]);
        let vf = op.Unsqueeze(vf, one_axis).out();
        let oh = op.Mul(oh, vf).out();
        let axes = op.const_i64s(&[0]);
        Ok(op.ReduceSum(oh, Some(axes)).keepdims(0).out())
    }

    /// max_pool2d_with_indices_backward(Tensor grad_output, Tensor self, int[2] kernel_size, int[2] stride,
    ///     int[2] padding, int[2] dilation, bool ceil_mode, Tensor indices) -> Tensor
    #[target("aten::max_pool2d_with_indices_backward")]
    fn max_pool2d_with_indices_backward(
        op,
        grad_output: Tensor,
        self_: Tensor,
        indices: Tensor,
    ) -> OpResult<Value> {
        // Each output gradient is added at its argmax, an index into the flattened H·W plane.
        let t = float_out(op, grad_output)?;
        let r = rank_of(op, self_)?;
        if r != 3 && r != 4 {
            bail!("max_pool2d_with_indices_backward needs a 3-D or 4-D input");
        }
        let s = op.Shape(self_).out();
        let lead = op.Shape(self_).start(0).end(r as i64 - 2).out();
        let hw = op.Shape(self_).start(r as i64 - 2).out();
        let zero_ax = op.const_i64s(&[0]);
        let hw = op.ReduceProd(hw, Some(zero_ax)).keepdims(1).out();
        let flat = op.Concat(&[lead, hw]).axis(0).out();
        let m1 = op.const_i64s(&[-1]);
        let flat_m1 = op.Concat(&[lead, m1]).axis(0).out();
        let z = op.scalar(t, 0.0);
        let zeros = op.Expand(z, flat).out();
        let g = cast(op, grad_output, t);
        let g = op.Reshape(g, flat_m1).out();
        let idx = cast(op, indices, DType::Int64);
        let idx = op.Reshape(idx, flat_m1).out();
        let out = op.ScatterElements(zeros, idx, g).axis(r as i64 - 2).reduction("add").out();
        Ok(op.Reshape(out, s).out())
    }

    /// _trilinear(Tensor i1, Tensor i2, Tensor i3, int[] expand1, int[] expand2, int[] expand3, int[] sumdim,
    ///     int unroll_dim=1) -> Tensor
    #[target("aten::_trilinear")]
    fn _trilinear(
        op,
        i1: Tensor,
        i2: Tensor,
        i3: Tensor,
        expand1: Vec<i64>,
        expand2: Vec<i64>,
        expand3: Vec<i64>,
        sumdim: Vec<i64>,
    ) -> OpResult<Value> {
        // Σ_sumdim unsqueeze(i1, expand1) · unsqueeze(i2, expand2) · unsqueeze(i3, expand3)
        let t = float_out(op, i1)?;
        let mut ops = Vec::new();
        for (x, e) in [(i1, &expand1), (i2, &expand2), (i3, &expand3)] {
            let x = cast(op, x, t);
            ops.push(if e.is_empty() {
                x
            } else {
                let a = op.const_i64s(e);
                op.Unsqueeze(x, a).out()
            });
        }
        let p = op.Mul(ops[0], ops[1]).out();
        let p = op.Mul(p, ops[2]).out();
        if sumdim.is_empty() {
            return Ok(p);
        }
        let a = op.const_i64s(&sumdim);
        Ok(op.ReduceSum(p, Some(a)).keepdims(0).out())
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

    /// gradient.scalarint(Tensor self, *, Scalar? spacing=None, int? dim=None, int edge_order=1) -> Tensor[]
    #[target("aten::gradient.scalarint")]
    fn gradient(
        op,
        self_: Tensor,
        spacing: Option<f64> = None,
        dim: Option<i64> = None,
        edge_order: i64 = 1,
    ) -> OpResult<Vec<Value>> {
        // Central differences (x[i+1] - x[i-1]) / h / 2 inside; one-sided first or second order at the ends.
        let t = float_out(op, self_)?;
        let shape = fixed_shape(op, self_)?;
        let r = shape.len();
        if edge_order != 1 && edge_order != 2 {
            bail!("gradient: edge_order must be 1 or 2");
        }
        let h = spacing.unwrap_or(1.0);
        let dims: Vec<i64> = match dim {
            Some(d) => vec![normalize_axis(d, r)],
            None => (0..r as i64).collect(),
        };
        let x = cast(op, self_, t);
        let hv = op.scalar(t, h);
        let mut outs = Vec::new();
        for d in dims {
            let n = shape[d as usize];
            if n < edge_order + 1 {
                bail!("gradient needs at least edge_order + 1 elements along each dim");
            }
            let axes = op.const_i64s(&[d]);
            let mut sl = |op: &mut Builder, a: i64, b: i64| {
                let (s, e) = (op.const_i64s(&[a]), op.const_i64s(&[b]));
                op.Slice(x, s, e, Some(axes), None).out()
            };
            let hi = sl(op, 2, n);
            let lo = sl(op, 0, n - 2);
            let c = op.Sub(hi, lo).out();
            let c = op.Div(c, hv).out();
            let two = op.scalar(t, 2.0);
            let c = op.Div(c, two).out();
            let (pre, app) = if edge_order == 1 {
                let (x1, x0) = (sl(op, 1, 2), sl(op, 0, 1));
                let p = op.Sub(x1, x0).out();
                let (xl, xm) = (sl(op, n - 1, n), sl(op, n - 2, n - 1));
                let a = op.Sub(xl, xm).out();
                (op.Div(p, hv).out(), op.Div(a, hv).out())
            } else {
                let (c15, c2, c05) = (op.scalar(t, -1.5), op.scalar(t, 2.0), op.scalar(t, 0.5));
                let (x0, x1, x2) = (sl(op, 0, 1), sl(op, 1, 2), sl(op, 2, 3));
                let a0 = op.Mul(c15, x0).out();
                let a1 = op.Mul(c2, x1).out();
                let a2 = op.Mul(c05, x2).out();
                let p = op.Add(a0, a1).out();
                let p = op.Sub(p, a2).out();
                let (y0, y1, y2) = (sl(op, n - 3, n - 2), sl(op, n - 2, n - 1), sl(op, n - 1, n));
                let c15p = op.scalar(t, 1.5);
                let b0 = op.Mul(c05, y0).out();
                let b1 = op.Mul(c2, y1).out();
                let b2 = op.Mul(c15p, y2).out();
                let a = op.Sub(b0, b1).out();
                let a = op.Add(a, b2).out();
                (op.Div(p, hv).out(), op.Div(a, hv).out())
            };
            outs.push(op.Concat(&[pre, c, app]).axis(d).out());
        }
        Ok(outs)
    }

    /// resize(Tensor self, SymInt[] size, *, MemoryFormat? memory_format=None) -> Tensor
    #[target("aten::resize", "aten::resize_")]
    fn resize(op, self_: Tensor, size: Vec<SymInt>) -> OpResult<Value> {
        // Keeps the first prod(size) elements; growing would expose uninitialised memory.
        let shape = fixed_shape(op, self_)?;
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
            op.Slice(flat, s, e, None, None).out()
        } else {
            flat
        };
        let sv = op.const_i64s(&new);
        Ok(op.Reshape(flat, sv).out())
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
        let shape = fixed_shape(op, self_)?;
        let mut idx = Vec::new();
        for (i, ix) in indices.iter().enumerate() {
            let Some(ix) = ix else { bail!("_unsafe_masked_index_put_accumulate with None indices is not supported") };
            if i >= shape.len() {
                bail!("too many indices");
            }
            let n = shape[i];
            let ix = cast(op, *ix, DType::Int64);
            let (lo, hi) = (op.scalar_i64(-n), op.scalar_i64(n - 1));
            let ix = op.Max(&[ix, lo]).out();
            let ix = op.Min(&[ix, hi]).out();
            let z = op.scalar_i64(0);
            let neg = op.Less(ix, z).out();
            let nv = op.scalar_i64(n);
            let wrapped = op.Add(ix, nv).out();
            idx.push(op.Where(neg, wrapped, ix).out());
        }
        if idx.is_empty() {
            bail!("_unsafe_masked_index_put_accumulate needs indices");
        }
        let k = idx.len();
        // The broadcast index shape B, each index expanded to it and stacked on a new last axis.
        let z = op.scalar_i64(0);
        let mut acc = op.Mul(idx[0], z).out();
        for &ix in &idx[1..] {
            let zi = op.Mul(ix, z).out();
            acc = op.Add(acc, zi).out();
        }
        let bshape = op.Shape(acc).out();
        let m1 = op.const_i64s(&[-1]);
        let stacked: Vec<Value> = idx
            .iter()
            .map(|&ix| {
                let e = op.Expand(ix, bshape).out();
                op.Unsqueeze(e, m1).out()
            })
            .collect();
        let nd = op.Concat(&stacked).axis(-1).out();
        let x = cast(op, self_, t);
        let v = cast(op, values, t);
        let fz = op.scalar(t, 0.0);
        let v = op.Where(mask, v, fz).out();
        let trail = op.const_i64s(&shape[k..]);
        let ushape = op.Concat(&[bshape, trail]).axis(0).out();
        let v = op.Expand(v, ushape).out();
        Ok(op.ScatterND(x, nd, v).reduction("add").out())
    }

    /// resize_as(Tensor self, Tensor the_template, *, MemoryFormat? memory_format=None) -> Tensor
    #[target("aten::resize_as", "aten::resize_as_")]
    fn resize_as(op, self_: Tensor, the_template: Tensor) -> OpResult<Value> {
        let shape = fixed_shape(op, self_)?;
        let new = fixed_shape(op, the_template)?;
        let have: i64 = shape.iter().product();
        let want: i64 = new.iter().product();
        if want > have {
            bail!("resize to more elements than the tensor holds leaves them uninitialised");
        }
        let m1 = op.const_i64s(&[-1]);
        let flat = op.Reshape(self_, m1).out();
        let flat = if want < have {
            let (s, e) = (op.const_i64s(&[0]), op.const_i64s(&[want]));
            op.Slice(flat, s, e, None, None).out()
        } else {
            flat
        };
        let sv = op.const_i64s(&new);
        Ok(op.Reshape(flat, sv).out())
    }

    /// pdist(Tensor self, float p=2.) -> Tensor
    #[target("aten::pdist", "aten::_pdist_forward")]
    fn pdist(op, self_: Tensor, p: f64 = 2.0) -> OpResult<Value> {
        // ‖x_i - x_j‖_p for i < j, row-major.
        let t = float_out(op, self_)?;
        let shape = fixed_shape(op, self_)?;
        if shape.len() != 2 {
            bail!("pdist needs a 2-D input");
        }
        if p < 0.0 {
            bail!("pdist needs p >= 0");
        }
        let n = shape[0];
        let (mut is, mut js) = (Vec::new(), Vec::new());
        for i in 0..n {
            for j in i + 1..n {
                is.push(i);
                js.push(j);
            }
        }
        let x = cast(op, self_, t);
        let k = is.len() as i64;
        let iv = op.constant_tensor(TensorData::from_i64s(vec![k], &is));
        let jv = op.constant_tensor(TensorData::from_i64s(vec![k], &js));
        let a = op.Gather(x, iv).axis(0).out();
        let b = op.Gather(x, jv).axis(0).out();
        let d = op.Sub(a, b).out();
        pnorm(op, d, p, &[1], false)
    }

    /// combinations(Tensor self, int r=2, bool with_replacement=False) -> Tensor
    #[target("aten::combinations")]
    fn combinations(
        op,
        self_: Tensor,
        r: i64 = 2,
        with_replacement: bool = false,
    ) -> OpResult<Value> {
        // Every index tuple i1 < i2 < ... (≤ with replacement) in lexicographic order, gathered.
        let shape = fixed_shape(op, self_)?;
        if shape.len() != 1 {
            bail!("combinations needs a 1-D input");
        }
        if r < 1 {
            bail!("combinations with r < 1 is not supported");
        }
        let n = shape[0];
        let mut tuples: Vec<i64> = Vec::new();
        let mut cur = vec![0i64; r as usize];
        fn rec(pos: usize, start: i64, n: i64, rep: bool, cur: &mut Vec<i64>, out: &mut Vec<i64>) {
            if pos == cur.len() {
                out.extend_from_slice(cur);
                return;
            }
            for i in start..n {
                cur[pos] = i;
                rec(pos + 1, if rep { i } else { i + 1 }, n, rep, cur, out);
            }
        }
        rec(0, 0, n, with_replacement, &mut cur, &mut tuples);
        let c = tuples.len() as i64 / r;
        if c > 1 << 20 {
            bail!("combinations: too many tuples to build a constant");
        }
        let idx = op.constant_tensor(TensorData::from_i64s(vec![c, r], &tuples));
        Ok(op.Gather(self_, idx).axis(0).out())
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
        let shape = fixed_shape(op, self_)?;
        let r = shape.len();
        if r != 3 && r != 4 {
            bail!("im2col needs a 3-D or 4-D input");
        }
        let two = |v: &Vec<i64>| if v.len() == 1 { (v[0], v[0]) } else { (v[0], v[1]) };
        let ((kh, kw), (dh, dw), (ph, pw), (sh, sw)) = (two(&kernel_size), two(&dilation), two(&padding), two(&stride));
        let (h, w) = (shape[r - 2] + 2 * ph, shape[r - 1] + 2 * pw);
        let oh = (h - (dh * (kh - 1) + 1)) / sh + 1;
        let ow = (w - (dw * (kw - 1) + 1)) / sw + 1;
        if oh < 1 || ow < 1 {
            bail!("im2col: the kernel does not fit the input");
        }
        let mut idx = Vec::new();
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
}
