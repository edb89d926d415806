//! FFT ops on ONNX `DFT` (opset 20). Complex tensors travel as real views with a trailing dimension
//! of 2 (`ValueInfo.complex`). Inverse transforms use `conj(DFT(conj(x)))`, so no normalisation is
//! applied by ONNX; torch's `normalization` (0 none, 1 by 1/sqrt(n), 2 by 1/n) is applied after.
//! Complex-to-complex and two-sided real-to-complex transforms take symbolic signal sizes (the
//! scale factors are computed in the graph); one-sided and complex-to-real ones need static sizes
//! along the transformed axes, and so do sizes `s` that pad or cut.

use crate::translate::prelude::*;
use crate::translations;

/// Marks `v` as a complex real view of signal shape `signal`.
fn set_complex(op: &mut Builder, v: Value, signal: &[Dim], t: Option<DType>) -> Value {
    let info = op.info_mut(v);
    info.complex = true;
    info.dtype = t;
    info.shape = Some(signal.iter().cloned().chain([Dim::Fixed(2)]).collect());
    v
}

fn fixed(sizes: &[i64]) -> Vec<Dim> {
    sizes.iter().map(|&n| Dim::Fixed(n)).collect()
}

/// The dims of `x`, static or symbolic (its rank must be known).
fn dims_of(op: &Builder, x: Value) -> OpResult<Vec<Dim>> {
    op.shape(x).map(|s| s.to_vec()).ok_or_else(|| OpError::new("FFT needs the input's rank"))
}

/// The number of signal elements over `axes` of `x` (of dims `shape`): static when they are.
enum Count {
    Fixed(i64),
    /// An int64 scalar computed in the graph.
    Dyn(Value),
}

fn count(op: &mut Builder, x: Value, shape: &[Dim], axes: &[i64]) -> Count {
    let sizes: Option<Vec<i64>> = axes
        .iter()
        .map(|&a| match shape[a as usize] {
            Dim::Fixed(n) => Some(n),
            Dim::Param(_) => None,
        })
        .collect();
    match sizes {
        Some(sizes) => Count::Fixed(sizes.iter().product()),
        None => {
            let dims = op.Shape(x).out();
            let idx = op.const_i64s(axes);
            let picked = op.Gather(dims, idx).axis(0).out();
            Count::Dyn(op.ReduceProd(picked, None).keepdims(0).out())
        }
    }
}

/// Copies the shape and complex flag of `from` to `v`.
fn same_as(op: &mut Builder, v: Value, from: Value) -> Value {
    let (shape, complex, t) = (op.info(from).shape.clone(), op.info(from).complex, op.info(from).dtype);
    let info = op.info_mut(v);
    info.shape = shape;
    info.complex = complex;
    info.dtype = t;
    v
}

/// The complex conjugate of a real view `[..., 2]`.
fn conj(op: &mut Builder, x: Value) -> OpResult<Value> {
    let t = dtype_of(op, x)?;
    let Some(data) = TensorData::from_f64_as(t, vec![2], &[1.0, -1.0]) else { bail!("FFT of {t:?} is not supported") };
    let s = op.constant_tensor(data);
    let v = op.Mul(x, s);
    Ok(same_as(op, v, x))
}

/// A real tensor as a complex real view (zero imaginary part).
fn to_complex(op: &mut Builder, x: Value) -> OpResult<Value> {
    let shape = dims_of(op, x)?;
    let t = dtype_of(op, x)?;
    let t = if t.is_float() { t } else { DType::Float };
    let x = cast(op, x, t);
    let axis = op.const_i64s(&[-1]);
    let re = op.Unsqueeze(x, axis);
    let zero = op.scalar(t, 0.0);
    let dims = op.Shape(re).out();
    let im = op.Expand(zero, dims);
    let v = op.Concat(&[re, im]).axis(-1).out();
    Ok(set_complex(op, v, &shape, Some(t)))
}

/// The complex input as a real view, converting real inputs.
fn complex_input(op: &mut Builder, x: Value) -> OpResult<Value> {
    if op.info(x).complex {
        Ok(x)
    } else {
        to_complex(op, x)
    }
}

/// The forward, unnormalised DFT of `x` along signal axis `axis` (non-negative).
fn dft(op: &mut Builder, x: Value, axis: i64, onesided: bool) -> Value {
    let a = op.scalar_i64(axis);
    op.DFT(x, None, Some(a)).inverse(0).onesided(onesided as i64).out()
}

