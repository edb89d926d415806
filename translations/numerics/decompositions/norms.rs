//! Matrix and vector norms (`linalg.norm`, `linalg.matrix_norm`) and condition numbers.

use super::jacobi::singular_values;
use super::{float_type, matrix_dims, MAX_SIDE};
use crate::translate::prelude::*;
use crate::translations;
use crate::translations::shared::norms::pnorm;

enum NormKind {
    Fro,
    Nuc,
    /// σ_max (true) or σ_min.
    Spectral(bool),
    /// Max (true) or min over columns of the column sums of |x|.
    Col(bool),
    /// Max (true) or min over rows of the row sums of |x|.
    Row(bool),
}

fn matrix_norm_impl(op: &mut Builder, x: Value, kind: NormKind, dim: &[i64], keepdim: bool) -> OpResult<Value> {
    let what = "matrix_norm";
    let r = rank_of(op, x)?;
    if dim.len() != 2 || r < 2 {
        bail!("{what} needs two dims of a tensor of rank >= 2");
    }
    let (d0, d1) = (normalize_axis(dim[0], r)? as usize, normalize_axis(dim[1], r)? as usize);
    if d0 == d1 {
        bail!("{what}: the two dims must differ");
    }
    let t = float_type(op, x, what)?;
    let sx = static_shape(op, x, what)?;
    let x = cast(op, x, t);
    let mut perm: Vec<usize> = (0..r).filter(|&i| i != d0 && i != d1).collect();
    perm.extend([d0, d1]);
    let p: Vec<i64> = perm.iter().map(|&i| i as i64).collect();
    let x = if perm.iter().enumerate().all(|(i, &j)| i == j) { x } else { op.Transpose(x).perm(&p).out() };
    let ps: Vec<i64> = perm.iter().map(|&i| sx[i]).collect();
    let batch = ps[..r - 2].to_vec();
    let (m, n) = (ps[r - 2], ps[r - 1]);
    let res = match kind {
        NormKind::Fro => {
            let ax = op.const_i64s(&[-2, -1]);
            op.ReduceL2(x, Some(ax)).keepdims(0).out()
        }
        NormKind::Nuc | NormKind::Spectral(_) => {
            if m.min(n) == 0 {
                bail!("{what}: spectral norms of empty matrices are not translated");
            }
            if m > MAX_SIDE || n > MAX_SIDE {
                bail!("{what} is unrolled for matrices up to {MAX_SIDE}x{MAX_SIDE}");
            }
            let s = singular_values(op, x, t, &batch, m, n);
            let k = m.min(n);
            match kind {
                NormKind::Nuc => {
                    let ax = op.const_i64s(&[-1]);
                    op.ReduceSum(s, Some(ax)).keepdims(0).out()
                }
                NormKind::Spectral(true) => {
                    let v = slice_along(op, s, -1, 0, 1);
                    let ax = op.const_i64s(&[-1]);
                    op.Squeeze(v, Some(ax))
                }
                _ => {
                    let v = slice_along(op, s, -1, k - 1, k);
                    let ax = op.const_i64s(&[-1]);
                    op.Squeeze(v, Some(ax))
                }
            }
        }
        NormKind::Col(max) | NormKind::Row(max) => {
            let (sum_axis, red_axis) = if matches!(kind, NormKind::Col(_)) { (-2, -1) } else { (-1, -2) };
            let a = op.Abs(x);
            let ax = op.const_i64s(&[sum_axis]);
            let s = op.ReduceSum(a, Some(ax)).keepdims(1).out();
            let ax = op.const_i64s(&[red_axis, sum_axis]);
            if max {
                op.ReduceMax(s, Some(ax)).keepdims(0).out()
            } else {
                op.ReduceMin(s, Some(ax)).keepdims(0).out()
            }
        }
    };
    Ok(if keepdim {
        let mut axes = vec![d0 as i64, d1 as i64];
        axes.sort();
        let ax = op.const_i64s(&axes);
        op.Unsqueeze(res, ax)
    } else {
        res
    })
}

/// torch's linalg.norm over one dim (or all, flattened, when `dim` is None): the vector p-norm.
fn vector_norm_of(op: &mut Builder, x: Value, ord: f64, dim: Option<&[i64]>, keepdim: bool) -> OpResult<Value> {
    let r = rank_of(op, x)?;
    match dim {
        Some(dim) if r > 0 => {
            let axes: Vec<i64> = dim.iter().map(|&d| normalize_axis(d, r)).collect::<OpResult<_>>()?;
            pnorm(op, x, ord, &axes, keepdim)
        }
        _ => {
            let flat = op.const_i64s(&[-1]);
            let x = op.Reshape(x, flat).out();
            let v = pnorm(op, x, ord, &[0], false)?;
            Ok(if keepdim && r > 0 {
                let ones = op.const_i64s(&vec![1; r]);
                op.Reshape(v, ones).out()
            } else {
                v
            })
        }
    }
}

/// The matrix norm `ord` names (`None` is Frobenius).
fn matrix_norm_kind(ord: Option<f64>) -> OpResult<NormKind> {
    Ok(match ord {
        None => NormKind::Fro,
        Some(2.0) => NormKind::Spectral(true),
        Some(-2.0) => NormKind::Spectral(false),
        Some(o) if o.abs() == 1.0 => NormKind::Col(o > 0.0),
        Some(o) if o.is_infinite() => NormKind::Row(o > 0.0),
        Some(o) => bail!("linalg_norm: ord {o} is not a matrix norm"),
    })
}

