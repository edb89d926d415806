//! The standard rules: every export runs them, in [`RULES`]'s order. Each is a `const` [`Rule`]
//! with its patterns, lowest opset and precheck, followed by its check and rewrite.

use egg::Id;

use super::{
    broadcast_keeps, check, f32_attr, has_fused_kernel, is_float, keepdims, near, normalize_axes, scalar_const,
    scalar_for, tensor, trailing_axis,
};
use crate::onnx::ir::{BinOp, DType, Derived, Dim, Model, Node, TensorData, Value};
use crate::optimize::egraph::engine::{Bind, Ctx, Precheck, Producers, Rule, Skip};
use crate::optimize::egraph::lang::{get_float, get_int, get_ints, AttrLit, AttrSet, ONode};

/// Every rule, in the order windows try them.
pub static RULES: &[Rule] = &[
    TRANSPOSE_TRANSPOSE,
    CAST_CAST,
    RESHAPE_STATIC_SHAPE,
    UNSQUEEZE_UNSQUEEZE,
    MUL_ONE,
    DIV_ONE,
    ADD_ZERO,
    SUB_ZERO,
    MIN_MAX_CLIP,
    RELU_RELU,
    RELU_CLIP,
    SUM_DIV_MEAN,
    GLOBAL_AVERAGE_POOL,
    HARD_SIGMOID,
    HARD_SWISH,
    PAD_CONV,
    BATCHNORM_CONV,
    BATCHNORM_CONVTRANSPOSE,
    BATCHNORM_GEMM,
    MATMUL_ADD_GEMM,
    LAYER_NORM,
    GELU_ERF,
    GELU_TANH,
    RMS_NORM,
    ATTENTION,
    ATTENTION_KV,
    ROTARY_EMBEDDING,
    INDEX_GRID,
];
// --- chains and shapes ---

/// Two transposes are one (or none, when the permutations cancel).
pub const TRANSPOSE_TRANSPOSE: Rule = Rule {
    name: "transpose-transpose",
    min_opset: 1,
    patterns: &["(Transpose:p2 (Transpose:p1 ?x))"],
    precheck: None,
    apply: transpose_transpose,
};

fn transpose_transpose(c: &mut Ctx, b: &Bind) -> Result<Id, Skip> {
    let x = b.get("x");
    let p1 = perm_of(&c.attrs(b.get("p1")), c.rank(x))?;
    let p2 = perm_of(&c.attrs(b.get("p2")), Some(p1.len()))?;
    check(p1.len() == p2.len(), "permutations of different ranks")?;
    // out[i] = mid[p2[i]] = x[p1[p2[i]]]
    let composed: Vec<i64> = p2
        .iter()
        .map(|&i| usize::try_from(i).ok().and_then(|i| p1.get(i).copied()))
        .collect::<Option<_>>()
        .ok_or("bad perm")?;
    if composed.iter().enumerate().all(|(i, &v)| v == i as i64) {
        return Ok(x);
    }
    Ok(c.add_like_matched("Transpose", &[x], vec![("perm".into(), AttrLit::Ints(composed))]))
}

fn perm_of(attrs: &AttrSet, rank: Option<usize>) -> Result<Vec<i64>, Skip> {
    match get_ints(attrs, "perm") {
        Some(p) => Ok(p.to_vec()),
        None => {
            let r = rank.ok_or("default perm needs a known rank")?;
            Ok((0..r as i64).rev().collect())
        }
    }
}

/// A cast through a type that holds every value of the input is one cast (or none).
pub const CAST_CAST: Rule =
    Rule { name: "cast-cast", min_opset: 1, patterns: &["(Cast:b (Cast:a ?x))"], precheck: None, apply: cast_cast };

fn cast_cast(c: &mut Ctx, b: &Bind) -> Result<Id, Skip> {
    let x = b.get("x");
    let from = c.dtype(x).ok_or("unknown input type")?;
    let mid = cast_to(&c.attrs(b.get("a")))?;
    let to = cast_to(&c.attrs(b.get("b")))?;
    check(lossless(from, mid), "the first cast may change values")?;
    if to == from {
        return Ok(x);
    }
    let attrs = c.attrs(b.get("b"));
    Ok(c.add_like_matched("Cast", &[x], attrs))
}

fn cast_to(attrs: &AttrSet) -> Result<DType, Skip> {
    get_int(attrs, "to").and_then(|t| crate::onnx::ir::DType::from_onnx(t as i32)).ok_or("unknown cast target")
}

/// Every value of `from` is exactly representable in `to`.
fn lossless(from: DType, to: DType) -> bool {
    use DType::*;
    if from == to {
        return true;
    }
    match from {
        Bool => matches!(
            to,
            Uint8 | Int8 | Int16 | Int32 | Int64 | Uint16 | Uint32 | Uint64 | Float16 | Float | Double | BFloat16
        ),
        Int8 => matches!(to, Int16 | Int32 | Int64 | Float16 | Float | Double),
        Uint8 => matches!(to, Int16 | Int32 | Int64 | Uint16 | Uint32 | Uint64 | Float16 | Float | Double),
        Int16 => matches!(to, Int32 | Int64 | Float | Double),
        Uint16 => matches!(to, Int32 | Int64 | Uint32 | Uint64 | Float | Double),
        Int32 => matches!(to, Int64 | Double),
        Uint32 => matches!(to, Int64 | Uint64 | Double),
        Float16 | BFloat16 => matches!(to, Float | Double),
        Float => matches!(to, Double),
        _ => false,
    }
}

/// A shape computed at run time (Shape → Concat) replaced by the constant the output shape gives,
/// so the shape computation goes dead.
pub const RESHAPE_STATIC_SHAPE: Rule = Rule {
    name: "reshape-static-shape",
    min_opset: 5,
    patterns: &["(Reshape:a ?x ?s)"],
    precheck: Some(Precheck::Root(pre_reshape_static_shape)),
    apply: reshape_static_shape,
};

fn pre_reshape_static_shape(m: &Model, n: &Node, _: &Producers) -> bool {
    let computed = n.inputs.get(1).copied().flatten().is_some_and(|s| m.value(s).constant.is_none());
    computed && m.value(n.outputs[0]).shape.as_deref().and_then(static_target).is_some()
}

fn reshape_static_shape(c: &mut Ctx, b: &Bind) -> Result<Id, Skip> {
    let (x, s) = (b.get("x"), b.get("s"));
    check(c.konst(s).is_none(), "shape already constant")?;
    let attrs = c.attrs(b.get("a"));
    check(get_int(&attrs, "allowzero").unwrap_or(0) == 0, "allowzero")?;
    let target = static_target(c.shape(c.matched).ok_or("unknown output shape")?).ok_or("output shape not static")?;
    // Symbolic sizes of the input the -1 could not account for would make the element count ambiguous
    // only with a second unknown, which static_target excludes.
    let sid = c.add_const(TensorData::from_i64s(vec![target.len() as i64], &target));
    Ok(c.add_like_matched("Reshape", &[x, sid], attrs))
}

/// The target shape a Reshape's output has, when it is known up to at most one symbolic size
/// (written -1), with no 0 (which Reshape would read as "copy").
fn static_target(out: &[Dim]) -> Option<Vec<i64>> {
    let mut symbolic = 0;
    let t: Vec<i64> = out
        .iter()
        .map(|d| match d {
            Dim::Fixed(n) => *n,
            Dim::Param(_) => {
                symbolic += 1;
                -1
            }
        })
        .collect();
    (symbolic <= 1 && !t.contains(&0)).then_some(t)
}

/// Two unsqueezes are one with the axes of both.
pub const UNSQUEEZE_UNSQUEEZE: Rule = Rule {
    name: "unsqueeze-unsqueeze",
    min_opset: 13,
    patterns: &["(Unsqueeze:u2 (Unsqueeze:u1 ?x #a1) #a2)"],
    precheck: None,
    apply: unsqueeze_unsqueeze,
};

