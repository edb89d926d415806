//! Householder QR as LAPACK's geqrf + orgqr, and the geqrf / orgqr / ormqr forms torch exposes.

use super::{batched, const_mat, expand_to, float_type, mask, matrix_dims, transpose_last_two};
use crate::translate::prelude::*;
use crate::translations;

/// Householder QR as LAPACK's geqrf + orgqr: for each column, dlarfg's reflector
/// (β = -sign(α)·‖(α, x)‖, τ = (β - α)/β, v = x/(α - β); τ = 0 when x is zero), applied to the
/// trailing columns and accumulated into Q. Computed in double.
fn householder_qr(op: &mut Builder, a: Value, batch: &[i64], m: i64, n: i64) -> (Value, Value) {
    let qr = householder_steps(op, a, batch, m, n, true);
    (qr.q.expect("Q requested"), qr.r)
}

/// The steps of [`householder_qr`]: R, Q when asked, and each step's reflector `v` (`[..., m, 1]`,
/// 1 at the step's row, 0 above) and `τ` (`[..., 1, 1]`), double.
struct Householder {
    q: Option<Value>,
    r: Value,
    vs: Vec<Value>,
    taus: Vec<Value>,
}

fn householder_steps(op: &mut Builder, a: Value, batch: &[i64], m: i64, n: i64, want_q: bool) -> Householder {
    let d = DType::Double;
    let rank = batch.len() + 2;
    let mut r = cast(op, a, d);
    let mut q = if want_q {
        let eye = const_mat(op, d, m, m, |i, j| (i == j) as i64 as f64);
        Some(expand_to(op, eye, &batched(batch, &[m, m])))
    } else {
        None
    };
    let (mut vs, mut taus) = (Vec::new(), Vec::new());
    let (zero, one) = (op.scalar(d, 0.0), op.scalar(d, 1.0));
    let minus_one = op.scalar(d, -1.0);
    for k in 0..m.min(n) {
        if k + 1 >= m {
            // x is empty: H = I.
            break;
        }
        let col = slice_along(op, r, -1, k, k + 1);
        let alpha = slice_along(op, col, -2, k, k + 1);
        let below = mask(op, m, 1, |i, _| i > k);
        let x = op.Where(below, col, zero);
        let ax = op.const_i64s(&[-2]);
        let xnorm = op.ReduceL2(x, Some(ax)).keepdims(1).out();
        let x0 = op.Equal(xnorm, zero);
        let a2 = op.Mul(alpha, alpha);
        let x2 = op.Mul(xnorm, xnorm);
        let h = op.Add(a2, x2);
        let h = op.Sqrt(h);
        let nonneg = op.GreaterOrEqual(alpha, zero);
        let sgn = op.Where(nonneg, minus_one, one);
        let beta = op.Mul(sgn, h);
        let beta_safe = op.Where(x0, one, beta);
        let diff = op.Sub(beta, alpha);
        let tau = op.Div(diff, beta_safe);
        let tau = op.Where(x0, zero, tau);
        let den = op.Sub(alpha, beta);
        let den = op.Where(x0, one, den);
        let vx = op.Div(x, den);
        let at = mask(op, m, 1, |i, _| i == k);
        let v = op.Where(at, one, vx);
        // R <- H R on the trailing columns; column k becomes (…, β, 0, …).
        let vt = transpose_last_two(op, v, rank);
        let vtr = op.MatMul(vt, r);
        let p = op.MatMul(v, vtr);
        let p = op.Mul(tau, p);
        let upd = op.Sub(r, p);
        let trail = mask(op, m, n, |i, j| i >= k && j > k);
        let colk_below = mask(op, m, n, |i, j| i > k && j == k);
        let colk_at = mask(op, m, n, |i, j| i == k && j == k);
        let newk = op.Where(x0, alpha, beta);
        let r1 = op.Where(colk_at, newk, r);
        let r2 = op.Where(colk_below, zero, r1);
        r = op.Where(trail, upd, r2);
        // Q <- Q H.
        if let Some(qq) = q {
            let qv = op.MatMul(qq, v);
            let qvv = op.MatMul(qv, vt);
            let qvv = op.Mul(tau, qvv);
            q = Some(op.Sub(qq, qvv));
        }
        vs.push(v);
        taus.push(tau);
    }
    Householder { q, r, vs, taus }
}

