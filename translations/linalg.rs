//! Linear algebra: batched and vector products, trace, cross and dot products, distances.

use super::decompositions::{const_mat, expand_to, float_type, mask, matrix_dims, mt, sl, symmetric_jacobi, with};
use super::reduction::vector_norm;
use crate::translate::prelude::*;
use crate::translations;

/// `beta·input + alpha·product` with torch's rule that `input` is ignored when `beta` is 0.
fn scaled_sum(op: &mut Builder, input: Value, product: Value, beta: f64, alpha: f64, t: DType) -> Value {
    let input = cast(op, input, t);
    let p = if alpha == 1.0 {
        product
    } else {
        let a = op.scalar(t, alpha);
        op.Mul(product, a).out()
    };
    if beta == 0.0 {
        // torch never reads `input` then (NaN and inf in it do not propagate), but still broadcasts.
        let z = op.scalar(t, 0.0);
        let zi = op.Mul(input, z).out();
        let shape = op.Shape(zi).out();
        let zeros = op.Expand(z, shape).out();
        return op.Add(p, zeros).out();
    }
    let c = if beta == 1.0 {
        input
    } else {
        let b = op.scalar(t, beta);
        op.Mul(input, b).out()
    };
    op.Add(c, p).out()
}

fn result_dtype(op: &Builder, x: Value) -> OpResult<DType> {
    Ok(match op.out_dtype(0) {
        Some(t) => t,
        None => dtype_of(op, x)?,
    })
}

/// The broadcast of two static shapes.
fn broadcast_shape(op: &Builder, a: Value, b: Value) -> OpResult<Vec<Dim>> {
    let fixed = |v: Value| -> OpResult<Vec<i64>> {
        op.shape(v)
            .ok_or_else(|| OpError::new("the input's shape is unknown"))?
            .iter()
            .map(|d| match d {
                Dim::Fixed(n) => Ok(*n),
                _ => Err(OpError::new("dist needs static shapes")),
            })
            .collect()
    };
    let (sa, sb) = (fixed(a)?, fixed(b)?);
    let r = sa.len().max(sb.len());
    let get = |s: &[i64], i: usize| if i + s.len() >= r { s[i + s.len() - r] } else { 1 };
    (0..r)
        .map(|i| {
            let (x, y) = (get(&sa, i), get(&sb, i));
            if x == y || y == 1 {
                Ok(Dim::Fixed(x))
            } else if x == 1 {
                Ok(Dim::Fixed(y))
            } else {
                Err(OpError::new("dist operands do not broadcast"))
            }
        })
        .collect()
}

/// `[start, start + 1)` of `x` along `axis`.
fn component(op: &mut Builder, x: Value, axis: i64, start: i64) -> Value {
    let s = op.const_i64s(&[start]);
    let e = op.const_i64s(&[start + 1]);
    let a = op.const_i64s(&[axis]);
    op.Slice(x, s, e, Some(a), None).out()
}