fn unsqueeze_unsqueeze(c: &mut Ctx, b: &Bind) -> Result<Id, Skip> {
    let x = b.get("x");
    let r = c.rank(x).ok_or("unknown rank")?;
    let a1 = c.ints(b.get("a1")).ok_or("axes not constant")?;
    let a2 = c.ints(b.get("a2")).ok_or("axes not constant")?;
    let r1 = r + a1.len();
    let r2 = r1 + a2.len();
    let a1 = normalize_axes(&a1, r1).ok_or("bad axes")?;
    let a2 = normalize_axes(&a2, r2).ok_or("bad axes")?;
    // The intermediate's dimensions land, in order, on the output positions the second unsqueeze
    // did not insert; the first unsqueeze's axes follow them there.
    let kept: Vec<usize> = (0..r2).filter(|i| !a2.contains(i)).collect();
    let mut merged: Vec<i64> = a2.iter().map(|&a| a as i64).collect();
    merged.extend(a1.iter().map(|&a| kept[a] as i64));
    merged.sort_unstable();
    let axes = c.add_const(TensorData::from_i64s(vec![merged.len() as i64], &merged));
    Ok(c.add_like_matched("Unsqueeze", &[x, axes], vec![]))
}

// --- neutral elements ---

// `x * 1`, `x / 1`, `x + 0` and `x - 0` are removed here rather than by the linear no-op pass: the
// e-graph keeps both forms, so a fusion whose pattern holds the neutral operation (the scale `Mul`
// of a layer norm, its bias `Add`) still matches where it is the neutral element.

/// `Mul` by a constant that is 1 everywhere.
pub const MUL_ONE: Rule = Rule {
    name: "mul-one",
    min_opset: 1,
    patterns: &["(Mul ?x #c)"],
    precheck: Some(Precheck::Window(may_one)),
    apply: |c, b| neutral(c, b, 1.0),
};

/// `Div` by a constant that is 1 everywhere.
pub const DIV_ONE: Rule = Rule {
    name: "div-one",
    min_opset: 1,
    patterns: &["(Div ?x #c)"],
    precheck: Some(Precheck::Window(may_one)),
    apply: |c, b| neutral(c, b, 1.0),
};

/// `Add` by a constant that is 0 everywhere.
pub const ADD_ZERO: Rule = Rule {
    name: "add-zero",
    min_opset: 1,
    patterns: &["(Add ?x #c)"],
    precheck: Some(Precheck::Window(may_zero)),
    apply: |c, b| neutral(c, b, 0.0),
};

/// `Sub` by a constant that is 0 everywhere.
pub const SUB_ZERO: Rule = Rule {
    name: "sub-zero",
    min_opset: 1,
    patterns: &["(Sub ?x #c)"],
    precheck: Some(Precheck::Window(may_zero)),
    apply: |c, b| neutral(c, b, 0.0),
};

/// `x op c` is `x` when `c` is the neutral element everywhere and does not broadcast `x`.
fn neutral(c: &mut Ctx, b: &Bind, value: f64) -> Result<Id, Skip> {
    let (x, k) = (b.get("x"), b.get("c"));
    let vals = c.values(k).ok_or("operand not constant")?;
    check(vals.iter().all(|&v| v == value), "not the neutral element")?;
    check(c.dtype(x).is_some() && c.dtype(x) == c.dtype(k), "types differ")?;
    let (xs, ks) = (c.shape(x).ok_or("unknown shape")?, c.shape(k).ok_or("unknown shape")?);
    check(broadcast_keeps(xs, ks), "operand broadcasts the input")?;
    Ok(x)
}

fn may_one(m: &Model, n: &Node, _: &Producers) -> bool {
    may_neutral(m, n, 1.0)
}

fn may_zero(m: &Model, n: &Node, _: &Producers) -> bool {
    may_neutral(m, n, 0.0)
}

/// Some input is a constant of the model equal to `value` everywhere ([`neutral`]'s first test).
fn may_neutral(m: &Model, n: &Node, value: f64) -> bool {
    n.inputs.iter().flatten().any(|&v| {
        let Some(t) = m.value(v).constant.as_ref() else { return false };
        // Most constants differ at their first element: test it before decoding them all (a
        // derived weight computes only that prefix).
        let size = t.dtype.size().unwrap_or(0);
        if t.numel() > 1 && size > 0 && t.raw.len() >= size {
            let first = TensorData { dtype: t.dtype, dims: Vec::new(), raw: t.raw.prefix(size).into_owned().into() };
            if first.to_f64s().is_some_and(|f| f.first() != Some(&value)) {
                return false;
            }
        }
        t.to_f64s().is_some_and(|vals| vals.iter().all(|&x| x == value))
    })
}

// --- clamps and reductions ---

/// `Min(Max(x, lo), hi)` is `Clip(x, lo, hi)`.
pub const MIN_MAX_CLIP: Rule = Rule {
    name: "min-max-clip",
    min_opset: 12,
    patterns: &["(Min (Max ?x #lo) #hi)", "(Max:mx (Min ?x #hi) #lo)"],
    precheck: None,
    apply: min_max_clip,
};

fn min_max_clip(c: &mut Ctx, b: &Bind) -> Result<Id, Skip> {
    let x = b.get("x");
    let dt = c.dtype(x).ok_or("unknown type")?;
    check(crate::onnx::legalize::runs_on("Clip", dt), "no Clip of this type")?;
    let lo = scalar_for(c, b.get("lo"), x)?;
    let hi = scalar_for(c, b.get("hi"), x)?;
    check(c.dtype(b.get("lo")) == Some(dt) && c.dtype(b.get("hi")) == Some(dt), "types differ")?;
    // Max(Min(x, hi), lo) is lo everywhere when lo > hi; Clip then gives hi.
    check(b.try_get("mx").is_none() || lo <= hi, "bounds cross")?;
    let (l, h) = (scalar_const(c, dt, lo)?, scalar_const(c, dt, hi)?);
    Ok(c.add_like_matched("Clip", &[x, l, h], vec![]))
}

/// Relu is idempotent.
pub const RELU_RELU: Rule =
    Rule { name: "relu-relu", min_opset: 1, patterns: &["(Relu (Relu ?x))"], precheck: None, apply: relu_relu };

fn relu_relu(c: &mut Ctx, b: &Bind) -> Result<Id, Skip> {
    let x = b.get("x");
    Ok(c.add_like_matched("Relu", &[x], vec![]))
}

/// A Relu next to a Clip raises the Clip's lower bound to 0.
pub const RELU_CLIP: Rule = Rule {
    name: "relu-clip",
    min_opset: 12,
    patterns: &["(Relu:r (Clip ?x #lo #hi))", "(Clip (Relu ?x) #lo #hi)"],
    precheck: None,
    apply: relu_clip,
};

fn relu_clip(c: &mut Ctx, b: &Bind) -> Result<Id, Skip> {
    let x = b.get("x");
    let dt = c.dtype(x).ok_or("unknown type")?;
    check(is_float(Some(dt)) || dt.is_int(), "not numeric")?;
    let lo = c.scalar(b.get("lo")).ok_or("min not constant")?;
    let hi = c.scalar(b.get("hi")).ok_or("max not constant")?;
    let lo = lo.max(0.0);
    // Relu(Clip(x, lo, hi)) is 0 everywhere when hi < 0, which no Clip(x, max(lo, 0), hi) gives.
    check(b.try_get("r").is_none() || lo <= hi, "bounds cross")?;
    let (l, h) = (scalar_const(c, dt, lo)?, scalar_const(c, dt, hi)?);
    Ok(c.add_like_matched("Clip", &[x, l, h], vec![]))
}

