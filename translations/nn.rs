//! Neural-network layers: linear and bilinear, convolution, normalisation, upsampling, grid
//! sampling, attention, dropout.

use crate::translate::prelude::*;
use crate::translations;
use crate::translations::shared::window::{expand_param, pads_of};

/// One attention call, whichever overload made it (`scaled_dot_product_attention` or one of the
/// `_scaled_dot_product_*` kernels): what every lowering of it reads.
struct Sdpa {
    query: Value,
    key: Value,
    value: Value,
    /// Boolean (true: the query attends to the key) or additive (added to the logits).
    mask: Option<Value>,
    is_causal: bool,
    scale: Option<f64>,
    /// `enable_gqa`: key and value have fewer heads than the query, each shared by a group.
    gqa: bool,
}

/// The attention output: one ONNX `Attention` node where the opset has it and it computes what
/// torch does (`onnx_attention`), else Q·Kᵀ → +mask → Softmax → ·V with a zero for every query
/// the mask hides from all keys.
fn attention(op: &mut Builder, a: &Sdpa) -> OpResult<Value> {
    if let Some(y) = onnx_attention(op, a)? {
        return Ok(y);
    }
    let (scores, hidden) = attention_logits(op, a)?;
    let w = op.Softmax(scores).axis(-1).out();
    let (_, value) = grouped_kv(op, a);
    let y = op.MatMul(w, value);
    Ok(match hidden {
        Some(rows) => {
            let rows = rows_like(op, rows, a);
            op.Where(rows, 0.0, y)
        }
        None => y,
    })
}

/// The hidden-rows flag (`[..., L, 1]`) expanded to the output's static sizes (heads, head size):
/// ONNX Runtime's `Where` is three times slower broadcasting along the last axis than elementwise,
/// and the expansion, read from the flag and constants alone, is one for all layers after CSE.
fn rows_like(op: &mut Builder, rows: Value, a: &Sdpa) -> Value {
    let (Some(q), Some(v)) = (op.shape(a.query), op.shape(a.value)) else { return rows };
    // The output is [..., L, Ev]: the query's leading dims and the value's head size.
    let mut sizes: Vec<i64> =
        q[..q.len().saturating_sub(2)].iter().map(|d| if let Dim::Fixed(n) = d { *n } else { 1 }).collect();
    sizes.push(1);
    sizes.push(if let Some(Dim::Fixed(n)) = v.last() { *n } else { 1 });
    if sizes.iter().all(|&n| n == 1) {
        return rows;
    }
    let sizes = op.const_i64s(&sizes);
    op.Expand(rows, sizes)
}

/// The attention output and the log of each query's softmax denominator (`[..., L]`, or
/// `[..., L, 1]` with `keep_lse_dim`), as the fused kernels return them.
fn attention_and_logsumexp(op: &mut Builder, a: &Sdpa, keep_lse_dim: bool) -> OpResult<(Value, Value)> {
    let y = attention(op, a)?;
    // The logits again, for the log-sum-exp alone: unread (the usual case), they are removed with it.
    let (scores, hidden) = attention_logits(op, a)?;
    let axes = op.const_i64s(&[-1]);
    let lse = op.ReduceLogSumExp(scores, Some(axes)).keepdims(keep_lse_dim as i64).out();
    let Some(rows) = hidden else { return Ok((y, lse)) };
    // A query hidden from every key has a log-sum-exp of 0 in torch's CPU flash kernel (not -inf).
    let rows = if keep_lse_dim { rows } else { op.Squeeze(rows, Some(axes)) };
    Ok((y, op.Where(rows, 0.0, lse)))
}

/// Key and value with as many heads as the query: with `enable_gqa`, each of the `Hkv` heads
/// repeated `Hq / Hkv` times in a row, as `repeat_interleave` does.
fn grouped_kv(op: &mut Builder, a: &Sdpa) -> (Value, Value) {
    if a.gqa {
        (repeat_heads(op, a.key, a.query), repeat_heads(op, a.value, a.query))
    } else {
        (a.key, a.value)
    }
}

/// `scale · Q·Kᵀ + bias` and, when a mask is given, the queries it hides from every key
/// (`[..., L, 1]`, true where torch's kernels give a row of zeros and a plain softmax NaN).
fn attention_logits(op: &mut Builder, a: &Sdpa) -> OpResult<(Value, Option<Value>)> {
    let t = dtype_of(op, a.query)?;
    let r = rank_of(op, a.query)?;
    if r < 2 {
        bail!("attention needs query of rank 2 or more, got rank {r}");
    }
    let scale = match a.scale {
        Some(s) => op.scalar(t, s),
        None => {
            let e = op.Shape(a.query).start(-1).out();
            let e = cast(op, e, t);
            let s = op.Sqrt(e);
            let one = op.scalar(t, 1.0);
            let inv = op.Div(one, s);
            let axes = op.const_i64s(&[0]);
            op.Squeeze(inv, Some(axes))
        }
    };
    // Repeating the heads keeps the rank (the repeated key records none).
    let kr = rank_of(op, a.key)?;
    let (key, _) = grouped_kv(op, a);
    let mut perm: Vec<i64> = (0..kr as i64).collect();
    perm.swap(kr - 2, kr - 1);
    let kt = op.Transpose(key).perm(&perm).out();
    let qk = op.MatMul(a.query, kt);
    let scores = op.Mul(qk, scale);
    let bias = attention_bias(op, a, t)?;
    let hidden = match (a.mask, bias) {
        (Some(_), Some(b)) => Some(hidden_rows(op, b)),
        _ => None,
    };
    Ok((bias.map_or(scores, |b| op.Add(scores, b)), hidden))
}

/// The additive bias of the logits: 0 where a key is attended and -inf where the causal mask or a
/// boolean `attn_mask` hides it (as torch's math kernel converts them), plus a float mask as it is.
/// It is computed from the masks alone, so the layers that read one mask share it after CSE, and
/// one broadcast `Add` replaces a `Where` on every layer's logits.
fn attention_bias(op: &mut Builder, a: &Sdpa, t: DType) -> OpResult<Option<Value>> {
    let causal = if a.is_causal {
        // Keep j <= i, as torch's tril(diagonal=0) of an L×S matrix of ones (top-left aligned).
        let l = op.Shape(a.query).start(-2).end(-1).out();
        let s = op.Shape(a.key).start(-2).end(-1).out();
        let ls = op.Concat(&[l, s]).axis(0).out();
        let ones = op.ConstantOfShape(ls).value(constant_data(DType::Bool, vec![1], &[1.0])?).out();
        let ones = cast(op, ones, DType::Int64);
        let tri = op.Trilu(ones, None).upper(0).out();
        let keep = cast(op, tri, DType::Bool);
        Some(additive_mask(op, keep, t))
    } else {
        None
    };
    let mask = match a.mask {
        Some(m) if op.dtype(m) == Some(DType::Bool) => Some(additive_mask(op, m, t)),
        Some(m) => Some(cast(op, m, t)),
        None => None,
    };
    Ok(match (causal, mask) {
        (Some(c), Some(m)) => Some(op.Add(m, c)),
        (c, m) => c.or(m),
    })
}

/// A boolean mask as logit bias: 0 where true, -inf where false.
fn additive_mask(op: &mut Builder, keep: Value, t: DType) -> Value {
    let zero = op.scalar(t, 0.0);
    let ninf = op.scalar(t, f64::NEG_INFINITY);
    op.Where(keep, zero, ninf)
}

/// The queries a bias hides from every key: its maximum over the keys is -inf. Softmax gives such
/// a row NaN; torch's kernels give zeros (its math kernel's `_safe_softmax`, the CPU flash kernel).
fn hidden_rows(op: &mut Builder, bias: Value) -> Value {
    let axes = op.const_i64s(&[-1]);
    let top = op.ReduceMax(bias, Some(axes)).keepdims(1).out();
    op.Equal(top, f64::NEG_INFINITY)
}

/// ONNX `Attention` (opset 23) for a call it computes as torch does, as torch.onnx writes it: one
/// node with the mask, `is_causal`, `scale`, and grouped heads read from the shapes. ONNX Runtime's
/// kernel gives zeros for fully masked queries and NaN for NaN logits, as torch does.
fn onnx_attention(op: &mut Builder, a: &Sdpa) -> OpResult<Option<Value>> {
    if op.opset() < 23 || a.is_causal && a.mask.is_some() {
        return Ok(None);
    }
    let t = dtype_of(op, a.query)?;
    let (Some(q), Some(k), Some(v)) = (op.shape(a.query), op.shape(a.key), op.shape(a.value)) else {
        return Ok(None);
    };
    // float16 as torch.onnx writes it (ONNX Runtime's CPU kernel takes both; bfloat16 it lacks).
    if !matches!(t, DType::Float | DType::Float16) || q.len() != 4 || k.len() != 4 || v.len() != 4 {
        return Ok(None);
    }
    // One batch; K and V over one sequence and one set of heads; a head size Q and K share; the
    // query heads a multiple of the key/value heads (a group each, or the broadcast of one head).
    let heads = match (&q[1], &k[1]) {
        (Dim::Fixed(hq), Dim::Fixed(hkv)) => *hkv > 0 && hq % hkv == 0,
        (hq, hkv) => hq == hkv,
    };
    if q[0] != k[0] || k[..3] != v[..3] || q[3] != k[3] || !heads {
        return Ok(None);
    }
    // Where ONNX Runtime 1.31's CPU kernel is at least as fast as Softmax between MatMuls
    // (reports/deploy_ops.md): always with a mask or grouped heads; without either, for heads
    // under 128 wide (plain) or up to 32 wide (causal, whose masked half it computes all the same).
    let head = if let Dim::Fixed(e) = q[3] { e } else { i64::MAX };
    let faster = a.mask.is_some() || q[1] != k[1] || if a.is_causal { head <= 32 } else { head < 128 };
    if !faster {
        return Ok(None);
    }
    let mask = match a.mask {
        Some(m) => match attention_mask_operand(op, a, m, t)? {
            Some(m) => Some(m),
            None => return Ok(None),
        },
        None => None,
    };
    let mut node = op.Attention(a.query, a.key, a.value, mask, None, None).is_causal(a.is_causal as i64);
    if let Some(s) = a.scale {
        node = node.scale(s as f32);
    }
    Ok(Some(node.out()))
}

/// The mask as `Attention` takes it: boolean or of the query's type, with the query and key
/// lengths as its last two dims (ONNX Runtime does not broadcast those two); `None` for a mask of
/// more than 4 dims.
fn attention_mask_operand(op: &mut Builder, a: &Sdpa, m: Value, t: DType) -> OpResult<Option<Value>> {
    let (Some(ms), Some(q), Some(k)) = (op.shape(m), op.shape(a.query), op.shape(a.key)) else {
        return Ok(None);
    };
    let (r, fits) = (ms.len(), ms.len() >= 2 && ms[ms.len() - 2] == q[2] && ms[ms.len() - 1] == k[2]);
    if r > 4 {
        return Ok(None);
    }
    let m = if op.dtype(m) == Some(DType::Bool) { m } else { cast(op, m, t) };
    if fits {
        return Ok(Some(m));
    }
    // Broadcast over the query or key positions (a [B, 1, 1, S] padding mask): expanded once to
    // [..., L, S]; the layers reading one mask share the expansion after CSE.
    let l = op.Shape(a.query).start(-2).end(-1).out();
    let s = op.Shape(a.key).start(-2).end(-1).out();
    let ls = op.Concat(&[l, s]).axis(0).out();
    Ok(Some(op.Expand(m, ls)))
}

