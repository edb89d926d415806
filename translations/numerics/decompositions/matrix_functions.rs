//! Matrix functions: integer powers, the exponential (torch's degree-18 Taylor form), the square root
//! of a symmetric matrix, Vandermonde matrices.

use super::jacobi::symmetric_jacobi;
use super::lu::solve_square;
use super::{batched, const_mat, expand_to, float_type, matrix_dims, transpose_last_two, MAX_SIDE};
use crate::translate::prelude::*;
use crate::translations;

/// The coefficients of torch's degree-18 Taylor approximation (Bader, Blanes and Casas 2019):
/// `B_i = Σ_j b[i][j]·P_j` over the powers `P = (I, A, A², A³, A⁶)`.
const T18: [[f64; 5]; 5] = [
    [0., -1.00365581030144618291e-01, -8.02924648241156932449e-03, -8.92138498045729985177e-04, 0.],
    [
        0.,
        3.97849749499645077844e-01,
        1.36783778460411720168e+00,
        4.98289622525382669416e-01,
        -6.37898194594723280150e-04,
    ],
    [
        -1.09676396052962061844e+01,
        1.68015813878906206114e+00,
        5.71779846478865511061e-02,
        -6.98210122488052056106e-03,
        3.34975017086070470649e-05,
    ],
    [
        -9.04316832390810593223e-02,
        -6.76404519071381882256e-02,
        6.75961301770459654925e-02,
        2.95552570429315521194e-02,
        -1.39180257516060693404e-05,
    ],
    [0., 0., -9.23364619367118555360e-02, -1.69364939002081722752e-02, -1.40086798182036094347e-05],
];

/// torch's float32 matrix exponential, in float32 as torch computes it (its rounding, amplified by
/// the squarings, is what the result carries): A/2^s with s = max(0, ⌈log2(‖A‖₁/θ₁₈)⌉), the
/// degree-18 polynomial `B_1 + (B_2 + B_3 + B_0 B_4)(B_3 + B_0 B_4)`, then s squarings chosen per
/// matrix at run time. torch picks a lower degree for a single matrix of small norm (s = 0 there:
/// the same value to float32 precision).
fn matrix_exp_t18(op: &mut Builder, a: Value, batch: &[i64], n: i64) -> Value {
    let t = DType::Float;
    let a = cast(op, a, t);
    let abs = op.Abs(a);
    let ax = op.const_i64s(&[-2]);
    let colsum = op.ReduceSum(abs, Some(ax)).keepdims(1).out();
    let ax = op.const_i64s(&[-1]);
    let norm = op.ReduceMax(colsum, Some(ax)).keepdims(1).out();
    let theta = op.scalar(t, 3.010066362817634);
    let r = op.Div(norm, theta);
    let l = op.Log(r);
    let ln2 = op.scalar(t, std::f64::consts::LN_2);
    let l = op.Div(l, ln2);
    let l = op.Ceil(l);
    let zero = op.scalar(t, 0.0);
    let s = op.Max(&[l, zero]);
    let two = op.scalar(t, 2.0);
    let p2 = op.Pow(two, s);
    let x = op.Div(a, p2);
    let eye = const_mat(op, t, n, n, |i, j| (i == j) as i64 as f64);
    let eye = expand_to(op, eye, &batched(batch, &[n, n]));
    let x2 = op.MatMul(x, x);
    let x3 = op.MatMul(x, x2);
    let x6 = op.MatMul(x3, x3);
    let powers = [eye, x, x2, x3, x6];
    let bs: Vec<Value> = T18
        .iter()
        .map(|row| {
            let mut acc: Option<Value> = None;
            for (&c, &p) in row.iter().zip(&powers) {
                let c = op.scalar(t, c);
                let term = op.Mul(c, p);
                acc = Some(match acc {
                    Some(v) => op.Add(v, term),
                    None => term,
                });
            }
            acc.expect("five terms")
        })
        .collect();
    let a9 = op.MatMul(bs[0], bs[4]);
    let b3 = op.Add(bs[3], a9);
    let b2 = op.Add(bs[2], b3);
    let prod = op.MatMul(b2, b3);
    let mut e = op.Add(bs[1], prod);
    // Enough squarings for every finite float32 input (‖A‖₁ < 2^128).
    for i in 0..140 {
        let sq = op.MatMul(e, e);
        let ii = op.scalar(t, i as f64);
        let more = op.Less(ii, s);
        e = op.Where(more, sq, e);
    }
    e
}