/// A sum divided by the number of summed elements is a mean (below opset 18 ReduceMean takes
/// its axes as an attribute).
pub const SUM_DIV_MEAN: Rule = Rule {
    name: "sum-div-mean",
    min_opset: 13,
    patterns: &["(Div (ReduceSum:r ?x #ax) #n)"],
    precheck: None,
    apply: sum_div_mean,
};

fn sum_div_mean(c: &mut Ctx, b: &Bind) -> Result<Id, Skip> {
    let (x, ax) = (b.get("x"), b.get("ax"));
    check(is_float(c.dtype(x)), "not a float type")?;
    let r = c.attrs(b.get("r"));
    check(get_int(&r, "noop_with_empty_axes").unwrap_or(0) == 0, "noop_with_empty_axes")?;
    let xs = c.shape(x).ok_or("unknown shape")?.to_vec();
    let axes = normalize_axes(&c.ints(ax).ok_or("axes not constant")?, xs.len()).ok_or("bad axes")?;
    check(!axes.is_empty(), "empty axes")?;
    let count: i64 = axes
        .iter()
        .map(|&a| if let Dim::Fixed(n) = xs[a] { Some(n) } else { None })
        .product::<Option<i64>>()
        .ok_or("reduced sizes not fixed")?;
    let n = c.scalar(b.get("n")).ok_or("divisor not a constant")?;
    check(n == count as f64, "divisor is not the element count")?;
    check(c.rank(b.get("n")).is_some_and(|k| k <= xs.len()), "divisor broadcasts")?;
    if c.eg.analysis.opset < 18 {
        let mut attrs: AttrSet = r.into_iter().filter(|(name, _)| name != "noop_with_empty_axes").collect();
        attrs.push(("axes".into(), AttrLit::Ints(c.ints(ax).ok_or("axes not constant")?)));
        return Ok(c.add_like_matched("ReduceMean", &[x], attrs));
    }
    Ok(c.add_like_matched("ReduceMean", &[x, ax], r))
}

// --- fusions ---

/// A mean over the two spatial axes written as two matrix products.
pub const GLOBAL_AVERAGE_POOL: Rule = Rule {
    name: "global-average-pool",
    min_opset: 1,
    patterns: &["(MatMul (Transpose:p2 (MatMul (Transpose:p1 ?x) #m1)) #m2)"],
    precheck: None,
    apply: global_average_pool,
};

fn global_average_pool(c: &mut Ctx, b: &Bind) -> Result<Id, Skip> {
    let x = b.get("x");
    check(c.dtype(x) == Some(DType::Float), "not float32")?;
    let xs = c.shape(x).ok_or("unknown shape")?.to_vec();
    check(xs.len() == 4, "not 4-D")?;
    let (Dim::Fixed(h), Dim::Fixed(w)) = (&xs[2], &xs[3]) else { return Err("spatial sizes not fixed") };
    let (h, w) = (*h, *w);
    for p in ["p1", "p2"] {
        check(get_ints(&c.attrs(b.get(p)), "perm") == Some(&[0, 1, 3, 2]), "not a last-two-axes transpose")?;
    }
    for (m, n) in [("m1", h), ("m2", w)] {
        let t = c.konst(b.get(m)).ok_or("pooling matrix not constant")?;
        check(t.dims == [n, 1], "pooling matrix shape")?;
        let want = (1.0 / n as f64) as f32 as f64;
        check(c.values(b.get(m)).is_some_and(|v| v.iter().all(|&e| e == want)), "not a mean")?;
    }
    Ok(c.add_like_matched("GlobalAveragePool", &[x], vec![]))
}

/// `Clip(x + 3, 0, 6) / 6`.
pub const HARD_SIGMOID: Rule = Rule {
    name: "hard-sigmoid",
    min_opset: 6,
    patterns: &["(Div (Clip (Add ?x #three) #zero #six) #six2)"],
    precheck: None,
    apply: hard_sigmoid,
};

fn hard_sigmoid(c: &mut Ctx, b: &Bind) -> Result<Id, Skip> {
    hard_sigmoid_consts(c, b)?;
    let attrs = vec![
        ("alpha".into(), AttrLit::Float((1.0f32 / 6.0).to_bits())),
        ("beta".into(), AttrLit::Float(0.5f32.to_bits())),
    ];
    Ok(c.add_like_matched("HardSigmoid", &[b.get("x")], attrs))
}

fn hard_sigmoid_consts(c: &Ctx, b: &Bind) -> Result<(), Skip> {
    let x = b.get("x");
    check(has_fused_kernel(c.dtype(x)), "no runtime kernel of the fused op in this type")?;
    for (n, v) in [("three", 3.0), ("zero", 0.0), ("six", 6.0), ("six2", 6.0)] {
        check(scalar_for(c, b.get(n), x)? == v, "constants are not 3, 0, 6")?;
    }
    Ok(())
}

/// `x * Clip(x + 3, 0, 6) / 6`.
pub const HARD_SWISH: Rule = Rule {
    name: "hard-swish",
    min_opset: 14,
    patterns: &["(Div (Mul ?x (Clip (Add ?x #three) #zero #six)) #six2)"],
    precheck: None,
    apply: hard_swish,
};

fn hard_swish(c: &mut Ctx, b: &Bind) -> Result<Id, Skip> {
    hard_sigmoid_consts(c, b)?;
    Ok(c.add_like_matched("HardSwish", &[b.get("x")], vec![]))
}

/// A zero padding of the spatial axes that only a Conv reads becomes the Conv's own padding (Conv
/// pads with zeros): torch's explicit `F.pad` before a convolution, TF-style "same" padding.
pub const PAD_CONV: Rule = Rule {
    name: "pad-conv",
    min_opset: 18,
    patterns: &[
        "(Conv:c (Pad:p ?x #pads) #w)",
        "(Conv:c (Pad:p ?x #pads) #w ?cb)",
        "(Conv:c (Pad:p ?x #pads ?value) #w)",
        "(Conv:c (Pad:p ?x #pads ?value) #w ?cb)",
        "(Conv:c (Pad:p ?x #pads ?value #axes) #w)",
        "(Conv:c (Pad:p ?x #pads ?value #axes) #w ?cb)",
    ],
    precheck: None,
    apply: pad_conv,
};

fn pad_conv(c: &mut Ctx, b: &Bind) -> Result<Id, Skip> {
    let (x, w) = (b.get("x"), b.get("w"));
    let r = c.rank(x).ok_or("unknown rank")?;
    check(r >= 3, "not a batched convolution input")?;
    let pad_attrs = c.attrs(b.get("p"));
    check(
        pad_attrs.iter().all(|(n, v)| n != "mode" || matches!(v, AttrLit::Str(m) if m == "constant")),
        "not a constant padding",
    )?;
    let mut children = vec![x, b.get("pads")];
    if let Some(v) = b.try_get("value") {
        check(c.is_absent(v) || c.scalar(v) == Some(0.0), "pads with a value other than 0")?;
        children.push(v);
    }
    let axes: Vec<i64> = match b.try_get("axes") {
        Some(a) if !c.is_absent(a) => {
            children.push(a);
            c.ints(a).ok_or("axes not constant")?
        }
        _ => (0..r as i64).collect(),
    };
    children.push(b.get("p"));
    let pad = c.lookup_op("Pad", &children).ok_or("Pad not found")?;
    check(c.uses(pad) == 1, "the padded tensor has other readers")?;
    let pads = c.ints(b.get("pads")).ok_or("pads not constant")?;
    check(pads.len() == 2 * axes.len() && pads.iter().all(|&p| p >= 0), "negative or malformed pads")?;
    let conv_attrs = c.attrs(b.get("c"));
    check(
        conv_attrs.iter().all(|(n, v)| n != "auto_pad" || matches!(v, AttrLit::Str(m) if m == "NOTSET")),
        "the Conv pads automatically",
    )?;
    let k = r - 2;
    let mut conv_pads = get_ints(&conv_attrs, "pads").map_or(vec![0; 2 * k], <[i64]>::to_vec);
    check(conv_pads.len() == 2 * k, "malformed Conv pads")?;
    for (i, &a) in axes.iter().enumerate() {
        let a = if a < 0 { a + r as i64 } else { a };
        let (begin, end) = (pads[i], pads[i + axes.len()]);
        if begin == 0 && end == 0 {
            continue;
        }
        check((2..r as i64).contains(&a), "pads the batch or channel axis")?;
        let s = (a - 2) as usize;
        conv_pads[s] += begin;
        conv_pads[s + k] += end;
    }
    let mut attrs = conv_attrs;
    match attrs.iter_mut().find(|(n, _)| n == "pads") {
        Some((_, v)) => *v = AttrLit::Ints(conv_pads),
        None => attrs.push(("pads".into(), AttrLit::Ints(conv_pads))),
    }
    let mut inputs = vec![x, w];
    inputs.extend(b.try_get("cb"));
    Ok(c.add_like_matched("Conv", &inputs, attrs))
}