/// Grouped-query attention: repeat each of the `Hkv` key/value heads (axis -3) `Hq / Hkv` times in
/// a row, as `repeat_interleave` does, so that `kv` has as many heads as `query`.
fn repeat_heads(op: &mut Builder, kv: Value, query: Value) -> Value {
    let hq = op.Shape(query).start(-3).end(-2).out();
    let hkv = op.Shape(kv).start(-3).end(-2).out();
    let groups = op.Div(hq, hkv);
    let lead = op.Shape(kv).end(-3).out();
    let tail = op.Shape(kv).start(-2).out();
    let axes = op.const_i64s(&[-3]);
    let x = op.Unsqueeze(kv, axes);
    let expanded = op.Concat(&[lead, hkv, groups, tail]).axis(0).out();
    let x = op.Expand(x, expanded);
    let merged = op.Concat(&[lead, hq, tail]).axis(0).out();
    op.Reshape(x, merged).out()
}

#[allow(clippy::too_many_arguments)]
fn conv(
    op: &mut Builder,
    input: Value,
    weight: Value,
    bias: Option<Value>,
    stride: &[i64],
    padding: &[i64],
    dilation: &[i64],
    transposed: bool,
    output_padding: &[i64],
    groups: i64,
) -> OpResult<Value> {
    let k = rank_of(op, weight)?.saturating_sub(2);
    if k == 0 {
        bail!("convolution weight must have rank 3 or more");
    }
    // An unbatched input (rank k+1) gets a batch axis for the ONNX op.
    let unbatched = rank_of(op, input)? == k + 1;
    let zero = op.const_i64s(&[0]);
    let x = if unbatched { op.Unsqueeze(input, zero) } else { input };
    let (st, opad) = (expand_param(stride, k, 1)?, expand_param(output_padding, k, 0)?);
    let y = if transposed && st.iter().zip(&opad).any(|(s, o)| o >= s) {
        // torch allows output_padding < max(stride, dilation), ONNX Runtime only < stride: take the
        // uncropped transposed convolution, zero-extend its end, crop torch's window, add the bias.
        let p = expand_param(padding, k, 0)?;
        let dil = expand_param(dilation, k, 1)?;
        let full = op.ConvTranspose(x, weight, None).strides(&st).dilations(&dil).group(groups).out();
        let axes: Vec<i64> = (2..2 + k as i64).collect();
        let extra: Vec<i64> = opad.iter().zip(&p).map(|(o, q)| (o - q).max(0)).collect();
        let pads: Vec<i64> = vec![0; k].into_iter().chain(extra).collect();
        let pads = op.const_i64s(&pads);
        let axes_v = op.const_i64s(&axes);
        let padded = op.Pad(full, pads, None, Some(axes_v)).out();
        // Cropped length: full - 2p + output_padding, starting at p.
        let shape = op.Shape(full).start(2).out();
        let starts = op.const_i64s(&p);
        let delta: Vec<i64> = p.iter().zip(&opad).map(|(q, o)| o - q).collect();
        let delta = op.const_i64s(&delta);
        let ends = op.Add(shape, delta);
        let mut y = op.Slice(padded, starts, ends, Some(axes_v), None);
        if let Some(b) = bias {
            let b = channel_view(op, b, k + 2);
            y = op.Add(y, b);
        }
        y
    } else if transposed {
        op.ConvTranspose(x, weight, bias)
            .strides(&expand_param(stride, k, 1)?)
            .pads(&pads_of(padding, k)?)
            .dilations(&expand_param(dilation, k, 1)?)
            .output_padding(&expand_param(output_padding, k, 0)?)
            .group(groups)
            .out()
    } else {
        op.Conv(x, weight, bias)
            .strides(&expand_param(stride, k, 1)?)
            .pads(&pads_of(padding, k)?)
            .dilations(&expand_param(dilation, k, 1)?)
            .group(groups)
            .out()
    };
    Ok(if unbatched { op.Squeeze(y, Some(zero)) } else { y })
}

/// BatchNormalization in inference mode over axis 1 (inputs of rank 2 to 5).
fn batch_norm_inference(
    op: &mut Builder,
    input: Value,
    weight: Option<Value>,
    bias: Option<Value>,
    mean: Value,
    var: Value,
    eps: f64,
) -> OpResult<Value> {
    let t = dtype_of(op, input)?;
    let c = op.Shape(input).start(1).end(2).out();
    let weight = match weight {
        Some(w) => w,
        None => op.ConstantOfShape(c).value(constant_data(t, vec![1], &[1.0])?).out(),
    };
    let bias = match bias {
        Some(b) => b,
        None => op.ConstantOfShape(c).value(constant_data(t, vec![1], &[0.0])?).out(),
    };
    Ok(op.BatchNormalization(input, weight, bias, mean, var).epsilon(eps as f32).out())
}

/// `v` (shape `[C]`) reshaped to `[C, 1, ...]` to broadcast over axis 1 of a rank-`r` input.
fn channel_view(op: &mut Builder, v: Value, r: usize) -> Value {
    let mut s = vec![-1i64];
    s.extend(std::iter::repeat_n(1, r.saturating_sub(2)));
    let s = op.const_i64s(&s);
    op.Reshape(v, s).out()
}

/// An empty 1-D tensor of type `t` (torch's placeholder outputs).
fn empty_of(op: &mut Builder, t: DType) -> OpResult<Value> {
    Ok(op.constant_tensor(constant_data(t, vec![0], &[])?))
}

/// `y · weight + bias` with the per-channel parameters along dim 1 of a rank-`r` tensor.
fn channel_affine(op: &mut Builder, y: Value, weight: Option<Value>, bias: Option<Value>, r: usize) -> Value {
    let mut y = y;
    if let Some(w) = weight {
        let w = channel_view(op, w, r);
        y = op.Mul(y, w);
    }
    if let Some(b) = bias {
        let b = channel_view(op, b, r);
        y = op.Add(y, b);
    }
    y
}

/// Batch normalisation with batch statistics when only the result is read: the centred input and
/// its variance (two means), then an inference BatchNormalization of the centred input with mean 0
/// (five nodes; torch.onnx writes six). `None` where BatchNormalization cannot take it (not
/// float32/float64, or no static channel count for the constants).
fn batch_normalized(
    op: &mut Builder,
    input: Value,
    weight: Option<Value>,
    bias: Option<Value>,
    eps: f64,
) -> OpResult<Option<Value>> {
    let r = rank_of(op, input)?;
    let t = dtype_of(op, input)?;
    let dim = |op: &Builder, axis: usize| match op.shape(input).and_then(|s| s.get(axis).cloned()) {
        Some(Dim::Fixed(n)) => Some(n),
        _ => None,
    };
    let Some(c) = dim(op, 1).filter(|_| r >= 2 && matches!(t, DType::Float | DType::Double)) else {
        return Ok(None);
    };
    constant_elements(op, "the per-channel constants", &[c])?;
    let mut filled = |v: Option<Value>, fill: f64| -> OpResult<Value> {
        match v {
            Some(v) => Ok(cast(op, v, t)),
            None => Ok(op.constant_tensor(constant_data(t, vec![c], &vec![fill; c as usize])?)),
        }
    };
    let (w, b) = (filled(weight, 1.0)?, filled(bias, 0.0)?);
    // A batch of one is one instance per channel (ONNX Runtime's InstanceNormalization is float32
    // only): timm's weight standardization normalizes a [1, out, in·k·k] view of every weight.
    if r >= 3 && t == DType::Float && dim(op, 0) == Some(1) {
        return Ok(Some(op.InstanceNormalization(input, w, b).epsilon(eps as f32).out()));
    }
    let axes: Vec<i64> = std::iter::once(0).chain(2..r as i64).collect();
    let axes = op.const_i64s(&axes);
    let mean_kept = op.ReduceMean(input, Some(axes)).keepdims(1).out();
    let d = op.Sub(input, mean_kept);
    let sq = op.Mul(d, d);
    let var = op.ReduceMean(sq, Some(axes)).keepdims(0).out();
    // The centred input with a zero mean: the Sub that the variance needs is not done twice.
    let zero_mean = op.constant_tensor(constant_data(t, vec![c], &vec![0.0; c as usize])?);
    Ok(Some(op.BatchNormalization(d, w, b, zero_mean, var).epsilon(eps as f32).out()))
}

/// Batch normalisation with batch statistics (training mode): (out, mean, rstd, biased var, count).
fn batch_norm_training(
    op: &mut Builder,
    input: Value,
    weight: Option<Value>,
    bias: Option<Value>,
    eps: f64,
) -> OpResult<(Value, Value, Value, Value, Value)> {
    let r = rank_of(op, input)?;
    if r < 2 {
        bail!("batch_norm needs an input of rank 2 or more");
    }
    let t = dtype_of(op, input)?;
    let axes: Vec<i64> = std::iter::once(0).chain(2..r as i64).collect();
    let axes = op.const_i64s(&axes);
    let shape = op.Shape(input).out();
    let idx = op.const_i64s(&std::iter::once(0).chain(2..r as i64).collect::<Vec<_>>());
    let sizes = op.Gather(shape, idx).axis(0).out();
    let n = op.ReduceProd(sizes, None).keepdims(0).out();
    let n = cast(op, n, t);
    let s = op.ReduceSum(input, Some(axes)).keepdims(1).out();
    let mean = op.Div(s, n);
    let d = op.Sub(input, mean);
    let ss = op.ReduceSumSquare(d, Some(axes)).keepdims(1).out();
    let var = op.Div(ss, n);
    let e = op.scalar(t, eps);
    let ve = op.Add(var, e);
    let sd = op.Sqrt(ve);
    let rstd = op.Reciprocal(sd);
    let y = op.Mul(d, rstd);
    let y = channel_affine(op, y, weight, bias, r);
    let flat = op.const_i64s(&[-1]);
    let mean = op.Reshape(mean, flat).out();
    let rstd = op.Reshape(rstd, flat).out();
    let var = op.Reshape(var, flat).out();
    Ok((y, mean, rstd, var, n))
}

/// torch's running-statistics update: `(1 - m)·running + m·batch` (variance unbiased).
fn running_update(
    op: &mut Builder,
    rm: Value,
    rv: Value,
    mean: Value,
    var: Value,
    n: Value,
    momentum: f64,
) -> OpResult<(Value, Value)> {
    let t = dtype_of(op, rm)?;
    let mean = cast(op, mean, t);
    let var = cast(op, var, t);
    let n = cast(op, n, t);
    let one = op.scalar(t, 1.0);
    let nm1 = op.Sub(n, one);
    let unbiased = op.Mul(var, n);
    let unbiased = op.Div(unbiased, nm1);
    let m = op.scalar(t, momentum);
    let km = op.scalar(t, 1.0 - momentum);
    let a = op.Mul(rm, km);
    let b = op.Mul(mean, m);
    let rm = op.Add(a, b);
    let a = op.Mul(rv, km);
    let b = op.Mul(unbiased, m);
    let rv = op.Add(a, b);
    Ok((rm, rv))
}

