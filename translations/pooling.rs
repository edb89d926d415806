//! Pooling: max pooling (with indices, and its backward), adaptive average / max pooling, average
//! pooling (and the backward of both averages), max unpooling.

use crate::translate::prelude::*;
use crate::translations;
use crate::translations::shared::window::{expand_param, pads_of};

/// The static sizes of the last `k` axes of `x`.
fn spatial_sizes(op: &Builder, x: Value, k: usize, what: &str) -> OpResult<Vec<i64>> {
    let r = rank_of(op, x)?;
    if r < k {
        bail!("{what}: input of rank {r} has fewer than {k} spatial axes");
    }
    static_tail(op, x, r - k, what)
}

/// The most windows adaptive max pooling writes one by one (17 nodes each); a 7×7 output has 49.
const MAX_WINDOWS: i64 = 1024;

/// The number of output windows of an adaptive pooling (saturating).
fn windows(output_size: &[i64]) -> i64 {
    output_size.iter().fold(1i64, |n, &o| n.saturating_mul(o.max(0)))
}

/// torch's adaptive pooling bins of `n` inputs into `o` outputs: `[floor(i·n/o), ceil((i+1)·n/o))`.
fn adaptive_bins(n: i64, o: i64) -> Vec<(i64, i64)> {
    (0..o).map(|i| ((i * n) / o, ((i + 1) * n + o - 1) / o)).collect()
}

/// Adaptive average pooling over the last `output_size.len()` axes: the window average is separable,
/// so each axis is multiplied by an `[n, o]` averaging matrix.
fn adaptive_avg(op: &mut Builder, x: Value, output_size: &[Option<i64>]) -> OpResult<Value> {
    let r = rank_of(op, x)?;
    let k = output_size.len();
    let sizes = match spatial_sizes(op, x, k, "adaptive_avg_pool") {
        Ok(sizes) => sizes,
        // Global pooling needs no input size: a segmentation model's `AdaptiveAvgPool2d(1)` on
        // dynamic height and width is one ReduceMean over the pooled axes.
        Err(_) if k <= r && output_size.iter().all(|&o| o == Some(1)) && dtype_of(op, x)?.is_float() => {
            let axes: Vec<i64> = (r - k..r).map(|a| a as i64).collect();
            let axes = op.const_i64s(&axes);
            return Ok(op.ReduceMean(x, Some(axes)).keepdims(1).out());
        }
        Err(e) => return Err(e),
    };
    let t = dtype_of(op, x)?;
    if !t.is_float() {
        bail!("adaptive_avg_pool needs a floating-point input");
    }
    if let Ok(mut shape) = static_shape(op, x, "adaptive_avg_pool") {
        if shape.contains(&0) {
            // An empty batch pools to an empty result (ONNX Runtime's MatMul rejects empty operands).
            for (d, o) in shape[r - k..].iter_mut().zip(output_size) {
                *d = o.unwrap_or(*d);
            }
            let s = op.const_i64s(&shape);
            let zero = constant_data(t, vec![1], &[0.0])?;
            return Ok(op.ConstantOfShape(s).value(zero).out());
        }
    }
    // Global pooling (every pooled axis down to 1, the common `AdaptiveAvgPool2d(1)`): one ReduceMean,
    // as torch.onnx emits, instead of two Transposes and a MatMul per axis.
    let pooled: Vec<i64> = sizes
        .iter()
        .zip(output_size)
        .enumerate()
        .filter(|(_, (&n, o))| o.unwrap_or(n) != n)
        .map(|(i, _)| (r - k + i) as i64)
        .collect();
    if !pooled.is_empty() && sizes.iter().zip(output_size).all(|(&n, o)| o.unwrap_or(n) == 1 || o.unwrap_or(n) == n) {
        let axes = op.const_i64s(&pooled);
        return Ok(op.ReduceMean(x, Some(axes)).keepdims(1).out());
    }
    // Every axis pooled in equal windows (each size a multiple of its output): one AveragePool, as
    // torch.onnx writes, whose sums are the kernels' (the matrices' products round otherwise, a
    // quantized model's last bit) in one pass over the input.
    let kernel: Vec<i64> = sizes
        .iter()
        .zip(output_size)
        .map(|(&n, o)| {
            let o = o.unwrap_or(n);
            if o > 0 && n % o == 0 {
                n / o
            } else {
                0
            }
        })
        .collect();
    if r == k + 2 && (1..=3).contains(&k) && kernel.iter().all(|&w| w > 0) && kernel.iter().any(|&w| w > 1) {
        return Ok(op.AveragePool(x).kernel_shape(&kernel).strides(&kernel).out());
    }
    let mut y = x;
    for (i, (&n, o)) in sizes.iter().zip(output_size).enumerate() {
        let o = o.unwrap_or(n);
        if o == n {
            continue;
        }
        if o <= 0 {
            bail!("adaptive_avg_pool output size must be positive");
        }
        let mut w = vec![0.0f64; constant_elements(op, "adaptive_avg_pool's averaging matrix", &[n, o])?];
        for (j, (s, e)) in adaptive_bins(n, o).into_iter().enumerate() {
            for row in s..e {
                w[(row * o) as usize + j] = 1.0 / (e - s) as f64;
            }
        }
        let w = op.constant_tensor(constant_data(t, vec![n, o], &w)?);
        y = multiply_along(op, y, r - k + i, r, w);
    }
    if y == x {
        return Ok(op.Identity(x));
    }
    Ok(y)
}

/// `y` (rank `r`) with its axis `axis` multiplied by the matrix `w` (`[size along axis, new size]`).
fn multiply_along(op: &mut Builder, y: Value, axis: usize, r: usize, w: Value) -> Value {
    if axis == r - 1 {
        return op.MatMul(y, w);
    }
    let mut perm: Vec<i64> = (0..r as i64).collect();
    perm.swap(axis, r - 1);
    let yt = op.Transpose(y).perm(&perm).out();
    let m = op.MatMul(yt, w);
    op.Transpose(m).perm(&perm).out()
}