/// An inference BatchNormalization folded into the Conv before it ([`bn_fold`]).
pub const BATCHNORM_CONV: Rule = Rule {
    name: "batchnorm-conv",
    min_opset: 1,
    patterns: &[
        "(BatchNormalization:bn (Conv:c ?x #w) #s #b #m #v)",
        "(BatchNormalization:bn (Conv:c ?x #w ?cb) #s #b #m #v)",
    ],
    precheck: None,
    apply: |c, b| bn_fold(c, b, &BN_INTO_CONV),
};

/// An inference BatchNormalization folded into the ConvTranspose before it ([`bn_fold`]).
pub const BATCHNORM_CONVTRANSPOSE: Rule = Rule {
    name: "batchnorm-convtranspose",
    min_opset: 1,
    patterns: &[
        "(BatchNormalization:bn (ConvTranspose:c ?x #w) #s #b #m #v)",
        "(BatchNormalization:bn (ConvTranspose:c ?x #w ?cb) #s #b #m #v)",
    ],
    precheck: None,
    apply: |c, b| bn_fold(c, b, &BN_INTO_CONV_TRANSPOSE),
};

/// An inference BatchNormalization folded into the Gemm before it ([`bn_fold`]).
pub const BATCHNORM_GEMM: Rule = Rule {
    name: "batchnorm-gemm",
    min_opset: 1,
    patterns: &[
        "(BatchNormalization:bn (Gemm:c ?x #w) #s #b #m #v)",
        "(BatchNormalization:bn (Gemm:c ?x #w ?cb) #s #b #m #v)",
    ],
    precheck: None,
    apply: |c, b| bn_fold(c, b, &BN_INTO_GEMM),
};

/// An operator a BatchNormalization folds into: how its weight holds the output channels.
pub struct BnInto {
    pub op: &'static str,
    /// The per-channel factors `f` as a constant that broadcasts to the weight `w`: its dims and
    /// values (the operator's attributes and the matched value's facts at hand).
    factors: fn(&Ctx, &AttrSet, &TensorData, &[f64]) -> Result<Factors, Skip>,
    /// A one-element bias stands for every channel (Gemm's `C` broadcasts, Conv's `B` does not).
    scalar_bias: bool,
}

/// Per-channel factors laid out to broadcast to a weight: dims and values.
type Factors = (Vec<i64>, Vec<f64>);

const BN_INTO_CONV: BnInto = BnInto { op: "Conv", factors: conv_factors, scalar_bias: false };
const BN_INTO_CONV_TRANSPOSE: BnInto =
    BnInto { op: "ConvTranspose", factors: conv_transpose_factors, scalar_bias: false };
const BN_INTO_GEMM: BnInto = BnInto { op: "Gemm", factors: gemm_factors, scalar_bias: true };

/// Fold an inference BatchNormalization into the constant weights of the Conv / ConvTranspose /
/// Gemm that feeds it (whose output nothing else reads).
fn bn_fold(c: &mut Ctx, b: &Bind, into: &BnInto) -> Result<Id, Skip> {
    let (x, w) = (b.get("x"), b.get("w"));
    let cb = b.try_get("cb").filter(|&i| !c.is_absent(i));
    let bn = c.attrs(b.get("bn"));
    let conv_attrs = c.attrs(b.get("c"));
    check(get_int(&bn, "training_mode").unwrap_or(0) == 0, "training mode")?;
    let mut children = vec![x, w];
    children.extend(cb);
    children.push(b.get("c"));
    let inner = c.lookup_op(into.op, &children).ok_or("inner node not found")?;
    check(c.uses(inner) == 1, "the unnormalized output has other readers")?;
    let wt = c.konst(w).ok_or("weights not constant")?.clone();
    check(matches!(wt.dtype, DType::Float | DType::Double), "weights not float32/float64")?;
    let param = |name: &str| c.values(b.get(name)).ok_or("normalization parameters not constant");
    let (s, beta, mean, var) = (param("s")?, param("b")?, param("m")?, param("v")?);
    let eps = get_float(&bn, "epsilon").unwrap_or(1e-5) as f64;
    let m = s.len();
    check([beta.len(), mean.len(), var.len()].iter().all(|&l| l == m), "parameter lengths differ")?;
    let f: Vec<f64> = (0..m).map(|i| s[i] / (var[i] + eps).sqrt()).collect();
    // Per-channel factors as a constant broadcasting to the weight's shape: the weight is then
    // recorded as `w * factors` and computed while the model is written (see `onnx::ir::derived`).
    let (fdims, fvals) = (into.factors)(c, &conv_attrs, &wt, &f)?;
    let new_w = scale_weights(&wt, &tensor(wt.dtype, fdims, &fvals)?)?;
    let old_b = match cb {
        Some(cb) => {
            let v = c.values(cb).ok_or("bias not constant")?;
            if v.len() == m {
                v
            } else if v.len() == 1 && into.scalar_bias {
                vec![v[0]; m]
            } else {
                return Err("bias shape");
            }
        }
        None => vec![0.0; m],
    };
    let new_b: Vec<f64> = (0..m).map(|i| (old_b[i] - mean[i]) * f[i] + beta[i]).collect();
    let wid = c.add_const(new_w);
    let bid = c.add_const(tensor(wt.dtype, vec![m as i64], &new_b)?);
    Ok(c.add_like_matched(into.op, &[x, wid, bid], conv_attrs))
}

/// `lead` followed by ones up to `rank` dimensions.
fn lead_dims(lead: &[i64], rank: usize) -> Vec<i64> {
    lead.iter().copied().chain(std::iter::repeat_n(1, rank.saturating_sub(lead.len()))).collect()
}

/// Conv weights are `[M, C / group, k...]`: the output channel is the leading axis.
fn conv_factors(_: &Ctx, _: &AttrSet, w: &TensorData, f: &[f64]) -> Result<Factors, Skip> {
    let m = f.len() as i64;
    check(w.dims.first() == Some(&m), "channel count differs")?;
    Ok((lead_dims(&[m], w.dims.len()), f.to_vec()))
}

/// ConvTranspose weights are `[C_in, M / group, k...]`: output channel = group index * (M / group) + j.
fn conv_transpose_factors(_: &Ctx, attrs: &AttrSet, w: &TensorData, f: &[f64]) -> Result<Factors, Skip> {
    let m = f.len();
    let g = get_int(attrs, "group").unwrap_or(1);
    check(w.dims.len() >= 2 && g >= 1 && w.dims[1] * g == m as i64, "channel count differs")?;
    let (cin, mg) = (w.dims[0] as usize, w.dims[1] as usize);
    check(cin % g as usize == 0, "bad group")?;
    let cin_g = cin / g as usize;
    if g == 1 {
        return Ok((lead_dims(&[1, mg as i64], w.dims.len()), f.to_vec()));
    }
    let table = (0..cin * mg).map(|r| f[(r / mg / cin_g) * mg + r % mg]).collect();
    Ok((lead_dims(&[cin as i64, mg as i64], w.dims.len()), table))
}