/// `x` scaled for torch's normalisation mode over `n` signal elements.
fn normalize(op: &mut Builder, x: Value, normalization: i64, n: Count) -> OpResult<Value> {
    let t = dtype_of(op, x)?;
    if !(0..=2).contains(&normalization) {
        bail!("unknown FFT normalization {normalization}");
    }
    let s = match n {
        _ if normalization == 0 => return Ok(x),
        Count::Fixed(n) if normalization == 1 => op.scalar(t, 1.0 / (n as f64).sqrt()),
        Count::Fixed(n) => op.scalar(t, 1.0 / n as f64),
        Count::Dyn(n) => {
            let n = cast(op, n, t);
            let n = if normalization == 1 { op.Sqrt(n) } else { n };
            op.Reciprocal(n)
        }
    };
    let v = op.Mul(x, s);
    Ok(same_as(op, v, x))
}

/// Signal axes of `dims` for a signal of rank `r`.
fn axes(dims: &[i64], r: usize) -> OpResult<Vec<i64>> {
    dims.iter()
        .map(|&d| {
            let a = normalize_axis(d, r)?;
            if a < 0 || a >= r as i64 {
                bail!("FFT dim {d} out of range for rank {r}");
            }
            Ok(a)
        })
        .collect()
}

/// The signal dims of a complex real view, static or symbolic.
fn signal_dims(op: &Builder, x: Value) -> OpResult<Vec<Dim>> {
    let mut s = dims_of(op, x)?;
    if s.pop() != Some(Dim::Fixed(2)) || !op.info(x).complex {
        bail!("this FFT needs a complex input, and its input is real");
    }
    Ok(s)
}

/// The signal sizes of a complex real view, which must be static.
fn signal_shape(op: &Builder, x: Value) -> OpResult<Vec<i64>> {
    let mut s = static_shape(op, x, "FFT")?;
    if s.pop() != Some(2) {
        bail!("this FFT needs a complex input, and its input is real");
    }
    Ok(s)
}

/// `x` cut or zero-padded to `n` along `axis` (a real tensor's, or a complex view's signal axis).
fn resize_axis(op: &mut Builder, x: Value, axis: i64, n: i64) -> OpResult<Value> {
    let complex = op.info(x).complex;
    let mut shape = if complex { signal_dims(op, x)? } else { dims_of(op, x)? };
    let cur = shape[axis as usize].clone();
    shape[axis as usize] = Dim::Fixed(n);
    let a = op.const_i64s(&[axis]);
    let v = match cur {
        Dim::Fixed(cur) if n == cur => return Ok(x),
        Dim::Fixed(cur) if n < cur => {
            let (s, e) = (op.const_i64s(&[0]), op.const_i64s(&[n]));
            op.Slice(x, s, e, Some(a), None)
        }
        Dim::Fixed(cur) => {
            let pads = op.const_i64s(&[0, n - cur]);
            op.Pad(x, pads, None, Some(a)).out()
        }
        // A symbolic size: cut to at most n, then pad by what is missing (max(n - size, 0)).
        Dim::Param(_) => {
            let (s, e) = (op.const_i64s(&[0]), op.const_i64s(&[n]));
            let cut = op.Slice(x, s, e, Some(a), None);
            let size = dim_size(op, x, axis);
            let target = op.const_i64s(&[n]);
            let missing = op.Sub(target, size);
            let zero = op.const_i64s(&[0]);
            let missing = op.Max(&[missing, zero]);
            let pads = op.Concat(&[zero, missing]).axis(0).out();
            op.Pad(cut, pads, None, Some(a)).out()
        }
    };
    let t = op.dtype(x);
    if complex {
        return Ok(set_complex(op, v, &shape, t));
    }
    let info = op.info_mut(v);
    (info.dtype, info.shape) = (t, Some(shape));
    Ok(v)
}

/// The transforms torch's `fft_*` functions compute (`torch/_refs/fft.py`).
#[derive(Clone, Copy, PartialEq)]
enum Transform {
    /// complex (or real promoted) to complex, forward
    Fft,
    /// complex to complex, inverse
    Ifft,
    /// real to one-sided complex, forward
    Rfft,
    /// real to one-sided complex, inverse: the conjugate of rfft, scaled as an inverse
    Ihfft,
}

