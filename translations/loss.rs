//! Loss functions (pointwise losses with torch's reductions: 0 none, 1 mean, 2 sum).

use crate::translate::prelude::*;
use crate::translations;
use crate::translations::shared::norms::pairwise;

/// torch's `reduction` argument applied to the pointwise loss `l`.
fn reduce_loss(op: &mut Builder, l: Value, reduction: i64) -> OpResult<Value> {
    match reduction {
        0 => Ok(l),
        1 => {
            // sum / count: an empty loss averages to NaN like torch.
            let t = dtype_of(op, l)?;
            let s = op.ReduceSum(l, None).keepdims(0).out();
            let n = op.Size(l);
            let n = cast(op, n, t);
            Ok(op.Div(s, n))
        }
        2 => Ok(op.ReduceSum(l, None).keepdims(0).out()),
        r => bail!("unknown loss reduction {r}"),
    }
}

/// The loss's compute type and both operands in it.
fn operands(op: &mut Builder, a: Value, b: Value) -> OpResult<(DType, Value, Value)> {
    let t = match op.out_dtype(0) {
        Some(t) => t,
        None => promote(dtype_of(op, a)?, dtype_of(op, b)?),
    };
    if !t.is_float() {
        bail!("losses need floating-point inputs");
    }
    Ok((t, cast(op, a, t), cast(op, b, t)))
}

/// `|a - b|`.
fn abs_diff(op: &mut Builder, a: Value, b: Value) -> Value {
    let d = op.Sub(a, b);
    op.Abs(d)
}

/// The float type a loss computes in, from the node's result type or `x`.
fn loss_type(op: &Builder, x: Value) -> OpResult<DType> {
    let t = match op.out_dtype(0) {
        Some(t) => t,
        None => dtype_of(op, x)?,
    };
    if !t.is_float() {
        bail!("losses need floating-point inputs");
    }
    Ok(t)
}

/// Negative log-likelihood of class-index targets: `(loss, weight)` per target element, classes on
/// axis 1 of `x` (axis 0 for a 1-D `x` and 0-d target). Ignored targets get 0 for both.
fn nll_terms(
    op: &mut Builder,
    x: Value,
    target: Value,
    weight: Option<Value>,
    ignore_index: i64,
    t: DType,
) -> OpResult<(Value, Value)> {
    let r = rank_of(op, x)?;
    let zero_ax = op.const_i64s(&[0]);
    let (x, tg) = if r == 1 {
        let tg = op.Unsqueeze(target, zero_ax);
        (op.Unsqueeze(x, zero_ax), tg)
    } else {
        (x, target)
    };
    let tg = cast(op, tg, DType::Int64);
    let ign = op.scalar_i64(ignore_index);
    let ignored = op.Equal(tg, ign);
    let z = op.scalar_i64(0);
    let safe = op.Where(ignored, z, tg);
    let one_ax = op.const_i64s(&[1]);
    let idx = op.Unsqueeze(safe, one_ax);
    let g = op.GatherElements(x, idx).axis(1).out();
    let g = op.Squeeze(g, Some(one_ax));
    let w = match weight {
        Some(w) => {
            let w = cast(op, w, t);
            op.Gather(w, safe).axis(0).out()
        }
        None => {
            let one = op.scalar(t, 1.0);
            let s = op.Shape(g).out();
            op.Expand(one, s)
        }
    };
    let fz = op.scalar(t, 0.0);
    let w = op.Where(ignored, fz, w);
    let l = op.Mul(g, w);
    let l = op.Neg(l);
    let l = op.Where(ignored, fz, l);
    if r == 1 {
        Ok((op.Squeeze(l, Some(zero_ax)), op.Squeeze(w, Some(zero_ax))))
    } else {
        Ok((l, w))
    }
}

/// `nll_loss` with torch's reductions (mean divides by the summed weights of counted targets).
fn nll(
    op: &mut Builder,
    x: Value,
    target: Value,
    weight: Option<Value>,
    reduction: i64,
    ignore_index: i64,
    t: DType,
) -> OpResult<Value> {
    let x = cast(op, x, t);
    let (l, w) = nll_terms(op, x, target, weight, ignore_index, t)?;
    match reduction {
        0 => Ok(l),
        1 => {
            let s = op.ReduceSum(l, None).keepdims(0).out();
            let ws = op.ReduceSum(w, None).keepdims(0).out();
            Ok(op.Div(s, ws))
        }
        2 => Ok(op.ReduceSum(l, None).keepdims(0).out()),
        r => bail!("unknown loss reduction {r}"),
    }
}