/// The gradient of a separable average pooling over the last `windows.len()` axes of `self_`:
/// `windows[i]` lists, per output position along spatial axis `i`, the input range its window
/// averaged and the divisor, so output `j`'s gradient spreads as `1 / divisor` over `start..end`.
/// Each axis is one `[o, n]` matrix multiplied in (a window's divisor is a product of one length
/// per axis in torch's kernels, so the spreading is separable too).
fn spread_back(op: &mut Builder, grad: Value, self_: Value, windows: &[Vec<(i64, i64, f64)>]) -> OpResult<Value> {
    let t = float_result_dtype(op, grad)?;
    let k = windows.len();
    let r = rank_of(op, grad)?;
    let sizes = spatial_sizes(op, self_, k, "the pooling's input")?;
    let mut y = cast(op, grad, t);
    for (i, (axis_windows, &n)) in windows.iter().zip(&sizes).enumerate() {
        let o = axis_windows.len() as i64;
        let mut w = vec![0.0f64; constant_elements(op, "the pooling gradient's spreading matrix", &[o, n])?];
        for (j, &(start, end, divisor)) in axis_windows.iter().enumerate() {
            for col in start.max(0)..end.min(n) {
                w[j * n as usize + col as usize] = 1.0 / divisor;
            }
        }
        let w = op.constant_tensor(constant_data(t, vec![o, n], &w)?);
        y = multiply_along(op, y, r - k + i, r, w);
    }
    Ok(y)
}

/// Adaptive average pooling where input or output sizes are symbolic: per pooled axis, the
/// `[n, o]` averaging matrix is built in the graph (`1 / (end - start)` where `start <= row <
/// end`, torch's bins) and multiplied in, as the static form multiplies a constant one.
fn adaptive_avg_dynamic(op: &mut Builder, x: Value, output_size: &[SymInt]) -> OpResult<Value> {
    let r = rank_of(op, x)?;
    let k = output_size.len();
    let t = dtype_of(op, x)?;
    if !t.is_float() {
        bail!("adaptive_avg_pool needs a floating-point input");
    }
    if r < k {
        bail!("adaptive_avg_pool: input of rank {r} has fewer than {k} spatial axes");
    }
    let mut y = x;
    for (i, o) in output_size.iter().enumerate() {
        let axis = r - k + i;
        let n = dim_size(op, x, axis as i64);
        let (inside, start, end) = bin_mask(op, n, *o);
        let width = {
            let w = op.Sub(end, start);
            cast(op, w, t)
        };
        // The [o, n] averaging weights, transposed to the [n, o] matrix the axis is multiplied by.
        let weight = {
            let one_t = op.scalar(t, 1.0);
            let share = op.Div(one_t, width);
            let zero_t = op.scalar(t, 0.0);
            let w = op.Where(inside, share, zero_t);
            op.Transpose(w).perm(&[1, 0]).out()
        };
        y = if axis == r - 1 {
            op.MatMul(y, weight)
        } else {
            let mut perm: Vec<i64> = (0..r as i64).collect();
            perm.swap(axis, r - 1);
            let yt = op.Transpose(y).perm(&perm).out();
            let m = op.MatMul(yt, weight);
            op.Transpose(m).perm(&perm).out()
        };
    }
    Ok(y)
}

/// `x` with the last `k` axes flattened into one (leading axes kept).
fn flatten_tail(op: &mut Builder, x: Value, lead: usize) -> Value {
    let mut s = vec![0i64; lead];
    s.push(-1);
    let s = op.const_i64s(&s);
    op.Reshape(x, s).out()
}