translations! {
    /// baddbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> Tensor
    #[target("aten::baddbmm")]
    fn baddbmm(
        op,
        self_: Tensor,
        batch1: Tensor,
        batch2: Tensor,
        beta: f64 = 1.0,
        alpha: f64 = 1.0,
    ) -> OpResult<Value> {
        let t = result_dtype(op, batch1)?;
        let p = op.MatMul(batch1, batch2).out();
        Ok(scaled_sum(op, self_, p, beta, alpha, t))
    }

    /// addbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> Tensor
    #[target("aten::addbmm")]
    fn addbmm(
        op,
        self_: Tensor,
        batch1: Tensor,
        batch2: Tensor,
        beta: f64 = 1.0,
        alpha: f64 = 1.0,
    ) -> OpResult<Value> {
        let t = result_dtype(op, batch1)?;
        let p = op.MatMul(batch1, batch2).out();
        let axes = op.const_i64s(&[0]);
        let p = op.ReduceSum(p, Some(axes)).keepdims(0).out();
        Ok(scaled_sum(op, self_, p, beta, alpha, t))
    }

    /// addmv(Tensor self, Tensor mat, Tensor vec, *, Scalar beta=1, Scalar alpha=1) -> Tensor
    #[target("aten::addmv")]
    fn addmv(
        op,
        self_: Tensor,
        mat: Tensor,
        vec: Tensor,
        beta: f64 = 1.0,
        alpha: f64 = 1.0,
    ) -> OpResult<Value> {
        let t = result_dtype(op, mat)?;
        let p = op.MatMul(mat, vec).out();
        Ok(scaled_sum(op, self_, p, beta, alpha, t))
    }

    /// addr(Tensor self, Tensor vec1, Tensor vec2, *, Scalar beta=1, Scalar alpha=1) -> Tensor
    #[target("aten::addr")]
    fn addr(
        op,
        self_: Tensor,
        vec1: Tensor,
        vec2: Tensor,
        beta: f64 = 1.0,
        alpha: f64 = 1.0,
    ) -> OpResult<Value> {
        let t = result_dtype(op, vec1)?;
        if t == DType::Bool {
            bail!("addr of bool tensors is not supported");
        }
        let (c, r) = (op.const_i64s(&[1]), op.const_i64s(&[0]));
        let a = op.Unsqueeze(vec1, c).out();
        let b = op.Unsqueeze(vec2, r).out();
        let p = op.Mul(a, b).out();
        Ok(scaled_sum(op, self_, p, beta, alpha, t))
    }

    /// mv(Tensor self, Tensor vec) -> Tensor
    #[target("aten::mv")]
    fn mv(op, self_: Tensor, vec: Tensor) -> Value {
        op.MatMul(self_, vec).out()
    }

    /// dot(Tensor self, Tensor tensor) -> Tensor
    #[target("aten::dot", "aten::vdot", "aten::inner")]
    fn dot(
        op,
        self_: Tensor,
        tensor: Option<Tensor> = None,
        other: Option<Tensor> = None,
    ) -> OpResult<Value> {
        let Some(b) = tensor.or(other) else { bail!("dot needs two tensors") };
        if op.info(self_).complex {
            bail!("dot of complex tensors is not supported");
        }
        if rank_of(op, self_)? != 1 || rank_of(op, b)? != 1 {
            bail!("dot/vdot/inner are translated for 1-D tensors only");
        }
        let t = result_dtype(op, self_)?;
        let p = op.Mul(self_, b).out();
        let p = cast(op, p, t);
        Ok(op.ReduceSum(p, None).keepdims(0).out())
    }

    /// trace(Tensor self) -> Tensor
    #[target("aten::trace")]
    fn trace(op, self_: Tensor) -> OpResult<Value> {
        if rank_of(op, self_)? != 2 {
            bail!("trace needs a matrix");
        }
        let t = result_dtype(op, self_)?;
        let x = cast(op, self_, t);
        // The diagonal selected with Where (x·I would turn off-diagonal inf/NaN into NaN).
        let eye = op.EyeLike(x).dtype(DType::Int64 as i64).out();
        let eye = cast(op, eye, DType::Bool);
        let zero = op.scalar(t, 0.0);
        let d = op.Where(eye, x, zero).out();
        Ok(op.ReduceSum(d, None).keepdims(0).out())
    }

    /// linalg_cross(Tensor self, Tensor other, *, int dim=-1) -> Tensor
    #[target("aten::linalg_cross")]
    fn linalg_cross(op, self_: Tensor, other: Tensor, dim: i64 = -1) -> OpResult<Value> {
        let r = rank_of(op, self_)?.max(rank_of(op, other)?);
        let axis = normalize_axis(dim, r);
        let t = result_dtype(op, self_)?;
        let a = cast(op, self_, t);
        let b = cast(op, other, t);
        let ai: Vec<Value> = (0..3).map(|i| component(op, a, axis, i)).collect();
        let bi: Vec<Value> = (0..3).map(|i| component(op, b, axis, i)).collect();
        let mut parts = Vec::new();
        for (i, j) in [(1, 2), (2, 0), (0, 1)] {
            let p = op.Mul(ai[i], bi[j]).out();
            let q = op.Mul(ai[j], bi[i]).out();
            parts.push(op.Sub(p, q).out());
        }
        Ok(op.Concat(&parts).axis(axis).out())
    }

    /// linalg_vecdot(Tensor x, Tensor y, *, int dim=-1) -> Tensor
    #[target("aten::linalg_vecdot")]
    fn linalg_vecdot(op, x: Tensor, y: Tensor, dim: i64 = -1) -> OpResult<Value> {
        if op.info(x).complex || op.info(y).complex {
            bail!("linalg_vecdot of complex tensors is not supported");
        }
        let r = rank_of(op, x)?.max(rank_of(op, y)?);
        let t = result_dtype(op, x)?;
        let a = cast(op, x, t);
        let b = cast(op, y, t);
        let p = op.Mul(a, b).out();
        let axes = op.const_i64s(&[normalize_axis(dim, r)]);
        Ok(op.ReduceSum(p, Some(axes)).keepdims(0).out())
    }

    /// dist(Tensor self, Tensor other, Scalar p=2) -> Tensor
    #[target("aten::dist")]
    fn dist(op, self_: Tensor, other: Tensor, p: f64 = 2.0) -> OpResult<Value> {
        let t = result_dtype(op, self_)?;
        let a = cast(op, self_, t);
        let b = cast(op, other, t);
        let d = op.Sub(a, b).out();
        // The difference has the operands' broadcast shape (needed by the norm for its rank).
        let shape = broadcast_shape(op, self_, other)?;
        op.info_mut(d).shape = Some(shape);
        vector_norm(op, d, p, &None, false, t)
    }
    /// linalg_qr(Tensor A, str mode="reduced") -> (Tensor Q, Tensor R)
    #[target("aten::linalg_qr")]
    fn linalg_qr(op, A: Tensor, mode: &str = "reduced") -> OpResult<Vec<Option<Value>>> {
        let (batch, m, n) = matrix_dims(op, A, "qr")?;
        let t = float_type(op, A, "qr")?;
        let k = m.min(n);
        let (q, r) = if batch.contains(&0) || k == 0 {
            let z = op.scalar(DType::Double, 0.0);
            let eye = const_mat(op, DType::Double, m, m, |i, j| (i == j) as i64 as f64);
            (expand_to(op, eye, &with(&batch, &[m, m])), expand_to(op, z, &with(&batch, &[m, n])))
        } else {
            householder_qr(op, A, &batch, m, n)
        };
        let (q, r) = match mode {
            "reduced" => (Some(sl(op, q, -1, 0, k)), sl(op, r, -2, 0, k)),
            "complete" => (Some(q), r),
            "r" => (None, sl(op, r, -2, 0, k)),
            other => bail!("linalg_qr: unknown mode {other:?}"),
        };
        let q = match q {
            Some(q) => cast(op, q, t),
            None => {
                let data = crate::onnx::ir::TensorData::from_f64_as(t, vec![0], &[]).expect("empty constant");
                op.constant_tensor(data)
            }
        };
        let r = cast(op, r, t);
        Ok(vec![Some(q), Some(r)])
    }
    /// linalg_matrix_sqrth(Tensor self) -> Tensor
    #[target("aten::linalg_matrix_sqrth")]
    fn linalg_matrix_sqrth(op, self_: Tensor) -> OpResult<Value> {
        // V·diag(√λ)·Vᵀ from the eigendecomposition of the lower triangle (unique, whatever the
        // eigenvectors' signs); negative eigenvalues give NaN as torch's sqrt does.
        let (batch, m, n) = matrix_dims(op, self_, "matrix_sqrth")?;
        if m != n {
            bail!("matrix_sqrth needs square matrices");
        }
        let t = float_type(op, self_, "matrix_sqrth")?;
        if n == 0 || batch.contains(&0) {
            return Ok(op.Identity(self_).out());
        }
        let (ev, v) = symmetric_jacobi(op, self_, &batch, n, true, true);
        let v = v.expect("eigenvectors requested");
        let r = op.Sqrt(ev).out();
        let ax = op.const_i64s(&[-2]);
        let r = op.Unsqueeze(r, ax).out();
        let vr = op.Mul(v, r).out();
        let vt = mt(op, v, batch.len() + 2);
        let x = op.MatMul(vr, vt).out();
        Ok(cast(op, x, t))
    }
    /// linalg_matrix_exp(Tensor self) -> Tensor
    #[target("aten::linalg_matrix_exp", "aten::matrix_exp")]
    fn linalg_matrix_exp(op, self_: Tensor) -> OpResult<Value> {
        // Scaling and squaring in double: A/2^s with s = max(0, ⌈log2(2‖A‖₁)⌉) so the scaled
        // norm is at most 1/2, a degree-18 Taylor polynomial (remainder below 1e-22), then s
        // squarings chosen per matrix at run time (enough for every finite input of its type).
        let (batch, m, n) = matrix_dims(op, self_, "matrix_exp")?;
        if m != n {
            bail!("matrix_exp needs square matrices");
        }
        let t = float_type(op, self_, "matrix_exp")?;
        if n == 0 || batch.contains(&0) {
            return Ok(op.Identity(self_).out());
        }
        let max_squarings = match t {
            DType::Double => 1100,
            _ => 140,
        };
        let d = DType::Double;
        let a = cast(op, self_, d);
        let abs = op.Abs(a).out();
        let ax = op.const_i64s(&[-2]);
        let colsum = op.ReduceSum(abs, Some(ax)).keepdims(1).out();
        let ax = op.const_i64s(&[-1]);
        let norm = op.ReduceMax(colsum, Some(ax)).keepdims(1).out();
        let two = op.scalar(d, 2.0);
        let zero = op.scalar(d, 0.0);
        let n2 = op.Mul(norm, two).out();
        let l = op.Log(n2).out();
        let ln2 = op.scalar(d, std::f64::consts::LN_2);
        let l = op.Div(l, ln2).out();
        let l = op.Ceil(l).out();
        let s = op.Max(&[l, zero]).out();
        let neg = op.Neg(s).out();
        let scale = op.Pow(two, neg).out();
        let x = op.Mul(a, scale).out();
        let eye = const_mat(op, d, n, n, |i, j| (i == j) as i64 as f64);
        // Horner: I + X(I + X/2(I + X/3(…))).
        let mut e = eye;
        for k in (1..=18).rev() {
            let c = op.scalar(d, 1.0 / k as f64);
            let xe = op.MatMul(x, e).out();
            let xe = op.Mul(xe, c).out();
            e = op.Add(eye, xe).out();
        }
        for i in 0..max_squarings {
            let sq = op.MatMul(e, e).out();
            let ii = op.scalar(d, i as f64);
            let more = op.Less(ii, s).out();
            e = op.Where(more, sq, e).out();
        }
        Ok(cast(op, e, t))
    }
}