/// `max(x, 0)`.
fn relu(op: &mut Builder, x: Value, t: DType) -> Value {
    let z = op.scalar(t, 0.0);
    op.Max(&[x, z])
}

/// cross_entropy of the logits `input @ linear_weight.T + linear_bias` ([N, C]) against class
/// indices, computed in `acc` (a floating type; else the input's): `options` is (reduction,
/// ignore_index, label_smoothing).
fn linear_cross_entropy(
    op: &mut Builder,
    (input, linear_weight, linear_bias): (Value, Value, Option<Value>),
    target: Value,
    weight: Option<Value>,
    (reduction, ignore_index, label_smoothing): (i64, i64, f64),
    acc: DType,
) -> OpResult<Value> {
    if label_smoothing != 0.0 {
        bail!("linear_cross_entropy with label_smoothing is not supported");
    }
    if rank_of(op, input)? != 2 || rank_of(op, linear_weight)? != 2 {
        bail!("linear_cross_entropy (chunked) needs a 2-D input and a 2-D linear_weight");
    }
    let t = if acc.is_float() { acc } else { dtype_of(op, input)? };
    let x = cast(op, input, t);
    let w = cast(op, linear_weight, t);
    let wt = op.Transpose(w).perm(&[1, 0]).out();
    let mut logits = op.MatMul(x, wt);
    if let Some(b) = linear_bias {
        let b = cast(op, b, t);
        logits = op.Add(logits, b);
    }
    // [N, C]: the loss below reads the class axis.
    if let (Some(n), Some(c)) = (op.shape(input).map(|s| s[0].clone()), op.shape(linear_weight).map(|s| s[0].clone())) {
        op.info_mut(logits).shape = Some(vec![n, c]);
    }
    let logp = op.LogSoftmax(logits).axis(1).out();
    nll(op, logp, target, weight, reduction, ignore_index, t)
}

