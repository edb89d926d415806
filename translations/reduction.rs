//! Reductions (sum, mean, prod, any, all, max, min, argmax, var/std, norms, dist, renorm,
//! logsumexp, sum_to_size), softmax and its backward.

use crate::translate::prelude::*;
use crate::translations;
use crate::translations::shared::norms::pnorm;

/// The ONNX reduce operators used here.
#[derive(Clone, Copy)]
enum Red {
    Sum,
    Max,
    Min,
    Prod,
}

/// A reduction's input and axes: `dim` of `None` or `[]` means all axes. A 0-d input is viewed as
/// `[1]` (torch accepts dim 0 / -1 on it), so the reduction has an axis and gives a 0-d result.
struct Prepared {
    x: Value,
    axes: Option<Value>,
    /// The input was 0-d: the result is 0-d whatever `keepdim` says.
    scalar: bool,
    /// The normalised reduced axes (`None` = all).
    dims: Option<Vec<i64>>,
}

fn prepare(op: &mut Builder, x: Value, dim: &Option<Vec<i64>>) -> OpResult<Prepared> {
    let r = rank_of(op, x)?;
    if r == 0 {
        let one = op.const_i64s(&[1]);
        let x = op.Reshape(x, one).out();
        let axes = op.const_i64s(&[0]);
        return Ok(Prepared { x, axes: Some(axes), scalar: true, dims: Some(vec![0]) });
    }
    Ok(match dim {
        Some(d) if !d.is_empty() => {
            let mut axes: Vec<i64> = d.iter().map(|&a| normalize_axis(a, r)).collect::<OpResult<Vec<_>>>()?;
            axes.sort_unstable();
            axes.dedup();
            let v = op.const_i64s(&axes);
            Prepared { x, axes: Some(v), scalar: false, dims: Some(axes) }
        }
        _ => Prepared { x, axes: None, scalar: false, dims: None },
    })
}

impl Prepared {
    fn keep(&self, keepdim: bool) -> i64 {
        (keepdim && !self.scalar) as i64
    }
}

fn reduce_on(op: &mut Builder, kind: Red, x: Value, axes: Option<Value>, keepdims: i64) -> Value {
    match kind {
        Red::Sum => op.ReduceSum(x, axes).keepdims(keepdims).out(),
        Red::Max => op.ReduceMax(x, axes).keepdims(keepdims).out(),
        Red::Min => op.ReduceMin(x, axes).keepdims(keepdims).out(),
        Red::Prod => op.ReduceProd(x, axes).keepdims(keepdims).out(),
    }
}

/// `kind` over `dim` (torch's `dim=None`/`[]` = all axes) with torch's keepdim and 0-d rules.
fn reduce(op: &mut Builder, kind: Red, x: Value, dim: &Option<Vec<i64>>, keepdim: bool) -> OpResult<Value> {
    let p = prepare(op, x, dim)?;
    Ok(reduce_on(op, kind, p.x, p.axes, p.keep(keepdim)))
}

/// The number of elements a reduction over `p` combines, as a 0-d value of type `t`.
fn reduced_count(op: &mut Builder, p: &Prepared, t: DType) -> Value {
    let n = match &p.dims {
        None => op.Size(p.x),
        Some(d) => {
            let shape = op.Shape(p.x).out();
            let idx = op.const_i64s(d);
            let sizes = op.Gather(shape, idx).axis(0).out();
            op.ReduceProd(sizes, None).keepdims(0).out()
        }
    };
    cast(op, n, t)
}

/// The mean over `dim` as sum / count (an empty reduction gives NaN, like torch).
fn mean_of(op: &mut Builder, x: Value, dim: &Option<Vec<i64>>, keepdim: bool) -> OpResult<Value> {
    let t = dtype_of(op, x)?;
    let p = prepare(op, x, dim)?;
    let s = op.ReduceSum(p.x, p.axes).keepdims(p.keep(keepdim)).out();
    let n = reduced_count(op, &p, t);
    Ok(op.Div(s, n))
}

