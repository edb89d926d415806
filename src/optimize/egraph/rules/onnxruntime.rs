//! The rules of the ONNX Runtime targets (`Target::OnnxRuntimeCpu` / `Cuda`), run after the
//! standard ones: [`ONNXRUNTIME_RULES`]. Each is a `const` [`Rule`] with its patterns, lowest opset
//! and precheck, followed by its check and rewrite.

use egg::Id;

use super::{check, f32_attr, keepdims, scalar_for, tensor, trailing_axis};
use crate::onnx::ir::{DType, Dim};
use crate::optimize::egraph::analysis::Data;
use crate::optimize::egraph::engine::{Bind, Ctx, Rule, Skip};
use crate::optimize::egraph::lang::{AttrSet, ONode};

/// The rules of the ONNX Runtime targets (`Target::OnnxRuntimeCpu` / `Cuda`), run after
/// [`RULES`](super::RULES). Each rewrites into an operator or a form ONNX Runtime 1.31 (CPU, 1 thread)
/// runs faster than the standard graph; the measurements, the forms measured and not taken and the
/// command are in `reports/deploy.md` ("The ONNX Runtime target's rules"), by rule name. Numerics: a
/// fused kernel rounds differently from the unfused graph; `tests/optimizer.rs` compares both in
/// ONNX Runtime.
///
/// `SimplifiedLayerNormalization` exists in ONNX Runtime only in the default domain, where
/// `onnx.checker` rejects it: [`RMS_NORM_DIV`] writes the form ONNX Runtime turns into it at load
/// instead. `com.microsoft.GroupQueryAttention` / `MultiHeadAttention` / `RotaryEmbedding` are not
/// written: for a program with attention the targets write opset 23 (`export::default_opset`), where
/// [`ATTENTION_KV`](super::standard::ATTENTION_KV) and
/// [`ROTARY_EMBEDDING`](super::standard::ROTARY_EMBEDDING) give standard `Attention` and
/// `RotaryEmbedding`, whose semantics are ONNX's (`GroupQueryAttention` always masks causally and
/// reads the cache's length from a separate input, which a graph would have to be proven to match).
pub static ONNXRUNTIME_RULES: &[Rule] = &[RMS_NORM_DIV, SKIP_SIMPLIFIED_LAYER_NORM];

/// `w * (x * reciprocal(sqrt(mean(x^2) + eps)))` (an RMS norm as `torch.rsqrt` writes it, with its
/// scale) as `w * (x / sqrt(mean(x^2) + eps))`: ONNX Runtime fuses that form into its
/// `SimplifiedLayerNormalization` kernel at load (it needs the scale `Mul`), and runs the
/// reciprocal form as 7 nodes. Measured: `reports/deploy.md`, `rms-norm-div`. Without a scale
/// ONNX Runtime does not fuse the form: left alone. At opset 23
/// [`RMS_NORM`](super::standard::RMS_NORM)'s `RMSNormalization` (one node) is extracted instead.
/// ONNX Runtime targets only: `x / s` and `x * (1 / s)` may differ in the last bit.
pub const RMS_NORM_DIV: Rule = Rule {
    name: "rms-norm-div",
    // ReduceMean reads its axes as an input from opset 18 (the pattern's form).
    min_opset: 18,
    patterns: &["(Mul:m ?w (Mul ?x (Reciprocal (Sqrt (Add (ReduceMean:r (Pow ?x #two) #ax) #eps)))))"],
    precheck: None,
    apply: rms_norm_div,
};

fn rms_norm_div(c: &mut Ctx, b: &Bind) -> Result<Id, Skip> {
    let (x, w) = (b.get("x"), b.get("w"));
    let dtype = c.dtype(x);
    // The types ONNX Runtime's SimplifiedLayerNormalization fusion and kernels take.
    check(matches!(dtype, Some(DType::Float | DType::Float16 | DType::BFloat16)), "no fused kernel of this type")?;
    keepdims(c, b, "r")?;
    let xs = c.shape(x).ok_or("unknown shape")?.to_vec();
    // ONNX Runtime fuses a mean over the last axis only, scaled by a weight over that axis.
    check(trailing_axis(c, x, b.get("ax"))?.0 + 1 == xs.len(), "not a mean over the last axis")?;
    check(c.konst(w).is_some() && c.dtype(w) == dtype, "scale not a constant of the input's type")?;
    check(c.shape(w) == xs.last().map(std::slice::from_ref), "scale not over the last axis")?;
    check(c.scalar(b.get("two")) == Some(2.0), "not a square")?;
    scalar_for(c, b.get("eps"), x)?;
    check(c.shape(c.matched) == Some(&xs[..]), "the norm broadcasts the input")?;
    // The nodes the pattern matched, found again (the commutative ones in either order).
    let (two, ax, eps) = (b.get("two"), b.get("ax"), b.get("eps"));
    let mean_attrs = c.attrs(b.get("r"));
    let pow = c.find_op("Pow", &[x, two], vec![]).ok_or("chain not found")?;
    let mean = c.find_op("ReduceMean", &[pow, ax], mean_attrs).ok_or("chain not found")?;
    let var = find_commuted(c, "Add", mean, eps, vec![]).ok_or("chain not found")?;
    let root = c.find_op("Sqrt", &[var], vec![]).ok_or("chain not found")?;
    let inverse = c.find_op("Reciprocal", &[root], vec![]).ok_or("chain not found")?;
    let normed = find_commuted(c, "Mul", x, inverse, vec![]).ok_or("chain not found")?;
    let div = c.add_op("Div", &[x, root], vec![], dtype, Some(xs));
    // The scale keeps its side of the Mul.
    let attrs = c.attrs(b.get("m"));
    let inputs = if c.find_op("Mul", &[w, normed], attrs.clone()).is_some() { [w, div] } else { [div, w] };
    Ok(c.add_like_matched("Mul", &inputs, attrs))
}