translations! {
    /// l1_loss(Tensor self, Tensor target, int reduction=1) -> Tensor
    #[target("aten::l1_loss")]
    fn l1_loss(op, self_: Tensor, target: Tensor, reduction: i64 = 1) -> OpResult<Value> {
        let (_, a, b) = operands(op, self_, target)?;
        let l = abs_diff(op, a, b);
        reduce_loss(op, l, reduction)
    }

    /// mse_loss(Tensor self, Tensor target, int reduction=1) -> Tensor
    #[target("aten::mse_loss")]
    fn mse_loss(op, self_: Tensor, target: Tensor, reduction: i64 = 1) -> OpResult<Value> {
        let (_, a, b) = operands(op, self_, target)?;
        let d = op.Sub(a, b);
        let l = op.Mul(d, d);
        reduce_loss(op, l, reduction)
    }

    /// smooth_l1_loss(Tensor self, Tensor target, int reduction=1, float beta=1.) -> Tensor
    #[target("aten::smooth_l1_loss")]
    fn smooth_l1_loss(
        op,
        self_: Tensor,
        target: Tensor,
        reduction: i64 = 1,
        beta: f64 = 1.0,
    ) -> OpResult<Value> {
        let (t, a, b) = operands(op, self_, target)?;
        let d = abs_diff(op, a, b);
        if beta == 0.0 {
            return reduce_loss(op, d, reduction);
        }
        // d < beta: 0.5·d²/beta, else d - 0.5·beta.
        let bv = op.scalar(t, beta);
        let lt = op.Less(d, bv);
        let sq = op.Mul(d, d);
        let half = op.scalar(t, 0.5);
        let sq = op.Mul(sq, half);
        let quad = op.Div(sq, bv);
        let hb = op.scalar(t, 0.5 * beta);
        let lin = op.Sub(d, hb);
        let l = op.Where(lt, quad, lin);
        reduce_loss(op, l, reduction)
    }

    /// huber_loss(Tensor self, Tensor target, int reduction=1, float delta=1.) -> Tensor
    #[target("aten::huber_loss")]
    fn huber_loss(
        op,
        self_: Tensor,
        target: Tensor,
        reduction: i64 = 1,
        delta: f64 = 1.0,
    ) -> OpResult<Value> {
        let (t, a, b) = operands(op, self_, target)?;
        let d = abs_diff(op, a, b);
        // d < delta: 0.5·d², else delta·(d - 0.5·delta).
        let dv = op.scalar(t, delta);
        let lt = op.Less(d, dv);
        let sq = op.Mul(d, d);
        let half = op.scalar(t, 0.5);
        let quad = op.Mul(sq, half);
        let hd = op.scalar(t, 0.5 * delta);
        let lin = op.Sub(d, hd);
        let lin = op.Mul(lin, dv);
        let l = op.Where(lt, quad, lin);
        reduce_loss(op, l, reduction)
    }

    /// binary_cross_entropy(Tensor self, Tensor target, Tensor? weight=None, int reduction=1) -> Tensor
    #[target("aten::binary_cross_entropy")]
    fn binary_cross_entropy(
        op,
        self_: Tensor,
        target: Tensor,
        weight: Option<Tensor> = None,
        reduction: i64 = 1,
    ) -> OpResult<Value> {
        // -(y·max(log x, -100) + (1 - y)·max(log(1 - x), -100)) · w
        let (t, x, y) = operands(op, self_, target)?;
        let floor = op.scalar(t, -100.0);
        let one = op.scalar(t, 1.0);
        let lx = op.Log(x);
        let lx = op.Max(&[lx, floor]);
        let omx = op.Sub(one, x);
        let l1x = op.Log(omx);
        let l1x = op.Max(&[l1x, floor]);
        let omy = op.Sub(one, y);
        let a = op.Mul(y, lx);
        let b = op.Mul(omy, l1x);
        let s = op.Add(a, b);
        let mut l = op.Neg(s);
        if let Some(w) = weight {
            let w = cast(op, w, t);
            l = op.Mul(l, w);
        }
        reduce_loss(op, l, reduction)
    }

    /// binary_cross_entropy_with_logits(Tensor self, Tensor target, Tensor? weight=None, Tensor? pos_weight=None,
    ///     int reduction=1) -> Tensor
    #[target("aten::binary_cross_entropy_with_logits")]
    fn binary_cross_entropy_with_logits(
        op,
        self_: Tensor,
        target: Tensor,
        weight: Option<Tensor> = None,
        pos_weight: Option<Tensor> = None,
        reduction: i64 = 1,
    ) -> OpResult<Value> {
        // (1 - y)·x + lw·(log(1 + exp(-|x|)) + max(-x, 0)), lw = 1 + (pos_weight - 1)·y.
        let (t, x, y) = operands(op, self_, target)?;
        let one = op.scalar(t, 1.0);
        let zero = op.scalar(t, 0.0);
        let omy = op.Sub(one, y);
        let first = op.Mul(omy, x);
        let ax = op.Abs(x);
        let nax = op.Neg(ax);
        let e = op.Exp(nax);
        let ope = op.Add(one, e);
        let sp = op.Log(ope);
        let nx = op.Neg(x);
        let mv = op.Max(&[nx, zero]);
        let mut tail = op.Add(sp, mv);
        if let Some(pw) = pos_weight {
            let pw = cast(op, pw, t);
            let pm1 = op.Sub(pw, one);
            let py = op.Mul(pm1, y);
            let lw = op.Add(py, one);
            tail = op.Mul(lw, tail);
        }
        let mut l = op.Add(first, tail);
        if let Some(w) = weight {
            let w = cast(op, w, t);
            l = op.Mul(l, w);
        }
        reduce_loss(op, l, reduction)
    }

    /// kl_div(Tensor self, Tensor target, int reduction=1, *, bool log_target=False) -> Tensor
    #[target("aten::kl_div")]
    fn kl_div(
        op,
        self_: Tensor,
        target: Tensor,
        reduction: i64 = 1,
        log_target: bool = false,
    ) -> OpResult<Value> {
        let (t, x, y) = operands(op, self_, target)?;
        let l = if log_target {
            // exp(y)·(y - x)
            let e = op.Exp(y);
            let d = op.Sub(y, x);
            op.Mul(e, d)
        } else {
            // xlogy(y, y) - y·x, with 0·log 0 = 0.
            let zero = op.scalar(t, 0.0);
            let ly = op.Log(y);
            let yly = op.Mul(y, ly);
            let is0 = op.Equal(y, zero);
            let xl = op.Where(is0, zero, yly);
            let yx = op.Mul(y, x);
            op.Sub(xl, yx)
        };
        reduce_loss(op, l, reduction)
    }

    /// hinge_embedding_loss(Tensor self, Tensor target, float margin=1., int reduction=1) -> Tensor
    #[target("aten::hinge_embedding_loss")]
    fn hinge_embedding_loss(
        op,
        self_: Tensor,
        target: Tensor,
        margin: f64 = 1.0,
        reduction: i64 = 1,
    ) -> OpResult<Value> {
        // where(y != 1, max(margin - x, 0), 0) + where(y != -1, x, 0)
        let (t, x, y) = operands(op, self_, target)?;
        let zero = op.scalar(t, 0.0);
        let one = op.scalar(t, 1.0);
        let mone = op.scalar(t, -1.0);
        let m = op.scalar(t, margin);
        let mx = op.Sub(m, x);
        let mx = op.Max(&[mx, zero]);
        let is1 = op.Equal(y, one);
        let a = op.Where(is1, zero, mx);
        let ism1 = op.Equal(y, mone);
        let b = op.Where(ism1, zero, x);
        let l = op.Add(a, b);
        reduce_loss(op, l, reduction)
    }

    /// margin_ranking_loss(Tensor input1, Tensor input2, Tensor target, float margin=0., int reduction=1) -> Tensor
    #[target("aten::margin_ranking_loss")]
    fn margin_ranking_loss(
        op,
        input1: Tensor,
        input2: Tensor,
        target: Tensor,
        margin: f64 = 0.0,
        reduction: i64 = 1,
    ) -> OpResult<Value> {
        // max(0, -y·(x1 - x2) + margin)
        let (t, a, b) = operands(op, input1, input2)?;
        let y = cast(op, target, t);
        let d = op.Sub(a, b);
        let yd = op.Mul(y, d);
        let n = op.Neg(yd);
        let m = op.scalar(t, margin);
        let s = op.Add(n, m);
        let zero = op.scalar(t, 0.0);
        let l = op.Max(&[s, zero]);
        reduce_loss(op, l, reduction)
    }

    /// soft_margin_loss(Tensor self, Tensor target, int reduction=1) -> Tensor
    #[target("aten::soft_margin_loss")]
    fn soft_margin_loss(op, self_: Tensor, target: Tensor, reduction: i64 = 1) -> OpResult<Value> {
        // log(1 + exp(-y·x))
        let (t, x, y) = operands(op, self_, target)?;
        let yx = op.Mul(y, x);
        let n = op.Neg(yx);
        let e = op.Exp(n);
        let one = op.scalar(t, 1.0);
        let s = op.Add(one, e);
        let l = op.Log(s);
        reduce_loss(op, l, reduction)
    }

    /// poisson_nll_loss(Tensor input, Tensor target, bool log_input, bool full, float eps, int reduction) -> Tensor
    #[target("aten::poisson_nll_loss")]
    fn poisson_nll_loss(
        op,
        input: Tensor,
        target: Tensor,
        log_input: bool,
        full: bool,
        eps: f64,
        reduction: i64,
    ) -> OpResult<Value> {
        let (t, x, y) = operands(op, input, target)?;
        let mut l = if log_input {
            // exp(x) - y·x
            let e = op.Exp(x);
            let yx = op.Mul(y, x);
            op.Sub(e, yx)
        } else {
            // x - y·log(x + eps)
            let ev = op.scalar(t, eps);
            let xe = op.Add(x, ev);
            let lx = op.Log(xe);
            let ylx = op.Mul(y, lx);
            op.Sub(x, ylx)
        };
        if full {
            // Stirling term y·log y - y + 0.5·log(2πy), where y > 1.
            let one = op.scalar(t, 1.0);
            let zero = op.scalar(t, 0.0);
            let ly = op.Log(y);
            let yly = op.Mul(y, ly);
            let s = op.Sub(yly, y);
            let tp = op.scalar(t, 2.0 * std::f64::consts::PI);
            let tpy = op.Mul(tp, y);
            let ltpy = op.Log(tpy);
            let half = op.scalar(t, 0.5);
            let h = op.Mul(half, ltpy);
            let s = op.Add(s, h);
            let gt = op.Greater(y, one);
            let st = op.Where(gt, s, zero);
            l = op.Add(l, st);
        }
        reduce_loss(op, l, reduction)
    }

    /// nll_loss_nd(Tensor self, Tensor target, Tensor? weight=None, int reduction=1,
    ///     SymInt ignore_index=-100) -> Tensor
    #[target("aten::nll_loss_nd", "aten::nll_loss", "aten::nll_loss2d")]
    fn nll_loss_nd(
        op,
        self_: Tensor,
        target: Tensor,
        weight: Option<Tensor> = None,
        reduction: i64 = 1,
        ignore_index: SymInt = SymInt::Const(-100),
    ) -> OpResult<Value> {
        let SymInt::Const(ignore_index) = ignore_index else { bail!("nll_loss needs a constant ignore_index") };
        let t = loss_type(op, self_)?;
        nll(op, self_, target, weight, reduction, ignore_index, t)
    }

    /// nll_loss_forward(Tensor self, Tensor target, Tensor? weight, int reduction, SymInt ignore_index) -> (Tensor
    ///     output, Tensor total_weight)
    #[target("aten::nll_loss_forward")]
    fn nll_loss_forward(
        op,
        self_: Tensor,
        target: Tensor,
        weight: Option<Tensor>,
        reduction: i64,
        ignore_index: SymInt,
    ) -> OpResult<Vec<Value>> {
        let SymInt::Const(ignore_index) = ignore_index else { bail!("nll_loss needs a constant ignore_index") };
        let t = loss_type(op, self_)?;
        let r = rank_of(op, self_)?;
        if r > 2 {
            bail!("nll_loss_forward takes a 1-D or 2-D input (nll_loss2d_forward the others)");
        }
        let output = nll(op, self_, target, weight, reduction, ignore_index, t)?;
        // The summed weights of the counted targets; torch leaves it 0 for an unreduced batch.
        let total_weight = if reduction == 0 && r == 2 {
            op.scalar(t, 0.0)
        } else {
            let x = cast(op, self_, t);
            let (_, w) = nll_terms(op, x, target, weight, ignore_index, t)?;
            op.ReduceSum(w, None).keepdims(0).out()
        };
        Ok(vec![output, total_weight])
    }

    /// cross_entropy_loss(Tensor self, Tensor target, Tensor? weight=None, int reduction=1, SymInt ignore_index=-100,
    ///     float label_smoothing=0.) -> Tensor
    #[target("aten::cross_entropy_loss")]
    fn cross_entropy_loss(
        op,
        self_: Tensor,
        target: Tensor,
        weight: Option<Tensor> = None,
        reduction: i64 = 1,
        ignore_index: SymInt = SymInt::Const(-100),
        label_smoothing: f64 = 0.0,
    ) -> OpResult<Value> {
        let SymInt::Const(ignore_index) = ignore_index else { bail!("cross_entropy needs a constant ignore_index") };
        let t = loss_type(op, self_)?;
        let r = rank_of(op, self_)?;
        let class_axis = if r == 1 { 0 } else { 1 };
        let x = cast(op, self_, t);
        let logp = op.LogSoftmax(x).axis(class_axis).out();
        if dtype_of(op, target)?.is_float() {
            // Class probabilities: -Σ_c w_c · y_c · log p_c, mean over the other elements.
            let mut y = cast(op, target, t);
            if label_smoothing != 0.0 {
                let Some(Dim::Fixed(c)) = op.shape(self_).and_then(|s| s.get(class_axis as usize)).cloned() else {
                    bail!("label smoothing needs a static class count")
                };
                let a = op.scalar(t, 1.0 - label_smoothing);
                let b = op.scalar(t, label_smoothing / c as f64);
                y = op.Mul(y, a);
                y = op.Add(y, b);
            }
            let mut p = op.Mul(logp, y);
            if let Some(w) = weight {
                let w = cast(op, w, t);
                let mut shape = vec![1i64; r];
                shape[class_axis as usize] = -1;
                let s = op.const_i64s(&shape);
                let w = op.Reshape(w, s).out();
                p = op.Mul(p, w);
            }
            let axes = op.const_i64s(&[class_axis]);
            let s = op.ReduceSum(p, Some(axes)).keepdims(0).out();
            let l = op.Neg(s);
            return reduce_loss(op, l, reduction);
        }
        let nll_loss = nll(op, logp, target, weight, reduction, ignore_index, t)?;
        if label_smoothing == 0.0 {
            return Ok(nll_loss);
        }
        // torch's cross_entropy_loss_label_smoothing: (1 - ε)·nll + ε/C · smooth, where smooth is
        // -Σ_c w_c·log p_c per element, zero where the target is ignored, reduced like the nll
        // (the mean divides by the summed weights of the kept targets).
        let class_axes = op.const_i64s(&[class_axis]);
        let weighted = match weight {
            Some(w) => {
                let w = cast(op, w, t);
                let mut shape = vec![1i64; r];
                shape[class_axis as usize] = -1;
                let s = op.const_i64s(&shape);
                let w = op.Reshape(w, s).out();
                op.Mul(logp, w)
            }
            None => logp,
        };
        let summed = op.ReduceSum(weighted, Some(class_axes)).keepdims(0).out();
        let smooth = op.Neg(summed);
        let target = cast(op, target, DType::Int64);
        let ignored = {
            let ii = op.scalar_i64(ignore_index);
            op.Equal(target, ii)
        };
        let zero = op.scalar(t, 0.0);
        let smooth = op.Where(ignored, zero, smooth);
        let smooth = match reduction {
            0 => smooth,
            2 => op.ReduceSum(smooth, None).keepdims(0).out(),
            _ => {
                let total = op.ReduceSum(smooth, None).keepdims(0).out();
                let kept = op.Not(ignored);
                let kept_t = cast(op, kept, t);
                let norm = match weight {
                    Some(w) => {
                        // weight[target] of the kept targets (ignored ones read class 0, then count 0).
                        let w = cast(op, w, t);
                        let zero_i = op.scalar_i64(0);
                        let safe = op.Where(ignored, zero_i, target);
                        let tw = op.Gather(w, safe).axis(0).out();
                        let tw = op.Mul(tw, kept_t);
                        op.ReduceSum(tw, None).keepdims(0).out()
                    }
                    None => op.ReduceSum(kept_t, None).keepdims(0).out(),
                };
                op.Div(total, norm)
            }
        };
        let classes = {
            let c = dim_size(op, x, class_axis);
            let c = cast(op, c, t);
            let empty = op.const_i64s(&[]);
            op.Reshape(c, empty).out()
        };
        let eps = op.scalar(t, label_smoothing);
        let share = op.Div(eps, classes);
        let smooth_part = op.Mul(smooth, share);
        let keep = op.scalar(t, 1.0 - label_smoothing);
        let nll_part = op.Mul(nll_loss, keep);
        Ok(op.Add(nll_part, smooth_part))
    }

    /// torch_nn::_linear_cross_entropy_batch_chunked(Tensor input, Tensor linear_weight, Tensor target,
    ///     Tensor? linear_bias, Tensor? weight, str reduction, int ignore_index, float label_smoothing,
    ///     int batch_chunk_size, str acc_policy, ScalarType acc_dtype, bool allow_retain_graph,
    ///     bool compute_input_grad, bool compute_linear_weight_grad, bool compute_linear_bias_grad)
    ///     -> (Tensor, Tensor, Tensor, Tensor)
    #[target("torch_nn::_linear_cross_entropy_batch_chunked")]
    fn linear_cross_entropy_chunked(
        op,
        input: Tensor,
        linear_weight: Tensor,
        target: Tensor,
        linear_bias: Option<Tensor> = None,
        weight: Option<Tensor> = None,
        reduction: &str,
        ignore_index: i64,
        label_smoothing: f64,
        // How torch splits the batch to save memory: the loss does not depend on it.
        _batch_chunk_size: Ignored,
        _acc_policy: Ignored,
        acc_dtype: ScalarType,
        // Whether backward may run twice: only the backward reads it.
        _allow_retain_graph: Ignored,
        compute_input_grad: bool,
        compute_linear_weight_grad: bool,
        compute_linear_bias_grad: bool,
    ) -> OpResult<Vec<Value>> {
        // cross_entropy(input @ linear_weight.T + linear_bias, target), and the gradients torch
        // precomputes for training, which are empty when not asked for.
        if compute_input_grad || compute_linear_weight_grad || compute_linear_bias_grad {
            bail!("linear_cross_entropy with precomputed gradients is a training op; export the model in eval mode");
        }
        let reduction = match reduction {
            "mean" => 1,
            "sum" => 2,
            r => bail!("linear_cross_entropy (chunked) does not support reduction {r:?}"),
        };
        let t = loss_type(op, input)?;
        let loss = linear_cross_entropy(
            op,
            (input, linear_weight, linear_bias),
            target,
            weight,
            (reduction, ignore_index, label_smoothing),
            onnx_dtype(acc_dtype),
        )?;
        let loss = cast(op, loss, t);
        let zero = constant_data(t, vec![1], &[0.0])?;
        let mut outs = vec![loss];
        for shape in [&[0i64, 0][..], &[0, 0], &[0]] {
            let s = op.const_i64s(shape);
            outs.push(op.ConstantOfShape(s).value(zero.clone()).out());
        }
        Ok(outs)
    }

    /// torch_nn::_linear_cross_entropy_batch_chunked_no_reduction(Tensor input, Tensor linear_weight,
    ///     Tensor target, Tensor? linear_bias, Tensor? weight, int ignore_index, int batch_chunk_size,
    ///     str acc_policy, ScalarType acc_dtype) -> Tensor
    #[target("torch_nn::_linear_cross_entropy_batch_chunked_no_reduction")]
    fn linear_cross_entropy_chunked_no_reduction(
        op,
        input: Tensor,
        linear_weight: Tensor,
        target: Tensor,
        linear_bias: Option<Tensor> = None,
        weight: Option<Tensor> = None,
        ignore_index: i64,
        // How torch splits the batch to save memory: the loss does not depend on it.
        _batch_chunk_size: Ignored,
        _acc_policy: Ignored,
        acc_dtype: ScalarType,
    ) -> OpResult<Value> {
        // The per-sample cross_entropy(input @ linear_weight.T + linear_bias, target).
        let t = loss_type(op, input)?;
        let loss = linear_cross_entropy(
            op,
            (input, linear_weight, linear_bias),
            target,
            weight,
            (0, ignore_index, 0.0),
            onnx_dtype(acc_dtype),
        )?;
        Ok(cast(op, loss, t))
    }

    /// cosine_embedding_loss(Tensor input1, Tensor input2, Tensor target, float margin=0., int reduction=1) -> Tensor
    #[target("aten::cosine_embedding_loss")]
    fn cosine_embedding_loss(
        op,
        input1: Tensor,
        input2: Tensor,
        target: Tensor,
        margin: f64 = 0.0,
        reduction: i64 = 1,
    ) -> OpResult<Value> {
        // cos = Σx1·x2 / sqrt((Σx1² + 1e-12)(Σx2² + 1e-12)) over the dim after the target's;
        // y = 1: 1 - cos; y = -1: max(cos - margin, 0); else 0.
        let (t, a, b) = operands(op, input1, input2)?;
        let td = rank_of(op, target)? as i64;
        let axes = op.const_i64s(&[td]);
        let ab = op.Mul(a, b);
        let prod = op.ReduceSum(ab, Some(axes)).keepdims(0).out();
        let eps = op.scalar(t, 1e-12);
        let aa = op.Mul(a, a);
        let m1 = op.ReduceSum(aa, Some(axes)).keepdims(0).out();
        let m1 = op.Add(m1, eps);
        let bb = op.Mul(b, b);
        let m2 = op.ReduceSum(bb, Some(axes)).keepdims(0).out();
        let m2 = op.Add(m2, eps);
        let den = op.Mul(m1, m2);
        let den = op.Sqrt(den);
        let cos = op.Div(prod, den);
        let one = op.scalar(t, 1.0);
        let pos = op.Sub(one, cos);
        let mg = op.scalar(t, margin);
        let neg = op.Sub(cos, mg);
        let neg = relu(op, neg, t);
        let y = cast(op, target, t);
        let zero = op.scalar(t, 0.0);
        let is_pos = op.Equal(y, one);
        let mone = op.scalar(t, -1.0);
        let is_neg = op.Equal(y, mone);
        let lp = op.Where(is_pos, pos, zero);
        let ln = op.Where(is_neg, neg, zero);
        let l = op.Add(lp, ln);
        reduce_loss(op, l, reduction)
    }

    /// triplet_margin_loss(Tensor anchor, Tensor positive, Tensor negative, float margin=1., float p=2,
    ///     float eps=1e-06, bool swap=False, int reduction=1) -> Tensor
    #[target("aten::triplet_margin_loss")]
    fn triplet_margin_loss(
        op,
        anchor: Tensor,
        positive: Tensor,
        negative: Tensor,
        margin: f64 = 1.0,
        p: f64 = 2.0,
        eps: f64 = 1e-6,
        swap: bool = false,
        reduction: i64 = 1,
    ) -> OpResult<Value> {
        // max(margin + d(a, p) - d(a, n), 0) with d the pairwise distance (d(a, n) = min(d(a, n), d(p, n)) with swap).
        let t = loss_type(op, anchor)?;
        let dp = pairwise(op, anchor, positive, p, eps, false, t)?;
        let mut dn = pairwise(op, anchor, negative, p, eps, false, t)?;
        if swap {
            let ds = pairwise(op, positive, negative, p, eps, false, t)?;
            dn = op.Min(&[dn, ds]);
        }
        let m = op.scalar(t, margin);
        let l = op.Add(m, dp);
        let l = op.Sub(l, dn);
        let l = relu(op, l, t);
        reduce_loss(op, l, reduction)
    }

    /// multi_margin_loss(Tensor self, Tensor target, Scalar p=1, Scalar margin=1, Tensor? weight=None,
    ///     int reduction=1) -> Tensor
    #[target("aten::multi_margin_loss")]
    fn multi_margin_loss(
        op,
        self_: Tensor,
        target: Tensor,
        p: i64 = 1,
        margin: f64 = 1.0,
        weight: Option<Tensor> = None,
        reduction: i64 = 1,
    ) -> OpResult<Value> {
        // Per sample: Σ_{j≠y} (max(margin - x[y] + x[j], 0))^p · w[y] / C.
        if p != 1 && p != 2 {
            bail!("multi_margin_loss supports p = 1 or 2");
        }
        let t = loss_type(op, self_)?;
        let r = rank_of(op, self_)?;
        let tr = rank_of(op, target)?;
        let x = cast(op, self_, t);
        let xs = if r == 2 { None } else { Some(op.const_i64s(&[1, -1])) };
        let x = match xs {
            Some(s) => op.Reshape(x, s).out(),
            None => x,
        };
        let m1 = op.const_i64s(&[-1, 1]);
        let tg = cast(op, target, DType::Int64);
        let tg = op.Reshape(tg, m1).out();
        let xy = op.GatherElements(x, tg).axis(1).out();
        let mg = op.scalar(t, margin);
        let z = op.Sub(mg, xy);
        let z = op.Add(z, x);
        let mut h = relu(op, z, t);
        if p == 2 {
            h = op.Mul(h, h);
        }
        if let Some(w) = weight {
            let w = cast(op, w, t);
            let wy = op.Gather(w, tg).axis(0).out();
            h = op.Mul(h, wy);
        }
        // Drop the target column.
        let c = op.Shape(x).start(1).end(2).out();
        let (zero, one) = (op.scalar_i64(0), op.scalar_i64(1));
        let c0 = op.Squeeze(c, None);
        let cols = op.Range(zero, c0, one);
        let is_y = op.Equal(cols, tg);
        let fz = op.scalar(t, 0.0);
        let h = op.Where(is_y, fz, h);
        let ax1 = op.const_i64s(&[1]);
        let s = op.ReduceSum(h, Some(ax1)).keepdims(0).out();
        let cf = cast(op, c, t);
        let l = op.Div(s, cf);
        let l = if tr == 0 {
            let e = op.const_i64s(&[]);
            op.Reshape(l, e).out()
        } else {
            l
        };
        reduce_loss(op, l, reduction)
    }

    /// multilabel_margin_loss(Tensor self, Tensor target, int reduction=1) -> Tensor
    #[target("aten::multilabel_margin_loss")]
    fn multilabel_margin_loss(op, self_: Tensor, target: Tensor, reduction: i64 = 1) -> OpResult<Value> {
        // Per sample: Σ_{j target} Σ_{k not target} max(1 - (x[j] - x[k]), 0) / C, the targets being
        // the entries of `target` before its first -1.
        let t = loss_type(op, self_)?;
        let r = rank_of(op, self_)?;
        let x = cast(op, self_, t);
        let tg = cast(op, target, DType::Int64);
        let (x, tg) = if r == 2 {
            (x, tg)
        } else {
            let s = op.const_i64s(&[1, -1]);
            (op.Reshape(x, s).out(), op.Reshape(tg, s).out())
        };
        let zero = op.scalar_i64(0);
        let neg = op.Less(tg, zero);
        let negi = cast(op, neg, DType::Int64);
        let one_ax = op.scalar_i64(1);
        let seen = op.CumSum(negi, one_ax).out();
        let valid = op.Equal(seen, zero);
        let safe = op.Where(valid, tg, zero);
        // is_target[n, k] = any_j valid[n, j] & tg[n, j] == k
        let c = op.Shape(x).start(1).end(2).out();
        let c0 = op.Squeeze(c, None);
        let one = op.scalar_i64(1);
        let cols = op.Range(zero, c0, one);
        let a2 = op.const_i64s(&[2]);
        let t3 = op.Unsqueeze(safe, a2);
        let v3 = op.Unsqueeze(valid, a2);
        let hit = op.Equal(t3, cols);
        let hit = op.And(hit, v3);
        let hit = cast(op, hit, DType::Int64);
        let ax1 = op.const_i64s(&[1]);
        let is_t = op.ReduceMax(hit, Some(ax1)).keepdims(1).out();
        let is_t = cast(op, is_t, DType::Bool);
        // terms[n, j, k] = max(1 - x[n, tg_j] + x[n, k], 0) for valid j and non-target k.
        let xj = op.GatherElements(x, safe).axis(1).out();
        let xj = op.Unsqueeze(xj, a2);
        let xk = op.Unsqueeze(x, ax1);
        let f1 = op.scalar(t, 1.0);
        let z = op.Sub(f1, xj);
        let z = op.Add(z, xk);
        let z = relu(op, z, t);
        let not_t = op.Not(is_t);
        let keep = op.And(v3, not_t);
        let fz = op.scalar(t, 0.0);
        let z = op.Where(keep, z, fz);
        let axes = op.const_i64s(&[1, 2]);
        let s = op.ReduceSum(z, Some(axes)).keepdims(0).out();
        let cf = cast(op, c, t);
        let l = op.Div(s, cf);
        let l = if r <= 1 {
            let e = op.const_i64s(&[]);
            op.Reshape(l, e).out()
        } else {
            l
        };
        reduce_loss(op, l, reduction)
    }
}