/// Gemm weights are `[K, M]`, or `[M, K]` under `transB`; only a plain product (alpha = beta = 1)
/// of 2-D operands folds.
fn gemm_factors(c: &Ctx, attrs: &AttrSet, w: &TensorData, f: &[f64]) -> Result<Factors, Skip> {
    let m = f.len();
    check(get_float(attrs, "alpha").unwrap_or(1.0) == 1.0, "alpha")?;
    check(get_float(attrs, "beta").unwrap_or(1.0) == 1.0, "beta")?;
    check(c.rank(c.matched) == Some(2), "not 2-D")?;
    let trans_b = get_int(attrs, "transB").unwrap_or(0) == 1;
    check(w.dims.len() == 2, "weights not 2-D")?;
    let (rows, cols) = (w.dims[0] as usize, w.dims[1] as usize);
    check(if trans_b { rows == m } else { cols == m }, "channel count differs")?;
    Ok((if trans_b { vec![m as i64, 1] } else { vec![m as i64] }, f.to_vec()))
}

/// `w * factors` (factors broadcasting to `w`'s shape, already rounded to its element type: an f32
/// framework folding them multiplies in float32 by the float32 factor). A large result is recorded,
/// not computed (weights are megabytes: computing them here faulted them into anonymous memory);
/// a small one is computed now.
fn scale_weights(w: &TensorData, factors: &TensorData) -> Result<TensorData, Skip> {
    let out = Derived::binary(w, BinOp::Mul, factors, false).ok_or("weight bytes do not match the shape")?;
    if out.raw.len() < SMALL_DERIVED {
        return Ok(TensorData { raw: out.raw.to_bytes().into(), ..out });
    }
    Ok(out)
}

/// Folded weights below this many bytes are computed at once.
const SMALL_DERIVED: usize = 64 << 10;
/// A 2-D matrix product plus a bias is a Gemm.
pub const MATMUL_ADD_GEMM: Rule = Rule {
    name: "matmul-add-gemm",
    min_opset: 13,
    patterns: &["(Add (MatMul:ma ?a ?w) ?c)"],
    precheck: Some(Precheck::Window(may_matmul_add_gemm)),
    apply: matmul_add_gemm,
};

fn matmul_add_gemm(c: &mut Ctx, b: &Bind) -> Result<Id, Skip> {
    let (a, w, k) = (b.get("a"), b.get("w"), b.get("c"));
    check(is_float(c.dtype(a)), "not a float type")?;
    check(c.rank(a) == Some(2) && c.rank(w) == Some(2), "MatMul operands are not 2-D")?;
    let mm = c.lookup_op("MatMul", &[a, w, b.get("ma")]).ok_or("MatMul not found")?;
    check(c.uses(mm) == 1, "the product has other readers")?;
    let out = c.shape(c.matched).ok_or("unknown shape")?;
    let ks = c.shape(k).ok_or("unknown bias shape")?;
    check(c.shape(mm) == Some(out) && broadcast_keeps(out, ks), "bias broadcasts the product")?;
    check(c.dtype(k) == c.dtype(a), "types differ")?;
    Ok(c.add_like_matched("Gemm", &[a, w, k], vec![]))
}

/// Some input comes from a MatMul whose operands may be 2-D float tensors ([`matmul_add_gemm`]'s
/// first tests; the analysis never changes a known type or rank).
fn may_matmul_add_gemm(m: &Model, n: &Node, producers: &Producers) -> bool {
    let may = |v: Option<Value>, float: bool| {
        v.is_some_and(|v| {
            let info = m.value(v);
            info.shape.as_ref().is_none_or(|s| s.len() == 2) && (!float || info.dtype.is_none() || is_float(info.dtype))
        })
    };
    n.inputs.iter().flatten().filter_map(|&v| producers.node(v)).any(|p| {
        p.op_type == "MatMul"
            && p.domain.is_empty()
            && p.inputs.len() == 2
            && may(p.inputs[0], true)
            && may(p.inputs[1], false)
    })
}

/// `(x - mean) / sqrt(var + eps) * scale (+ bias)` over trailing axes.
pub const LAYER_NORM: Rule = Rule {
    name: "layer-norm",
    min_opset: 18,
    patterns: &[
        "(Add (Mul (Div (Sub ?x (ReduceMean:r1 ?x ?ax)) (Sqrt (Add (ReduceMean:r2 (Pow (Sub ?x (ReduceMean:r1 ?x ?ax)) #two) #ax2) #eps))) ?scale) ?bias)",
        "(Mul (Div (Sub ?x (ReduceMean:r1 ?x ?ax)) (Sqrt (Add (ReduceMean:r2 (Pow (Sub ?x (ReduceMean:r1 ?x ?ax)) #two) #ax2) #eps))) ?scale)",
    ],
    precheck: None,
    apply: layer_norm,
};

fn layer_norm(c: &mut Ctx, b: &Bind) -> Result<Id, Skip> {
    let x = b.get("x");
    check(is_float(c.dtype(x)), "not a float type")?;
    keepdims(c, b, "r1")?;
    keepdims(c, b, "r2")?;
    let (axis, norm) = trailing_axis(c, x, b.get("ax"))?;
    check(trailing_axis(c, x, b.get("ax2"))?.0 == axis, "different axes")?;
    check(c.scalar(b.get("two")) == Some(2.0), "not a square")?;
    let eps = scalar_for(c, b.get("eps"), x)?;
    let scale = b.get("scale");
    check(
        c.shape(scale) == Some(&norm[..]) && c.dtype(scale) == c.dtype(x),
        "scale shape is not the normalized shape",
    )?;
    let mut inputs = vec![x, scale];
    if let Some(bias) = b.try_get("bias") {
        check(
            c.shape(bias) == Some(&norm[..]) && c.dtype(bias) == c.dtype(x),
            "bias shape is not the normalized shape",
        )?;
        inputs.push(bias);
    }
    let attrs = vec![("axis".into(), AttrLit::Int(axis as i64)), ("epsilon".into(), f32_attr(eps, c.dtype(x))?)];
    Ok(c.add_like_matched("LayerNormalization", &inputs, attrs))
}

/// `0.5 * x * (1 + erf(x / sqrt(2)))`.
pub const GELU_ERF: Rule = Rule {
    name: "gelu-erf",
    min_opset: 20,
    patterns: &[
        "(Mul (Mul ?x #h) (Add (Erf (Div:dv ?x #s)) #one))",
        "(Mul (Mul ?x #h) (Add (Erf (Mul ?x #s)) #one))",
        "(Mul (Mul ?x (Add (Erf (Div:dv ?x #s)) #one)) ?h)",
        "(Mul (Mul ?x (Add (Erf (Mul ?x #s)) #one)) ?h)",
    ],
    precheck: None,
    apply: gelu_erf,
};

fn gelu_erf(c: &mut Ctx, b: &Bind) -> Result<Id, Skip> {
    let s = if b.try_get("dv").is_some() { std::f64::consts::SQRT_2 } else { std::f64::consts::FRAC_1_SQRT_2 };
    let x = gelu_consts(c, b, &[("h", 0.5), ("one", 1.0), ("s", s)])?;
    Ok(c.add_like_matched("Gelu", &[x], vec![]))
}

fn gelu_consts(c: &Ctx, b: &Bind, wanted: &[(&str, f64)]) -> Result<Id, Skip> {
    let x = b.get("x");
    check(has_fused_kernel(c.dtype(x)), "no runtime kernel of the fused op in this type")?;
    for &(n, v) in wanted {
        check(near(scalar_for(c, b.get(n), x)?, v), "constants are not GELU's")?;
    }
    Ok(x)
}