/// Reflector `i` of a geqrf result `a` (`[..., m, n]`): `(0, …, 0, 1, a[i+1.., i])` (`[..., m, 1]`).
fn reflector(op: &mut Builder, a: Value, t: DType, m: i64, i: i64) -> Value {
    let col = slice_along(op, a, -1, i, i + 1);
    let below = mask(op, m, 1, |r, _| r > i);
    let at = mask(op, m, 1, |r, _| r == i);
    let (zero, one) = (op.scalar(t, 0.0), op.scalar(t, 1.0));
    let inner = op.Where(at, one, zero);
    op.Where(below, col, inner)
}

/// `H_1 ⋯ H_k` (`[..., m, m]`, double) with `H_i = I - τ_i v_i v_iᵀ` from a geqrf result `a`
/// (`[..., m, n]`) and `tau` (`[..., k]`): the Q that LAPACK's orgqr and ormqr apply.
fn householder_q(op: &mut Builder, a: Value, tau: Value, batch: &[i64], m: i64, k: i64) -> Value {
    let d = DType::Double;
    let rank = batch.len() + 2;
    let a = cast(op, a, d);
    let tau = cast(op, tau, d);
    let eye = const_mat(op, d, m, m, |i, j| (i == j) as i64 as f64);
    let mut q = expand_to(op, eye, &batched(batch, &[m, m]));
    for i in 0..k {
        let v = reflector(op, a, d, m, i);
        let ti = slice_along(op, tau, -1, i, i + 1);
        let ax = op.const_i64s(&[-1]);
        let ti = op.Unsqueeze(ti, ax);
        let vt = transpose_last_two(op, v, rank);
        let qv = op.MatMul(q, v);
        let qvv = op.MatMul(qv, vt);
        let qvv = op.Mul(ti, qvv);
        q = op.Sub(q, qvv);
    }
    q
}