fn no_complex(op: &Builder, x: Value, what: &str) -> OpResult<()> {
    if op.info(x).complex {
        bail!("{what} of a complex tensor is not supported");
    }
    Ok(())
}

/// (variance, mean) over `dim` with torch's `correction` (divisor `max(N - correction, 0)`).
fn var_mean_of(
    op: &mut Builder,
    x: Value,
    dim: &Option<Vec<i64>>,
    correction: f64,
    keepdim: bool,
) -> OpResult<(Value, Value)> {
    no_complex(op, x, "var/std")?;
    let t = result_dtype(op, x)?;
    let x = cast(op, x, t);
    let p = prepare(op, x, dim)?;
    let kd = p.keep(keepdim);
    let mean_kept = op.ReduceMean(p.x, p.axes).keepdims(1).out();
    let d = op.Sub(p.x, mean_kept);
    let ss = op.ReduceSumSquare(d, p.axes).keepdims(kd).out();
    let n = reduced_count(op, &p, t);
    let c = op.scalar(t, correction);
    let nc = op.Sub(n, c);
    let zero = op.scalar(t, 0.0);
    let denom = op.Max(&[nc, zero]);
    let var = op.Div(ss, denom);
    let s = op.ReduceSum(p.x, p.axes).keepdims(kd).out();
    let mean = op.Div(s, n);
    Ok((var, mean))
}

/// The correction of `var.correction` / `var.dim` / `var.default`: `correction`, else `unbiased`.
fn correction_of(correction: Option<f64>, unbiased: bool) -> f64 {
    correction.unwrap_or(if unbiased { 1.0 } else { 0.0 })
}

/// `torch.linalg.vector_norm` of `x` in type `t`.
fn vector_norm(
    op: &mut Builder,
    x: Value,
    ord: f64,
    dim: &Option<Vec<i64>>,
    keepdim: bool,
    t: DType,
) -> OpResult<Value> {
    no_complex(op, x, "norm")?;
    let x = cast(op, x, t);
    let p = prepare(op, x, dim)?;
    let kd = p.keep(keepdim);
    let a = op.Abs(p.x);
    Ok(if ord == 2.0 {
        op.ReduceL2(p.x, p.axes).keepdims(kd).out()
    } else if ord == f64::INFINITY {
        op.ReduceMax(a, p.axes).keepdims(kd).out()
    } else if ord == f64::NEG_INFINITY {
        op.ReduceMin(a, p.axes).keepdims(kd).out()
    } else if ord == 0.0 {
        let zero = op.scalar(t, 0.0);
        let eq = op.Equal(p.x, zero);
        let nz = op.Not(eq);
        let nz = cast(op, nz, t);
        op.ReduceSum(nz, p.axes).keepdims(kd).out()
    } else if ord == 1.0 {
        op.ReduceL1(p.x, p.axes).keepdims(kd).out()
    } else {
        let e = op.scalar(t, ord);
        let pw = op.Pow(a, e);
        let s = op.ReduceSum(pw, p.axes).keepdims(kd).out();
        let inv = op.scalar(t, 1.0 / ord);
        op.Pow(s, inv)
    })
}

/// `x` with NaNs replaced by `fill` (floats only; other types have none).
fn replace_nan(op: &mut Builder, x: Value, fill: f64) -> OpResult<Value> {
    let t = dtype_of(op, x)?;
    if !t.is_float() {
        return Ok(x);
    }
    let nan = op.IsNaN(x);
    let f = op.scalar(t, fill);
    let y = op.Where(nan, f, x);
    op.info_mut(y).shape = op.info(x).shape.clone();
    Ok(y)
}