/// `0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))`.
pub const GELU_TANH: Rule = Rule {
    name: "gelu-tanh",
    min_opset: 20,
    patterns: &["(Mul (Mul ?x #h) (Add (Tanh (Mul (Add ?x (Mul (Pow ?x #three) #k)) #c)) #one))"],
    precheck: None,
    apply: gelu_tanh,
};

fn gelu_tanh(c: &mut Ctx, b: &Bind) -> Result<Id, Skip> {
    let k = (2.0 / std::f64::consts::PI).sqrt();
    let x = gelu_consts(c, b, &[("h", 0.5), ("one", 1.0), ("three", 3.0), ("k", 0.044715), ("c", k)])?;
    Ok(c.add_like_matched("Gelu", &[x], vec![("approximate".into(), AttrLit::Str("tanh".into()))]))
}

/// `w * x / sqrt(mean(x^2) + eps)` over trailing axes; without `w` (a norm without affine, or one
/// whose unit scale was folded away), the scale is ones.
pub const RMS_NORM: Rule = Rule {
    name: "rms-norm",
    min_opset: 23,
    patterns: &[
        "(Mul ?w (Mul ?x (Reciprocal (Sqrt (Add (ReduceMean:r (Pow ?x #two) #ax) #eps)))))",
        "(Mul ?w (Div ?x (Sqrt (Add (ReduceMean:r (Pow ?x #two) #ax) #eps))))",
        "(Mul ?x (Reciprocal (Sqrt (Add (ReduceMean:r (Pow ?x #two) #ax) #eps))))",
        "(Div ?x (Sqrt (Add (ReduceMean:r (Pow ?x #two) #ax) #eps)))",
    ],
    precheck: None,
    apply: rms_norm,
};

fn rms_norm(c: &mut Ctx, b: &Bind) -> Result<Id, Skip> {
    let x = b.get("x");
    check(is_float(c.dtype(x)), "not a float type")?;
    keepdims(c, b, "r")?;
    let (axis, norm) = trailing_axis(c, x, b.get("ax"))?;
    check(c.scalar(b.get("two")) == Some(2.0), "not a square")?;
    let eps = scalar_for(c, b.get("eps"), x)?;
    let w = match b.try_get("w") {
        Some(w) => w,
        None => {
            let dims: Vec<i64> = norm
                .iter()
                .map(|d| if let Dim::Fixed(n) = d { Some(*n) } else { None })
                .collect::<Option<_>>()
                .ok_or("normalized shape not static")?;
            let n: i64 = dims.iter().product();
            check(n <= 1 << 20, "normalized shape too large for a constant scale")?;
            let dtype = c.dtype(x).ok_or("unknown dtype")?;
            let ones =
                TensorData::from_f64_as(dtype, dims, &vec![1.0; n as usize]).ok_or("no constant of that type")?;
            c.add_const(ones)
        }
    };
    check(c.shape(w) == Some(&norm[..]) && c.dtype(w) == c.dtype(x), "scale shape is not the normalized shape")?;
    check(c.shape(c.matched) == c.shape(x), "scale broadcasts the input")?;
    let attrs = vec![("axis".into(), AttrLit::Int(axis as i64)), ("epsilon".into(), f32_attr(eps, c.dtype(x))?)];
    Ok(c.add_like_matched("RMSNormalization", &[x, w], attrs))
}

/// Scaled dot-product attention, optionally masked with -inf.
pub const ATTENTION: Rule = Rule {
    name: "attention",
    min_opset: 23,
    patterns: &[
        "(MatMul (Softmax:sm (Where ?mask (Mul (MatMul ?q (Transpose:tp ?k)) #scale) #ninf)) ?v)",
        "(MatMul (Softmax:sm (Mul (MatMul ?q (Transpose:tp ?k)) #scale)) ?v)",
    ],
    precheck: None,
    apply: attention,
};

fn attention(c: &mut Ctx, b: &Bind) -> Result<Id, Skip> {
    let (q, k, v) = (b.get("q"), b.get("k"), b.get("v"));
    check(is_float(c.dtype(q)) && c.dtype(k) == c.dtype(q) && c.dtype(v) == c.dtype(q), "not one float type")?;
    check(c.rank(q) == Some(4) && c.rank(k) == Some(4) && c.rank(v) == Some(4), "not 4-D")?;
    check(get_ints(&c.attrs(b.get("tp")), "perm") == Some(&[0, 1, 3, 2]), "key not transposed on its last axes")?;
    let sm = get_int(&c.attrs(b.get("sm")), "axis").unwrap_or(-1);
    check(sm == -1 || sm == 3, "softmax not on the last axis")?;
    let scale = c.scalar(b.get("scale")).ok_or("scale not a constant")?;
    check(c.rank(b.get("scale")).is_some_and(|r| r <= 4), "scale broadcasts")?;
    let (qs, ks, vs) = (c.shape(q).ok_or("shape")?, c.shape(k).ok_or("shape")?, c.shape(v).ok_or("shape")?);
    // Same batch and heads (no grouped-query broadcast), K and V over the same sequence.
    check(qs[..2] == ks[..2] && ks[..3] == vs[..3] && qs[3] == ks[3], "shapes do not line up")?;
    let mut inputs = vec![q, k, v];
    if let Some(mask) = b.try_get("mask") {
        check(c.dtype(mask) == Some(DType::Bool), "mask not boolean")?;
        check(c.rank(mask).is_some_and(|r| r <= 4), "mask rank")?;
        // A row the mask hides whole: the softmax of -inf alone is NaN, where Attention gives
        // zeros (found by `tests/optimizer_props.rs`). Only a constant mask proves it has none.
        let m = c.konst(mask).ok_or("mask not constant: a row it hides whole would change from NaN to zeros")?;
        let (bits, row) = (m.to_i64s().ok_or("mask values")?, m.dims.last().copied().unwrap_or(1).max(1) as usize);
        check(bits.chunks(row).all(|r| r.iter().any(|&b| b != 0)), "the mask hides a whole row")?;
        let ninf = c.scalar(b.get("ninf")).ok_or("fill not constant")?;
        check(ninf == f64::NEG_INFINITY, "fill is not -inf")?;
        check(c.rank(b.get("ninf")).is_some_and(|r| r <= 4), "fill broadcasts")?;
        inputs.push(mask);
    }
    let attrs = vec![("scale".into(), f32_attr(scale, c.dtype(q))?)];
    Ok(c.add_like_matched("Attention", &inputs, attrs))
}

/// An `Attention` that reads its KV cache grown by this step (`Concat(past, new)` on the sequence
/// axis) and each of a few key/value heads repeated for a group of query heads (transformers'
/// `repeat_kv`: Unsqueeze, Expand, Reshape), or either, reads them as `Attention` does itself: the
/// new keys and values with `past_key` / `past_value`, giving the grown cache as `present_key` /
/// `present_value`, and the fewer heads as grouped-query attention (query head `h` reads key/value
/// head `h / group`, as the repetition did). No copy of the repeated heads, no separate Concat.
/// Measured: `reports/deploy.md`, `attention-kv`.
pub const ATTENTION_KV: Rule = Rule {
    name: "attention-kv",
    min_opset: 23,
    patterns: &[
        "(Attention:at ?q (Reshape:rk (Expand (Unsqueeze (Concat:ck ?pk ?k) #ak) ?ek) ?sk) \
          (Reshape:rv (Expand (Unsqueeze (Concat:cv ?pv ?v) #av) ?ev) ?sv) ?mask)",
        "(Attention:at ?q (Reshape:rk (Expand (Unsqueeze (Concat:ck ?pk ?k) #ak) ?ek) ?sk) \
          (Reshape:rv (Expand (Unsqueeze (Concat:cv ?pv ?v) #av) ?ev) ?sv))",
        "(Attention:at ?q (Reshape:rk (Expand (Unsqueeze ?k #ak) ?ek) ?sk) \
          (Reshape:rv (Expand (Unsqueeze ?v #av) ?ev) ?sv) ?mask)",
        "(Attention:at ?q (Reshape:rk (Expand (Unsqueeze ?k #ak) ?ek) ?sk) (Reshape:rv (Expand (Unsqueeze ?v #av) ?ev) ?sv))",
        "(Attention:at ?q (Concat:ck ?pk ?k) (Concat:cv ?pv ?v) ?mask)",
        "(Attention:at ?q (Concat:ck ?pk ?k) (Concat:cv ?pv ?v))",
    ],
    precheck: None,
    apply: attention_kv,
};