translations! {
    /// linalg_qr(Tensor A, str mode="reduced") -> (Tensor Q, Tensor R)
    #[target("aten::linalg_qr")]
    fn linalg_qr(op, A: Tensor, mode: &str = "reduced") -> OpResult<Vec<Option<Value>>> {
        let (batch, m, n) = matrix_dims(op, A, "qr")?;
        let t = float_type(op, A, "qr")?;
        let k = m.min(n);
        let (q, r) = if batch.contains(&0) || k == 0 {
            let z = op.scalar(DType::Double, 0.0);
            let eye = const_mat(op, DType::Double, m, m, |i, j| (i == j) as i64 as f64);
            (expand_to(op, eye, &batched(&batch, &[m, m])), expand_to(op, z, &batched(&batch, &[m, n])))
        } else {
            householder_qr(op, A, &batch, m, n)
        };
        let (q, r) = match mode {
            "reduced" => (Some(slice_along(op, q, -1, 0, k)), slice_along(op, r, -2, 0, k)),
            "complete" => (Some(q), r),
            "r" => (None, slice_along(op, r, -2, 0, k)),
            other => bail!("linalg_qr: unknown mode {other:?}"),
        };
        let q = match q {
            Some(q) => cast(op, q, t),
            None => op.constant_tensor(constant_data(t, vec![0], &[])?),
        };
        let r = cast(op, r, t);
        Ok(vec![Some(q), Some(r)])
    }

    /// geqrf(Tensor self) -> (Tensor a, Tensor tau)
    #[target("aten::geqrf")]
    fn geqrf(op, self_: Tensor) -> OpResult<Vec<Option<Value>>> {
        // LAPACK's layout: R on and above the diagonal, each reflector's tail below it.
        let what = "geqrf";
        let (batch, m, n) = matrix_dims(op, self_, what)?;
        let t = float_type(op, self_, what)?;
        let k = m.min(n);
        if k == 0 || batch.contains(&0) {
            let a = cast(op, self_, t);
            let z = op.scalar(t, 0.0);
            let tau = expand_to(op, z, &batched(&batch, &[k]));
            return Ok(vec![Some(op.Identity(a)), Some(tau)]);
        }
        let h = householder_steps(op, self_, &batch, m, n, false);
        let mut a = h.r;
        for (i, &v) in h.vs.iter().enumerate() {
            let below = mask(op, m, n, |r, c| r > i as i64 && c == i as i64);
            a = op.Where(below, v, a);
        }
        // The last row's reflector (when m <= n) is the identity: τ = 0.
        let zero = op.scalar(DType::Double, 0.0);
        let mut taus: Vec<Value> = h
            .taus
            .iter()
            .map(|&tau| {
                let ax = op.const_i64s(&[-1]);
                op.Squeeze(tau, Some(ax))
            })
            .collect();
        while (taus.len() as i64) < k {
            taus.push(expand_to(op, zero, &batched(&batch, &[1])));
        }
        let tau = op.Concat(&taus).axis(-1).out();
        Ok(vec![Some(cast(op, a, t)), Some(cast(op, tau, t))])
    }

    /// linalg_householder_product(Tensor input, Tensor tau) -> Tensor
    #[target("aten::linalg_householder_product")]
    fn linalg_householder_product(op, input: Tensor, tau: Tensor) -> OpResult<Value> {
        // The first n columns of H_1 ⋯ H_k (LAPACK's orgqr).
        let what = "householder_product";
        let (batch, m, n) = matrix_dims(op, input, what)?;
        let t = float_type(op, input, what)?;
        let ts = static_shape(op, tau, what)?;
        let Some(&k) = ts.last() else { bail!("{what}: tau must have at least one dimension") };
        if m < n || n < k {
            bail!("{what} needs input.shape[-2] >= input.shape[-1] >= tau.shape[-1], got {m}x{n} and {k}");
        }
        if m * n == 0 || batch.contains(&0) {
            let z = op.scalar(t, 0.0);
            return Ok(expand_to(op, z, &batched(&batch, &[m, n])));
        }
        let q = householder_q(op, input, tau, &batch, m, k);
        let q = slice_along(op, q, -1, 0, n);
        Ok(cast(op, q, t))
    }

    /// ormqr(Tensor self, Tensor input2, Tensor input3, bool left=True, bool transpose=False) -> Tensor
    #[target("aten::ormqr")]
    fn ormqr(
        op,
        self_: Tensor,
        input2: Tensor,
        input3: Tensor,
        left: bool = true,
        transpose: bool = false,
    ) -> OpResult<Value> {
        // Q = H_1 ⋯ H_k from a geqrf result, applied to C: op(Q)·C when left, else C·op(Q).
        let what = "ormqr";
        let (batch, mq, _) = matrix_dims(op, self_, what)?;
        let cs = static_shape(op, input3, what)?;
        if cs.len() < 2 {
            bail!("{what}: C must be a matrix batch");
        }
        let t = float_type(op, input3, what)?;
        let ts = static_shape(op, input2, what)?;
        let Some(&k) = ts.last() else { bail!("{what}: tau must have at least one dimension") };
        let side = if left { cs[cs.len() - 2] } else { cs[cs.len() - 1] };
        if side != mq {
            bail!("{what}: C's side ({side}) must match the reflectors' length ({mq})");
        }
        if cs.contains(&0) || batch.contains(&0) {
            return Ok(op.Identity(input3));
        }
        let q = householder_q(op, self_, input2, &batch, mq, k);
        let q = if transpose { transpose_last_two(op, q, batch.len() + 2) } else { q };
        let c = cast(op, input3, DType::Double);
        let r = if left { op.MatMul(q, c) } else { op.MatMul(c, q) };
        Ok(cast(op, r, t))
    }
}
