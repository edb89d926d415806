//! Loss functions (pointwise losses with torch's reductions: 0 none, 1 mean, 2 sum).

use crate::translate::prelude::*;
use crate::translations;

/// torch's `reduction` argument applied to the pointwise loss `l`.
fn reduce_loss(op: &mut Builder, l: Value, reduction: i64) -> OpResult<Value> {
    match reduction {
        0 => Ok(l),
        1 => {
            // sum / count: an empty loss averages to NaN like torch.
            let t = dtype_of(op, l)?;
            let s = op.ReduceSum(l, None).keepdims(0).out();
            let n = op.Size(l).out();
            let n = cast(op, n, t);
            Ok(op.Div(s, n).out())
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
    let d = op.Sub(a, b).out();
    op.Abs(d).out()
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
        let d = op.Sub(a, b).out();
        let l = op.Mul(d, d).out();
        reduce_loss(op, l, reduction)
    }

    /// smooth_l1_loss(Tensor self, Tensor target, int reduction=1, float beta=1.) -> Tensor
    #[target("aten::smooth_l1_loss")]
    fn smooth_l1_loss(op, self_: Tensor, target: Tensor, reduction: i64 = 1, beta: f64 = 1.0) -> OpResult<Value> {
        let (t, a, b) = operands(op, self_, target)?;
        let d = abs_diff(op, a, b);
        if beta == 0.0 {
            return reduce_loss(op, d, reduction);
        }
        // d < beta: 0.5·d²/beta, else d - 0.5·beta.
        let bv = op.scalar(t, beta);
        let lt = op.Less(d, bv).out();
        let sq = op.Mul(d, d).out();
        let half = op.scalar(t, 0.5);
        let sq = op.Mul(sq, half).out();
        let quad = op.Div(sq, bv).out();
        let hb = op.scalar(t, 0.5 * beta);
        let lin = op.Sub(d, hb).out();
        let l = op.Where(lt, quad, lin).out();
        reduce_loss(op, l, reduction)
    }

    /// huber_loss(Tensor self, Tensor target, int reduction=1, float delta=1.) -> Tensor
    #[target("aten::huber_loss")]
    fn huber_loss(op, self_: Tensor, target: Tensor, reduction: i64 = 1, delta: f64 = 1.0) -> OpResult<Value> {
        let (t, a, b) = operands(op, self_, target)?;
        let d = abs_diff(op, a, b);
        // d < delta: 0.5·d², else delta·(d - 0.5·delta).
        let dv = op.scalar(t, delta);
        let lt = op.Less(d, dv).out();
        let sq = op.Mul(d, d).out();
        let half = op.scalar(t, 0.5);
        let quad = op.Mul(sq, half).out();
        let hd = op.scalar(t, 0.5 * delta);
        let lin = op.Sub(d, hd).out();
        let lin = op.Mul(lin, dv).out();
        let l = op.Where(lt, quad, lin).out();
        reduce_loss(op, l, reduction)
    }

    /// binary_cross_entropy(Tensor self, Tensor target, Tensor? weight=None, int reduction=1) -> Tensor
    #[target("aten::binary_cross_entropy")]
    fn binary_cross_entropy(op, self_: Tensor, target: Tensor, weight: Option<Tensor> = None, reduction: i64 = 1) -> OpResult<Value> {
        // -(y·max(log x, -100) + (1 - y)·max(log(1 - x), -100)) · w
        let (t, x, y) = operands(op, self_, target)?;
        let floor = op.scalar(t, -100.0);
        let one = op.scalar(t, 1.0);
        let lx = op.Log(x).out();
        let lx = op.Max(&[lx, floor]).out();
        let omx = op.Sub(one, x).out();
        let l1x = op.Log(omx).out();
        let l1x = op.Max(&[l1x, floor]).out();
        let omy = op.Sub(one, y).out();
        let a = op.Mul(y, lx).out();
        let b = op.Mul(omy, l1x).out();
        let s = op.Add(a, b).out();
        let mut l = op.Neg(s).out();
        if let Some(w) = weight {
            let w = cast(op, w, t);
            l = op.Mul(l, w).out();
        }
        reduce_loss(op, l, reduction)
    }

    /// binary_cross_entropy_with_logits(Tensor self, Tensor target, Tensor? weight=None, Tensor? pos_weight=None, int reduction=1) -> Tensor
    #[target("aten::binary_cross_entropy_with_logits")]
    fn binary_cross_entropy_with_logits(op, self_: Tensor, target: Tensor, weight: Option<Tensor> = None, pos_weight: Option<Tensor> = None, reduction: i64 = 1) -> OpResult<Value> {
        // (1 - y)·x + lw·(log(1 + exp(-|x|)) + max(-x, 0)), lw = 1 + (pos_weight - 1)·y.
        let (t, x, y) = operands(op, self_, target)?;
        let one = op.scalar(t, 1.0);
        let zero = op.scalar(t, 0.0);
        let omy = op.Sub(one, y).out();
        let first = op.Mul(omy, x).out();
        let ax = op.Abs(x).out();
        let nax = op.Neg(ax).out();
        let e = op.Exp(nax).out();
        let ope = op.Add(one, e).out();
        let sp = op.Log(ope).out();
        let nx = op.Neg(x).out();
        let mv = op.Max(&[nx, zero]).out();
        let mut tail = op.Add(sp, mv).out();
        if let Some(pw) = pos_weight {
            let pw = cast(op, pw, t);
            let pm1 = op.Sub(pw, one).out();
            let py = op.Mul(pm1, y).out();
            let lw = op.Add(py, one).out();
            tail = op.Mul(lw, tail).out();
        }
        let mut l = op.Add(first, tail).out();
        if let Some(w) = weight {
            let w = cast(op, w, t);
            l = op.Mul(l, w).out();
        }
        reduce_loss(op, l, reduction)
    }

    /// kl_div(Tensor self, Tensor target, int reduction=1, *, bool log_target=False) -> Tensor
    #[target("aten::kl_div")]
    fn kl_div(op, self_: Tensor, target: Tensor, reduction: i64 = 1, log_target: bool = false) -> OpResult<Value> {
        let (t, x, y) = operands(op, self_, target)?;
        let l = if log_target {
            // exp(y)·(y - x)
            let e = op.Exp(y).out();
            let d = op.Sub(y, x).out();
            op.Mul(e, d).out()
        } else {
            // xlogy(y, y) - y·x, with 0·log 0 = 0.
            let zero = op.scalar(t, 0.0);
            let ly = op.Log(y).out();
            let yly = op.Mul(y, ly).out();
            let is0 = op.Equal(y, zero).out();
            let xl = op.Where(is0, zero, yly).out();
            let yx = op.Mul(y, x).out();
            op.Sub(xl, yx).out()
        };
        reduce_loss(op, l, reduction)
    }

    /// hinge_embedding_loss(Tensor self, Tensor target, float margin=1., int reduction=1) -> Tensor
    #[target("aten::hinge_embedding_loss")]
    fn hinge_embedding_loss(op, self_: Tensor, target: Tensor, margin: f64 = 1.0, reduction: i64 = 1) -> OpResult<Value> {
        // where(y != 1, max(margin - x, 0), 0) + where(y != -1, x, 0)
        let (t, x, y) = operands(op, self_, target)?;
        let zero = op.scalar(t, 0.0);
        let one = op.scalar(t, 1.0);
        let mone = op.scalar(t, -1.0);
        let m = op.scalar(t, margin);
        let mx = op.Sub(m, x).out();
        let mx = op.Max(&[mx, zero]).out();
        let is1 = op.Equal(y, one).out();
        let a = op.Where(is1, zero, mx).out();
        let ism1 = op.Equal(y, mone).out();
        let b = op.Where(ism1, zero, x).out();
        let l = op.Add(a, b).out();
        reduce_loss(op, l, reduction)
    }

    /// margin_ranking_loss(Tensor input1, Tensor input2, Tensor target, float margin=0., int reduction=1) -> Tensor
    #[target("aten::margin_ranking_loss")]
    fn margin_ranking_loss(op, input1: Tensor, input2: Tensor, target: Tensor, margin: f64 = 0.0, reduction: i64 = 1) -> OpResult<Value> {
        // max(0, -y·(x1 - x2) + margin)
        let (t, a, b) = operands(op, input1, input2)?;
        let y = cast(op, target, t);
        let d = op.Sub(a, b).out();
        let yd = op.Mul(y, d).out();
        let n = op.Neg(yd).out();
        let m = op.scalar(t, margin);
        let s = op.Add(n, m).out();
        let zero = op.scalar(t, 0.0);
        let l = op.Max(&[s, zero]).out();
        reduce_loss(op, l, reduction)
    }

    /// soft_margin_loss(Tensor self, Tensor target, int reduction=1) -> Tensor
    #[target("aten::soft_margin_loss")]
    fn soft_margin_loss(op, self_: Tensor, target: Tensor, reduction: i64 = 1) -> OpResult<Value> {
        // log(1 + exp(-y·x))
        let (t, x, y) = operands(op, self_, target)?;
        let yx = op.Mul(y, x).out();
        let n = op.Neg(yx).out();
        let e = op.Exp(n).out();
        let one = op.scalar(t, 1.0);
        let s = op.Add(one, e).out();
        let l = op.Log(s).out();
        reduce_loss(op, l, reduction)
    }

    /// poisson_nll_loss(Tensor input, Tensor target, bool log_input, bool full, float eps, int reduction) -> Tensor
    #[target("aten::poisson_nll_loss")]
    fn poisson_nll_loss(op, input: Tensor, target: Tensor, log_input: bool, full: bool, eps: f64, reduction: i64) -> OpResult<Value> {
        let (t, x, y) = operands(op, input, target)?;
        let mut l = if log_input {
            // exp(x) - y·x
            let e = op.Exp(x).out();
            let yx = op.Mul(y, x).out();
            op.Sub(e, yx).out()
        } else {
            // x - y·log(x + eps)
            let ev = op.scalar(t, eps);
            let xe = op.Add(x, ev).out();
            let lx = op.Log(xe).out();
            let ylx = op.Mul(y, lx).out();
            op.Sub(x, ylx).out()
        };
        if full {
            // Stirling term y·log y - y + 0.5·log(2πy), where y > 1.
            let one = op.scalar(t, 1.0);
            let zero = op.scalar(t, 0.0);
            let ly = op.Log(y).out();
            let yly = op.Mul(y, ly).out();
            let s = op.Sub(yly, y).out();
            let tp = op.scalar(t, 2.0 * std::f64::consts::PI);
            let tpy = op.Mul(tp, y).out();
            let ltpy = op.Log(tpy).out();
            let half = op.scalar(t, 0.5);
            let h = op.Mul(half, ltpy).out();
            let s = op.Add(s, h).out();
            let gt = op.Greater(y, one).out();
            let st = op.Where(gt, s, zero).out();
            l = op.Add(l, st).out();
        }
        reduce_loss(op, l, reduction)
    }
}