/// torch's linalg.norm: a vector norm over one dim (or over all when neither `ord` nor `dim` is
/// given), else a matrix norm over two dims (the last two of a matrix when only `ord` is given).
fn linalg_norm_impl(
    op: &mut Builder,
    x: Value,
    ord: Option<f64>,
    matrix: Option<NormKind>,
    dim: Option<Vec<i64>>,
    keepdim: bool,
) -> OpResult<Value> {
    let what = "linalg_norm";
    let t = float_type(op, x, what)?;
    let x = cast(op, x, t);
    let r = rank_of(op, x)?;
    let matrix_dims = match (&dim, ord.is_some() || matrix.is_some()) {
        (Some(d), _) if d.len() == 2 => Some(d.clone()),
        (Some(d), _) if d.len() == 1 => None,
        (Some(d), _) => bail!("{what}: dim must have one or two entries, got {d:?}"),
        (None, true) if r == 2 => Some(vec![-2, -1]),
        (None, true) if r == 1 => None,
        (None, true) => bail!("{what}: with ord and no dim the input must be 1-D or 2-D, got {r}-D"),
        (None, false) => None,
    };
    match matrix_dims {
        Some(md) => {
            let kind = match matrix {
                Some(k) => k,
                None => matrix_norm_kind(ord)?,
            };
            matrix_norm_impl(op, x, kind, &md, keepdim)
        }
        None => {
            if matrix.is_some() {
                bail!("{what}: a string ord names a matrix norm, which needs two dims");
            }
            vector_norm_of(op, x, ord.unwrap_or(2.0), dim.as_deref(), keepdim)
        }
    }
}

translations! {
    /// linalg_cond(Tensor self, Scalar? p=None) -> Tensor
    #[target("aten::linalg_cond")]
    fn linalg_cond(op, self_: Tensor, p: Option<f64> = None) -> OpResult<Value> {
        let p = p.unwrap_or(2.0);
        if p != 2.0 && p != -2.0 {
            bail!("linalg_cond is translated for p = None, 2 and -2 only (got {p})");
        }
        let (batch, m, n) = matrix_dims(op, self_, "cond")?;
        let t = float_type(op, self_, "cond")?;
        if m.min(n) == 0 || batch.contains(&0) {
            bail!("linalg_cond of empty matrices is not translated");
        }
        let x = cast(op, self_, t);
        let s = singular_values(op, x, t, &batch, m, n);
        let k = m.min(n);
        let hi = slice_along(op, s, -1, 0, 1);
        let lo = slice_along(op, s, -1, k - 1, k);
        let r = if p == 2.0 { op.Div(hi, lo) } else { op.Div(lo, hi) };
        let ax = op.const_i64s(&[-1]);
        Ok(op.Squeeze(r, Some(ax)))
    }

    /// linalg_matrix_norm.str_ord(Tensor self, str ord="fro", int[] dim=[-2, -1], bool keepdim=False, *,
    ///     ScalarType? dtype=None) -> Tensor
    #[target("aten::linalg_matrix_norm.str_ord")]
    fn linalg_matrix_norm_str_ord(
        op,
        self_: Tensor,
        ord: &str = "fro",
        dim: Vec<i64> = vec![-2, -1],
        keepdim: bool = false,
        dtype: Option<ScalarType> = None,
    ) -> OpResult<Value> {
        let _ = dtype;
        let kind = match ord {
            "fro" => NormKind::Fro,
            "nuc" => NormKind::Nuc,
            other => bail!("matrix_norm: unknown ord {other:?}"),
        };
        matrix_norm_impl(op, self_, kind, &dim, keepdim)
    }

    /// linalg_matrix_norm(Tensor self, Scalar ord, int[] dim=[-2, -1], bool keepdim=False, *,
    ///     ScalarType? dtype=None) -> Tensor
    #[target("aten::linalg_matrix_norm")]
    fn linalg_matrix_norm(
        op,
        self_: Tensor,
        ord: f64,
        dim: Vec<i64> = vec![-2, -1],
        keepdim: bool = false,
        dtype: Option<ScalarType> = None,
    ) -> OpResult<Value> {
        let _ = dtype;
        let kind = if ord == 2.0 {
            NormKind::Spectral(true)
        } else if ord == -2.0 {
            NormKind::Spectral(false)
        } else if ord.abs() == 1.0 {
            NormKind::Col(ord > 0.0)
        } else if ord.is_infinite() {
            NormKind::Row(ord > 0.0)
        } else {
            bail!("matrix_norm: ord {ord} is not a matrix norm");
        };
        matrix_norm_impl(op, self_, kind, &dim, keepdim)
    }

    /// linalg_norm(Tensor self, Scalar? ord=None, int[1]? dim=None, bool keepdim=False, *,
    ///     ScalarType? dtype=None) -> Tensor
    #[target("aten::linalg_norm")]
    fn linalg_norm(
        op,
        self_: Tensor,
        ord: Option<f64> = None,
        dim: Option<Vec<i64>> = None,
        keepdim: bool = false,
        // The result's type, read from the archive.
        _dtype: Ignored,
    ) -> OpResult<Value> {
        linalg_norm_impl(op, self_, ord, None, dim, keepdim)
    }

    /// linalg_norm.ord_str(Tensor self, str ord, int[1]? dim=None, bool keepdim=False, *,
    ///     ScalarType? dtype=None) -> Tensor
    #[target("aten::linalg_norm.ord_str")]
    fn linalg_norm_ord_str(
        op,
        self_: Tensor,
        ord: &str,
        dim: Option<Vec<i64>> = None,
        keepdim: bool = false,
        // The result's type, read from the archive.
        _dtype: Ignored,
    ) -> OpResult<Value> {
        let kind = match ord {
            "fro" => NormKind::Fro,
            "nuc" => NormKind::Nuc,
            other => bail!("linalg_norm: unknown ord {other:?}"),
        };
        linalg_norm_impl(op, self_, None, Some(kind), dim, keepdim)
    }
}