/// `avg_pool` with `divisor_override`: the window sums (padding adds zeros) divided by `divisor`.
/// The sums are a depthwise convolution with a ones kernel; ceil_mode's extra windows get right
/// padding (zeros, which add nothing).
fn sum_pool_divided(
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
    let t = float_result_dtype(op, x)?;
    let k = kernel.len();
    let r = rank_of(op, x)?;
    if r < k + 1 {
        bail!("avg_pool: input of rank {r} has no channel axis before its {k} spatial axes");
    }
    // The ones kernel needs the channel count; the spatial sizes matter only for ceil_mode's extra
    // windows: without it the pads are the given ones, whatever the (symbolic) sizes.
    // A symbolic channel count: the planes are pooled as one batch of single-channel images.
    let c = match op.shape(x).and_then(|s| s.get(r - k - 1)).cloned() {
        Some(Dim::Fixed(c)) => Some(c),
        _ => None,
    };
    let shape = match static_shape(op, x, "avg_pool with divisor_override and ceil_mode") {
        Ok(shape) => Some(shape),
        Err(e) if ceil_mode => return Err(e),
        Err(_) => None,
    };
    let unbatched = r == k + 1;
    let zero = op.const_i64s(&[0]);
    let xv = cast(op, x, t);
    let xv = if unbatched { op.Unsqueeze(xv, zero) } else { xv };
    let mut pads_begin = Vec::new();
    let mut pads_end = Vec::new();
    for i in 0..k {
        let Some(shape) = &shape else {
            pads_begin.push(padding[i]);
            pads_end.push(padding[i]);
            continue;
        };
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
    let planes = c.unwrap_or(1);
    let mut wshape = vec![planes, 1];
    wshape.extend_from_slice(kernel);
    let n = constant_elements(op, "avg_pool's kernel", &wshape)?;
    let Some(w) = TensorData::from_f64_as(t, wshape, &vec![1.0; n]) else {
        bail!("avg_pool of {t:?} is not supported")
    };
    let w = op.constant_tensor(w);
    let pads: Vec<i64> = pads_begin.into_iter().chain(pads_end).collect();
    let y = match c {
        Some(c) => op.Conv(xv, w, None).kernel_shape(kernel).strides(strides).pads(&pads).group(c).out(),
        None => {
            let spatial = op.Shape(xv).start(2).out();
            let single = op.const_i64s(&[-1, 1]);
            let flat_shape = op.Concat(&[single, spatial]).axis(0).out();
            let flat = op.Reshape(xv, flat_shape).out();
            let pooled = op.Conv(flat, w, None).kernel_shape(kernel).strides(strides).pads(&pads).out();
            let lead = op.Shape(xv).end(2).out();
            let out_spatial = op.Shape(pooled).start(2).out();
            let back = op.Concat(&[lead, out_spatial]).axis(0).out();
            op.Reshape(pooled, back).out()
        }
    };
    let d = op.scalar(t, divisor as f64);
    let y = op.Div(y, d);
    Ok(if unbatched { op.Squeeze(y, Some(zero)) } else { y })
}

/// Fractional max pooling (torch's FractionalMaxPool2d/3d with its samples given: deterministic).
/// Along spatial dim d, window i starts at `int((i + u)·α) - int(u·α)` with
/// `α = (in - pool) / (out - 1)`, the last one at `in - pool`; `u` is the plane's sample for that
/// dim (2-D samples are `[W, H]`, 3-D ones `[T, H, W]`). The windows' elements are gathered from
/// the flattened plane and reduced; the indices are into the flattened spatial plane, the first
/// maximum's.
fn fractional_max_pool(
    op: &mut Builder,
    x: Value,
    kernel: &[i64],
    output: &[i64],
    samples: Value,
) -> OpResult<(Value, Value)> {
    let k = kernel.len();
    if output.len() != k || !(k == 2 || k == 3) {
        bail!("fractional_max_pool: {} kernel sizes and {} output sizes", k, output.len());
    }
    if output.iter().any(|&o| o < 1) {
        bail!("fractional_max_pool: output sizes must be positive, got {output:?}");
    }
    let t = dtype_of(op, x)?;
    if !t.is_float() {
        bail!("fractional_max_pool needs a floating-point input");
    }
    let r = rank_of(op, x)?;
    let unbatched = r == k + 1;
    let zero_axis = op.const_i64s(&[0]);
    let x = if unbatched { op.Unsqueeze(x, zero_axis) } else { x };
    let u = cast(op, samples, t);
    // An unbatched input is one plane set: torch reads the samples of batch 0.
    let u = if unbatched {
        let (s0, s1) = (op.const_i64s(&[0]), op.const_i64s(&[1]));
        op.Slice(u, s0, s1, Some(zero_axis), None)
    } else {
        u
    };
    // Per spatial dim: window starts [N, C, out] plus the offsets inside a window, [N, C, out, pool].
    let mut positions = Vec::new();
    for d in 0..k {
        let (o, p) = (output[d], kernel[d]);
        constant_elements(op, "fractional_max_pool's window starts", &[o])?;
        constant_elements(op, "fractional_max_pool's window offsets", &[p])?;
        let size = dim_size(op, x, (2 + d) as i64);
        let pool = op.const_i64s(&[p]);
        let last = op.Sub(size, pool);
        let col = if k == 2 { 1 - d } else { d } as i64;
        let ud = {
            let c0 = op.const_i64s(&[col]);
            let c1 = op.const_i64s(&[col + 1]);
            let axis = op.const_i64s(&[2]);
            op.Slice(u, c0, c1, Some(axis), None)
        };
        let lasts = {
            let shape = op.Shape(ud).out();
            op.Expand(last, shape)
        };
        let starts = if o > 1 {
            let span = cast(op, last, t);
            let steps = op.scalar(t, (o - 1) as f64);
            let alpha = op.Div(span, steps);
            let i: Vec<f64> = (0..o - 1).map(|i| i as f64).collect();
            let i = op.constant_tensor(constant_data(t, vec![1, 1, o - 1], &i)?);
            let shifted = op.Add(i, ud);
            let scaled = op.Mul(shifted, alpha);
            let from = cast(op, scaled, DType::Int64);
            let base = op.Mul(ud, alpha);
            let base = cast(op, base, DType::Int64);
            let firsts = op.Sub(from, base);
            op.Concat(&[firsts, lasts]).axis(2).out()
        } else {
            lasts
        };
        let offsets: Vec<i64> = (0..p).collect();
        let offsets = op.constant_tensor(TensorData::from_i64s(vec![1, 1, 1, p], &offsets));
        let axis = op.const_i64s(&[3]);
        let starts = op.Unsqueeze(starts, axis);
        positions.push(op.Add(starts, offsets));
    }
    // The flat index of window element (outs..., pools...) of each plane: Σ position_d · stride_d,
    // each dim's [N, C, o_d, p_d] placed on its own output and pool axes.
    let mut index: Option<Value> = None;
    for (d, pos) in positions.into_iter().enumerate() {
        // Unsqueeze wants its axes in the output's numbering: pos sits at (2 + d) and (2 + k + d).
        let out_axes: Vec<i64> =
            (2..(2 + 2 * k) as i64).filter(|&a| a != (2 + d) as i64 && a != (2 + k + d) as i64).collect();
        let out_axes = op.const_i64s(&out_axes);
        let placed = op.Unsqueeze(pos, out_axes);
        let stride = {
            let inner = op.Shape(x).start((3 + d) as i64).out();
            let one = op.const_i64s(&[1]);
            let all = op.Concat(&[one, inner]).axis(0).out();
            op.ReduceProd(all, None).keepdims(0).out()
        };
        let term = op.Mul(placed, stride);
        index = Some(match index {
            Some(acc) => op.Add(acc, term),
            None => term,
        });
    }
    let Some(index) = index else { bail!("fractional_max_pool: no spatial dims") };
    let flat_shape = op.const_i64s(&[0, 0, -1]);
    let plane = op.Reshape(x, flat_shape).out();
    let flat_index = op.Reshape(index, flat_shape).out();
    let values = op.GatherElements(plane, flat_index).axis(2).out();
    let mut window_shape = vec![0, 0];
    window_shape.extend_from_slice(output);
    window_shape.push(-1);
    let window_shape = op.const_i64s(&window_shape);
    let values = op.Reshape(values, window_shape).out();
    let index = op.Reshape(flat_index, window_shape).out();
    let last = op.const_i64s(&[-1]);
    let y = op.ReduceMax(values, Some(last)).keepdims(0).out();
    let arg = op.ArgMax(values).axis(-1).keepdims(1).select_last_index(0).out();
    let idx = op.GatherElements(index, arg).axis(-1).out();
    let idx = op.Squeeze(idx, Some(last));
    Ok(if unbatched { (op.Squeeze(y, Some(zero_axis)), op.Squeeze(idx, Some(zero_axis))) } else { (y, idx) })
}

/// torch's adaptive pooling bins of an axis of symbolic size `n` (a 1-element value) into `o`
/// outputs, computed in the graph: the `[o, n]` bool mask of bin b's rows
/// `floor(b·n/o) <= j < ceil((b+1)·n/o)`, and the bins' starts and ends, `[o, 1]`.
fn bin_mask(op: &mut Builder, n: Value, o: SymInt) -> (Value, Value, Value) {
    let (zero, one) = (op.scalar_i64(0), op.scalar_i64(1));
    let empty = op.const_i64s(&[]);
    let o0 = {
        let o = sym_value(op, o);
        op.Reshape(o, empty).out()
    };
    let n0 = op.Reshape(n, empty).out();
    let bins = {
        let b = op.Range(zero, o0, one);
        let col = op.const_i64s(&[-1, 1]);
        op.Reshape(b, col).out()
    };
    let start = {
        let bn = op.Mul(bins, n0);
        op.Div(bn, o0)
    };
    let end = {
        let next = op.Add(bins, one);
        let nn = op.Mul(next, n0);
        let up = op.Add(nn, o0);
        let up = op.Sub(up, one);
        op.Div(up, o0)
    };
    let cols = op.Range(zero, n0, one);
    let after = op.GreaterOrEqual(cols, start);
    let before = op.Less(cols, end);
    (op.And(after, before), start, end)
}

/// Adaptive max pooling over the last `output_size.len()` axes with symbolic sizes. Max is
/// separable: axis by axis from the innermost, each window's maximum (and first argmax) over a
/// masked `[.., o, n]` view; the inner axes' chosen indices are carried along, so the final index is
/// the first maximum in row-major order, into the flattened spatial volume, as torch's.
fn adaptive_max_dynamic(op: &mut Builder, x: Value, output_size: &[i64]) -> OpResult<(Value, Value)> {
    let r = rank_of(op, x)?;
    let k = output_size.len();
    let t = dtype_of(op, x)?;
    if !t.is_float() || r < k {
        bail!("adaptive_max_pool needs a floating-point input with {k} spatial axes");
    }
    if output_size.iter().any(|&o| o < 1) {
        bail!("adaptive_max_pool output sizes must be positive, got {output_size:?}");
    }
    let low = op.scalar(t, f64::NEG_INFINITY);
    let (mut vals, mut idx): (Value, Option<Value>) = (x, None);
    for i in (0..k).rev() {
        let axis = r - k + i;
        let mut perm: Vec<i64> = (0..r as i64).collect();
        perm.swap(axis, r - 1);
        let n = dim_size(op, x, axis as i64);
        let (mask, start, _) = bin_mask(op, n, SymInt::Const(output_size[i]));
        let last = op.const_i64s(&[-2]);
        let v = op.Transpose(vals).perm(&perm).out();
        let v = op.Unsqueeze(v, last);
        let masked = op.Where(mask, v, low);
        let m = {
            let minus1 = op.const_i64s(&[-1]);
            op.ReduceMax(masked, Some(minus1)).keepdims(0).out()
        };
        // A window of -inf only: ArgMax may land before it; its first element is torch's choice.
        let arg = op.ArgMax(masked).axis(-1).keepdims(1).select_last_index(0).out();
        let shape = op.Shape(masked).out();
        let mask_full = op.Expand(mask, shape);
        let inside = op.GatherElements(mask_full, arg).axis(-1).out();
        let start_full = {
            let s = op.Shape(arg).out();
            op.Expand(start, s)
        };
        let arg = op.Where(inside, arg, start_full);
        let minus1 = op.const_i64s(&[-1]);
        let chosen = match idx {
            None => op.Squeeze(arg, Some(minus1)),
            Some(inner) => {
                // The inner index of the chosen element, plus this axis's position times the inner volume.
                let inner = op.Transpose(inner).perm(&perm).out();
                let inner = op.Unsqueeze(inner, last);
                let inner = op.Expand(inner, shape);
                let picked = op.GatherElements(inner, arg).axis(-1).out();
                let picked = op.Squeeze(picked, Some(minus1));
                let volume = {
                    let dims = op.Shape(x).start((axis + 1) as i64).end(r as i64).out();
                    op.ReduceProd(dims, None).keepdims(0).out()
                };
                let pos = op.Squeeze(arg, Some(minus1));
                let outer = op.Mul(pos, volume);
                op.Add(outer, picked)
            }
        };
        vals = op.Transpose(m).perm(&perm).out();
        idx = Some(op.Transpose(chosen).perm(&perm).out());
    }
    let Some(idx) = idx else { bail!("adaptive_max_pool: no spatial axes") };
    Ok((vals, idx))
}

/// What a pooling writes: its pads and ceil_mode, and where the end padding was grown for
/// ceil_mode's windows (see [`ceil_windows`]), per axis how far past torch's padding it reaches
/// and the output size.
struct Windows {
    pads: Vec<i64>,
    ceil_mode: bool,
    grown: Option<(Vec<i64>, Vec<i64>)>,
}

/// The pads and ceil_mode to write for a pooling of `x` (its last `kernel.len()` axes).
///
/// With ceil_mode, a last window that would start in the end padding is dropped by torch and by
/// ONNX Runtime's kernels, but kept by ONNX's shape inference: where that happens, the model's
/// recorded sizes fail `onnx.checker` and the runtime's shape inference of the nodes after it.
/// There the same windows are written without ceil_mode, the end padding set to reach the last
/// window torch keeps; elsewhere (and on symbolic sizes) the pooling is written as torch calls it.
/// Also returns, per axis, how far the grown end padding reaches past torch's and the output
/// size (for an average that counts the padding).
fn ceil_windows(
    op: &Builder,
    x: Value,
    kernel: &[i64],
    strides: &[i64],
    pads: &[i64],
    dilations: &[i64],
    ceil_mode: bool,
) -> Windows {
    let k = kernel.len();
    let unchanged = Windows { pads: pads.to_vec(), ceil_mode, grown: None };
    let Ok(sizes) = spatial_sizes(op, x, k, "pooling") else { return unchanged };
    if !ceil_mode || pads.len() != 2 * k || strides.len() != k || dilations.len() != k {
        return unchanged;
    }
    let mut ends = Vec::with_capacity(k);
    let mut outs = Vec::with_capacity(k);
    let mut differs = false;
    for i in 0..k {
        let (l, s, pb, pe) = (sizes[i], strides[i], pads[i], pads[k + i]);
        let reach = dilations[i] * (kernel[i] - 1) + 1;
        if s < 1 || l + pb + pe < reach {
            return unchanged;
        }
        let onnx = (l + pb + pe - reach + s - 1) / s + 1;
        let torch = if (onnx - 1) * s >= l + pb { onnx - 1 } else { onnx };
        differs |= torch != onnx;
        ends.push((torch - 1) * s + reach - l - pb);
        outs.push(torch);
    }
    if !differs || ends.iter().any(|&e| e < 0) {
        return unchanged;
    }
    let beyond = ends.iter().zip(&pads[k..]).map(|(&e, &pe)| e - pe).collect();
    Windows { pads: pads[..k].iter().chain(&ends).copied().collect(), ceil_mode: false, grown: Some((beyond, outs)) }
}

translations! {
    /// adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor
    #[target(
        "aten::adaptive_avg_pool2d",
        "aten::_adaptive_avg_pool2d",
        "aten::adaptive_avg_pool1d",
        "aten::adaptive_avg_pool3d",
        "aten::_adaptive_avg_pool3d"
    )]
    fn adaptive_avg_pool2d(op, self_: Tensor, output_size: Vec<SymInt>) -> OpResult<Value> {
        let k = output_size.len();
        let fixed: Option<Vec<Option<i64>>> = output_size
            .iter()
            .map(|s| match s {
                SymInt::Const(c) => Some(Some(*c)),
                SymInt::Dyn(_) => None,
            })
            .collect();
        let static_input = spatial_sizes(op, self_, k, "adaptive_avg_pool").is_ok();
        match fixed {
            Some(sizes) if static_input || sizes.iter().all(|&o| o == Some(1)) => adaptive_avg(op, self_, &sizes),
            _ => adaptive_avg_dynamic(op, self_, &output_size),
        }
    }

    /// adaptive_max_pool2d(Tensor self, int[2] output_size) -> (Tensor, Tensor)
    #[target("aten::adaptive_max_pool2d", "aten::adaptive_max_pool1d")]
    fn adaptive_max_pool2d(op, self_: Tensor, output_size: Vec<i64>) -> OpResult<(Value, Value)> {
        // Window by window: max and argmax of the flattened window, mapped back to an index into the
        // flattened spatial plane (torch's indices).
        let r = rank_of(op, self_)?;
        let k = output_size.len();
        if k != 1 && k != 2 {
            bail!("adaptive_max_pool over {k} axes is not supported");
        }
        let Ok(sizes) = spatial_sizes(op, self_, k, "adaptive_max_pool") else {
            return adaptive_max_dynamic(op, self_, &output_size);
        };
        // Window by window is for the few windows of real models; more take the masked form,
        // whose nodes do not grow with the output.
        if output_size.iter().any(|&o| o < 1) || windows(&output_size) > MAX_WINDOWS {
            return adaptive_max_dynamic(op, self_, &output_size);
        }
        let lead = r - k;
        let w_in = if k == 2 { sizes[1] } else { 1 };
        let (oh, ow) = if k == 2 { (output_size[0], output_size[1]) } else { (1, output_size[0]) };
        let (nh, nw) = if k == 2 { (sizes[0], sizes[1]) } else { (1, sizes[0]) };
        let mut rows_v = Vec::new();
        let mut rows_i = Vec::new();
        for (hs, he) in adaptive_bins(nh, oh) {
            let mut vs = Vec::new();
            let mut is = Vec::new();
            for (ws, we) in adaptive_bins(nw, ow) {
                let (win, ww) = if k == 2 {
                    let st = op.const_i64s(&[hs, ws]);
                    let en = op.const_i64s(&[he, we]);
                    let ax = op.const_i64s(&[-2, -1]);
                    (op.Slice(self_, st, en, Some(ax), None), we - ws)
                } else {
                    let st = op.const_i64s(&[ws]);
                    let en = op.const_i64s(&[we]);
                    let ax = op.const_i64s(&[-1]);
                    (op.Slice(self_, st, en, Some(ax), None), we - ws)
                };
                let flat = flatten_tail(op, win, lead);
                let last = op.const_i64s(&[-1]);
                vs.push(op.ReduceMax(flat, Some(last)).keepdims(1).out());
                let a = op.ArgMax(flat).axis(-1).keepdims(1).select_last_index(0).out();
                let wwv = op.scalar_i64(ww);
                let h = op.Div(a, wwv);
                let w = op.Mod(a, wwv).out();
                let hoff = op.scalar_i64(hs);
                let h = op.Add(h, hoff);
                let win_w = op.scalar_i64(w_in);
                let h = op.Mul(h, win_w);
                let woff = op.scalar_i64(ws);
                let w = op.Add(w, woff);
                is.push(op.Add(h, w));
            }
            rows_v.push(op.Concat(&vs).axis(-1).out());
            rows_i.push(op.Concat(&is).axis(-1).out());
        }
        if k == 1 {
            return Ok((rows_v[0], rows_i[0]));
        }
        let ax = op.const_i64s(&[-2]);
        let rows_v: Vec<Value> = rows_v.into_iter().map(|v| op.Unsqueeze(v, ax)).collect();
        let rows_i: Vec<Value> = rows_i.into_iter().map(|v| op.Unsqueeze(v, ax)).collect();
        let v = op.Concat(&rows_v).axis(-2).out();
        let i = op.Concat(&rows_i).axis(-2).out();
        Ok((v, i))
    }

    /// adaptive_max_pool3d(Tensor self, int[3] output_size) -> (Tensor, Tensor)
    #[target("aten::adaptive_max_pool3d")]
    fn adaptive_max_pool3d(op, self_: Tensor, output_size: Vec<i64>) -> OpResult<(Value, Value)> {
        // Window by window: max and argmax of the flattened window, mapped back to an index into the
        // flattened D·H·W volume (torch's indices); windows concatenated along W, then H, then D.
        let r = rank_of(op, self_)?;
        if output_size.len() != 3 {
            bail!("adaptive_max_pool3d needs 3 output sizes, got {}", output_size.len());
        }
        let Ok(sizes) = spatial_sizes(op, self_, 3, "adaptive_max_pool3d") else {
            return adaptive_max_dynamic(op, self_, &output_size);
        };
        if output_size.iter().any(|&o| o < 1) || windows(&output_size) > MAX_WINDOWS {
            return adaptive_max_dynamic(op, self_, &output_size);
        }
        let lead = r - 3;
        let (nd, nh, nw) = (sizes[0], sizes[1], sizes[2]);
        let mut planes = (Vec::new(), Vec::new());
        for (ds, de) in adaptive_bins(nd, output_size[0]) {
            let mut rows = (Vec::new(), Vec::new());
            for (hs, he) in adaptive_bins(nh, output_size[1]) {
                let mut cells = (Vec::new(), Vec::new());
                for (ws, we) in adaptive_bins(nw, output_size[2]) {
                    let st = op.const_i64s(&[ds, hs, ws]);
                    let en = op.const_i64s(&[de, he, we]);
                    let ax = op.const_i64s(&[-3, -2, -1]);
                    let win = op.Slice(self_, st, en, Some(ax), None);
                    let flat = flatten_tail(op, win, lead);
                    let last = op.const_i64s(&[-1]);
                    cells.0.push(op.ReduceMax(flat, Some(last)).keepdims(1).out());
                    let a = op.ArgMax(flat).axis(-1).keepdims(1).select_last_index(0).out();
                    // a = (d·wh + h)·ww + w inside the window of wh × ww rows.
                    let (wh, ww) = (op.scalar_i64(he - hs), op.scalar_i64(we - ws));
                    let w = op.Mod(a, ww).out();
                    let dh = op.Div(a, ww);
                    let h = op.Mod(dh, wh).out();
                    let d = op.Div(dh, wh);
                    let (doff, hoff, woff) = (op.scalar_i64(ds), op.scalar_i64(hs), op.scalar_i64(ws));
                    let d = op.Add(d, doff);
                    let h = op.Add(h, hoff);
                    let w = op.Add(w, woff);
                    let (vh, vw) = (op.scalar_i64(nh), op.scalar_i64(nw));
                    let i = op.Mul(d, vh);
                    let i = op.Add(i, h);
                    let i = op.Mul(i, vw);
                    cells.1.push(op.Add(i, w));
                }
                rows.0.push(op.Concat(&cells.0).axis(-1).out());
                rows.1.push(op.Concat(&cells.1).axis(-1).out());
            }
            let ax = op.const_i64s(&[-2]);
            let vs: Vec<Value> = rows.0.into_iter().map(|v| op.Unsqueeze(v, ax)).collect();
            let is: Vec<Value> = rows.1.into_iter().map(|v| op.Unsqueeze(v, ax)).collect();
            planes.0.push(op.Concat(&vs).axis(-2).out());
            planes.1.push(op.Concat(&is).axis(-2).out());
        }
        let ax = op.const_i64s(&[-3]);
        let vs: Vec<Value> = planes.0.into_iter().map(|v| op.Unsqueeze(v, ax)).collect();
        let is: Vec<Value> = planes.1.into_iter().map(|v| op.Unsqueeze(v, ax)).collect();
        Ok((op.Concat(&vs).axis(-3).out(), op.Concat(&is).axis(-3).out()))
    }

    /// avg_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, bool ceil_mode=False,
    ///     bool count_include_pad=True, int? divisor_override=None) -> Tensor
    #[target("aten::avg_pool2d", "aten::avg_pool1d", "aten::avg_pool3d")]
    fn avg_pool2d(
        op,
        self_: Tensor,
        kernel_size: Vec<i64>,
        stride: Vec<i64> = vec![],
        padding: Vec<i64> = vec![0],
        ceil_mode: bool = false,
        count_include_pad: bool = true,
        divisor_override: Option<i64> = None,
    ) -> OpResult<Value> {
        let k = kernel_size.len();
        let kernel = expand_param(&kernel_size, k, 1)?;
        let strides = if stride.is_empty() { kernel.clone() } else { expand_param(&stride, k, 1)? };
        if let Some(d) = divisor_override {
            let padding = expand_param(&padding, k, 0)?;
            return sum_pool_divided(op, self_, &kernel, &strides, &padding, ceil_mode, d);
        }
        let unbatched = rank_of(op, self_)? == k + 1;
        let zero = if unbatched { Some(op.const_i64s(&[0])) } else { None };
        let x = match zero {
            Some(axis) => op.Unsqueeze(self_, axis),
            None => self_,
        };
        let ones = vec![1; k];
        let Windows { pads, ceil_mode, grown } =
            ceil_windows(op, x, &kernel, &strides, &pads_of(&padding, k)?, &ones, ceil_mode);
        let y = op
            .AveragePool(x)
            .kernel_shape(&kernel)
            .strides(&strides)
            .pads(&pads)
            .ceil_mode(ceil_mode as i64)
            .count_include_pad(count_include_pad as i64)
            .out();
        let y = match grown {
            // The grown end padding counts in the last windows' divisors, torch's does not:
            // scale those windows by their length over torch's, axis by axis.
            Some((beyond, outs)) if count_include_pad && beyond.iter().any(|&b| b > 0) => {
                let mut scale = vec![1.0f64; constant_elements(op, "avg_pool's divisor correction", &outs)?];
                for (i, (&o, &b)) in outs.iter().zip(&beyond).enumerate() {
                    let stride_after: usize = outs[i + 1..].iter().product::<i64>() as usize;
                    for (pos, f) in scale.iter_mut().enumerate() {
                        let j = (pos / stride_after) as i64 % o;
                        // Window j ends j·s - p + k; past the padding torch had, by `over`.
                        let end = j * strides[i] + kernel[i];
                        let last = (o - 1) * strides[i] + kernel[i];
                        let over = (b - (last - end)).max(0);
                        *f *= kernel[i] as f64 / (kernel[i] - over) as f64;
                    }
                }
                let t = dtype_of(op, x)?;
                let scale = op.constant_tensor(constant_data(t, outs, &scale)?);
                op.Mul(y, scale)
            }
            _ => y,
        };
        Ok(match zero {
            Some(axis) => op.Squeeze(y, Some(axis)),
            None => y,
        })
    }

    /// max_pool2d_with_indices(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, int[2] dilation=1,
    ///     bool ceil_mode=False) -> (Tensor, Tensor)
    #[target("aten::max_pool2d_with_indices", "aten::max_pool3d_with_indices", "aten::max_pool1d_with_indices")]
    fn max_pool2d_with_indices(
        op,
        self_: Tensor,
        kernel_size: Vec<i64>,
        stride: Vec<i64> = vec![],
        padding: Vec<i64> = vec![0],
        dilation: Vec<i64> = vec![1],
        ceil_mode: bool = false,
    ) -> OpResult<(Value, Value)> {
        let k = kernel_size.len();
        let kernel = expand_param(&kernel_size, k, 1)?;
        let strides = if stride.is_empty() { kernel.clone() } else { expand_param(&stride, k, 1)? };
        let unbatched = rank_of(op, self_)? == k + 1;
        let zero = op.const_i64s(&[0]);
        let x = if unbatched { op.Unsqueeze(self_, zero) } else { self_ };
        let dilations = expand_param(&dilation, k, 1)?;
        let Windows { pads, ceil_mode, .. } =
            ceil_windows(op, x, &kernel, &strides, &pads_of(&padding, k)?, &dilations, ceil_mode);
        // ONNX indices count over the whole tensor; torch's count within each (N, C) plane.
        let [y, idx] = op
            .MaxPool(x)
            .kernel_shape(&kernel)
            .strides(&strides)
            .pads(&pads)
            .dilations(&dilations)
            .ceil_mode(ceil_mode as i64)
            .outs::<2>();
        let spatial = op.Shape(self_).start(-(k as i64)).out();
        let plane = op.ReduceProd(spatial, None).keepdims(1).out();
        let idx = op.Mod(idx, plane).out();
        if unbatched {
            return Ok((op.Squeeze(y, Some(zero)), op.Squeeze(idx, Some(zero))));
        }
        Ok((y, idx))
    }

    /// max_unpool2d(Tensor self, Tensor indices, SymInt[2] output_size) -> Tensor
    #[target("aten::max_unpool2d", "aten::max_unpool3d")]
    fn max_unpool2d(
        op,
        self_: Tensor,
        indices: Tensor,
        output_size: Vec<SymInt>,
        // (max_unpool3d) The indices say where each value goes; stride and padding add nothing.
        _stride: Ignored,
        _padding: Ignored,
    ) -> OpResult<Value> {
        // Scatter each value to its index within its flattened (N, C) plane.
        let r = rank_of(op, self_)?;
        let k = output_size.len();
        if r < k + 1 {
            bail!("max_unpool: input of rank {r} for {k} spatial axes");
        }
        let lead = r - k;
        let t = dtype_of(op, self_)?;
        let x = flatten_tail(op, self_, lead);
        let idx = cast(op, indices, DType::Int64);
        let idx = flatten_tail(op, idx, lead);
        let lead_shape = op.Shape(self_).start(0).end(lead as i64).out();
        let out_sizes = shape_vec(op, &output_size);
        let plane = op.ReduceProd(out_sizes, None).keepdims(1).out();
        let flat_shape = op.Concat(&[lead_shape, plane]).axis(0).out();
        let zero = op.scalar(t, 0.0);
        let zeros = op.Expand(zero, flat_shape);
        let y = op.ScatterElements(zeros, idx, x).axis(lead as i64).out();
        let out_shape = op.Concat(&[lead_shape, out_sizes]).axis(0).out();
        Ok(op.Reshape(y, out_shape).out())
    }

    /// max_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, int[2] dilation=1,
    ///     bool ceil_mode=False) -> Tensor
    #[target("aten::max_pool2d", "aten::max_pool1d", "aten::max_pool3d")]
    fn max_pool2d(
        op,
        self_: Tensor,
        kernel_size: Vec<i64>,
        stride: Vec<i64> = vec![],
        padding: Vec<i64> = vec![0],
        dilation: Vec<i64> = vec![1],
        ceil_mode: bool = false,
    ) -> OpResult<Value> {
        let k = kernel_size.len();
        let strides = if stride.is_empty() { kernel_size.clone() } else { expand_param(&stride, k, 1)? };
        // An unbatched input ([C, *spatial]) gets ONNX's batch axis for the pooling.
        let unbatched = rank_of(op, self_)? == k + 1;
        let zero = op.const_i64s(&[0]);
        let x = if unbatched { op.Unsqueeze(self_, zero) } else { self_ };
        let dilations = expand_param(&dilation, k, 1)?;
        let Windows { pads, ceil_mode, .. } =
            ceil_windows(op, x, &kernel_size, &strides, &pads_of(&padding, k)?, &dilations, ceil_mode);
        let y = op
            .MaxPool(x)
            .kernel_shape(&kernel_size)
            .strides(&strides)
            .pads(&pads)
            .dilations(&dilations)
            .ceil_mode(ceil_mode as i64)
            .out();
        Ok(if unbatched { op.Squeeze(y, Some(zero)) } else { y })
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
        let t = float_result_dtype(op, grad_output)?;
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
        let zeros = op.Expand(z, flat);
        let g = cast(op, grad_output, t);
        let g = op.Reshape(g, flat_m1).out();
        let idx = cast(op, indices, DType::Int64);
        let idx = op.Reshape(idx, flat_m1).out();
        let out = op.ScatterElements(zeros, idx, g).axis(r as i64 - 2).reduction("add").out();
        Ok(op.Reshape(out, s).out())
    }

    /// _adaptive_avg_pool2d_backward(Tensor grad_output, Tensor self) -> Tensor
    #[target("aten::_adaptive_avg_pool2d_backward")]
    fn _adaptive_avg_pool2d_backward(op, grad_output: Tensor, self_: Tensor) -> OpResult<Value> {
        let outs = spatial_sizes(op, grad_output, 2, "_adaptive_avg_pool2d_backward's gradient")?;
        let ins = spatial_sizes(op, self_, 2, "_adaptive_avg_pool2d_backward")?;
        let windows: Vec<Vec<(i64, i64, f64)>> = ins
            .iter()
            .zip(&outs)
            .map(|(&n, &o)| adaptive_bins(n, o).into_iter().map(|(s, e)| (s, e, (e - s) as f64)).collect())
            .collect();
        spread_back(op, grad_output, self_, &windows)
    }

    /// avg_pool2d_backward(Tensor grad_output, Tensor self, int[2] kernel_size, int[2] stride, int[2] padding,
    ///     bool ceil_mode, bool count_include_pad, int? divisor_override) -> Tensor
    #[target("aten::avg_pool2d_backward")]
    fn avg_pool2d_backward(
        op,
        grad_output: Tensor,
        self_: Tensor,
        kernel_size: Vec<i64>,
        stride: Vec<i64>,
        padding: Vec<i64>,
        _ceil_mode: Ignored, // the gradient's own sizes say how many windows there are
        count_include_pad: bool,
        divisor_override: Option<i64>,
    ) -> OpResult<Value> {
        // torch's kernel: window j of an axis starts at j·s - p and ends at min(start + k, n + p);
        // it averages the inputs in both the window and the input, dividing by the window's length
        // with padding (count_include_pad), without it, or by divisor_override for the whole window.
        let kernel = expand_param(&kernel_size, 2, 1)?;
        let strides = if stride.is_empty() { kernel.clone() } else { expand_param(&stride, 2, 1)? };
        let padding = expand_param(&padding, 2, 0)?;
        let outs = spatial_sizes(op, grad_output, 2, "avg_pool2d_backward's gradient")?;
        let ins = spatial_sizes(op, self_, 2, "avg_pool2d_backward")?;
        let mut windows = Vec::new();
        for i in 0..2 {
            let (n, k, s, p) = (ins[i], kernel[i], strides[i], padding[i]);
            let axis: Vec<(i64, i64, f64)> = (0..outs[i])
                .map(|j| {
                    let start = j * s - p;
                    let end = (start + k).min(n + p);
                    let len = if count_include_pad { end - start } else { end.min(n) - start.max(0) };
                    (start, end, len as f64)
                })
                .collect();
            windows.push(axis);
        }
        if let Some(d) = divisor_override {
            if d == 0 {
                bail!("avg_pool2d_backward: divisor_override is 0");
            }
            // The override divides the whole window once: the first axis carries it.
            for w in &mut windows[0] {
                w.2 = d as f64;
            }
            for w in &mut windows[1] {
                w.2 = 1.0;
            }
        }
        spread_back(op, grad_output, self_, &windows)
    }

    /// fractional_max_pool2d(Tensor self, int[2] kernel_size, int[2] output_size, Tensor random_samples) ->
    ///     (Tensor, Tensor)
    #[target("aten::fractional_max_pool2d", "aten::fractional_max_pool3d")]
    fn fractional_max_pool2d(
        op,
        self_: Tensor,
        kernel_size: Vec<i64>,
        output_size: Vec<i64>,
        random_samples: Tensor,
    ) -> OpResult<(Value, Value)> {
        fractional_max_pool(op, self_, &kernel_size, &output_size, random_samples)
    }
}