/// Group normalisation: (out, mean [N, G], rstd [N, G]).
fn group_norm_of(
    op: &mut Builder,
    input: Value,
    weight: Option<Value>,
    bias: Option<Value>,
    groups: i64,
    eps: f64,
) -> OpResult<(Value, Value, Value)> {
    let r = rank_of(op, input)?;
    if r < 2 {
        bail!("group_norm needs an input of rank 2 or more");
    }
    let t = dtype_of(op, input)?;
    let g = op.const_i64s(&[0, groups, -1]);
    let x = op.Reshape(input, g).out();
    let last = op.const_i64s(&[-1]);
    let n = op.Shape(x).start(2).out();
    let n = cast(op, n, t);
    let s = op.ReduceSum(x, Some(last)).keepdims(1).out();
    let mean = op.Div(s, n);
    let d = op.Sub(x, mean);
    let ss = op.ReduceSumSquare(d, Some(last)).keepdims(1).out();
    let var = op.Div(ss, n);
    let e = op.scalar(t, eps);
    let ve = op.Add(var, e);
    let sd = op.Sqrt(ve);
    let rstd = op.Reciprocal(sd);
    let y = op.Mul(d, rstd);
    let shape = op.Shape(input).out();
    let y = op.Reshape(y, shape).out();
    let y = channel_affine(op, y, weight, bias, r);
    let ng = op.const_i64s(&[0, groups]);
    let mean = op.Reshape(mean, ng).out();
    let rstd = op.Reshape(rstd, ng).out();
    Ok((y, mean, rstd))
}

/// The float32 scale nearest to `scale` for which `floor(n · scale)`, in float32 and in float64, is
/// torch's size: `floor(n · scale)` with the float64 scale.
fn float32_scale_for(n: i64, scale: f64) -> f32 {
    let want = (n as f64 * scale).floor();
    let mut s = scale as f32;
    // ONNX Runtime multiplies in float32, onnx's shape inference in float64: both must agree.
    for _ in 0..8 {
        let got = [f64::from((n as f32 * s).floor()), (n as f64 * f64::from(s)).floor()];
        if got.iter().any(|&g| g < want) {
            s = s.next_up();
        } else if got.iter().any(|&g| g > want) {
            s = s.next_down();
        } else {
            break;
        }
    }
    s
}