/// ArgMax / ArgMin with torch's `dim=None` (flattened) and 0-d rules.
fn arg_reduce(op: &mut Builder, x: Value, dim: Option<i64>, keepdim: bool, max: bool) -> OpResult<Value> {
    let r = rank_of(op, x)?;
    let (x, axis, kd) = match dim {
        Some(d) if r > 0 => (x, normalize_axis(d, r)?, keepdim as i64),
        Some(_) => (as_1d(op, x), 0, 0),
        None => {
            let flat = as_1d(op, x);
            let idx =
                if max { op.ArgMax(flat).axis(0).keepdims(0).out() } else { op.ArgMin(flat).axis(0).keepdims(0).out() };
            if keepdim && r > 0 {
                // torch keeps every axis as size 1.
                let ones = op.const_i64s(&vec![1; r]);
                return Ok(op.Reshape(idx, ones).out());
            }
            return Ok(idx);
        }
    };
    Ok(if max {
        op.ArgMax(x).axis(axis).keepdims(kd).select_last_index(0).out()
    } else {
        op.ArgMin(x).axis(axis).keepdims(kd).select_last_index(0).out()
    })
}

/// Softmax / LogSoftmax over `dim` (a 0-d input is viewed as `[1]`).
fn softmax_like(op: &mut Builder, x: Value, dim: i64, log: bool) -> OpResult<Value> {
    let r = rank_of(op, x)?;
    let t = result_dtype(op, x)?;
    let x = cast(op, x, t);
    let (v, axis) = if r == 0 { (as_1d(op, x), 0) } else { (x, normalize_axis(dim, r)?) };
    let y = if log { op.LogSoftmax(v).axis(axis).out() } else { op.Softmax(v).axis(axis).out() };
    Ok(if r == 0 {
        let empty = op.const_i64s(&[]);
        op.Reshape(y, empty).out()
    } else {
        y
    })
}

/// The broadcast of two static shapes.
fn broadcast_shape(op: &Builder, a: Value, b: Value) -> OpResult<Vec<Dim>> {
    let (sa, sb) = (static_shape(op, a, "dist")?, static_shape(op, b, "dist")?);
    let shape = broadcast_shapes(&sa, &sb).ok_or("dist operands do not broadcast")?;
    Ok(shape.into_iter().map(Dim::Fixed).collect())
}