/// `fft_fftn` and its kin: the signal dims and sizes canonicalized as torch does (`dim`, else the
/// last `len(s)` dims, else all; `-1` in `s` keeps a size), the input resized to them, transformed.
fn transform(
    op: &mut Builder,
    x: Value,
    s: Option<Vec<SymInt>>,
    dim: Option<Vec<i64>>,
    norm: Option<&str>,
    kind: Transform,
) -> OpResult<Value> {
    let complex = op.info(x).complex;
    if complex && matches!(kind, Transform::Rfft | Transform::Ihfft) {
        bail!("rfft and ihfft take a real input");
    }
    let r = dims_of(op, x)?.len() - complex as usize;
    let s = s.map(|s| const_sizes(&s)).transpose()?;
    let dims = match (&dim, &s) {
        (Some(d), _) => axes(d, r)?,
        (None, Some(s)) if s.len() <= r => ((r - s.len()) as i64..r as i64).collect(),
        (None, Some(s)) => bail!("FFT: {} signal sizes `s` for a tensor of rank {r}", s.len()),
        (None, None) => (0..r as i64).collect(),
    };
    let mut v = x;
    if let Some(s) = &s {
        if s.len() != dims.len() {
            bail!("FFT: s and dim differ in length");
        }
        for (&a, &n) in dims.iter().zip(s) {
            if n != -1 {
                v = resize_axis(op, v, a, n)?;
            }
        }
    }
    let forward = matches!(kind, Transform::Fft | Transform::Rfft);
    let mode = norm_mode(norm, forward)?;
    match kind {
        Transform::Fft if !complex => r2c(op, v, &dims, mode, false),
        Transform::Fft | Transform::Ifft => c2c(op, v, &dims, mode, forward),
        Transform::Rfft => r2c(op, v, &dims, mode, true),
        Transform::Ihfft => {
            let v = r2c(op, v, &dims, mode, true)?;
            conj(op, v)
        }
    }
}

/// `_fft_c2c`: complex to complex over `dims`.
fn c2c(op: &mut Builder, x: Value, dims: &[i64], normalization: i64, forward: bool) -> OpResult<Value> {
    let x = complex_input(op, x)?;
    let shape = signal_dims(op, x)?;
    let ax = axes(dims, shape.len())?;
    let mut v = if forward { x } else { conj(op, x)? };
    for &a in &ax {
        v = dft(op, v, a, false);
    }
    v = set_complex(op, v, &shape, op.dtype(x));
    if !forward {
        v = conj(op, v)?;
    }
    let n = count(op, x, &shape, &ax);
    normalize(op, v, normalization, n)
}

/// `_fft_r2c`: real to complex over `dims` (one-sided on the last one).
fn r2c(op: &mut Builder, x: Value, dims: &[i64], normalization: i64, onesided: bool) -> OpResult<Value> {
    if op.info(x).complex {
        bail!("_fft_r2c needs a real input");
    }
    let shape = dims_of(op, x)?;
    let ax = axes(dims, shape.len())?;
    let Some((&last, rest)) = ax.split_last() else { return to_complex(op, x) };
    let n = count(op, x, &shape, &ax);
    let t = dtype_of(op, x)?;
    let t = if t.is_float() { t } else { DType::Float };
    let x = cast(op, x, t);
    let m1 = op.const_i64s(&[-1]);
    let mut v = op.Unsqueeze(x, m1);
    v = dft(op, v, last, onesided);
    for &a in rest {
        v = dft(op, v, a, false);
    }
    let mut out = shape.clone();
    if onesided {
        let Dim::Fixed(len) = shape[last as usize] else {
            bail!("a one-sided FFT needs a static size along dim {last}");
        };
        out[last as usize] = Dim::Fixed(len / 2 + 1);
    }
    let v = set_complex(op, v, &out, Some(t));
    normalize(op, v, normalization, n)
}