fn attention_kv(c: &mut Ctx, b: &Bind) -> Result<Id, Skip> {
    let attrs = c.attrs(b.get("at"));
    let q = b.get("q");
    let qs = c.shape(q).ok_or("unknown shape")?.to_vec();
    check(qs.len() == 4, "query not (batch, heads, sequence, head size)")?;
    // The key and value the repetition reads (the grown caches, or the new heads themselves).
    let (mut k, mut v) = (b.get("k"), b.get("v"));
    let cached = b.try_get("ck").is_some();
    if cached {
        k = grown_cache(c, b.get("pk"), k, b.get("ck"))?;
        v = grown_cache(c, b.get("pv"), v, b.get("cv"))?;
    }
    if b.try_get("ak").is_some() {
        let gk = repeated_heads(c, k, b.get("ak"), b.get("ek"), b.get("sk"), b.get("rk"))?;
        let gv = repeated_heads(c, v, b.get("av"), b.get("ev"), b.get("sv"), b.get("rv"))?;
        check(gk == gv && gk.1 == qs[1], "key and value repeated to other head counts than the query's")?;
    }
    let mask = b.try_get("mask");
    if !cached {
        let inputs: Vec<Id> = [q, b.get("k"), b.get("v")].into_iter().chain(mask).collect();
        return Ok(c.add_like_matched("Attention", &inputs, attrs));
    }
    // Where the causal mask sits when a cache precedes the queries is the runtime's reading.
    check(get_int(&attrs, "is_causal").unwrap_or(0) == 0, "causal attention over a cache")?;
    let (pk, pv) = (b.get("pk"), b.get("pv"));
    let outputs = [c.data(c.matched).clone(), c.data(k).clone(), c.data(v).clone()];
    let mask = mask.unwrap_or_else(|| c.eg.add(ONode::Absent));
    let outs = c.add_multi("", "Attention", &[q, b.get("k"), b.get("v"), mask, pk, pv], attrs, &outputs);
    // The grown caches are the node's present key and value.
    c.eg.union(k, outs[1]);
    c.eg.union(v, outs[2]);
    Ok(outs[0])
}

/// The class of `Concat(past, new)` on the sequence axis of (batch, heads, sequence, head size),
/// past and new agreeing on the other axes.
fn grown_cache(c: &mut Ctx, past: Id, new: Id, label: Id) -> Result<Id, Skip> {
    let attrs = c.attrs(label);
    let (ps, ns) = (c.shape(past).ok_or("unknown shape")?, c.shape(new).ok_or("unknown shape")?);
    check(ps.len() == 4 && ns.len() == 4, "cache not (batch, heads, sequence, head size)")?;
    check(matches!(get_int(&attrs, "axis"), Some(2 | -2)), "not concatenated on the sequence axis")?;
    check(ps[..2] == ns[..2] && ps[3] == ns[3], "past and new differ in batch, heads or head size")?;
    check(c.dtype(past) == c.dtype(new), "past and new of different types")?;
    c.find_op("Concat", &[past, new], attrs).ok_or("cache not found")
}

/// `kv`'s heads each repeated a group of times in a row, as `Reshape(Expand(Unsqueeze(kv, 2)))` to
/// (batch, heads x group, sequence, head size) does: the (group, total heads) it makes.
fn repeated_heads(c: &mut Ctx, kv: Id, axes: Id, sizes: Id, shape: Id, label: Id) -> Result<(i64, Dim), Skip> {
    let ks = c.shape(kv).ok_or("unknown shape")?.to_vec();
    check(ks.len() == 4, "key/value not (batch, heads, sequence, head size)")?;
    check(matches!(c.ints(axes).as_deref(), Some([2] | [-3])), "not a new axis after the heads")?;
    let u = c.find_op("Unsqueeze", &[kv, axes], vec![]).ok_or("chain not found")?;
    let e = c.find_op("Expand", &[u, sizes], vec![]).ok_or("chain not found")?;
    let r = c.find_op("Reshape", &[e, shape], c.attrs(label)).ok_or("chain not found")?;
    let (es, rs) = (c.shape(e).ok_or("unknown shape")?, c.shape(r).ok_or("unknown shape")?);
    // Only the new axis grows: batch, heads, sequence and head size as they were.
    check(es.len() == 5 && es[..2] == ks[..2] && es[3..] == ks[2..], "the expansion broadcasts another axis")?;
    let (Dim::Fixed(heads), Dim::Fixed(group)) = (&ks[1], &es[2]) else { return Err("head counts not static") };
    // The repeated heads merged into one axis, the others kept.
    let total = Dim::Fixed(heads * group);
    check(rs.len() == 4 && rs[0] == ks[0] && rs[1] == total && rs[2..] == ks[2..], "not the heads merged")?;
    Ok((*group, total))
}

/// Rotary position embedding as transformers' `apply_rotary_pos_emb` writes it (halves rotated, not
/// interleaved): `x * cos + rotate_half(x) * sin` with `cos = Cos(Concat(f, f))` over the last
/// axis, unsqueezed over the heads, is ONNX `RotaryEmbedding` with `Cos(f)` and `Sin(f)` as its
/// (batch, sequence, half head size) caches (angles shared by the batch: see below). Measured:
/// `reports/deploy.md`, `rotary-embedding`.
pub const ROTARY_EMBEDDING: Rule = Rule {
    name: "rotary-embedding",
    min_opset: 23,
    patterns: &["(Add (Mul ?x (Unsqueeze (Cos (Concat:cf ?f ?f)) #uc)) \
                  (Mul (Concat:cr (Neg (Slice ?x #s2 #e2 #a2 #t2)) (Slice ?x #s1 #e1 #a1 #t1)) \
                       (Unsqueeze (Sin (Concat:cf ?f ?f)) #us)))"],
    precheck: None,
    apply: rotary_embedding,
};