translations! {
    /// sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor
    #[target("aten::sum.dim_IntList", "aten::sum")]
    fn sum(
        op,
        self_: Tensor,
        dim: Option<Vec<i64>> = None,
        keepdim: bool = false,
    ) -> OpResult<Value> {
        // torch sums bool and integer tensors as int64 (the node's output type, also set by `dtype`).
        let t = result_dtype(op, self_)?;
        let x = cast(op, self_, t);
        reduce(op, Red::Sum, x, &dim, keepdim)
    }

    /// mean.dim(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor
    #[target("aten::mean.dim", "aten::mean")]
    fn mean(
        op,
        self_: Tensor,
        dim: Option<Vec<i64>> = None,
        keepdim: bool = false,
    ) -> OpResult<Value> {
        let t = result_dtype(op, self_)?;
        let x = cast(op, self_, t);
        mean_of(op, x, &dim, keepdim)
    }

    /// prod.dim_int(Tensor self, int dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor
    #[target("aten::prod.dim_int", "aten::prod")]
    fn prod(op, self_: Tensor, dim: Option<i64> = None, keepdim: bool = false) -> OpResult<Value> {
        let t = result_dtype(op, self_)?;
        let x = cast(op, self_, t);
        reduce(op, Red::Prod, x, &dim.map(|d| vec![d]), keepdim)
    }

    /// nansum(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor
    #[target("aten::nansum")]
    fn nansum(
        op,
        self_: Tensor,
        dim: Option<Vec<i64>> = None,
        keepdim: bool = false,
    ) -> OpResult<Value> {
        let t = result_dtype(op, self_)?;
        let x = cast(op, self_, t);
        let x = replace_nan(op, x, 0.0)?;
        reduce(op, Red::Sum, x, &dim, keepdim)
    }

    /// nanmean(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor
    #[target("aten::nanmean")]
    fn nanmean(
        op,
        self_: Tensor,
        dim: Option<Vec<i64>> = None,
        keepdim: bool = false,
    ) -> OpResult<Value> {
        let t = result_dtype(op, self_)?;
        if !t.is_float() {
            bail!("nanmean needs a floating-point input");
        }
        let x = cast(op, self_, t);
        let nan = op.IsNaN(x);
        let valid = op.Not(nan);
        let valid = cast(op, valid, t);
        let x = replace_nan(op, x, 0.0)?;
        let s = reduce(op, Red::Sum, x, &dim, keepdim)?;
        let n = reduce(op, Red::Sum, valid, &dim, keepdim)?;
        Ok(op.Div(s, n))
    }

    /// any.dim(Tensor self, int dim, bool keepdim=False) -> Tensor
    #[target("aten::any.dim", "aten::any.dims", "aten::any")]
    fn any(
        op,
        self_: Tensor,
        dim: Option<Vec<i64>> = None,
        keepdim: bool = false,
    ) -> OpResult<Value> {
        // Counting the true elements keeps empty reductions right (any of nothing is false).
        let b = cast(op, self_, DType::Bool);
        let x = cast(op, b, DType::Int64);
        let n = reduce(op, Red::Sum, x, &dim, keepdim)?;
        Ok(cast(op, n, DType::Bool))
    }

    /// all.dim(Tensor self, int dim, bool keepdim=False) -> Tensor
    #[target("aten::all.dim", "aten::all.dims", "aten::all")]
    fn all(
        op,
        self_: Tensor,
        dim: Option<Vec<i64>> = None,
        keepdim: bool = false,
    ) -> OpResult<Value> {
        let b = cast(op, self_, DType::Bool);
        let f = op.Not(b);
        let x = cast(op, f, DType::Int64);
        let n = reduce(op, Red::Sum, x, &dim, keepdim)?;
        let zero = op.scalar_i64(0);
        Ok(op.Equal(n, zero))
    }

    /// amax(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor
    #[target("aten::amax")]
    fn amax(
        op,
        self_: Tensor,
        dim: Option<Vec<i64>> = None,
        keepdim: bool = false,
    ) -> OpResult<Value> {
        reduce(op, Red::Max, self_, &dim, keepdim)
    }

    /// amin(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor
    #[target("aten::amin")]
    fn amin(
        op,
        self_: Tensor,
        dim: Option<Vec<i64>> = None,
        keepdim: bool = false,
    ) -> OpResult<Value> {
        reduce(op, Red::Min, self_, &dim, keepdim)
    }

    /// aminmax(Tensor self, *, int? dim=None, bool keepdim=False) -> (Tensor min, Tensor max)
    #[target("aten::aminmax")]
    fn aminmax(
        op,
        self_: Tensor,
        dim: Option<i64> = None,
        keepdim: bool = false,
    ) -> OpResult<(Value, Value)> {
        let dims = dim.map(|d| vec![d]);
        let lo = reduce(op, Red::Min, self_, &dims, keepdim)?;
        let hi = reduce(op, Red::Max, self_, &dims, keepdim)?;
        Ok((lo, hi))
    }

    /// max(Tensor self) -> Tensor
    #[target("aten::max")]
    fn max(op, self_: Tensor) -> OpResult<Value> {
        reduce(op, Red::Max, self_, &None, false)
    }

    /// min(Tensor self) -> Tensor
    #[target("aten::min")]
    fn min(op, self_: Tensor) -> OpResult<Value> {
        reduce(op, Red::Min, self_, &None, false)
    }

    /// max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)
    #[target("aten::max.dim")]
    fn max_dim(op, self_: Tensor, dim: i64, keepdim: bool = false) -> OpResult<(Value, Value)> {
        let values = reduce(op, Red::Max, self_, &Some(vec![dim]), keepdim)?;
        let indices = arg_reduce(op, self_, Some(dim), keepdim, true)?;
        Ok((values, indices))
    }

    /// min.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)
    #[target("aten::min.dim")]
    fn min_dim(op, self_: Tensor, dim: i64, keepdim: bool = false) -> OpResult<(Value, Value)> {
        let values = reduce(op, Red::Min, self_, &Some(vec![dim]), keepdim)?;
        let indices = arg_reduce(op, self_, Some(dim), keepdim, false)?;
        Ok((values, indices))
    }

    /// argmax(Tensor self, int? dim=None, bool keepdim=False) -> Tensor
    #[target("aten::argmax")]
    fn argmax(
        op,
        self_: Tensor,
        dim: Option<i64> = None,
        keepdim: bool = false,
    ) -> OpResult<Value> {
        arg_reduce(op, self_, dim, keepdim, true)
    }

    /// argmin(Tensor self, int? dim=None, bool keepdim=False) -> Tensor
    #[target("aten::argmin")]
    fn argmin(
        op,
        self_: Tensor,
        dim: Option<i64> = None,
        keepdim: bool = false,
    ) -> OpResult<Value> {
        arg_reduce(op, self_, dim, keepdim, false)
    }

    /// var.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> Tensor
    #[target("aten::var.correction", "aten::var.dim", "aten::var")]
    fn var(
        op,
        self_: Tensor,
        dim: Option<Vec<i64>> = None,
        correction: Option<f64> = None,
        unbiased: bool = true,
        keepdim: bool = false,
    ) -> OpResult<Value> {
        Ok(var_mean_of(op, self_, &dim, correction_of(correction, unbiased), keepdim)?.0)
    }

    /// std.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> Tensor
    #[target("aten::std.correction", "aten::std.dim", "aten::std")]
    fn std(
        op,
        self_: Tensor,
        dim: Option<Vec<i64>> = None,
        correction: Option<f64> = None,
        unbiased: bool = true,
        keepdim: bool = false,
    ) -> OpResult<Value> {
        let v = var_mean_of(op, self_, &dim, correction_of(correction, unbiased), keepdim)?.0;
        Ok(op.Sqrt(v))
    }

    /// var_mean.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> (Tensor,
    ///     Tensor)
    #[target("aten::var_mean.correction", "aten::var_mean.dim", "aten::var_mean")]
    fn var_mean(
        op,
        self_: Tensor,
        dim: Option<Vec<i64>> = None,
        correction: Option<f64> = None,
        unbiased: bool = true,
        keepdim: bool = false,
    ) -> OpResult<(Value, Value)> {
        var_mean_of(op, self_, &dim, correction_of(correction, unbiased), keepdim)
    }

    /// std_mean.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> (Tensor,
    ///     Tensor)
    #[target("aten::std_mean.correction", "aten::std_mean.dim", "aten::std_mean")]
    fn std_mean(
        op,
        self_: Tensor,
        dim: Option<Vec<i64>> = None,
        correction: Option<f64> = None,
        unbiased: bool = true,
        keepdim: bool = false,
    ) -> OpResult<(Value, Value)> {
        let (v, m) = var_mean_of(op, self_, &dim, correction_of(correction, unbiased), keepdim)?;
        Ok((op.Sqrt(v), m))
    }

    /// logsumexp(Tensor self, int[1] dim, bool keepdim=False) -> Tensor
    #[target("aten::logsumexp")]
    fn logsumexp(op, self_: Tensor, dim: Vec<i64>, keepdim: bool = false) -> OpResult<Value> {
        no_complex(op, self_, "logsumexp")?;
        let t = result_dtype(op, self_)?;
        let x = cast(op, self_, t);
        let p = prepare(op, x, &Some(dim))?;
        // log(sum(exp(x - m))) + m with the max m taken as 0 where it is infinite, like torch.
        let m = op.ReduceMax(p.x, p.axes).keepdims(1).out();
        let inf = op.IsInf(m).out();
        let zero = op.scalar(t, 0.0);
        let m = op.Where(inf, zero, m);
        let d = op.Sub(p.x, m);
        let e = op.Exp(d);
        let s = op.ReduceSum(e, p.axes).keepdims(p.keep(keepdim)).out();
        let l = op.Log(s);
        let m = if p.keep(keepdim) == 1 { m } else { op.ReduceMax(m, p.axes).keepdims(0).out() };
        Ok(op.Add(l, m))
    }

    /// linalg_vector_norm(Tensor self, Scalar ord=2, int[1]? dim=None, bool keepdim=False, *,
    ///     ScalarType? dtype=None) -> Tensor
    #[target("aten::linalg_vector_norm")]
    fn linalg_vector_norm(
        op,
        self_: Tensor,
        ord: f64 = 2.0,
        dim: Option<Vec<i64>> = None,
        keepdim: bool = false,
    ) -> OpResult<Value> {
        let t = result_dtype(op, self_)?;
        vector_norm(op, self_, ord, &dim, keepdim, t)
    }

    /// norm.ScalarOpt_dim(Tensor self, Scalar? p, int[1] dim, bool keepdim=False) -> Tensor
    #[target(
        "aten::norm.Scalar",
        "aten::norm.ScalarOpt_dim",
        "aten::norm.ScalarOpt_dim_dtype",
        "aten::norm.ScalarOpt_dtype"
    )]
    fn norm(
        op,
        self_: Tensor,
        p: Option<f64> = None,
        dim: Option<Vec<i64>> = None,
        keepdim: bool = false,
    ) -> OpResult<Value> {
        let t = result_dtype(op, self_)?;
        vector_norm(op, self_, p.unwrap_or(2.0), &dim, keepdim, t)
    }

    /// softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor
    #[target("aten::softmax.int", "aten::_softmax")]
    fn softmax(op, self_: Tensor, dim: i64) -> OpResult<Value> {
        softmax_like(op, self_, dim, false)
    }

    /// _safe_softmax(Tensor self, int dim, ScalarType? dtype=None) -> Tensor
    #[target("aten::_safe_softmax")]
    fn safe_softmax(op, self_: Tensor, dim: i64) -> OpResult<Value> {
        // Softmax, with 0 for slices whose entries are all -inf.
        let y = softmax_like(op, self_, dim, false)?;
        let t = dtype_of(op, y)?;
        let xt = dtype_of(op, self_)?;
        let ninf = op.scalar(xt, f64::NEG_INFINITY);
        let is_ninf = op.Equal(self_, ninf);
        let finite = op.Not(is_ninf);
        let finite = cast(op, finite, DType::Int64);
        let r = rank_of(op, self_)?;
        let n = if r == 0 {
            finite
        } else {
            let axes = op.const_i64s(&[normalize_axis(dim, r)?]);
            op.ReduceSum(finite, Some(axes)).keepdims(1).out()
        };
        let zero_i = op.scalar_i64(0);
        let masked = op.Equal(n, zero_i);
        let zero = op.scalar(t, 0.0);
        Ok(op.Where(masked, zero, y))
    }

    /// log_softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor
    #[target("aten::log_softmax.int", "aten::_log_softmax")]
    fn log_softmax(op, self_: Tensor, dim: i64) -> OpResult<Value> {
        softmax_like(op, self_, dim, true)
    }

    /// _softmax_backward_data(Tensor grad_output, Tensor output, int dim, ScalarType input_dtype) -> Tensor
    #[target("aten::_softmax_backward_data")]
    fn _softmax_backward_data(op, grad_output: Tensor, output: Tensor, dim: i64) -> OpResult<Value> {
        // output · (grad - Σ_dim grad·output)
        let t = float_result_dtype(op, grad_output)?;
        let r = rank_of(op, output)?;
        let (g, y) = (cast(op, grad_output, t), cast(op, output, t));
        let gy = op.Mul(g, y);
        let out = if r == 0 {
            let d = op.Sub(g, gy);
            op.Mul(y, d)
        } else {
            let axes = op.const_i64s(&[normalize_axis(dim, r)?]);
            let s = op.ReduceSum(gy, Some(axes)).keepdims(1).out();
            let d = op.Sub(g, s);
            op.Mul(y, d)
        };
        Ok(out)
    }

    /// renorm(Tensor self, Scalar p, int dim, Scalar maxnorm) -> Tensor
    #[target("aten::renorm")]
    fn renorm(op, self_: Tensor, p: f64, dim: i64, maxnorm: f64) -> OpResult<Value> {
        // Slices along dim whose p-norm exceeds maxnorm are scaled by maxnorm / (norm + 1e-7).
        let t = float_result_dtype(op, self_)?;
        let r = rank_of(op, self_)?;
        let d = normalize_axis(dim, r)?;
        let x = cast(op, self_, t);
        let axes: Vec<i64> = (0..r as i64).filter(|&a| a != d).collect();
        let norm = pnorm(op, x, p, &axes, true)?;
        let mx = op.scalar(t, maxnorm);
        let gt = op.Greater(norm, mx);
        let tiny = op.scalar(t, 1e-7);
        let den = op.Add(norm, tiny);
        let f = op.Div(mx, den);
        let one = op.scalar(t, 1.0);
        let f = op.Where(gt, f, one);
        Ok(op.Mul(x, f))
    }

    /// sum_to_size(Tensor self, SymInt[] size) -> Tensor
    #[target("aten::sum_to_size")]
    fn sum_to_size(op, self_: Tensor, size: Vec<SymInt>) -> OpResult<Value> {
        let r = rank_of(op, self_)?;
        let shape = op.shape(self_).map(|s| s.to_vec()).ok_or("sum_to_size needs the input shape")?;
        if size.len() > r {
            bail!("sum_to_size: size has {} dims, more than the input's {r}", size.len());
        }
        let lead = r - size.len();
        let mut axes: Vec<i64> = (0..lead as i64).collect();
        for (i, s) in size.iter().enumerate() {
            if *s == SymInt::Const(1) && shape[lead + i] != Dim::Fixed(1) {
                axes.push((lead + i) as i64);
            }
        }
        if axes.is_empty() {
            return Ok(self_);
        }
        let a = op.const_i64s(&axes);
        let s = op.ReduceSum(self_, Some(a)).keepdims(1).out();
        if lead == 0 {
            return Ok(s);
        }
        let l: Vec<i64> = (0..lead as i64).collect();
        let l = op.const_i64s(&l);
        Ok(op.Squeeze(s, Some(l)))
    }

    /// dist(Tensor self, Tensor other, Scalar p=2) -> Tensor
    #[target("aten::dist")]
    fn dist(op, self_: Tensor, other: Tensor, p: f64 = 2.0) -> OpResult<Value> {
        let t = result_dtype(op, self_)?;
        let a = cast(op, self_, t);
        let b = cast(op, other, t);
        let d = op.Sub(a, b);
        // The difference has the operands' broadcast shape (needed by the norm for its rank).
        let shape = broadcast_shape(op, self_, other)?;
        op.info_mut(d).shape = Some(shape);
        vector_norm(op, d, p, &None, false, t)
    }

    /// prims::sum(Tensor inp, int[]? dims, *, ScalarType? output_dtype=None) -> Tensor
    #[target("prims::sum")]
    fn prims_sum(op, inp: Tensor, dims: Option<Vec<i64>>, _output_dtype: Ignored) -> OpResult<Value> {
        // The output type is the node's, which the lowering enforces.
        let t = result_dtype(op, inp)?;
        let x = cast(op, inp, t);
        reduce(op, Red::Sum, x, &dims, false)
    }

    /// prims::var(Tensor inp, int[]? dims, float? correction=1, *, ScalarType? output_dtype=None) -> Tensor
    #[target("prims::var")]
    fn prims_var(
        op,
        inp: Tensor,
        dims: Option<Vec<i64>>,
        correction: Option<f64> = Some(1.0),
        _output_dtype: Ignored,
    ) -> OpResult<Value> {
        Ok(var_mean_of(op, inp, &dims, correction.unwrap_or(1.0), false)?.0)
    }
}