/// `_fft_c2r`: a one-sided Hermitian spectrum back to a real signal of `last_n` along the last dim.
fn c2r(op: &mut Builder, x: Value, dims: &[i64], normalization: i64, last_n: i64) -> OpResult<Value> {
    let x = complex_input(op, x)?;
    let shape = signal_shape(op, x)?;
    let ax = axes(dims, shape.len())?;
    let Some((&last, rest)) = ax.split_last() else { bail!("_fft_c2r needs at least one dim") };
    if last_n < 1 {
        bail!("_fft_c2r: invalid output size {last_n}");
    }
    let half = last_n / 2 + 1;
    if shape[last as usize] < half {
        bail!("_fft_c2r: the input has {} elements along dim {last}, fewer than {half}", shape[last as usize]);
    }
    // Inverse transforms as forward ones on the conjugate: Re(ifft(X)) = Re(fft(conj(X))).
    let mut z = conj(op, x)?;
    for &a in rest {
        z = dft(op, z, a, false);
    }
    z = set_complex(op, z, &fixed(&shape), op.dtype(x));
    z = resize_axis(op, z, last, half)?;
    // The full spectrum: z[k] for k < half, conj(z[n - k]) above.
    let tail_len = last_n - half;
    let full = if tail_len > 0 {
        let (s, e, a, st) =
            (op.const_i64s(&[tail_len]), op.const_i64s(&[0]), op.const_i64s(&[last]), op.const_i64s(&[-1]));
        let tail = op.Slice(z, s, e, Some(a), Some(st));
        let mut ts = shape.clone();
        ts[last as usize] = tail_len;
        let tail = set_complex(op, tail, &fixed(&ts), op.dtype(x));
        let tail = conj(op, tail)?;
        op.Concat(&[z, tail]).axis(last).out()
    } else {
        z
    };
    let y = dft(op, full, last, false);
    let (s, e, a) = (op.const_i64s(&[0]), op.const_i64s(&[1]), op.const_i64s(&[-1]));
    let re = op.Slice(y, s, e, Some(a), None);
    let re = op.Squeeze(re, Some(a));
    op.info_mut(re).dtype = op.dtype(x);
    let n: i64 = rest.iter().map(|&a| shape[a as usize]).product::<i64>() * last_n;
    normalize(op, re, normalization, Count::Fixed(n))
}

/// torch's `norm` string as a normalisation mode for a forward or inverse transform.
fn norm_mode(norm: Option<&str>, forward: bool) -> OpResult<i64> {
    Ok(match norm {
        None | Some("backward") => {
            if forward {
                0
            } else {
                2
            }
        }
        Some("forward") => {
            if forward {
                2
            } else {
                0
            }
        }
        Some("ortho") => 1,
        Some(n) => bail!("unknown FFT norm {n:?}"),
    })
}

fn const_sizes(s: &[SymInt]) -> OpResult<Vec<i64>> {
    s.iter()
        .map(|d| match d {
            SymInt::Const(c) => Ok(*c),
            SymInt::Dyn(_) => Err(OpError::new("FFT signal sizes must be static")),
        })
        .collect()
}

/// The dims and signal sizes of an n-dimensional c2r transform (torch's `canonicalize_fft_c2r_shape_and_dim_args`).
fn c2r_args(
    op: &mut Builder,
    x: Value,
    s: Option<Vec<SymInt>>,
    dim: Option<Vec<i64>>,
) -> OpResult<(Value, Vec<i64>, i64)> {
    let x = complex_input(op, x)?;
    let shape = signal_shape(op, x)?;
    let r = shape.len();
    let s = s.map(|s| const_sizes(&s)).transpose()?;
    let dims: Vec<i64> = match (&dim, &s) {
        (Some(d), _) => axes(d, r)?,
        (None, Some(s)) => {
            if s.len() > r {
                bail!("FFT: {} signal sizes `s` for a tensor of rank {r}", s.len());
            }
            ((r - s.len()) as i64..r as i64).collect()
        }
        (None, None) => (0..r as i64).collect(),
    };
    if dims.is_empty() {
        bail!("FFT needs at least one dim");
    }
    let mut sizes: Vec<i64> = match &s {
        Some(s) => {
            if s.len() != dims.len() {
                bail!("FFT: s and dim differ in length");
            }
            s.iter().zip(&dims).map(|(&n, &a)| if n == -1 { shape[a as usize] } else { n }).collect()
        }
        None => dims.iter().map(|&a| shape[a as usize]).collect(),
    };
    let k = dims.len() - 1;
    let last_n = match &s {
        Some(s) if s[k] != -1 => s[k],
        _ => 2 * (shape[dims[k] as usize] - 1),
    };
    sizes[k] = last_n / 2 + 1;
    let mut v = x;
    for (&a, &n) in dims.iter().zip(&sizes) {
        v = resize_axis(op, v, a, n)?;
    }
    Ok((v, dims, last_n))
}

/// `hfftn`: c2c over all but the last dim, then c2r of the conjugate.
fn hfftn(
    op: &mut Builder,
    x: Value,
    s: Option<Vec<SymInt>>,
    dim: Option<Vec<i64>>,
    norm: Option<&str>,
) -> OpResult<Value> {
    let mode = norm_mode(norm, true)?;
    let (v, dims, last_n) = c2r_args(op, x, s, dim)?;
    let (&last, rest) = dims.split_last().expect("dims are not empty");
    let mut v = v;
    if !rest.is_empty() {
        v = c2c(op, v, rest, mode, true)?;
    }
    let v = conj(op, v)?;
    c2r(op, v, &[last], mode, last_n)
}