fn rotary_embedding(c: &mut Ctx, b: &Bind) -> Result<Id, Skip> {
    let (x, f) = (b.get("x"), b.get("f"));
    let dtype = c.dtype(x);
    // The types ONNX Runtime's CPU kernel takes.
    check(matches!(dtype, Some(DType::Float | DType::Float16)) && c.dtype(f) == dtype, "no kernel of this type")?;
    let xs = c.shape(x).ok_or("unknown shape")?.to_vec();
    check(xs.len() == 4, "not (batch, heads, sequence, head size)")?;
    let Dim::Fixed(d) = xs[3] else { return Err("head size not static") };
    check(d > 0 && d % 2 == 0, "odd head size")?;
    let h = d / 2;
    // The angles: (batch, sequence, half head size), or one set for the whole batch (positions
    // counted from 0 in every sequence: a prefill), doubled over the last axis.
    let per_sequence = c.shape(f) == Some(&[xs[0].clone(), xs[2].clone(), Dim::Fixed(h)][..]);
    let shared = c.shape(f) == Some(&[Dim::Fixed(1), xs[2].clone(), Dim::Fixed(h)][..]);
    check(per_sequence || shared, "angles not per position")?;
    check(matches!(get_int(&c.attrs(b.get("cf")), "axis"), Some(2 | -1)), "angles not doubled over the last axis")?;
    check(
        c.ints(b.get("uc")).as_deref() == Some(&[1]) && c.ints(b.get("us")).as_deref() == Some(&[1]),
        "not over heads",
    )?;
    // rotate_half: Concat(-x[..., h:], x[..., :h]) over the last axis.
    check(matches!(get_int(&c.attrs(b.get("cr")), "axis"), Some(3 | -1)), "halves not joined on the last axis")?;
    let last = |c: &Ctx, a: Id| matches!(c.ints(a).as_deref(), Some([3] | [-1]));
    let one = |c: &Ctx, t: Id| c.ints(t).as_deref() == Some(&[1]);
    let (s1, e1, s2, e2) = (c.ints(b.get("s1")), c.ints(b.get("e1")), c.ints(b.get("s2")), c.ints(b.get("e2")));
    check(s1.as_deref() == Some(&[0]) && e1.as_deref() == Some(&[h]), "not the first half")?;
    check(s2.as_deref() == Some(&[h]) && matches!(e2.as_deref(), Some([e]) if *e >= d), "not the second half")?;
    check(last(c, b.get("a1")) && last(c, b.get("a2")), "not halves of the last axis")?;
    check(one(c, b.get("t1")) && one(c, b.get("t2")), "strided halves")?;
    check(c.shape(c.matched) == Some(&xs[..]), "the rotation broadcasts the input")?;
    let half = c.shape(f).map(<[Dim]>::to_vec);
    let cos = c.add_op("Cos", &[f], vec![], dtype, half.clone());
    let sin = c.add_op("Sin", &[f], vec![], dtype, half);
    if per_sequence {
        return Ok(c.add_like_matched("RotaryEmbedding", &[x, cos, sin], vec![]));
    }
    // ONNX Runtime wants the caches' batch to be the input's: the shared angles rotate the batch
    // and heads as one axis, (1, batch x heads, sequence, head size) (Reshape's 0 keeps the
    // sequence), which costs two Reshapes against the five nodes the fusion saves.
    let Dim::Fixed(heads) = xs[1] else { return Err("head count not static") };
    let one_batch = tensor(DType::Int64, vec![4], &[1.0, -1.0, 0.0, d as f64])?;
    let one_batch = c.add_const(one_batch);
    let flat = c.add_op("Reshape", &[x, one_batch], vec![], dtype, None);
    let turned = c.add_op("RotaryEmbedding", &[flat, cos, sin], vec![], dtype, None);
    let per_head = tensor(DType::Int64, vec![4], &[-1.0, heads as f64, 0.0, d as f64])?;
    let per_head = c.add_const(per_head);
    Ok(c.add_like_matched("Reshape", &[turned, per_head], vec![]))
}

/// A 2-D tensor indexed by two counts broadcast against each other (`x[rows[:, None], cols]` with
/// `rows = arange(m)` and `cols = arange(n)` placed on two axes: transformers' padding mask reads
/// `attention_mask[batch_idx, kv_idx]` so) is its top-left m x n block laid out on those axes: a
/// `Slice` and an `Unsqueeze` in place of the index grid's ten nodes (two Ranges, their broadcast
/// by Add and Mul by zero, Unsqueezes, a Concat) and the `GatherND`. A count past `x`'s size is an
/// index out of range, where the program fails; the slice stops at the end instead (its block is
/// then smaller than the program's result, which its readers see by shape).
pub const INDEX_GRID: Rule = Rule {
    name: "index-grid",
    min_opset: 13,
    patterns: &["(GatherND:g ?x (Concat:c \
                   (Unsqueeze (Add (Unsqueeze (Range #s0 ?n0 #d0) #ua) (Mul (Unsqueeze (Range #s1 ?n1 #d1) #ub) #z0)) #u0) \
                   (Unsqueeze (Add (Unsqueeze (Range #s1 ?n1 #d1) #ub) (Mul (Unsqueeze (Range #s0 ?n0 #d0) #ua) #z1)) #u1)))"],
    precheck: None,
    apply: index_grid,
};

fn index_grid(c: &mut Ctx, b: &Bind) -> Result<Id, Skip> {
    let x = b.get("x");
    let xs = c.shape(x).ok_or("unknown shape")?.to_vec();
    check(xs.len() == 2, "not a 2-D tensor")?;
    check(get_int(&c.attrs(b.get("g")), "batch_dims").unwrap_or(0) == 0, "batch dims")?;
    for zero in ["z0", "z1"] {
        check(c.scalar(b.get(zero)) == Some(0.0), "not a broadcast by a product with zero")?;
    }
    for (start, step) in [("s0", "d0"), ("s1", "d1")] {
        check(c.scalar(b.get(start)) == Some(0.0) && c.scalar(b.get(step)) == Some(1.0), "not a count from 0")?;
    }
    // The counts, each unsqueezed onto the grid's axes.
    let mut counts = [None, None];
    for (i, (s, n, d, u)) in [("s0", "n0", "d0", "ua"), ("s1", "n1", "d1", "ub")].into_iter().enumerate() {
        let range = c.find_op("Range", &[b.get(s), b.get(n), b.get(d)], vec![]).ok_or("chain not found")?;
        counts[i] = Some(c.find_op("Unsqueeze", &[range, b.get(u)], vec![]).ok_or("chain not found")?);
    }
    let [Some(r0), Some(r1)] = counts else { return Err("chain not found") };
    let rank = c.rank(r0).ok_or("unknown shape")?;
    check(c.rank(r1) == Some(rank), "counts of different ranks")?;
    // The grid's coordinates are its last axis, one per axis of `x`.
    let last = |c: &Ctx, axes: Id| matches!(c.ints(axes).as_deref(), Some([-1]));
    check(last(c, b.get("u0")) && last(c, b.get("u1")), "coordinates not on a new last axis")?;
    check(matches!(get_int(&c.attrs(b.get("c")), "axis"), Some(-1)), "coordinates not joined on the last axis")?;
    // Each count lies along one axis of the grid, the row count before the column count.
    let along = |c: &Ctx, v: Id| -> Option<usize> {
        let s = c.shape(v)?;
        let axes: Vec<usize> = (0..s.len()).filter(|&i| s[i] != Dim::Fixed(1)).collect();
        (s.len() == rank && axes.len() <= 1).then(|| axes.first().copied().unwrap_or(0))
    };
    let (a0, a1) =
        (along(c, r0).ok_or("a count not along one axis")?, along(c, r1).ok_or("a count not along one axis")?);
    check(a0 < a1, "columns before rows")?;
    let dims = |c: &Ctx, v: Id, a: usize| c.shape(v).map(|s| s[a].clone());
    let (m, n) = (dims(c, r0, a0).ok_or("unknown shape")?, dims(c, r1, a1).ok_or("unknown shape")?);
    let dtype = c.dtype(x);
    // The block: each axis sliced to its count where the count is not provably the size.
    let mut block = x;
    let mut block_shape = xs.clone();
    for (axis, count, limit) in [(0usize, &m, "n0"), (1, &n, "n1")] {
        if *count == xs[axis] {
            continue;
        }
        // The slice's start and the count's axis as a 1-D end.
        let zero = tensor(DType::Int64, vec![1], &[0.0])?;
        let zero = c.add_const(zero);
        let end = c.add_op("Unsqueeze", &[b.get(limit), zero], vec![], Some(DType::Int64), Some(vec![Dim::Fixed(1)]));
        let axes = tensor(DType::Int64, vec![1], &[axis as f64])?;
        let axes = c.add_const(axes);
        block_shape[axis] = count.clone();
        block = c.add_op("Slice", &[block, zero, end, axes], vec![], dtype, Some(block_shape.clone()));
    }
    let spread: Vec<f64> = (0..rank).filter(|&i| i != a0 && i != a1).map(|i| i as f64).collect();
    let spread = tensor(DType::Int64, vec![spread.len() as i64], &spread)?;
    let spread = c.add_const(spread);
    check(c.shape(c.matched).is_some_and(|s| s.len() == rank && s[a0] == m && s[a1] == n), "not the block's shape")?;
    Ok(c.add_like_matched("Unsqueeze", &[block, spread], vec![]))
}