/// The class of `op(a, b)` or `op(b, a)`, whichever the e-graph has.
fn find_commuted(c: &mut Ctx, op: &str, a: Id, b: Id, attrs: AttrSet) -> Option<Id> {
    match c.find_op(op, &[a, b], attrs.clone()) {
        Some(id) => Some(id),
        None => c.find_op(op, &[b, a], attrs),
    }
}

/// A residual sum and its RMS norm without a scale (a unit scale folded away, or into the next
/// MatMul) as one `SkipSimplifiedLayerNormalization` (com.microsoft) with the sum as its fourth
/// output. Where the norm has a scale, [`RMS_NORM_DIV`]'s form is faster, so this rule leaves it.
/// Faster for few tokens, slower for many; kept, as decoders spend their time in decode steps.
/// Measured: `reports/deploy.md`, `skip-simplified-layer-norm`.
pub const SKIP_SIMPLIFIED_LAYER_NORM: Rule = Rule {
    name: "skip-simplified-layer-norm",
    // ReduceMean reads its axes as an input from opset 18 (the pattern's form).
    min_opset: 18,
    patterns: &[
        "(Mul (Add:s ?a ?b) (Reciprocal (Sqrt (Add (ReduceMean:r (Pow (Add:s ?a ?b) #two) #ax) #eps))))",
        "(Div (Add:s ?a ?b) (Sqrt (Add (ReduceMean:r (Pow (Add:s ?a ?b) #two) #ax) #eps)))",
        // The scale's Mul in the window, so that the rule sees it and leaves the norm alone.
        "(Mul ?w (Mul (Add:s ?a ?b) (Reciprocal (Sqrt (Add (ReduceMean:r (Pow (Add:s ?a ?b) #two) #ax) #eps)))))",
    ],
    precheck: None,
    apply: skip_simplified_layer_norm,
};

fn skip_simplified_layer_norm(c: &mut Ctx, b: &Bind) -> Result<Id, Skip> {
    check(b.try_get("w").is_none(), "a scale follows: the Div form is faster")?;
    check(!scaled(c, c.matched), "a scale follows: the Div form is faster")?;
    let (a, s) = (b.get("a"), b.get("b"));
    let dtype = c.dtype(a);
    // The type ONNX Runtime's CPU kernel is registered for.
    check(dtype == Some(DType::Float) && c.dtype(s) == dtype, "not float32")?;
    // Commuted variants bind the sum's operands in either order.
    let attrs = c.attrs(b.get("s"));
    let sum = match c.find_op("Add", &[a, s], attrs.clone()) {
        Some(sum) => sum,
        None => c.find_op("Add", &[s, a], attrs).ok_or("sum not found")?,
    };
    let shape = c.shape(sum).ok_or("unknown shape")?.to_vec();
    check(shape.len() == 3, "not (batch, sequence, hidden)")?;
    check(c.shape(a) == Some(&shape[..]) && c.shape(s) == Some(&shape[..]), "the sum broadcasts")?;
    check(c.shape(c.matched) == Some(&shape[..]) && c.dtype(c.matched) == dtype, "the norm broadcasts")?;
    keepdims(c, b, "r")?;
    check(trailing_axis(c, sum, b.get("ax"))?.0 == 2, "not a mean over the last axis")?;
    check(c.scalar(b.get("two")) == Some(2.0), "not a square")?;
    let eps = scalar_for(c, b.get("eps"), sum)?;
    let Dim::Fixed(hidden) = shape[2] else { return Err("hidden size not static") };
    check(hidden <= 1 << 20, "hidden size too large for a constant scale")?;
    let ones = tensor(DType::Float, vec![hidden], &vec![1.0; hidden as usize])?;
    let gamma = c.add_const(ones);
    let value = Data { dtype, shape: Some(shape), konst: None, uses: 0 };
    let stat = Data { dtype: Some(DType::Float), ..Data::default() };
    let outs = c.add_multi(
        crate::onnx::operators::contrib::DOMAIN,
        "SkipSimplifiedLayerNormalization",
        &[a, s, gamma],
        vec![("epsilon".into(), f32_attr(eps, dtype)?)],
        &[value.clone(), stat.clone(), stat, value],
    );
    // The sum is the node's fourth output.
    c.eg.union(sum, outs[3]);
    Ok(outs[0])
}

/// Whether some node of the window's e-graph multiplies `id` by a constant.
fn scaled(c: &Ctx, id: Id) -> bool {
    let id = c.eg.find(id);
    c.eg.classes().any(|class| {
        class.nodes.iter().any(|n| match n {
            ONode::Op(k, ch) if &*k.op == "Mul" && k.domain.is_empty() && ch.len() == 3 => {
                let (x, y) = (c.eg.find(ch[0]), c.eg.find(ch[1]));
                (x == id && c.konst(y).is_some()) || (y == id && c.konst(x).is_some())
            }
            _ => false,
        })
    })
}