/// `roll` of every axis in `dims` by `n/2` (fftshift) or `-(n/2)` (ifftshift).
fn shift(op: &mut Builder, x: Value, dim: Option<Vec<i64>>, inverse: bool) -> OpResult<Value> {
    let complex = op.info(x).complex;
    let mut shape = static_shape(op, x, "FFT")?;
    if complex {
        shape.pop();
    }
    let dims = match dim {
        Some(d) => axes(&d, shape.len())?,
        None => (0..shape.len() as i64).collect(),
    };
    let mut v = x;
    for a in dims {
        let n = shape[a as usize];
        if n <= 1 {
            continue;
        }
        // roll by s: cat(x[n - s:], x[:n - s]).
        let s = if inverse { n - n / 2 } else { n / 2 };
        let cut = n - s;
        if cut == 0 || cut == n {
            continue;
        }
        let (z, c, e, ax) = (op.const_i64s(&[0]), op.const_i64s(&[cut]), op.const_i64s(&[n]), op.const_i64s(&[a]));
        let tail = op.Slice(v, c, e, Some(ax), None);
        let head = op.Slice(v, z, c, Some(ax), None);
        v = op.Concat(&[tail, head]).axis(a).out();
    }
    op.info_mut(v).complex = complex;
    Ok(v)
}

