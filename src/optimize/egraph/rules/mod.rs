//! The rewrite rules, one unit each: a `const` [`Rule`](super::engine::Rule) with its patterns, lowest opset and cheap
//! precheck, followed by the function that checks exact dtype / shape / constant conditions
//! (symbolic dimensions are compared by name, never assumed), says why it did not apply (unsure
//! means skip) and builds the replacement. Per-operator variations are data
//! ([`BnInto`](standard::BnInto)).
//!
//! Linear cleanups are not here: no-ops (Identity, Cast to the same type, identity Transpose, ...)
//! are removed by the no-op pass (`optimize::noop`), a Reshape of a Reshape by shape folding
//! (`optimize::shapes`), both before the e-graph runs and again after it rewrote anything.
//!
//! The rules live in two files, apart as onnxscript's `ort_fusions/` keeps its target's: the
//! standard rules every export runs ([`standard`], [`RULES`]) and those of the ONNX Runtime targets,
//! run after them ([`onnxruntime`], [`ONNXRUNTIME_RULES`]). Checks both use are here.

use egg::Id;

use super::engine::{Bind, Ctx, Skip};
use super::lang::{get_int, AttrLit};
use crate::onnx::ir::{DType, Dim, TensorData};

pub mod onnxruntime;
pub mod standard;

pub use onnxruntime::ONNXRUNTIME_RULES;
pub use standard::RULES;

// --- shared checks ---

/// The trailing axes `axes` normalize over, as the `axis` of a normalization op.
fn trailing_axis(c: &Ctx, x: Id, axes: Id) -> Result<(usize, Vec<Dim>), Skip> {
    let xs = c.shape(x).ok_or("unknown shape")?;
    let axes = normalize_axes(&c.ints(axes).ok_or("axes not constant")?, xs.len()).ok_or("bad axes")?;
    check(!axes.is_empty(), "no axes")?;
    let first = axes[0];
    check(
        axes.iter().enumerate().all(|(i, &a)| a == first + i) && *axes.last().unwrap_or(&0) == xs.len() - 1,
        "not trailing axes",
    )?;
    Ok((first, xs[first..].to_vec()))
}

fn keepdims(c: &Ctx, b: &Bind, label: &str) -> Result<(), Skip> {
    let a = c.attrs(b.get(label));
    check(
        get_int(&a, "keepdims").unwrap_or(1) == 1 && get_int(&a, "noop_with_empty_axes").unwrap_or(0) == 0,
        "keepdims",
    )
}

fn check(cond: bool, why: Skip) -> Result<(), Skip> {
    if cond {
        Ok(())
    } else {
        Err(why)
    }
}

/// `value` as the float32 attribute of a fused op (an epsilon, a scale): in a float64 graph only
/// when float32 holds it exactly, else the fused op would compute with another constant (found by
/// `tests/optimizer_props.rs`: a double layer norm with epsilon 1e-5).
fn f32_attr(value: f64, dtype: Option<DType>) -> Result<AttrLit, Skip> {
    let f = value as f32;
    check(dtype != Some(DType::Double) || f as f64 == value, "constant not exact in the fused op's float32 attribute")?;
    Ok(AttrLit::Float(f.to_bits()))
}

/// Whether ONNX Runtime's CPU provider runs HardSigmoid, HardSwish and Gelu in this type: not
/// double (ONNX allows it, onnxruntime 1.31 has no kernel), so fusing a double graph would turn a
/// model that runs into one that does not (found by `tests/optimizer_props.rs`).
fn has_fused_kernel(d: Option<DType>) -> bool {
    matches!(d, Some(DType::Float | DType::Float16 | DType::BFloat16))
}

fn is_float(d: Option<DType>) -> bool {
    matches!(d, Some(DType::Float | DType::Double | DType::Float16 | DType::BFloat16))
}

/// `c` broadcast against `x` leaves `x`'s shape unchanged (every dimension of `c` is 1 or the
/// same as `x`'s, and `c` has no more dimensions).
fn broadcast_keeps(x: &[Dim], c: &[Dim]) -> bool {
    c.len() <= x.len() && c.iter().rev().zip(x.iter().rev()).all(|(dc, dx)| *dc == Dim::Fixed(1) || dc == dx)
}

/// `v` equals the float32 rounding of `exact` (what a translation writing `exact` would store).
fn near(v: f64, exact: f64) -> bool {
    (v - exact).abs() <= exact.abs() * 1e-6
}

/// A one-element constant whose broadcast does not change `x`'s shape.
fn scalar_for(c: &Ctx, id: Id, x: Id) -> Result<f64, Skip> {
    let v = c.scalar(id).ok_or("operand is not a one-element constant")?;
    let (xs, cs) = (c.shape(x).ok_or("unknown shape")?, c.shape(id).ok_or("unknown shape")?);
    check(cs.len() <= xs.len(), "constant broadcasts to a higher rank")?;
    Ok(v)
}

fn normalize_axes(axes: &[i64], rank: usize) -> Option<Vec<usize>> {
    let r = rank as i64;
    let mut out: Vec<usize> = axes
        .iter()
        .map(|&a| if (-r..r).contains(&a) { Some(((a + r) % r) as usize) } else { None })
        .collect::<Option<_>>()?;
    out.sort_unstable();
    out.dedup();
    if out.len() == axes.len() {
        Some(out)
    } else {
        None
    }
}

fn tensor(dtype: DType, dims: Vec<i64>, values: &[f64]) -> Result<TensorData, Skip> {
    TensorData::from_f64_as(dtype, dims, values).ok_or("no encoding for the element type")
}

fn scalar_const(c: &mut Ctx, dtype: DType, v: f64) -> Result<Id, Skip> {
    let t = tensor(dtype, vec![], &[v])?;
    Ok(c.add_const(t))
}