/// Householder QR as LAPACK's geqrf + orgqr: for each column, dlarfg's reflector
/// (β = -sign(α)·‖(α, x)‖, τ = (β - α)/β, v = x/(α - β); τ = 0 when x is zero), applied to the
/// trailing columns and accumulated into Q. Computed in double.
fn householder_qr(op: &mut Builder, a: Value, batch: &[i64], m: i64, n: i64) -> (Value, Value) {
    let d = DType::Double;
    let rank = batch.len() + 2;
    let mut r = cast(op, a, d);
    let eye = const_mat(op, d, m, m, |i, j| (i == j) as i64 as f64);
    let mut q = expand_to(op, eye, &with(batch, &[m, m]));
    let (zero, one) = (op.scalar(d, 0.0), op.scalar(d, 1.0));
    let minus_one = op.scalar(d, -1.0);
    for k in 0..m.min(n) {
        if k + 1 >= m {
            // x is empty: H = I.
            break;
        }
        let col = sl(op, r, -1, k, k + 1);
        let alpha = sl(op, col, -2, k, k + 1);
        let below = mask(op, m, 1, |i, _| i > k);
        let x = op.Where(below, col, zero).out();
        let ax = op.const_i64s(&[-2]);
        let xnorm = op.ReduceL2(x, Some(ax)).keepdims(1).out();
        let x0 = op.Equal(xnorm, zero).out();
        let a2 = op.Mul(alpha, alpha).out();
        let x2 = op.Mul(xnorm, xnorm).out();
        let h = op.Add(a2, x2).out();
        let h = op.Sqrt(h).out();
        let nonneg = op.GreaterOrEqual(alpha, zero).out();
        let sgn = op.Where(nonneg, minus_one, one).out();
        let beta = op.Mul(sgn, h).out();
        let beta_safe = op.Where(x0, one, beta).out();
        let diff = op.Sub(beta, alpha).out();
        let tau = op.Div(diff, beta_safe).out();
        let tau = op.Where(x0, zero, tau).out();
        let den = op.Sub(alpha, beta).out();
        let den = op.Where(x0, one, den).out();
        let vx = op.Div(x, den).out();
        let at = mask(op, m, 1, |i, _| i == k);
        let v = op.Where(at, one, vx).out();
        // R <- H R on the trailing columns; column k becomes (…, β, 0, …).
        let vt = mt(op, v, rank);
        let vtr = op.MatMul(vt, r).out();
        let p = op.MatMul(v, vtr).out();
        let p = op.Mul(tau, p).out();
        let upd = op.Sub(r, p).out();
        let trail = mask(op, m, n, |i, j| i >= k && j > k);
        let colk_below = mask(op, m, n, |i, j| i > k && j == k);
        let colk_at = mask(op, m, n, |i, j| i == k && j == k);
        let newk = op.Where(x0, alpha, beta).out();
        let r1 = op.Where(colk_at, newk, r).out();
        let r2 = op.Where(colk_below, zero, r1).out();
        r = op.Where(trail, upd, r2).out();
        // Q <- Q H.
        let qv = op.MatMul(q, v).out();
        let qvv = op.MatMul(qv, vt).out();
        let qvv = op.Mul(tau, qvv).out();
        q = op.Sub(q, qvv).out();
    }
    (q, r)
}