translations! {
    /// _fft_c2c(Tensor self, SymInt[] dim, int normalization, bool forward) -> Tensor
    #[target("aten::_fft_c2c")]
    fn _fft_c2c(op, self_: Tensor, dim: Vec<SymInt>, normalization: i64, forward: bool) -> OpResult<Value> {
        let dims = const_sizes(&dim)?;
        c2c(op, self_, &dims, normalization, forward)
    }

    /// _fft_r2c(Tensor self, int[] dim, int normalization, bool onesided) -> Tensor
    #[target("aten::_fft_r2c")]
    fn _fft_r2c(op, self_: Tensor, dim: Vec<i64>, normalization: i64, onesided: bool) -> OpResult<Value> {
        r2c(op, self_, &dim, normalization, onesided)
    }

    /// _fft_c2r(Tensor self, int[] dim, int normalization, SymInt last_dim_size) -> Tensor
    #[target("aten::_fft_c2r")]
    fn _fft_c2r(op, self_: Tensor, dim: Vec<i64>, normalization: i64, last_dim_size: SymInt) -> OpResult<Value> {
        let SymInt::Const(n) = last_dim_size else { bail!("_fft_c2r needs a static output size") };
        c2r(op, self_, &dim, normalization, n)
    }

    /// fft_irfft(Tensor self, SymInt? n=None, int dim=-1, str? norm=None) -> Tensor
    #[target("aten::fft_irfft")]
    fn fft_irfft(
        op,
        self_: Tensor,
        n: Option<SymInt> = None,
        dim: i64 = -1,
        norm: Option<&str> = None,
    ) -> OpResult<Value> {
        let mode = norm_mode(norm, false)?;
        let s = n.map(|n| vec![n]);
        let (v, dims, last_n) = c2r_args(op, self_, s, Some(vec![dim]))?;
        c2r(op, v, &dims, mode, last_n)
    }

    /// fft_irfftn(Tensor self, SymInt[1]? s=None, int[1]? dim=None, str? norm=None) -> Tensor
    #[target("aten::fft_irfftn")]
    fn fft_irfftn(
        op,
        self_: Tensor,
        s: Option<Vec<SymInt>> = None,
        dim: Option<Vec<i64>> = None,
        norm: Option<&str> = None,
    ) -> OpResult<Value> {
        let mode = norm_mode(norm, false)?;
        let (v, dims, last_n) = c2r_args(op, self_, s, dim)?;
        c2r(op, v, &dims, mode, last_n)
    }

    /// fft_hfftn(Tensor self, SymInt[1]? s=None, int[1]? dim=None, str? norm=None) -> Tensor
    #[target("aten::fft_hfftn")]
    fn fft_hfftn(
        op,
        self_: Tensor,
        s: Option<Vec<SymInt>> = None,
        dim: Option<Vec<i64>> = None,
        norm: Option<&str> = None,
    ) -> OpResult<Value> {
        hfftn(op, self_, s, dim, norm)
    }

    /// fft_hfft2(Tensor self, SymInt[1]? s=None, int[1] dim=[-2, -1], str? norm=None) -> Tensor
    #[target("aten::fft_hfft2")]
    fn fft_hfft2(
        op,
        self_: Tensor,
        s: Option<Vec<SymInt>> = None,
        dim: Vec<i64> = vec![-2, -1],
        norm: Option<&str> = None,
    ) -> OpResult<Value> {
        hfftn(op, self_, s, Some(dim), norm)
    }

    /// fft_hfft(Tensor self, SymInt? n=None, int dim=-1, str? norm=None) -> Tensor
    #[target("aten::fft_hfft")]
    fn fft_hfft(
        op,
        self_: Tensor,
        n: Option<SymInt> = None,
        dim: i64 = -1,
        norm: Option<&str> = None,
    ) -> OpResult<Value> {
        hfftn(op, self_, n.map(|n| vec![n]), Some(vec![dim]), norm)
    }

    /// fft_irfft2(Tensor self, SymInt[1]? s=None, int[1] dim=[-2, -1], str? norm=None) -> Tensor
    #[target("aten::fft_irfft2")]
    fn fft_irfft2(
        op,
        self_: Tensor,
        s: Option<Vec<SymInt>> = None,
        dim: Vec<i64> = vec![-2, -1],
        norm: Option<&str> = None,
    ) -> OpResult<Value> {
        let mode = norm_mode(norm, false)?;
        let (v, dims, last_n) = c2r_args(op, self_, s, Some(dim))?;
        c2r(op, v, &dims, mode, last_n)
    }

    /// fft_fft(Tensor self, SymInt? n=None, int dim=-1, str? norm=None) -> Tensor
    #[target("aten::fft_fft")]
    fn fft_fft(
        op,
        self_: Tensor,
        n: Option<SymInt> = None,
        dim: i64 = -1,
        norm: Option<&str> = None,
    ) -> OpResult<Value> {
        transform(op, self_, n.map(|n| vec![n]), Some(vec![dim]), norm, Transform::Fft)
    }

    /// fft_ifft(Tensor self, SymInt? n=None, int dim=-1, str? norm=None) -> Tensor
    #[target("aten::fft_ifft")]
    fn fft_ifft(
        op,
        self_: Tensor,
        n: Option<SymInt> = None,
        dim: i64 = -1,
        norm: Option<&str> = None,
    ) -> OpResult<Value> {
        transform(op, self_, n.map(|n| vec![n]), Some(vec![dim]), norm, Transform::Ifft)
    }

    /// fft_rfft(Tensor self, SymInt? n=None, int dim=-1, str? norm=None) -> Tensor
    #[target("aten::fft_rfft")]
    fn fft_rfft(
        op,
        self_: Tensor,
        n: Option<SymInt> = None,
        dim: i64 = -1,
        norm: Option<&str> = None,
    ) -> OpResult<Value> {
        transform(op, self_, n.map(|n| vec![n]), Some(vec![dim]), norm, Transform::Rfft)
    }

    /// fft_ihfft(Tensor self, SymInt? n=None, int dim=-1, str? norm=None) -> Tensor
    #[target("aten::fft_ihfft")]
    fn fft_ihfft(
        op,
        self_: Tensor,
        n: Option<SymInt> = None,
        dim: i64 = -1,
        norm: Option<&str> = None,
    ) -> OpResult<Value> {
        transform(op, self_, n.map(|n| vec![n]), Some(vec![dim]), norm, Transform::Ihfft)
    }

    /// fft_fft2(Tensor self, SymInt[1]? s=None, int[1] dim=[-2, -1], str? norm=None) -> Tensor
    #[target("aten::fft_fft2")]
    fn fft_fft2(
        op,
        self_: Tensor,
        s: Option<Vec<SymInt>> = None,
        dim: Vec<i64> = vec![-2, -1],
        norm: Option<&str> = None,
    ) -> OpResult<Value> {
        transform(op, self_, s, Some(dim), norm, Transform::Fft)
    }

    /// fft_ifft2(Tensor self, SymInt[1]? s=None, int[1] dim=[-2, -1], str? norm=None) -> Tensor
    #[target("aten::fft_ifft2")]
    fn fft_ifft2(
        op,
        self_: Tensor,
        s: Option<Vec<SymInt>> = None,
        dim: Vec<i64> = vec![-2, -1],
        norm: Option<&str> = None,
    ) -> OpResult<Value> {
        transform(op, self_, s, Some(dim), norm, Transform::Ifft)
    }

    /// fft_rfft2(Tensor self, SymInt[1]? s=None, int[1] dim=[-2, -1], str? norm=None) -> Tensor
    #[target("aten::fft_rfft2")]
    fn fft_rfft2(
        op,
        self_: Tensor,
        s: Option<Vec<SymInt>> = None,
        dim: Vec<i64> = vec![-2, -1],
        norm: Option<&str> = None,
    ) -> OpResult<Value> {
        transform(op, self_, s, Some(dim), norm, Transform::Rfft)
    }

    /// fft_ihfft2(Tensor self, SymInt[1]? s=None, int[1] dim=[-2, -1], str? norm=None) -> Tensor
    #[target("aten::fft_ihfft2")]
    fn fft_ihfft2(
        op,
        self_: Tensor,
        s: Option<Vec<SymInt>> = None,
        dim: Vec<i64> = vec![-2, -1],
        norm: Option<&str> = None,
    ) -> OpResult<Value> {
        transform(op, self_, s, Some(dim), norm, Transform::Ihfft)
    }

    /// fft_fftn(Tensor self, SymInt[1]? s=None, int[1]? dim=None, str? norm=None) -> Tensor
    #[target("aten::fft_fftn")]
    fn fft_fftn(
        op,
        self_: Tensor,
        s: Option<Vec<SymInt>> = None,
        dim: Option<Vec<i64>> = None,
        norm: Option<&str> = None,
    ) -> OpResult<Value> {
        transform(op, self_, s, dim, norm, Transform::Fft)
    }

    /// fft_ifftn(Tensor self, SymInt[1]? s=None, int[1]? dim=None, str? norm=None) -> Tensor
    #[target("aten::fft_ifftn")]
    fn fft_ifftn(
        op,
        self_: Tensor,
        s: Option<Vec<SymInt>> = None,
        dim: Option<Vec<i64>> = None,
        norm: Option<&str> = None,
    ) -> OpResult<Value> {
        transform(op, self_, s, dim, norm, Transform::Ifft)
    }

    /// fft_rfftn(Tensor self, SymInt[1]? s=None, int[1]? dim=None, str? norm=None) -> Tensor
    #[target("aten::fft_rfftn")]
    fn fft_rfftn(
        op,
        self_: Tensor,
        s: Option<Vec<SymInt>> = None,
        dim: Option<Vec<i64>> = None,
        norm: Option<&str> = None,
    ) -> OpResult<Value> {
        transform(op, self_, s, dim, norm, Transform::Rfft)
    }

    /// fft_ihfftn(Tensor self, SymInt[1]? s=None, int[1]? dim=None, str? norm=None) -> Tensor
    #[target("aten::fft_ihfftn")]
    fn fft_ihfftn(
        op,
        self_: Tensor,
        s: Option<Vec<SymInt>> = None,
        dim: Option<Vec<i64>> = None,
        norm: Option<&str> = None,
    ) -> OpResult<Value> {
        transform(op, self_, s, dim, norm, Transform::Ihfft)
    }

    /// real(Tensor(a) self) -> Tensor(a)
    #[target("aten::real")]
    fn real(op, self_: Tensor) -> Value {
        // A real tensor is its own real part; a complex one's is entry 0 of its trailing [re, im] axis.
        if !op.info(self_).complex {
            return self_;
        }
        let t = op.dtype(self_);
        let (s, e, a) = (op.const_i64s(&[0]), op.const_i64s(&[1]), op.const_i64s(&[-1]));
        let re = op.Slice(self_, s, e, Some(a), None);
        let re = op.Squeeze(re, Some(a));
        op.info_mut(re).dtype = t;
        re
    }

    /// fft_fftshift(Tensor self, int[1]? dim=None) -> Tensor
    #[target("aten::fft_fftshift")]
    fn fft_fftshift(op, self_: Tensor, dim: Option<Vec<i64>> = None) -> OpResult<Value> {
        shift(op, self_, dim, false)
    }

    /// fft_ifftshift(Tensor self, int[1]? dim=None) -> Tensor
    #[target("aten::fft_ifftshift")]
    fn fft_ifftshift(op, self_: Tensor, dim: Option<Vec<i64>> = None) -> OpResult<Value> {
        shift(op, self_, dim, true)
    }

    /// stft(Tensor self, int n_fft, int? hop_length=None, int? win_length=None, Tensor? window=None,
    ///     bool normalized=False, bool? onesided=None, bool? return_complex=None, bool? align_to_window=None) -> Tensor
    #[target("aten::stft")]
    fn stft(
        op,
        self_: Tensor,
        n_fft: i64,
        hop_length: Option<i64> = None,
        win_length: Option<i64> = None,
        window: Option<Tensor> = None,
        normalized: bool = false,
        onesided: Option<bool> = None,
        return_complex: Option<bool> = None,
        align_to_window: Option<bool> = None,
    ) -> OpResult<Value> {
        // Frames x[f·hop + k] (k < n_fft), times the window (centred in n_fft), DFT along k;
        // the result is [batch?, freq, frames] complex.
        if op.info(self_).complex {
            bail!("stft of a complex input is not supported");
        }
        if align_to_window == Some(true) {
            bail!("stft: align_to_window is not supported");
        }
        let _ = return_complex;
        let shape = static_shape(op, self_, "FFT")?;
        let r = shape.len();
        if r != 1 && r != 2 {
            bail!("stft needs a 1-D or 2-D input");
        }
        let len = shape[r - 1];
        let hop = hop_length.unwrap_or(n_fft / 4);
        let win = win_length.unwrap_or(n_fft);
        if n_fft < 1 || n_fft > len || hop < 1 || win < 1 || win > n_fft {
            bail!("stft: invalid n_fft/hop_length/win_length for the input");
        }
        let onesided = onesided.unwrap_or(true);
        let t = match op.out_dtype(0) {
            Some(t) if t.is_float() => t,
            _ => DType::Float,
        };
        let frames = 1 + (len - n_fft) / hop;
        constant_elements(op, "stft's frame index", &[frames, n_fft])?;
        let idx: Vec<i64> = (0..frames).flat_map(|f| (0..n_fft).map(move |k| f * hop + k)).collect();
        let idx = TensorData::from_i64s(vec![frames, n_fft], &idx);
        let idx = op.constant_tensor(idx);
        let x = cast(op, self_, t);
        let fr = op.Gather(x, idx).axis(r as i64 - 1).out();
        let fr = match window {
            Some(w) => {
                let w = cast(op, w, t);
                let left = (n_fft - win) / 2;
                let w = if win < n_fft {
                    let pads = op.const_i64s(&[left, n_fft - win - left]);
                    op.Pad(w, pads, None, None).out()
                } else {
                    w
                };
                op.Mul(fr, w)
            }
            None if win < n_fft => {
                let left = (n_fft - win) / 2;
                let mut w = vec![0.0; n_fft as usize];
                for v in w.iter_mut().skip(left as usize).take(win as usize) {
                    *v = 1.0;
                }
                let Some(w) = TensorData::from_f64_as(t, vec![n_fft], &w) else {
                    bail!("stft of {t:?} is not supported")
                };
                let w = op.constant_tensor(w);
                op.Mul(fr, w)
            }
            None => fr,
        };
        let m1 = op.const_i64s(&[-1]);
        let fr = op.Unsqueeze(fr, m1);
        let axis = r as i64; // the n_fft axis of [batch?, frames, n_fft, 1]
        let y = dft(op, fr, axis, onesided);
        let perm: Vec<i64> = if r == 1 { vec![1, 0, 2] } else { vec![0, 2, 1, 3] };
        let y = op.Transpose(y).perm(&perm).out();
        let nf = if onesided { n_fft / 2 + 1 } else { n_fft };
        let mut out: Vec<i64> = shape[..r - 1].to_vec();
        out.extend([nf, frames]);
        let y = set_complex(op, y, &fixed(&out), Some(t));
        normalize(op, y, if normalized { 1 } else { 0 }, Count::Fixed(n_fft))
    }

    /// view_as_real(Tensor(a) self) -> Tensor(a)
    #[target("aten::view_as_real", "aten::view_as_real_copy")]
    fn view_as_real(op, self_: Tensor) -> OpResult<Value> {
        // The real view already is the data; only the complex mark goes.
        if !op.info(self_).complex {
            bail!("view_as_real needs a complex tensor");
        }
        let v = op.Identity(self_);
        let info = op.info(self_).clone();
        let out = op.info_mut(v);
        out.dtype = info.dtype;
        out.shape = info.shape;
        out.complex = false;
        Ok(v)
    }

    /// view_as_complex(Tensor(a) self) -> Tensor(a)
    #[target("aten::view_as_complex", "aten::view_as_complex_copy")]
    fn view_as_complex(op, self_: Tensor) -> OpResult<Value> {
        if op.info(self_).complex {
            bail!("view_as_complex needs a real tensor");
        }
        let v = op.Identity(self_);
        let info = op.info(self_).clone();
        let out = op.info_mut(v);
        out.dtype = info.dtype;
        out.shape = info.shape;
        out.complex = true;
        Ok(v)
    }
}