/// ONNX Resize of the spatial axes (all but the first two) to `output_size` or by `scale_factors`.
fn resize(
    op: &mut Builder,
    input: Value,
    output_size: Option<Vec<SymInt>>,
    scale_factors: Option<Vec<f64>>,
    mode: &str,
    coord: &str,
    extra: impl FnOnce(ops::Resize<'_>) -> ops::Resize<'_>,
) -> OpResult<Value> {
    let r = rank_of(op, input)?;
    // One size or scale per spatial axis, after the batch and channel axes.
    let given = output_size.as_ref().map(Vec::len).or(scale_factors.as_ref().map(Vec::len)).unwrap_or(0);
    if given > r.saturating_sub(2) {
        bail!("upsample with {given} output sizes or scales for an input of rank {r}");
    }
    let (scales, sizes) = match (output_size, scale_factors) {
        (Some(size), _) => {
            let lead = op.Shape(input).start(0).end((r - size.len()) as i64).out();
            let spatial = shape_vec(op, &size);
            (None, Some(op.Concat(&[lead, spatial]).axis(0).out()))
        }
        (None, Some(scales)) => {
            let mut all = vec![1.0f64; r - scales.len()];
            all.extend(scales.iter());
            // torch's output size is floor(in · scale) in float64, ONNX's in float32 (20 · 0.9 is 18
            // in one and 17 in the other): where the size is known, the float32 scale moves by ulps
            // until the sizes agree, which moves the coordinate mapping by as little.
            if let Some(shape) = op.shape(input) {
                for (scale, d) in all.iter_mut().zip(shape) {
                    if let Dim::Fixed(n) = d {
                        *scale = f64::from(float32_scale_for(*n, *scale));
                    }
                }
            }
            let t = constant_data(DType::Float, vec![all.len() as i64], &all)?;
            (Some(op.constant_tensor(t)), None)
        }
        (None, None) => bail!("upsample needs output_size or scale_factors"),
    };
    let call = op.Resize(input, None, scales, sizes).mode(mode).coordinate_transformation_mode(coord);
    Ok(extra(call).out())
}

/// Resize for the overloads with an output size and optional per-axis scales: where the scales are
/// given, torch maps coordinates with them (`1 / scale`), else with `in / out`; align_corners
/// ignores them. ONNX Resize maps with its `scales` input, whose output size is `floor(in · scale)`,
/// as torch's is when the scales come from `scale_factor`.
#[allow(clippy::too_many_arguments)]
fn resize_to(
    op: &mut Builder,
    input: Value,
    output_size: Vec<SymInt>,
    scales: &[Option<f64>],
    align_corners: bool,
    mode: &str,
    coord: &str,
    extra: impl FnOnce(ops::Resize<'_>) -> ops::Resize<'_>,
) -> OpResult<Value> {
    if align_corners || scales.iter().all(Option::is_none) {
        return resize(op, input, Some(output_size), None, mode, coord, extra);
    }
    let Some(given) = scales.iter().copied().collect::<Option<Vec<f64>>>() else {
        bail!("upsample with scales for some axes only: torch maps the others by size, ONNX Resize cannot mix them")
    };
    if given.iter().any(|&s| s <= 0.0) {
        bail!("upsample scales must be positive, got {given:?}");
    }
    // Where the sizes are known, ONNX's floor(in · scale) must give torch's output size.
    if let Some(shape) = op.shape(input) {
        let lead = shape.len().saturating_sub(output_size.len());
        for ((d, s), o) in shape[lead..].iter().zip(&given).zip(&output_size) {
            if let (Dim::Fixed(n), SymInt::Const(o)) = (d, o) {
                if ((*n as f32) * (*s as f32)).floor() as i64 != *o {
                    bail!("upsample of size {n} by {s} to {o}: ONNX Resize's output size would be floor({n} · {s})");
                }
            }
        }
    }
    resize(op, input, None, Some(given), mode, coord, extra)
}

/// torch's nearest: `src = floor(dst · scale)`.
fn floor_nearest(c: ops::Resize<'_>) -> ops::Resize<'_> {
    c.nearest_mode("floor")
}

/// torch's bicubic coefficient (-0.75).
fn cubic_a(c: ops::Resize<'_>) -> ops::Resize<'_> {
    c.cubic_coeff_a(-0.75)
}

/// Antialiased bilinear / bicubic (torch's PIL-style filters): ONNX Resize with antialias=1 and
/// exclude_outside=1 (torch normalises the weights over the taps inside the image; bicubic's
/// coefficient is PIL's -0.5), checked against torch. torch's align_corners=True centres the taps at
/// `(i + 0.5) · (in - 1) / (out - 1)`, which no ONNX coordinate mode gives: refused.
fn antialias_mode(align_corners: bool, cubic: bool) -> OpResult<&'static str> {
    if align_corners {
        bail!("antialiased upsampling with align_corners=True has no ONNX Resize equivalent");
    }
    Ok(if cubic { "cubic" } else { "linear" })
}

/// The Resize attributes of [`antialias_mode`].
fn antialias(c: ops::Resize<'_>, cubic: bool) -> ops::Resize<'_> {
    let c = c.antialias(1).exclude_outside(1);
    if cubic {
        c.cubic_coeff_a(-0.5)
    } else {
        c
    }
}

/// Attention dropout is random, which an inference graph cannot be: `dropout_p` must be 0.
fn no_attention_dropout(dropout_p: f64) -> OpResult<()> {
    if dropout_p != 0.0 {
        bail!(
            "dropout_p={dropout_p}: attention dropout is random and not exported; export the model in \
             eval mode (model.eval()), or pass dropout_p=0.0 to scaled_dot_product_attention"
        );
    }
    Ok(())
}

/// torch's norm_except_dim: the `pow`-norm of `v` over every dim but `dim`, keeping them as 1s
/// (with dim -1, over all of v, as a 0-d value).
fn norm_except_dim_of(op: &mut Builder, v: Value, pow: i64, dim: i64) -> OpResult<Value> {
    let r = rank_of(op, v)?;
    let axes: Vec<i64> = if dim == -1 {
        (0..r as i64).collect()
    } else {
        let d = normalize_axis(dim, r)?;
        (0..r as i64).filter(|&a| a != d).collect()
    };
    let keep = i64::from(dim != -1);
    let axes_v = op.const_i64s(&axes);
    Ok(match pow {
        2 => op.ReduceL2(v, Some(axes_v)).keepdims(keep).out(),
        1 => op.ReduceL1(v, Some(axes_v)).keepdims(keep).out(),
        p => {
            let t = dtype_of(op, v)?;
            let a = op.Abs(v);
            let pv = op.scalar(t, p as f64);
            let powered = op.Pow(a, pv);
            let s = op.ReduceSum(powered, Some(axes_v)).keepdims(keep).out();
            let inv = op.scalar(t, 1.0 / p as f64);
            op.Pow(s, inv)
        }
    })
}

/// The input gradient of a normalization over `axes` given `gw` (the output's gradient times the
/// scale), the normalized input `x_hat` and `rstd`: `rstd · (gw - mean(gw) - x_hat · mean(gw · x_hat))`.
fn normalized_input_grad(op: &mut Builder, gw: Value, x_hat: Value, rstd: Value, axes: &[i64]) -> Value {
    let axes = op.const_i64s(axes);
    let mean_g = op.ReduceMean(gw, Some(axes)).keepdims(1).out();
    let gx = op.Mul(gw, x_hat);
    let mean_gx = op.ReduceMean(gx, Some(axes)).keepdims(1).out();
    let centered = op.Sub(gw, mean_g);
    let along = op.Mul(x_hat, mean_gx);
    let d = op.Sub(centered, along);
    op.Mul(rstd, d)
}

/// `x` summed over `axes` (dropped); `x` itself when there are none (ReduceSum would reduce all).
fn sum_over(op: &mut Builder, x: Value, axes: &[i64]) -> Value {
    if axes.is_empty() {
        return x;
    }
    let axes = op.const_i64s(axes);
    op.ReduceSum(x, Some(axes)).keepdims(0).out()
}

/// The weight gradient of a convolution of one group: `x` `[N, C, ...]`, `g` `[N, O, ...]`. It is
/// itself a convolution over the batch, the input as `[C, N, ...]` and the gradient as the kernel
/// `[O, N, ...]`, with stride and dilation swapped; its first `kernel` positions per axis are the
/// gradient (the padding's far end may add more).
fn conv_weight_grad(op: &mut Builder, x: Value, g: Value, r: usize, c: &ConvGrad) -> Value {
    let mut perm: Vec<i64> = (0..r as i64).collect();
    perm.swap(0, 1);
    let xt = op.Transpose(x).perm(&perm).out();
    let gt = op.Transpose(g).perm(&perm).out();
    let y = op.Conv(xt, gt, None).kernel_shape(&c.outs).strides(&c.dilation).dilations(&c.stride).pads(&c.pads).out();
    let y = op.Transpose(y).perm(&perm).out();
    let starts = op.const_i64s(&vec![0; c.kernel.len()]);
    let ends = op.const_i64s(&c.kernel);
    let axes: Vec<i64> = (2..r as i64).collect();
    let axes = op.const_i64s(&axes);
    op.Slice(y, starts, ends, Some(axes), None)
}

/// What the gradients of a convolution read: per spatial axis.
struct ConvGrad {
    stride: Vec<i64>,
    dilation: Vec<i64>,
    pads: Vec<i64>,
    kernel: Vec<i64>,
    outs: Vec<i64>,
}

/// torch's grid sampling as `GridSample`, whose grid layout (x, y[, z] last) and coordinate
/// conventions are torch's. Volumes (5-D) are GridSample's from opset 20 on; at older opsets the
/// builder names the opset that has them. Opset 20 renamed the modes (`bilinear` to `linear`,
/// `bicubic` to `cubic`).
fn grid_sample(
    op: &mut Builder,
    input: Value,
    grid: Value,
    interpolation_mode: i64,
    padding_mode: i64,
    align_corners: bool,
) -> OpResult<Value> {
    let r = rank_of(op, input)?;
    if r != 4 && r != 5 {
        bail!("grid_sampler samples 4-D images or 5-D volumes, not a rank-{r} input");
    }
    let new = op.opset() >= 20;
    let mode = match (interpolation_mode, new) {
        (0, true) => "linear",
        (0, false) => "bilinear",
        (1, _) => "nearest",
        // torch has no bicubic sampling of volumes.
        (2, _) if r == 5 => bail!("grid_sampler_3d supports bilinear and nearest interpolation, got bicubic"),
        (2, true) => "cubic",
        (2, false) => "bicubic",
        (m, _) => bail!("unknown grid_sampler interpolation mode {m}"),
    };
    let padding = match padding_mode {
        0 => "zeros",
        1 => "border",
        2 => "reflection",
        m => bail!("unknown grid_sampler padding mode {m}"),
    };
    Ok(op.GridSample(input, grid).mode(mode).padding_mode(padding).align_corners(align_corners as i64).out())
}

translations! {
    /// linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor
    #[target("aten::linear")]
    fn linear(op, input: Tensor, weight: Tensor, bias: Option<Tensor> = None) -> OpResult<Value> {
        // 2-D: one Gemm on the weight as stored. Higher ranks: MatMul on the transposed weight
        // (folded into an initializer) and the bias added, two nodes as torch.onnx's; Gemm would
        // need the input flattened and the result reshaped, a node more per linear.
        // Gemm of integers is valid ONNX that onnxruntime has no kernel for; MatMul has one.
        if rank_of(op, input)? == 2 && rank_of(op, weight)? == 2 && dtype_of(op, input)?.is_float() {
            return Ok(op.Gemm(input, weight, bias).transB(1).out());
        }
        let wt = op.Transpose(weight).perm(&[1, 0]).out();
        let y = op.MatMul(input, wt);
        Ok(match bias {
            Some(b) => op.Add(y, b),
            None => y,
        })
    }

    /// conv2d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=1, SymInt[2] padding=0,
    ///     SymInt[2] dilation=1, SymInt groups=1) -> Tensor
    #[target("aten::conv2d", "aten::conv1d", "aten::conv3d")]
    fn conv2d(
        op,
        input: Tensor,
        weight: Tensor,
        bias: Option<Tensor> = None,
        stride: Vec<i64> = vec![1],
        padding: Vec<i64> = vec![0],
        dilation: Vec<i64> = vec![1],
        groups: i64 = 1,
    ) -> OpResult<Value> {
        conv(op, input, weight, bias, &stride, &padding, &dilation, false, &[], groups)
    }

    /// conv2d.padding(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=[1, 1], str padding="valid",
    ///     SymInt[2] dilation=[1, 1], SymInt groups=1) -> Tensor
    #[target("aten::conv1d.padding", "aten::conv2d.padding", "aten::conv3d.padding")]
    fn conv_padding(
        op,
        input: Tensor,
        weight: Tensor,
        bias: Option<Tensor> = None,
        stride: Vec<i64> = vec![1],
        padding: &str = "valid",
        dilation: Vec<i64> = vec![1],
        groups: i64 = 1,
    ) -> OpResult<Value> {
        let k = rank_of(op, weight)?.saturating_sub(2);
        let kernel: Vec<i64> = match op.shape(weight) {
            Some(s) => s[2..]
                .iter()
                .map(|d| match d {
                    Dim::Fixed(n) => Ok(*n),
                    _ => Err(OpError::new("conv with padding='same' needs a static kernel size")),
                })
                .collect::<OpResult<_>>()?,
            None => bail!("the weight's shape is unknown"),
        };
        let dil = expand_param(&dilation, k, 1)?;
        let (begin, end): (Vec<i64>, Vec<i64>) = match padding {
            "valid" => (vec![0; k], vec![0; k]),
            "same" => {
                // torch pads dilation·(kernel - 1) in total, the odd element at the end.
                let total: Vec<i64> = kernel.iter().zip(&dil).map(|(&kk, &d)| d * (kk - 1)).collect();
                (total.iter().map(|t| t / 2).collect(), total.iter().map(|t| t - t / 2).collect())
            }
            other => bail!("unknown conv padding mode {other:?}"),
        };
        let unbatched = rank_of(op, input)? == k + 1;
        let zero = op.const_i64s(&[0]);
        let x = if unbatched { op.Unsqueeze(input, zero) } else { input };
        let pads: Vec<i64> = begin.iter().chain(end.iter()).copied().collect();
        let y = op
            .Conv(x, weight, bias)
            .strides(&expand_param(&stride, k, 1)?)
            .pads(&pads)
            .dilations(&dil)
            .group(groups)
            .out();
        Ok(if unbatched { op.Squeeze(y, Some(zero)) } else { y })
    }

    /// convolution(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, SymInt[] padding, SymInt[] dilation,
    ///     bool transposed, SymInt[] output_padding, SymInt groups) -> Tensor
    #[target("aten::convolution", "aten::_convolution")]
    fn convolution(
        op,
        input: Tensor,
        weight: Tensor,
        bias: Option<Tensor>,
        stride: Vec<i64>,
        padding: Vec<i64>,
        dilation: Vec<i64>,
        transposed: bool,
        output_padding: Vec<i64>,
        groups: i64,
    ) -> OpResult<Value> {
        conv(op, input, weight, bias, &stride, &padding, &dilation, transposed, &output_padding, groups)
    }

    /// conv_tbc(Tensor self, Tensor weight, Tensor bias, int pad=0) -> Tensor
    #[target("aten::conv_tbc")]
    fn conv_tbc(op, self_: Tensor, weight: Tensor, bias: Tensor, pad: i64 = 0) -> OpResult<Value> {
        // Time, batch, channels in and out; the weight is [kernel, in, out]: a 1-d Conv on the
        // transposed tensors.
        if rank_of(op, self_)? != 3 || rank_of(op, weight)? != 3 {
            bail!("conv_tbc takes an input [time, batch, channels] and a weight [kernel, in, out]");
        }
        // The ranks `conv` reads: Transpose's output shape is left to ONNX's inference.
        let mut transposed = |x: Value, perm: [i64; 3]| {
            let shape = op.shape(x).map(|s| perm.iter().map(|&p| s[p as usize].clone()).collect());
            let v = op.Transpose(x).perm(&perm).out();
            op.info_mut(v).shape = shape;
            v
        };
        let (input, weight) = (transposed(self_, [1, 2, 0]), transposed(weight, [2, 1, 0]));
        let out = conv(op, input, weight, Some(bias), &[1], &[pad], &[1], false, &[], 1)?;
        Ok(op.Transpose(out).perm(&[2, 0, 1]).out())
    }

    /// conv_transpose2d.input(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=1, SymInt[2] padding=0,
    ///     SymInt[2] output_padding=0, SymInt groups=1, SymInt[2] dilation=1) -> Tensor
    #[target("aten::conv_transpose2d.input", "aten::conv_transpose1d", "aten::conv_transpose3d.input")]
    fn conv_transpose(
        op,
        input: Tensor,
        weight: Tensor,
        bias: Option<Tensor> = None,
        stride: Vec<i64> = vec![1],
        padding: Vec<i64> = vec![0],
        output_padding: Vec<i64> = vec![0],
        groups: i64 = 1,
        dilation: Vec<i64> = vec![1],
    ) -> OpResult<Value> {
        conv(op, input, weight, bias, &stride, &padding, &dilation, true, &output_padding, groups)
    }

    /// batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var,
    ///     bool training, float momentum, float eps, bool cudnn_enabled) -> Tensor
    #[target("aten::batch_norm")]
    fn batch_norm(
        op,
        input: Tensor,
        weight: Option<Tensor>,
        bias: Option<Tensor>,
        running_mean: Option<Tensor>,
        running_var: Option<Tensor>,
        training: bool,
        // It weights the running statistics' update, which this op does not return.
        _momentum: Ignored,
        eps: f64,
        // A backend choice.
        _cudnn_enabled: Ignored,
    ) -> OpResult<Value> {
        if op.rank(input).is_some_and(|r| r < 2) && op.shape(input).is_some_and(|s| s.contains(&Dim::Fixed(0))) {
            // torch returns an empty input as it is, before checking its rank.
            return Ok(input);
        }
        match (running_mean, running_var, training) {
            (Some(mean), Some(var), false) => batch_norm_inference(op, input, weight, bias, mean, var, eps),
            (_, _, true) => {
                // The running statistics this call would update are not outputs of the op.
                match batch_normalized(op, input, weight, bias, eps)? {
                    Some(y) => Ok(y),
                    None => Ok(batch_norm_training(op, input, weight, bias, eps)?.0),
                }
            }
            _ => bail!("batch_norm in evaluation mode needs running statistics"),
        }
    }

    /// _native_batch_norm_legit(Tensor input, Tensor? weight, Tensor? bias, Tensor(a!) running_mean,
    ///     Tensor(b!) running_var, bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)
    #[target("aten::_native_batch_norm_legit", "aten::_native_batch_norm_legit.no_stats", "aten::native_batch_norm")]
    fn native_batch_norm_legit(
        op,
        input: Tensor,
        weight: Option<Tensor>,
        bias: Option<Tensor>,
        running_mean: Option<Tensor> = None,
        running_var: Option<Tensor> = None,
        training: bool,
        // It weights the in-place update of the running statistics in training, which an ONNX graph
        // has no state for (the functional form returns the updated statistics and computes them).
        _momentum: Ignored,
        eps: f64,
    ) -> OpResult<Vec<Value>> {
        if training {
            let (y, mean, rstd, _, _) = batch_norm_training(op, input, weight, bias, eps)?;
            return Ok(vec![y, mean, rstd]);
        }
        let (Some(rm), Some(rv)) = (running_mean, running_var) else {
            bail!("batch norm in evaluation mode (training=False) needs running statistics");
        };
        let t = dtype_of(op, input)?;
        let y = batch_norm_inference(op, input, weight, bias, rm, rv, eps)?;
        Ok(vec![y, empty_of(op, t)?, empty_of(op, t)?])
    }

    /// _native_batch_norm_legit_functional(Tensor input, Tensor? weight, Tensor? bias, Tensor running_mean,
    ///     Tensor running_var, bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor,
    ///     Tensor running_mean_out, Tensor running_var_out)
    #[target("aten::_native_batch_norm_legit_functional")]
    fn native_batch_norm_legit_functional(
        op,
        input: Tensor,
        weight: Option<Tensor>,
        bias: Option<Tensor>,
        running_mean: Tensor,
        running_var: Tensor,
        training: bool,
        momentum: f64,
        eps: f64,
    ) -> OpResult<Vec<Value>> {
        if training {
            let (y, mean, rstd, var, n) = batch_norm_training(op, input, weight, bias, eps)?;
            let (rm, rv) = running_update(op, running_mean, running_var, mean, var, n, momentum)?;
            return Ok(vec![y, mean, rstd, rm, rv]);
        }
        let t = dtype_of(op, input)?;
        let y = batch_norm_inference(op, input, weight, bias, running_mean, running_var, eps)?;
        let rm = op.Identity(running_mean);
        let rv = op.Identity(running_var);
        Ok(vec![y, empty_of(op, t)?, empty_of(op, t)?, rm, rv])
    }

    /// _batch_norm_with_update(Tensor input, Tensor? weight, Tensor? bias, Tensor(a!) running_mean,
    ///     Tensor(b!) running_var, float momentum, float eps) -> (Tensor, Tensor, Tensor, Tensor)
    #[target("aten::_batch_norm_with_update")]
    fn batch_norm_with_update(
        op,
        input: Tensor,
        weight: Option<Tensor>,
        bias: Option<Tensor>,
        // The op updates these in place, a side effect an ONNX graph has no state for; torch.export
        // returns updated statistics only from the functional form, which computes them.
        _running_mean: Ignored,
        _running_var: Ignored,
        _momentum: Ignored,
        eps: f64,
    ) -> OpResult<Vec<Value>> {
        let (y, mean, rstd, _, _) = batch_norm_training(op, input, weight, bias, eps)?;
        Ok(vec![y, mean, rstd, empty_of(op, DType::Uint8)?])
    }

    /// _batch_norm_with_update_functional(Tensor input, Tensor? weight, Tensor? bias, Tensor running_mean,
    ///     Tensor running_var, float momentum, float eps) -> (Tensor, Tensor, Tensor, Tensor, Tensor running_mean_out,
    ///     Tensor running_var_out)
    #[target("aten::_batch_norm_with_update_functional")]
    fn batch_norm_with_update_functional(
        op,
        input: Tensor,
        weight: Option<Tensor>,
        bias: Option<Tensor>,
        running_mean: Tensor,
        running_var: Tensor,
        momentum: f64,
        eps: f64,
    ) -> OpResult<Vec<Value>> {
        let (y, mean, rstd, var, n) = batch_norm_training(op, input, weight, bias, eps)?;
        let (rm, rv) = running_update(op, running_mean, running_var, mean, var, n, momentum)?;
        Ok(vec![y, mean, rstd, empty_of(op, DType::Uint8)?, rm, rv])
    }

    /// instance_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var,
    ///     bool use_input_stats, float momentum, float eps, bool cudnn_enabled) -> Tensor
    #[target("aten::instance_norm")]
    fn instance_norm(
        op,
        input: Tensor,
        weight: Option<Tensor>,
        bias: Option<Tensor>,
        running_mean: Option<Tensor>,
        running_var: Option<Tensor>,
        use_input_stats: bool,
        // It weights the in-place update of the running statistics, which does not change the result
        // and which an ONNX graph has no state for.
        _momentum: Ignored,
        eps: f64,
        // A backend choice.
        _cudnn_enabled: Ignored,
    ) -> OpResult<Value> {
        if !use_input_stats {
            let (Some(rm), Some(rv)) = (running_mean, running_var) else {
                bail!("instance_norm with use_input_stats=False needs running statistics");
            };
            return batch_norm_inference(op, input, weight, bias, rm, rv, eps);
        }
        if rank_of(op, input)? < 3 {
            bail!("instance_norm needs an input with a spatial dimension (rank 3 or more)");
        }
        let t = dtype_of(op, input)?;
        // ONNX Runtime has InstanceNormalization for float32 only; the others normalise as a group
        // norm with one channel per group (the same statistics).
        if t != DType::Float {
            if let Some(&Dim::Fixed(c)) = op.shape(input).and_then(|s| s.get(1)) {
                return Ok(group_norm_of(op, input, weight, bias, c, eps)?.0);
            }
        }
        // ONNX InstanceNormalization: per sample and channel over the spatial axes (biased variance),
        // as torch; it needs a scale and a bias.
        let c = op.Shape(input).start(1).end(2).out();
        let weight = match weight {
            Some(w) => w,
            None => op.ConstantOfShape(c).value(constant_data(t, vec![1], &[1.0])?).out(),
        };
        let bias = match bias {
            Some(b) => b,
            None => op.ConstantOfShape(c).value(constant_data(t, vec![1], &[0.0])?).out(),
        };
        Ok(op.InstanceNormalization(input, weight, bias).epsilon(eps as f32).out())
    }

    /// group_norm(Tensor input, int num_groups, Tensor? weight=None, Tensor? bias=None,
    ///     float eps=1.0000000000000001e-05, bool cudnn_enabled=True) -> Tensor
    #[target("aten::group_norm")]
    fn group_norm(
        op,
        input: Tensor,
        num_groups: i64,
        weight: Option<Tensor> = None,
        bias: Option<Tensor> = None,
        eps: f64 = 1e-5,
        // A backend choice.
        _cudnn_enabled: Ignored,
    ) -> OpResult<Value> {
        let r = rank_of(op, input)?;
        let t = dtype_of(op, input)?;
        // torch requires groups that divide the channels; per-group constants are built below.
        let channels = op.shape(input).and_then(|s| s.get(1).cloned());
        if num_groups < 1 || matches!(channels, Some(Dim::Fixed(c)) if c % num_groups != 0) {
            bail!("group_norm: {num_groups} groups do not divide the channels");
        }
        constant_elements(op, "group_norm's per-group constants", &[num_groups])?;
        if r < 3 || t != DType::Float {
            return Ok(group_norm_of(op, input, weight, bias, num_groups, eps)?.0);
        }
        // From opset 21 GroupNormalization takes per-channel scale and bias, torch's affine: one
        // node, as torch.onnx writes it there (a missing weight or bias needs the channel count).
        if let (true, Some(Dim::Fixed(c))) = (op.opset() >= 21, channels.clone()) {
            constant_elements(op, "group_norm's per-channel constants", &[c])?;
            let mut per_channel = |v: Option<Value>, fill: f64| -> OpResult<Value> {
                Ok(match v {
                    Some(v) => cast(op, v, t),
                    None => op.constant_tensor(constant_data(t, vec![c], &vec![fill; c as usize])?),
                })
            };
            let (scale, shift) = (per_channel(weight, 1.0)?, per_channel(bias, 0.0)?);
            return Ok(op.GroupNormalization(input, scale, shift).num_groups(num_groups).epsilon(eps as f32).out());
        }
        // One channel per group: each channel is an instance, and the affine is InstanceNormalization's own.
        if channels == Some(Dim::Fixed(num_groups)) {
            let mut per_channel = |v: Option<Value>, fill: f64| -> OpResult<Value> {
                Ok(match v {
                    Some(v) => cast(op, v, t),
                    None => op.constant_tensor(constant_data(t, vec![num_groups], &vec![fill; num_groups as usize])?),
                })
            };
            let (scale, shift) = (per_channel(weight, 1.0)?, per_channel(bias, 0.0)?);
            return Ok(op.InstanceNormalization(input, scale, shift).epsilon(eps as f32).out());
        }
        // Each group is one instance of [N, G, rest]: InstanceNormalization with unit scale and zero
        // bias normalizes it (biased variance, eps inside the root, as torch), then the per-channel
        // affine. Six nodes where the statistics written out take seventeen.
        let g = op.const_i64s(&[0, num_groups, -1]);
        let x = op.Reshape(input, g).out();
        let ones = constant_data(t, vec![num_groups], &vec![1.0; num_groups as usize])?;
        let zeros = constant_data(t, vec![num_groups], &vec![0.0; num_groups as usize])?;
        let (ones, zeros) = (op.constant_tensor(ones), op.constant_tensor(zeros));
        let y = op.InstanceNormalization(x, ones, zeros).epsilon(eps as f32).out();
        let shape = op.Shape(input).out();
        let y = op.Reshape(y, shape).out();
        Ok(channel_affine(op, y, weight, bias, r))
    }

    /// native_group_norm(Tensor input, Tensor? weight, Tensor? bias, SymInt N, SymInt C, SymInt HxW, int group,
    ///     float eps) -> (Tensor, Tensor, Tensor)
    #[target("aten::native_group_norm")]
    fn native_group_norm(
        op,
        input: Tensor,
        weight: Option<Tensor>,
        bias: Option<Tensor>,
        // The sizes come from the input's shape.
        _N: Ignored,
        _C: Ignored,
        _HxW: Ignored,
        group: i64,
        eps: f64,
    ) -> OpResult<(Value, Value, Value)> {
        group_norm_of(op, input, weight, bias, group, eps)
    }

    /// rms_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, float? eps=None) -> Tensor
    #[target("aten::rms_norm")]
    fn rms_norm(
        op,
        input: Tensor,
        normalized_shape: Vec<SymInt>,
        weight: Option<Tensor> = None,
        eps: Option<f64> = None,
    ) -> OpResult<Value> {
        let t = dtype_of(op, input)?;
        let eps = match eps {
            Some(e) => e,
            None => match t {
                DType::Double => f64::EPSILON,
                DType::Float => f32::EPSILON as f64,
                DType::Float16 => 0.0009765625,
                DType::BFloat16 => 0.0078125,
                other => bail!("rms_norm of {other:?} is not supported"),
            },
        };
        let k = normalized_shape.len() as i64;
        if op.opset() >= 23 && t == DType::Float && k >= 1 {
            // ONNX RMSNormalization: x / sqrt(mean(x², trailing k axes) + eps) · scale, as torch; two to
            // three times faster in ONNX Runtime 1.31 than the written-out form (reports/deploy_ops.md).
            let scale = match weight {
                Some(w) => cast(op, w, t),
                None => {
                    let n = op.Shape(input).start(-k).out();
                    op.ConstantOfShape(n).value(constant_data(t, vec![1], &[1.0])?).out()
                }
            };
            return Ok(op.RMSNormalization(input, scale).axis(-k).epsilon(eps as f32).out());
        }
        let axes: Vec<i64> = (-k..0).collect();
        let axes = op.const_i64s(&axes);
        let sq = op.Mul(input, input);
        let s = op.ReduceSum(sq, Some(axes)).keepdims(1).out();
        let n = op.Shape(input).start(-k).out();
        let n = op.ReduceProd(n, None).keepdims(0).out();
        let n = cast(op, n, t);
        let ms = op.Div(s, n);
        let e = op.scalar(t, eps);
        let ms = op.Add(ms, e);
        let rs = op.Sqrt(ms);
        let rs = op.Reciprocal(rs);
        let y = op.Mul(input, rs);
        Ok(match weight {
            Some(w) => op.Mul(y, w),
            None => y,
        })
    }

    /// _native_batch_norm_legit_no_training(Tensor input, Tensor? weight, Tensor? bias, Tensor running_mean,
    ///     Tensor running_var, float momentum, float eps) -> (Tensor, Tensor, Tensor)
    #[target("aten::_native_batch_norm_legit_no_training")]
    fn native_batch_norm_no_training(
        op,
        input: Tensor,
        weight: Option<Tensor>,
        bias: Option<Tensor>,
        running_mean: Tensor,
        running_var: Tensor,
        // Without training the running statistics are not updated.
        _momentum: Ignored,
        eps: f64,
    ) -> OpResult<Vec<Option<Value>>> {
        // The saved mean / invstd outputs are empty in inference, as torch returns them.
        let y = batch_norm_inference(op, input, weight, bias, running_mean, running_var, eps)?;
        let t = op.out_dtype(1).unwrap_or(DType::Float);
        Ok(vec![Some(y), Some(empty_of(op, t)?), Some(empty_of(op, t)?)])
    }

    /// layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, Tensor? bias=None, float eps=1e-05,
    ///     bool cudnn_enable=True) -> Tensor
    #[target("aten::layer_norm")]
    fn layer_norm(
        op,
        input: Tensor,
        normalized_shape: Vec<SymInt>,
        weight: Option<Tensor> = None,
        bias: Option<Tensor> = None,
        eps: f64 = 1e-5,
        // A backend choice.
        _cudnn_enable: Ignored,
    ) -> OpResult<Value> {
        let axis = -(normalized_shape.len() as i64);
        let scale = match weight {
            Some(w) => w,
            None => {
                let t = dtype_of(op, input)?;
                let shape = shape_vec(op, &normalized_shape);
                op.ConstantOfShape(shape).value(constant_data(t, vec![1], &[1.0])?).out()
            }
        };
        Ok(op.LayerNormalization(input, scale, bias).axis(axis).epsilon(eps as f32).out())
    }

    /// native_layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? bias, float eps) -> (Tensor,
    ///     Tensor, Tensor)
    #[target("aten::native_layer_norm")]
    fn native_layer_norm(
        op,
        input: Tensor,
        normalized_shape: Vec<SymInt>,
        weight: Option<Tensor>,
        bias: Option<Tensor>,
        eps: f64,
    ) -> OpResult<Vec<Value>> {
        let axis = -(normalized_shape.len() as i64);
        let scale = match weight {
            Some(w) => w,
            None => {
                let t = dtype_of(op, input)?;
                let shape = shape_vec(op, &normalized_shape);
                op.ConstantOfShape(shape).value(constant_data(t, vec![1], &[1.0])?).out()
            }
        };
        let [y, mean, rstd] = op.LayerNormalization(input, scale, bias).axis(axis).epsilon(eps as f32).outs::<3>();
        Ok(vec![y, mean, rstd])
    }

    /// upsample_nearest2d.vec(Tensor input, SymInt[]? output_size, float[]? scale_factors) -> Tensor
    #[target("aten::upsample_nearest2d.vec", "aten::upsample_nearest1d.vec", "aten::upsample_nearest3d.vec")]
    fn upsample_nearest(
        op,
        input: Tensor,
        output_size: Option<Vec<SymInt>>,
        scale_factors: Option<Vec<f64>>,
    ) -> OpResult<Value> {
        // torch: src = floor(dst · in / out).
        resize(op, input, output_size, scale_factors, "nearest", "asymmetric", |c| c.nearest_mode("floor"))
    }

    /// _upsample_nearest_exact1d.vec(Tensor input, SymInt[]? output_size, float[]? scale_factors) -> Tensor
    #[target(
        "aten::_upsample_nearest_exact1d.vec",
        "aten::_upsample_nearest_exact2d.vec",
        "aten::_upsample_nearest_exact3d.vec"
    )]
    fn upsample_nearest_exact(
        op,
        input: Tensor,
        output_size: Option<Vec<SymInt>>,
        scale_factors: Option<Vec<f64>>,
    ) -> OpResult<Value> {
        // torch: src = floor((dst + 0.5) · in / out) = round-half-up of the half-pixel coordinate.
        resize(op, input, output_size, scale_factors, "nearest", "half_pixel", |c| c.nearest_mode("round_prefer_ceil"))
    }

    /// upsample_bilinear2d.vec(Tensor input, SymInt[]? output_size, bool align_corners,
    ///     float[]? scale_factors) -> Tensor
    #[target("aten::upsample_bilinear2d.vec", "aten::upsample_linear1d.vec", "aten::upsample_trilinear3d.vec")]
    fn upsample_linear(
        op,
        input: Tensor,
        output_size: Option<Vec<SymInt>>,
        align_corners: bool,
        scale_factors: Option<Vec<f64>>,
    ) -> OpResult<Value> {
        // torch clamps negative half-pixel coordinates to 0, which linear interpolation at the border
        // does too; output size 1 keeps the half-pixel coordinate (not pytorch_half_pixel's 0).
        let coord = if align_corners { "align_corners" } else { "half_pixel" };
        resize(op, input, output_size, scale_factors, "linear", coord, |c| c)
    }

    /// upsample_bicubic2d.vec(Tensor input, SymInt[]? output_size, bool align_corners,
    ///     float[]? scale_factors) -> Tensor
    #[target("aten::upsample_bicubic2d.vec")]
    fn upsample_bicubic(
        op,
        input: Tensor,
        output_size: Option<Vec<SymInt>>,
        align_corners: bool,
        scale_factors: Option<Vec<f64>>,
    ) -> OpResult<Value> {
        let coord = if align_corners { "align_corners" } else { "half_pixel" };
        resize(op, input, output_size, scale_factors, "cubic", coord, |c| c.cubic_coeff_a(-0.75))
    }

    /// upsample_nearest2d(Tensor self, SymInt[2] output_size, float? scales_h=None, float? scales_w=None) -> Tensor
    #[target("aten::upsample_nearest2d")]
    fn upsample_nearest2d(
        op,
        self_: Tensor,
        output_size: Vec<SymInt>,
        scales_h: Option<f64> = None,
        scales_w: Option<f64> = None,
    ) -> OpResult<Value> {
        resize_to(op, self_, output_size, &[scales_h, scales_w], false, "nearest", "asymmetric", floor_nearest)
    }

    /// upsample_nearest1d(Tensor self, SymInt[1] output_size, float? scales=None) -> Tensor
    #[target("aten::upsample_nearest1d")]
    fn upsample_nearest1d(op, self_: Tensor, output_size: Vec<SymInt>, scales: Option<f64> = None) -> OpResult<Value> {
        resize_to(op, self_, output_size, &[scales], false, "nearest", "asymmetric", floor_nearest)
    }

    /// upsample_nearest3d(Tensor self, SymInt[3] output_size, float? scales_d=None, float? scales_h=None,
    ///     float? scales_w=None) -> Tensor
    #[target("aten::upsample_nearest3d")]
    fn upsample_nearest3d(
        op,
        self_: Tensor,
        output_size: Vec<SymInt>,
        scales_d: Option<f64> = None,
        scales_h: Option<f64> = None,
        scales_w: Option<f64> = None,
    ) -> OpResult<Value> {
        let scales = [scales_d, scales_h, scales_w];
        resize_to(op, self_, output_size, &scales, false, "nearest", "asymmetric", floor_nearest)
    }

    /// upsample_linear1d(Tensor self, SymInt[1] output_size, bool align_corners, float? scales=None) -> Tensor
    #[target("aten::upsample_linear1d")]
    fn upsample_linear1d(
        op,
        self_: Tensor,
        output_size: Vec<SymInt>,
        align_corners: bool,
        scales: Option<f64> = None,
    ) -> OpResult<Value> {
        let coord = if align_corners { "align_corners" } else { "half_pixel" };
        resize_to(op, self_, output_size, &[scales], align_corners, "linear", coord, |c| c)
    }

    /// upsample_bilinear2d(Tensor self, SymInt[2] output_size, bool align_corners, float? scales_h=None,
    ///     float? scales_w=None) -> Tensor
    #[target("aten::upsample_bilinear2d")]
    fn upsample_bilinear2d(
        op,
        self_: Tensor,
        output_size: Vec<SymInt>,
        align_corners: bool,
        scales_h: Option<f64> = None,
        scales_w: Option<f64> = None,
    ) -> OpResult<Value> {
        let coord = if align_corners { "align_corners" } else { "half_pixel" };
        resize_to(op, self_, output_size, &[scales_h, scales_w], align_corners, "linear", coord, |c| c)
    }

    /// upsample_trilinear3d(Tensor self, SymInt[3] output_size, bool align_corners, float? scales_d=None,
    ///     float? scales_h=None, float? scales_w=None) -> Tensor
    #[target("aten::upsample_trilinear3d")]
    fn upsample_trilinear3d(
        op,
        self_: Tensor,
        output_size: Vec<SymInt>,
        align_corners: bool,
        scales_d: Option<f64> = None,
        scales_h: Option<f64> = None,
        scales_w: Option<f64> = None,
    ) -> OpResult<Value> {
        let coord = if align_corners { "align_corners" } else { "half_pixel" };
        let scales = [scales_d, scales_h, scales_w];
        resize_to(op, self_, output_size, &scales, align_corners, "linear", coord, |c| c)
    }

    /// upsample_bicubic2d(Tensor self, SymInt[2] output_size, bool align_corners, float? scales_h=None,
    ///     float? scales_w=None) -> Tensor
    #[target("aten::upsample_bicubic2d")]
    fn upsample_bicubic2d(
        op,
        self_: Tensor,
        output_size: Vec<SymInt>,
        align_corners: bool,
        scales_h: Option<f64> = None,
        scales_w: Option<f64> = None,
    ) -> OpResult<Value> {
        let coord = if align_corners { "align_corners" } else { "half_pixel" };
        resize_to(op, self_, output_size, &[scales_h, scales_w], align_corners, "cubic", coord, cubic_a)
    }

    /// _upsample_bilinear2d_aa(Tensor self, SymInt[2] output_size, bool align_corners, float? scales_h=None,
    ///     float? scales_w=None) -> Tensor
    #[target("aten::_upsample_bilinear2d_aa")]
    fn _upsample_bilinear2d_aa(
        op,
        self_: Tensor,
        output_size: Vec<SymInt>,
        align_corners: bool,
        scales_h: Option<f64> = None,
        scales_w: Option<f64> = None,
    ) -> OpResult<Value> {
        let mode = antialias_mode(align_corners, false)?;
        resize_to(op, self_, output_size, &[scales_h, scales_w], false, mode, "half_pixel", |c| antialias(c, false))
    }

    /// _upsample_bicubic2d_aa(Tensor self, SymInt[2] output_size, bool align_corners, float? scales_h=None,
    ///     float? scales_w=None) -> Tensor
    #[target("aten::_upsample_bicubic2d_aa")]
    fn _upsample_bicubic2d_aa(
        op,
        self_: Tensor,
        output_size: Vec<SymInt>,
        align_corners: bool,
        scales_h: Option<f64> = None,
        scales_w: Option<f64> = None,
    ) -> OpResult<Value> {
        let mode = antialias_mode(align_corners, true)?;
        resize_to(op, self_, output_size, &[scales_h, scales_w], false, mode, "half_pixel", |c| antialias(c, true))
    }

    /// _upsample_bilinear2d_aa.vec(Tensor input, SymInt[]? output_size, bool align_corners,
    ///     float[]? scale_factors) -> Tensor
    #[target("aten::_upsample_bilinear2d_aa.vec")]
    fn _upsample_bilinear2d_aa_vec(
        op,
        input: Tensor,
        output_size: Option<Vec<SymInt>>,
        align_corners: bool,
        scale_factors: Option<Vec<f64>>,
    ) -> OpResult<Value> {
        let mode = antialias_mode(align_corners, false)?;
        resize(op, input, output_size, scale_factors, mode, "half_pixel", |c| antialias(c, false))
    }

    /// _upsample_bicubic2d_aa.vec(Tensor input, SymInt[]? output_size, bool align_corners,
    ///     float[]? scale_factors) -> Tensor
    #[target("aten::_upsample_bicubic2d_aa.vec")]
    fn _upsample_bicubic2d_aa_vec(
        op,
        input: Tensor,
        output_size: Option<Vec<SymInt>>,
        align_corners: bool,
        scale_factors: Option<Vec<f64>>,
    ) -> OpResult<Value> {
        let mode = antialias_mode(align_corners, true)?;
        resize(op, input, output_size, scale_factors, mode, "half_pixel", |c| antialias(c, true))
    }

    /// grid_sampler_2d(Tensor input, Tensor grid, int interpolation_mode, int padding_mode,
    ///     bool align_corners) -> Tensor
    #[target("aten::grid_sampler_2d", "aten::grid_sampler")]
    fn grid_sampler(
        op,
        input: Tensor,
        grid: Tensor,
        interpolation_mode: i64,
        padding_mode: i64,
        align_corners: bool,
    ) -> OpResult<Value> {
        // `grid_sampler` serves images and volumes alike.
        grid_sample(op, input, grid, interpolation_mode, padding_mode, align_corners)
    }

    /// grid_sampler_3d(Tensor input, Tensor grid, int interpolation_mode, int padding_mode,
    ///     bool align_corners) -> Tensor
    #[target("aten::grid_sampler_3d")]
    fn grid_sampler_3d(
        op,
        input: Tensor,
        grid: Tensor,
        interpolation_mode: i64,
        padding_mode: i64,
        align_corners: bool,
    ) -> OpResult<Value> {
        if rank_of(op, input)? != 5 {
            bail!("grid_sampler_3d needs a 5-D input");
        }
        grid_sample(op, input, grid, interpolation_mode, padding_mode, align_corners)
    }

    /// scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, Tensor? attn_mask=None,
    ///     float dropout_p=0.0, bool is_causal=False, *, float? scale=None, bool enable_gqa=False) -> Tensor
    #[target("aten::scaled_dot_product_attention")]
    fn scaled_dot_product_attention(
        op,
        query: Tensor,
        key: Tensor,
        value: Tensor,
        attn_mask: Option<Tensor> = None,
        dropout_p: f64 = 0.0,
        is_causal: bool = false,
        scale: Option<f64> = None,
        enable_gqa: bool = false,
    ) -> OpResult<Value> {
        no_attention_dropout(dropout_p)?;
        attention(op, &Sdpa { query, key, value, mask: attn_mask, is_causal, scale, gqa: enable_gqa })
    }

    /// _scaled_dot_product_flash_attention_for_cpu(Tensor query, Tensor key, Tensor value, float dropout_p=0.,
    ///     bool is_causal=False, *, Tensor? attn_mask=None, float? scale=None) -> (Tensor output, Tensor logsumexp)
    #[target("aten::_scaled_dot_product_flash_attention_for_cpu")]
    fn _scaled_dot_product_flash_attention_for_cpu(
        op,
        query: Tensor,
        key: Tensor,
        value: Tensor,
        dropout_p: f64 = 0.0,
        is_causal: bool = false,
        attn_mask: Option<Tensor> = None,
        scale: Option<f64> = None,
    ) -> OpResult<Vec<Value>> {
        no_attention_dropout(dropout_p)?;
        let a = Sdpa { query, key, value, mask: attn_mask, is_causal, scale, gqa: false };
        // The log of the softmax denominator, per query position: [..., L].
        let (output, logsumexp) = attention_and_logsumexp(op, &a, false)?;
        Ok(vec![output, logsumexp])
    }

    /// _scaled_dot_product_flash_attention(Tensor query, Tensor key, Tensor value, float dropout_p=0.,
    ///     bool is_causal=False, bool return_debug_mask=False, *, float? scale=None) -> (Tensor output,
    ///     Tensor logsumexp, Tensor cum_seq_q, Tensor cum_seq_k, SymInt max_q, SymInt max_k, Tensor rng_state,
    ///     Tensor unused, Tensor debug_attn_mask)
    #[target("aten::_scaled_dot_product_flash_attention")]
    fn _scaled_dot_product_flash_attention(
        op,
        query: Tensor,
        key: Tensor,
        value: Tensor,
        dropout_p: f64 = 0.0,
        is_causal: bool = false,
        return_debug_mask: bool = false,
        scale: Option<f64> = None,
    ) -> OpResult<Vec<Option<Value>>> {
        no_attention_dropout(dropout_p)?;
        if return_debug_mask {
            bail!("return_debug_mask=True: the debug attention mask is a CUDA kernel's internal state");
        }
        let a = Sdpa { query, key, value, mask: None, is_causal, scale, gqa: false };
        let (output, logsumexp) = attention_and_logsumexp(op, &a, false)?;
        // The sequence offsets, maximum lengths and RNG state describe the CUDA kernel's launch (its
        // varlen batching and dropout seed): not computed, so a program that reads them fails.
        let mut outs = vec![Some(output), Some(logsumexp)];
        outs.extend(std::iter::repeat_n(None, 7));
        Ok(outs)
    }

    /// _scaled_dot_product_efficient_attention(Tensor query, Tensor key, Tensor value, Tensor? attn_bias,
    ///     bool compute_log_sumexp, float dropout_p=0., bool is_causal=False, *, float? scale=None) -> (Tensor output,
    ///     Tensor log_sumexp, Tensor philox_seed, Tensor philox_offset)
    #[target("aten::_scaled_dot_product_efficient_attention")]
    fn _scaled_dot_product_efficient_attention(
        op,
        query: Tensor,
        key: Tensor,
        value: Tensor,
        attn_bias: Option<Tensor>,
        // The kernel pads its log-sum-exp to a multiple of 32 query positions (undefined values
        // past L): not computed, so a program that reads it fails.
        _compute_log_sumexp: Ignored,
        dropout_p: f64 = 0.0,
        is_causal: bool = false,
        scale: Option<f64> = None,
    ) -> OpResult<Vec<Option<Value>>> {
        no_attention_dropout(dropout_p)?;
        let a = Sdpa { query, key, value, mask: attn_bias, is_causal, scale, gqa: false };
        // The philox seed and offset are the dropout RNG's state.
        Ok(vec![Some(attention(op, &a)?), None, None, None])
    }

    /// _scaled_dot_product_cudnn_attention(Tensor query, Tensor key, Tensor value, Tensor? attn_bias,
    ///     bool compute_log_sumexp, float dropout_p=0., bool is_causal=False, bool return_debug_mask=False, *,
    ///     float? scale=None) -> (Tensor output, Tensor logsumexp, Tensor cum_seq_q, Tensor cum_seq_k, SymInt max_q,
    ///     SymInt max_k, Tensor philox_seed, Tensor philox_offset, Tensor debug_attn_mask)
    #[target("aten::_scaled_dot_product_cudnn_attention")]
    fn _scaled_dot_product_cudnn_attention(
        op,
        query: Tensor,
        key: Tensor,
        value: Tensor,
        attn_bias: Option<Tensor>,
        // Whether the kernel fills the log-sum-exp; it is computed either way.
        _compute_log_sumexp: Ignored,
        dropout_p: f64 = 0.0,
        is_causal: bool = false,
        return_debug_mask: bool = false,
        scale: Option<f64> = None,
    ) -> OpResult<Vec<Option<Value>>> {
        no_attention_dropout(dropout_p)?;
        if return_debug_mask {
            bail!("return_debug_mask=True: the debug attention mask is a CUDA kernel's internal state");
        }
        let a = Sdpa { query, key, value, mask: attn_bias, is_causal, scale, gqa: false };
        // cuDNN's log-sum-exp is [B, H, L, 1]; the sequence offsets, lengths and RNG state are the
        // kernel's launch, not computed.
        let (output, logsumexp) = attention_and_logsumexp(op, &a, true)?;
        let mut outs = vec![Some(output), Some(logsumexp)];
        outs.extend(std::iter::repeat_n(None, 7));
        Ok(outs)
    }

    /// _scaled_dot_product_fused_attention_overrideable(Tensor query, Tensor key, Tensor value,
    ///     Tensor? attn_bias=None, float dropout_p=0., bool is_causal=False, bool return_debug_mask=False, *,
    ///     float? scale=None) -> (Tensor output, Tensor logsumexp, Tensor cum_seq_q, Tensor cum_seq_k, SymInt max_q,
    ///     SymInt max_k, Tensor philox_seed, Tensor philox_offset, Tensor debug_attn_mask)
    ///
    /// The fused kernel of out-of-tree devices (XPU, MTIA, PrivateUse1).
    #[target("aten::_scaled_dot_product_fused_attention_overrideable")]
    fn _scaled_dot_product_fused_attention_overrideable(
        op,
        query: Tensor,
        key: Tensor,
        value: Tensor,
        attn_bias: Option<Tensor> = None,
        dropout_p: f64 = 0.0,
        is_causal: bool = false,
        return_debug_mask: bool = false,
        scale: Option<f64> = None,
    ) -> OpResult<Vec<Option<Value>>> {
        no_attention_dropout(dropout_p)?;
        if return_debug_mask {
            bail!("return_debug_mask=True: the debug attention mask is a device kernel's internal state");
        }
        let a = Sdpa { query, key, value, mask: attn_bias, is_causal, scale, gqa: false };
        // The log-sum-exp is [B, H, L] for 4-D inputs ([1, H, L] for 3-D ones: not computed).
        let (output, logsumexp) = attention_and_logsumexp(op, &a, false)?;
        let logsumexp = (rank_of(op, query)? == 4).then_some(logsumexp);
        let mut outs = vec![Some(output), logsumexp];
        outs.extend(std::iter::repeat_n(None, 7));
        Ok(outs)
    }

    /// native_dropout(Tensor input, float p, bool? train) -> (Tensor, Tensor)
    #[target("aten::native_dropout")]
    fn native_dropout(op, input: Tensor, p: f64, train: Option<bool>) -> OpResult<Vec<Value>> {
        // torch draws the mask unless train is False; with p = 0 it keeps every element.
        if train != Some(false) && p != 0.0 {
            bail!("native_dropout in training mode (p={p}) is random; hint: call model.eval() before torch.export");
        }
        let shape = op.Shape(input).out();
        let keep = op.ConstantOfShape(shape).value(constant_data(DType::Bool, vec![1], &[1.0])?).out();
        Ok(vec![op.Identity(input), keep])
    }

    /// dropout(Tensor input, float p, bool train) -> Tensor
    #[target("aten::dropout", "aten::feature_dropout", "aten::alpha_dropout", "aten::feature_alpha_dropout")]
    fn dropout(op, input: Tensor, p: f64, train: bool) -> OpResult<Value> {
        if train && p == 1.0 {
            // Every element dropped: torch multiplies by 0 (NaN and inf stay NaN), in every variant.
            let t = dtype_of(op, input)?;
            let zero = op.scalar(t, 0.0);
            return Ok(op.Mul(input, zero));
        }
        if train && p > 0.0 {
            bail!("dropout in training mode is random; hint: call model.eval() before torch.export");
        }
        Ok(input)
    }

    /// native_layer_norm_backward(Tensor grad_out, Tensor input, SymInt[] normalized_shape, Tensor mean, Tensor rstd,
    ///     Tensor? weight, Tensor? bias, bool[3] output_mask) -> (Tensor, Tensor, Tensor)
    #[target("aten::native_layer_norm_backward")]
    fn native_layer_norm_backward(
        op,
        grad_out: Tensor,
        input: Tensor,
        normalized_shape: Vec<SymInt>,
        mean: Tensor,
        rstd: Tensor,
        weight: Option<Tensor>,
        _bias: Ignored, // its gradient is the output's summed, whatever its value
        output_mask: Vec<bool>,
    ) -> OpResult<Vec<Option<Value>>> {
        let t = float_result_dtype(op, grad_out)?;
        let r = rank_of(op, input)?;
        let k = normalized_shape.len();
        if k > r || output_mask.len() != 3 {
            let flags = output_mask.len();
            bail!("native_layer_norm_backward: {k} normalized axes of a rank-{r} input, {flags} output flags");
        }
        let norm_axes: Vec<i64> = (r - k..r).map(|a| a as i64).collect();
        let batch_axes: Vec<i64> = (0..r - k).map(|a| a as i64).collect();
        let g = cast(op, grad_out, t);
        let (x, mean, rstd) = (cast(op, input, t), cast(op, mean, t), cast(op, rstd, t));
        let centered = op.Sub(x, mean);
        let x_hat = op.Mul(centered, rstd);
        let gw = match weight {
            Some(w) => {
                let w = cast(op, w, t);
                op.Mul(g, w)
            }
            None => g,
        };
        let grad_input = output_mask[0].then(|| normalized_input_grad(op, gw, x_hat, rstd, &norm_axes));
        let grad_weight = output_mask[1].then(|| {
            let gx = op.Mul(g, x_hat);
            sum_over(op, gx, &batch_axes)
        });
        let grad_bias = output_mask[2].then(|| sum_over(op, g, &batch_axes));
        Ok(vec![grad_input, grad_weight, grad_bias])
    }

    /// native_group_norm_backward(Tensor grad_out, Tensor input, Tensor mean, Tensor rstd, Tensor? weight, SymInt N,
    ///     SymInt C, SymInt HxW, int group, bool[3] output_mask) -> (Tensor, Tensor, Tensor)
    #[target("aten::native_group_norm_backward")]
    fn native_group_norm_backward(
        op,
        grad_out: Tensor,
        input: Tensor,
        mean: Tensor,
        rstd: Tensor,
        weight: Option<Tensor>,
        // The sizes come from the input's shape.
        _N: Ignored,
        _C: Ignored,
        _HxW: Ignored,
        group: i64,
        output_mask: Vec<bool>,
    ) -> OpResult<Vec<Option<Value>>> {
        // Normalized over [N, group, C / group · HxW]: the layer norm's gradient there, with the
        // per-channel scale applied in the input's own layout first.
        let t = float_result_dtype(op, grad_out)?;
        let r = rank_of(op, input)?;
        if r < 2 || group < 1 || output_mask.len() != 3 {
            bail!("native_group_norm_backward: a rank-{r} input in {group} groups, {} output flags", output_mask.len());
        }
        let channel_sums: Vec<i64> = std::iter::once(0).chain(2..r as i64).collect();
        let g = cast(op, grad_out, t);
        let (x, mean, rstd) = (cast(op, input, t), cast(op, mean, t), cast(op, rstd, t));
        let gw = match weight {
            Some(w) => {
                let w = cast(op, w, t);
                let w = channel_view(op, w, r);
                op.Mul(g, w)
            }
            None => g,
        };
        let grouped = op.const_i64s(&[0, group, -1]);
        let last = op.const_i64s(&[2]);
        let shape = op.Shape(x).out();
        let x_g = op.Reshape(x, grouped).out();
        let (mean, rstd) = (op.Unsqueeze(mean, last), op.Unsqueeze(rstd, last));
        let centered = op.Sub(x_g, mean);
        let x_hat = op.Mul(centered, rstd);
        let grad_input = if output_mask[0] {
            let gw_g = op.Reshape(gw, grouped).out();
            let d = normalized_input_grad(op, gw_g, x_hat, rstd, &[2]);
            Some(op.Reshape(d, shape).out())
        } else {
            None
        };
        let grad_weight = if output_mask[1] {
            let x_hat = op.Reshape(x_hat, shape).out();
            let gx = op.Mul(g, x_hat);
            Some(sum_over(op, gx, &channel_sums))
        } else {
            None
        };
        let grad_bias = output_mask[2].then(|| sum_over(op, g, &channel_sums));
        Ok(vec![grad_input, grad_weight, grad_bias])
    }

    /// convolution_backward(Tensor grad_output, Tensor input, Tensor weight, SymInt[]? bias_sizes, SymInt[] stride,
    ///     SymInt[] padding, SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups, bool[3]
    ///     output_mask) -> (Tensor, Tensor, Tensor)
    #[target("aten::convolution_backward")]
    fn convolution_backward(
        op,
        grad_output: Tensor,
        input: Tensor,
        weight: Tensor,
        _bias_sizes: Ignored, // the bias gradient's size is the output's channel count
        stride: Vec<i64>,
        padding: Vec<i64>,
        dilation: Vec<i64>,
        transposed: bool,
        _output_padding: Ignored, // only a transposed convolution has one
        groups: i64,
        output_mask: Vec<bool>,
    ) -> OpResult<Vec<Option<Value>>> {
        if transposed {
            bail!("the backward of a transposed convolution is not translated; hint: translate it in a custom table");
        }
        let r = rank_of(op, input)?;
        if r < 3 || groups < 1 || output_mask.len() != 3 {
            bail!("convolution_backward: a rank-{r} input in {groups} groups, {} output flags", output_mask.len());
        }
        let k = r - 2;
        let ins = static_tail(op, input, 2, "convolution_backward")?;
        let c = ConvGrad {
            stride: expand_param(&stride, k, 1)?,
            dilation: expand_param(&dilation, k, 1)?,
            pads: pads_of(&padding, k)?,
            kernel: static_tail(op, weight, 2, "convolution_backward's weight")?,
            outs: static_tail(op, grad_output, 2, "convolution_backward's gradient")?,
        };
        let t = float_result_dtype(op, grad_output)?;
        let (g, x, w) = (cast(op, grad_output, t), cast(op, input, t), cast(op, weight, t));
        let grad_input = if output_mask[0] {
            // The transposed convolution of the gradient by the same weight; output_padding
            // restores the input positions past the last window (fewer than a stride).
            let mut extra = Vec::with_capacity(k);
            for (i, &n) in ins.iter().enumerate() {
                let reach = (c.outs[i] - 1) * c.stride[i] - 2 * c.pads[i] + c.dilation[i] * (c.kernel[i] - 1) + 1;
                extra.push(n - reach);
            }
            if extra.iter().any(|&e| e < 0) {
                bail!("convolution_backward: the gradient's sizes {:?} do not fit an input of sizes {ins:?}", c.outs);
            }
            let y = op
                .ConvTranspose(g, w, None)
                .kernel_shape(&c.kernel)
                .strides(&c.stride)
                .dilations(&c.dilation)
                .pads(&c.pads)
                .output_padding(&extra)
                .group(groups)
                .out();
            Some(y)
        } else {
            None
        };
        let grad_weight = if output_mask[1] {
            if groups == 1 {
                Some(conv_weight_grad(op, x, g, r, &c))
            } else {
                // One weight gradient per group, stacked along the output channels.
                let channels = |v: Value| match op.shape(v).and_then(|s| s.get(1)) {
                    Some(Dim::Fixed(c)) => Ok(*c),
                    _ => Err(OpError::new("convolution_backward in groups needs a static channel count")),
                };
                let (cin, cout) = (channels(x)?, channels(g)?);
                if cin % groups != 0 || cout % groups != 0 {
                    bail!("convolution_backward: {cin} and {cout} channels do not split into {groups} groups");
                }
                let one = op.const_i64s(&[1]);
                let mut parts = Vec::new();
                for i in 0..groups {
                    let (xs, xe) = (op.const_i64s(&[i * cin / groups]), op.const_i64s(&[(i + 1) * cin / groups]));
                    let (gs, ge) = (op.const_i64s(&[i * cout / groups]), op.const_i64s(&[(i + 1) * cout / groups]));
                    let xi = op.Slice(x, xs, xe, Some(one), None);
                    let gi = op.Slice(g, gs, ge, Some(one), None);
                    parts.push(conv_weight_grad(op, xi, gi, r, &c));
                }
                Some(op.Concat(&parts).axis(0).out())
            }
        } else {
            None
        };
        let channel_sums: Vec<i64> = std::iter::once(0).chain(2..r as i64).collect();
        let grad_bias = output_mask[2].then(|| sum_over(op, g, &channel_sums));
        Ok(vec![grad_input, grad_weight, grad_bias])
    }

    /// native_dropout_backward(Tensor grad_output, Tensor mask, float scale) -> Tensor
    #[target("aten::native_dropout_backward")]
    fn native_dropout_backward(op, grad_output: Tensor, mask: Tensor, scale: f64) -> OpResult<Value> {
        let t = float_result_dtype(op, grad_output)?;
        let g = cast(op, grad_output, t);
        let m = cast(op, mask, t);
        let s = op.scalar(t, scale);
        let g = op.Mul(g, m);
        Ok(op.Mul(g, s))
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
        let t = float_result_dtype(op, input1)?;
        let (a, b, w) = (cast(op, input1, t), cast(op, input2, t), cast(op, weight, t));
        let y = op.Einsum(&[a, w, b]).equation("...i,oij,...j->...o").out();
        Ok(match bias {
            Some(bias) => {
                let bias = cast(op, bias, t);
                op.Add(y, bias)
            }
            None => y,
        })
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
        let t = float_result_dtype(op, i1)?;
        let mut ops = Vec::new();
        for (x, e) in [(i1, &expand1), (i2, &expand2), (i3, &expand3)] {
            let x = cast(op, x, t);
            ops.push(if e.is_empty() {
                x
            } else {
                let a = op.const_i64s(e);
                op.Unsqueeze(x, a)
            });
        }
        let p = op.Mul(ops[0], ops[1]);
        let p = op.Mul(p, ops[2]);
        if sumdim.is_empty() {
            return Ok(p);
        }
        let a = op.const_i64s(&sumdim);
        Ok(op.ReduceSum(p, Some(a)).keepdims(0).out())
    }

    /// _weight_norm(Tensor v, Tensor g, int dim=0) -> Tensor
    #[target("aten::_weight_norm")]
    fn weight_norm(op, v: Tensor, g: Tensor, dim: i64 = 0) -> OpResult<Value> {
        // v · g / ‖v‖, the norm over every dim but `dim` (over all of v when dim is -1).
        let norm = norm_except_dim_of(op, v, 2, dim)?;
        let scale = op.Div(g, norm);
        Ok(op.Mul(v, scale))
    }

    /// norm_except_dim(Tensor v, int pow=2, int dim=0) -> Tensor
    #[target("aten::norm_except_dim")]
    fn norm_except_dim(op, v: Tensor, pow: i64 = 2, dim: i64 = 0) -> OpResult<Value> {
        norm_except_dim_of(op, v, pow, dim)
    }
}