translations! {
    /// linalg_matrix_power(Tensor self, int n) -> Tensor
    #[target("aten::linalg_matrix_power", "aten::matrix_power")]
    fn linalg_matrix_power(op, self_: Tensor, n: i64) -> OpResult<Value> {
        let s = static_shape(op, self_, "matrix_power")?;
        if s.len() < 2 || s[s.len() - 1] != s[s.len() - 2] {
            bail!("matrix_power needs square matrices");
        }
        let t = match op.out_dtype(0) {
            Some(t) => t,
            None => dtype_of(op, self_)?,
        };
        if op.info(self_).complex || t == DType::Bool {
            bail!("matrix_power of complex or bool tensors is not supported");
        }
        let side = s[s.len() - 1];
        let x = cast(op, self_, t);
        if n == 0 {
            let eye = const_mat(op, t, side, side, |i, j| (i == j) as i64 as f64);
            return Ok(expand_to(op, eye, &s));
        }
        let a = if n < 0 {
            if !t.is_float() {
                bail!("matrix_power with a negative exponent needs a floating-point matrix");
            }
            let batch = s[..s.len() - 2].to_vec();
            if side > MAX_SIDE {
                bail!("matrix_power: inverses are unrolled for matrices up to {MAX_SIDE}x{MAX_SIDE}");
            }
            let eye = const_mat(op, t, side, side, |i, j| (i == j) as i64 as f64);
            let eye = expand_to(op, eye, &s);
            solve_square(op, x, eye, t, &batch, side, side).0
        } else {
            x
        };
        let mut n = n.unsigned_abs();
        // ATen's order of products: n = 1, 2, 3 directly, else a binary decomposition.
        match n {
            1 => return Ok(op.Identity(a)),
            2 => return Ok(op.MatMul(a, a)),
            3 => {
                let aa = op.MatMul(a, a);
                return Ok(op.MatMul(aa, a));
            }
            _ => {}
        }
        let (mut z, mut result): (Option<Value>, Option<Value>) = (None, None);
        while n > 0 {
            let bit = n % 2;
            n /= 2;
            let zz = match z {
                Some(z) => op.MatMul(z, z),
                None => a,
            };
            z = Some(zz);
            if bit == 1 {
                result = Some(match result {
                    Some(r) => op.MatMul(r, zz),
                    None => zz,
                });
            }
        }
        Ok(result.expect("n > 0"))
    }

    /// linalg_vander(Tensor x, *, SymInt? N=None) -> Tensor
    #[target("aten::linalg_vander")]
    fn linalg_vander(op, x: Tensor, N: Option<i64> = None) -> OpResult<Value> {
        let mut s = static_shape(op, x, "vander")?;
        let mut x = x;
        if s.is_empty() {
            // torch treats a 0-d tensor as one value.
            let one = op.const_i64s(&[1]);
            x = op.Reshape(x, one).out();
            s = vec![1];
        }
        let t = match op.out_dtype(0) {
            Some(t) => t,
            None => dtype_of(op, x)?,
        };
        if op.info(x).complex || t == DType::Bool {
            bail!("vander of complex or bool tensors is not supported");
        }
        let n = N.unwrap_or(s[s.len() - 1]);
        if n <= 0 {
            bail!("vander needs N > 0");
        }
        if n > 64 {
            bail!("vander is unrolled for N up to 64");
        }
        let x = cast(op, x, t);
        let ax = op.const_i64s(&[-1]);
        let x = op.Unsqueeze(x, ax);
        // torch: ones, then the running product x·x·… (cumprod).
        let one = op.scalar(t, 1.0);
        let mut cols = vec![];
        // The ones column does not inherit NaN/inf from x: built from the shape.
        let shape = op.Shape(x).out();
        let ones_clean = op.Expand(one, shape);
        cols.push(ones_clean);
        let mut acc = x;
        for i in 1..n {
            if i > 1 {
                acc = op.Mul(acc, x);
            }
            cols.push(acc);
        }
        Ok(op.Concat(&cols).axis(-1).out())
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
            return Ok(op.Identity(self_));
        }
        let (ev, v) = symmetric_jacobi(op, self_, &batch, n, true, true);
        let v = v.expect("eigenvectors requested");
        let r = op.Sqrt(ev);
        let ax = op.const_i64s(&[-2]);
        let r = op.Unsqueeze(r, ax);
        let vr = op.Mul(v, r);
        let vt = transpose_last_two(op, v, batch.len() + 2);
        let x = op.MatMul(vr, vt);
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
            return Ok(op.Identity(self_));
        }
        if t == DType::Float {
            return Ok(matrix_exp_t18(op, self_, &batch, n));
        }
        let max_squarings = match t {
            DType::Double => 1100,
            _ => 140,
        };
        let d = DType::Double;
        let a = cast(op, self_, d);
        let abs = op.Abs(a);
        let ax = op.const_i64s(&[-2]);
        let colsum = op.ReduceSum(abs, Some(ax)).keepdims(1).out();
        let ax = op.const_i64s(&[-1]);
        let norm = op.ReduceMax(colsum, Some(ax)).keepdims(1).out();
        let two = op.scalar(d, 2.0);
        let zero = op.scalar(d, 0.0);
        let n2 = op.Mul(norm, two);
        let l = op.Log(n2);
        let ln2 = op.scalar(d, std::f64::consts::LN_2);
        let l = op.Div(l, ln2);
        let l = op.Ceil(l);
        let s = op.Max(&[l, zero]);
        let neg = op.Neg(s);
        let scale = op.Pow(two, neg);
        let x = op.Mul(a, scale);
        let eye = const_mat(op, d, n, n, |i, j| (i == j) as i64 as f64);
        // Horner: I + X(I + X/2(I + X/3(…))).
        let mut e = eye;
        for k in (1..=18).rev() {
            let c = op.scalar(d, 1.0 / k as f64);
            let xe = op.MatMul(x, e);
            let xe = op.Mul(xe, c);
            e = op.Add(eye, xe);
        }
        for i in 0..max_squarings {
            let sq = op.MatMul(e, e);
            let ii = op.scalar(d, i as f64);
            let more = op.Less(ii, s);
            e = op.Where(more, sq, e);
        }
        Ok(cast(op, e, t))
    }
}
