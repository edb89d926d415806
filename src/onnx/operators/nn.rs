//! Neural-network operators: matrix products, convolution and pooling, normalizations, softmax,
//! dropout, resizing and sampling, recurrent layers, spectral transforms, quantization.

use super::dims::{broadcast_checked, or_unknown, shape_of, shape_text};
use super::{attr_int, attr_ints, attr_str, input, ints, Facts, Form, FormCtx, Inferred, Older, Op, Rewrite, Shape};
use crate::onnx::ir::{AttrValue, DType, Dim, Node, Value};

use DType::*;

const fn same(name: &'static str) -> Op {
    Op { name, shape: Shape::Same, ..Op::NONE }
}

const fn rule(name: &'static str, shape: fn(&dyn Facts, &Node, usize) -> Inferred) -> Op {
    Op { name, shape: Shape::Rule(shape), ..Op::NONE }
}

pub(super) const OPS: &[Op] = &[
    // Matrix products.
    Op { learned: true, ..rule("MatMul", matmul) },
    rule("Gemm", gemm),
    // Convolution and pooling.
    Op { rank: Some(rank_of_input), ..rule("Conv", window) },
    Op { rank: Some(rank_of_input), ..Op::NONE }.named("ConvTranspose"),
    Op { rank: Some(rank_of_input), ..rule("MaxPool", window) },
    Op { rank: Some(rank_of_input), ..rule("AveragePool", window) },
    Op { rank: Some(rank_of_input), ..rule("LpPool", window) },
    rule("GlobalAveragePool", global_pool),
    rule("GlobalMaxPool", global_pool),
    rule("GlobalLpPool", global_pool),
    rule("Col2Im", col2im),
    // Normalizations.
    Op {
        learned: true,
        introduced: Some(1),
        forms: &[
            Form {
                since: 15,
                form: "with parameters of another type than its input",
                used: parameters_of_another_type,
                older: Older::Nothing,
            },
            Form { since: 14, form: "in training mode", used: training, older: Older::Nothing },
            Form { since: 14, form: "", used: always, older: Older::DropAttribute("training_mode") },
        ],
        ..same("BatchNormalization")
    },
    Op {
        learned: true,
        types: Some(layer_norm_types),
        forms: &[Form { since: 17, form: "", used: always, older: Older::Rewrite(Rewrite::LayerNormBody) }],
        ..same("LayerNormalization")
    },
    Op { learned: true, ..same("RMSNormalization") },
    same("GroupNormalization"),
    same("InstanceNormalization"),
    same("LpNormalization"),
    Op { learned: true, ..same("Softmax") },
    Op { learned: true, ..same("LogSoftmax") },
    same("Hardmax"),
    Op { learned: true, noop: Some(inference_dropout), identity_at_output: true, ..rule("Dropout", dropout) },
    // Resizing and sampling.
    Op {
        rank: Some(rank_of_input),
        runtime_gaps: &[Bool, Int16, Uint16, BFloat16],
        forms: &[
            Form { since: 18, form: "with antialias", used: antialias, older: Older::Nothing },
            Form { since: 18, form: "with axes", used: resize_axes, older: Older::Nothing },
            Form {
                since: 18,
                form: "with keep_aspect_ratio_policy",
                used: keep_aspect_ratio_policy,
                older: Older::Nothing,
            },
            Form {
                since: 19,
                form: "with half_pixel_symmetric coordinates",
                used: half_pixel_symmetric,
                older: Older::Nothing,
            },
        ],
        ..rule("Resize", resize)
    },
    // Version 16 describes 4-D images only, but ONNX Runtime's kernel of that version samples
    // 5-D volumes as version 20 does (the TorchScript exporter writes them so at opset 16-19), and
    // the checker accepts them: no form of its own.
    Op { rank: Some(rank_of_input), ..Op::NONE }.named("GridSample"),
    // Version 10 samples as version 16's `output_half_pixel` (torchvision's aligned=False).
    Op {
        forms: &[
            Form {
                since: 16,
                form: "",
                used: output_half_pixel,
                older: Older::DropAttribute("coordinate_transformation_mode"),
            },
            Form {
                since: 16,
                form: "with half_pixel coordinates (torchvision's aligned=True)",
                used: always,
                older: Older::Nothing,
            },
        ],
        ..Op::NONE
    }
    .named("RoiAlign"),
    // Recurrent layers: Y is [seq, directions, batch, hidden]; Y_h and Y_c drop the sequence.
    Op { rank: Some(recurrent_rank), ..Op::NONE }.named("LSTM"),
    Op { rank: Some(recurrent_rank), ..Op::NONE }.named("GRU"),
    Op { rank: Some(recurrent_rank), ..Op::NONE }.named("RNN"),
    Op {
        introduced: Some(17),
        forms: &[Form { since: 20, form: "", used: always, older: Older::Rewrite(Rewrite::DftAxisAttribute) }],
        ..Op::NONE
    }
    .named("DFT"),
    // Quantization.
    same("QuantizeLinear"),
    same("DequantizeLinear"),
];

fn always(_: &FormCtx) -> bool {
    true
}

fn rank_of_input(facts: &dyn Facts, node: &Node, _: usize) -> Option<usize> {
    shape_of(facts, node, 0).map(<[Dim]>::len)
}

fn recurrent_rank(_: &dyn Facts, _: &Node, i: usize) -> Option<usize> {
    Some(if i == 0 { 4 } else { 3 })
}

// --- Matrix products ----------------------------------------------------------------------------

fn matmul(facts: &dyn Facts, node: &Node, _: usize) -> Inferred {
    let Some(a) = shape_of(facts, node, 0) else { return Ok(None) };
    let Some(b) = shape_of(facts, node, 1) else { return Ok(None) };
    if a.is_empty() || b.is_empty() {
        return Err("MatMul of a scalar".into());
    }
    // A vector is a matrix with a 1 prepended (left) or appended (right), dropped afterwards.
    let a2: Vec<Dim> = if a.len() == 1 { vec![Dim::Fixed(1), a[0].clone()] } else { a.to_vec() };
    let b2: Vec<Dim> = if b.len() == 1 { vec![b[0].clone(), Dim::Fixed(1)] } else { b.to_vec() };
    let (ka, kb) = (&a2[a2.len() - 1], &b2[b2.len() - 2]);
    if let (Dim::Fixed(p), Dim::Fixed(q)) = (ka, kb) {
        if p != q {
            return Err(format!("MatMul of {} and {}: inner dims {p} and {q}", shape_text(a), shape_text(b)));
        }
    }
    let unknown = facts.unknown();
    let Some(mut out) = broadcast_checked(&a2[..a2.len() - 2], &b2[..b2.len() - 2], unknown.as_ref())? else {
        return Ok(None);
    };
    if a.len() > 1 {
        out.push(a2[a2.len() - 2].clone());
    }
    if b.len() > 1 {
        out.push(b2[b2.len() - 1].clone());
    }
    Ok(Some(out))
}

fn gemm(facts: &dyn Facts, node: &Node, _: usize) -> Inferred {
    let Some(x) = shape_of(facts, node, 0) else { return Ok(None) };
    let Some(b) = shape_of(facts, node, 1) else { return Ok(None) };
    if x.len() != 2 || b.len() != 2 {
        return Err(format!("Gemm of {} and {}", shape_text(x), shape_text(b)));
    }
    let ta = attr_int(node, "transA", 0) != 0;
    let tb = attr_int(node, "transB", 0) != 0;
    let (m, ka) = if ta { (&x[1], &x[0]) } else { (&x[0], &x[1]) };
    let (kb, n) = if tb { (&b[1], &b[0]) } else { (&b[0], &b[1]) };
    if let (Dim::Fixed(p), Dim::Fixed(q)) = (ka, kb) {
        if p != q {
            return Err(format!("Gemm of {} and {}: inner dims {p} and {q}", shape_text(x), shape_text(b)));
        }
    }
    Ok(Some(vec![m.clone(), n.clone()]))
}

// --- Convolution and pooling --------------------------------------------------------------------

/// Conv and pooling with explicit pads (`auto_pad` NOTSET), floor rounding.
fn window(facts: &dyn Facts, node: &Node, _: usize) -> Inferred {
    let Some(x) = shape_of(facts, node, 0) else { return Ok(None) };
    let w = shape_of(facts, node, 1);
    let rank = x.len();
    if rank < 3 {
        return Err(format!("{} of a rank-{rank} input", node.op_type));
    }
    let k = rank - 2;
    if !matches!(node.attr("auto_pad"), None | Some(AttrValue::String(_))) {
        return Ok(None);
    }
    if attr_str(node, "auto_pad").is_some_and(|p| p != "NOTSET") {
        return Ok(None);
    }
    if attr_int(node, "ceil_mode", 0) != 0 {
        return Ok(None);
    }
    let conv = node.op_type == "Conv";
    let kernel: Vec<Dim> = match (attr_ints(node, "kernel_shape"), conv) {
        (Some(ks), _) => ks.iter().map(|&n| Dim::Fixed(n)).collect(),
        (None, true) => match w {
            Some(w) if w.len() == rank => w[2..].to_vec(),
            Some(w) => return Err(format!("Conv weight of rank {} for input of rank {rank}", w.len())),
            None => return Ok(None),
        },
        (None, false) => return Ok(None),
    };
    let pads = attr_ints(node, "pads").map_or(vec![0; 2 * k], |p| p.to_vec());
    let strides = attr_ints(node, "strides").map_or(vec![1; k], |s| s.to_vec());
    let dilations = attr_ints(node, "dilations").map_or(vec![1; k], |d| d.to_vec());
    if kernel.len() != k || pads.len() != 2 * k || strides.len() != k || dilations.len() != k {
        return Ok(None);
    }
    let channels = if conv {
        match w {
            Some(w) if w.len() == rank => w[0].clone(),
            _ => return Ok(None),
        }
    } else {
        x[1].clone()
    };
    let unknown = facts.unknown();
    let mut out = vec![x[0].clone(), channels];
    for j in 0..k {
        let (Dim::Fixed(d), Dim::Fixed(kk)) = (&x[2 + j], &kernel[j]) else {
            match &unknown {
                Some(u) => {
                    out.push(u.clone());
                    continue;
                }
                None => return Ok(None),
            }
        };
        let (s, dil) = (strides[j] as i128, dilations[j] as i128);
        if s <= 0 || dil <= 0 || *kk <= 0 {
            return Err(format!("kernel {kk}, stride {s} and dilation {dil} must be positive"));
        }
        let span = dil * (*kk as i128 - 1) + 1;
        let padded = *d as i128 + pads[j] as i128 + pads[j + k] as i128;
        if padded < span {
            return Err(format!("a window of {span} does not fit the padded input of {padded} (dim {})", 2 + j));
        }
        out.push(Dim::Fixed(((padded - span) / s + 1) as i64));
    }
    Ok(Some(out))
}

fn global_pool(facts: &dyn Facts, node: &Node, _: usize) -> Inferred {
    let Some(x) = shape_of(facts, node, 0) else { return Ok(None) };
    let rank = x.len();
    if rank < 2 {
        return Err(format!("pooling a rank-{rank} input"));
    }
    let mut out = x[..2].to_vec();
    out.resize(rank, Dim::Fixed(1));
    Ok(Some(out))
}

/// `[N, C·∏block, L]` with image_shape `[H, W, ...]` → `[N, C, H, W, ...]`.
fn col2im(facts: &dyn Facts, node: &Node, _: usize) -> Inferred {
    let Some(x) = shape_of(facts, node, 0) else { return Ok(None) };
    let rank = x.len();
    let (Some(image), Some(block)) = (ints(facts, node, 1), ints(facts, node, 2)) else {
        return Ok(None);
    };
    if rank != 3 || image.len() != block.len() {
        return Err(format!("Col2Im of {} with image {image:?} and block {block:?}", shape_text(x)));
    }
    let cells = block.iter().try_fold(1i64, |n, &b| n.checked_mul(b)).filter(|&n| n > 0);
    let channels = match (&x[1], cells) {
        (Dim::Fixed(c), Some(k)) if c % k == 0 => Dim::Fixed(c / k),
        (Dim::Fixed(c), Some(k)) => return Err(format!("{c} columns do not hold blocks of {k}")),
        _ => match or_unknown(facts) {
            Ok(u) => u,
            Err(none) => return none,
        },
    };
    let mut out = vec![x[0].clone(), channels];
    out.extend(image.iter().map(|&d| Dim::Fixed(d)));
    Ok(Some(out))
}

// --- Normalizations and dropout -----------------------------------------------------------------

/// `LayerNormalization`'s `Mean` and `InvStdDev` are of `stash_type`, float32 unless set.
fn layer_norm_types(node: &Node, input: &dyn Fn(usize) -> Option<DType>, i: usize) -> Option<DType> {
    if i == 0 {
        return input(0);
    }
    match node.attr("stash_type") {
        Some(AttrValue::Int(t)) => DType::from_onnx(*t as i32),
        _ => Some(Float),
    }
}

fn parameters_of_another_type(c: &FormCtx) -> bool {
    let types: Vec<Option<DType>> = c.node.inputs.iter().map(|v| v.and_then(|v| c.facts.dtype(v))).collect();
    types.iter().any(|t| *t != types[0])
}

fn training(c: &FormCtx) -> bool {
    c.outputs > 1 || attr_int(c.node, "training_mode", 0) != 0
}

/// Both outputs, the data and the mask, have the input's shape.
fn dropout(facts: &dyn Facts, node: &Node, _: usize) -> Inferred {
    Ok(shape_of(facts, node, 0).map(<[Dim]>::to_vec))
}

/// Inference: output 0 is the input unless `training_mode` is given and may be true.
fn inference_dropout(facts: &dyn Facts, node: &Node) -> Option<(Value, &'static str)> {
    let x = input(node, 0)?;
    node.outputs.first()?;
    let training = match input(node, 2) {
        None => false,
        Some(t) => facts.constant(t)?.to_i64s()?.first().copied() != Some(0),
    };
    let mask_used = node.outputs.get(1).is_some_and(|&m| facts.uses(m) > 0);
    (!training && !mask_used).then_some((x, "noop: inference Dropout"))
}

// --- Resize and sampling ------------------------------------------------------------------------

/// Resize to constant `sizes`, or by constant `scales` where float32 and float64 rounding agree
/// (torch computes the size in float64, ONNX in float32).
fn resize(facts: &dyn Facts, node: &Node, _: usize) -> Inferred {
    let Some(x) = shape_of(facts, node, 0) else { return Ok(None) };
    let sizes = ints(facts, node, 3);
    let unknown = facts.unknown();
    let rank = x.len();
    if node.attr("axes").is_some() {
        return Ok(None);
    }
    if let Some(sizes) = sizes {
        if sizes.len() != rank {
            return Err(format!("{} sizes for rank {rank}", sizes.len()));
        }
        return Ok(Some(sizes.into_iter().map(Dim::Fixed).collect()));
    }
    let Some(scales) = const_floats(facts, node, 2) else { return Ok(None) };
    if scales.len() != rank {
        return Err(format!("{} scales for rank {rank}", scales.len()));
    }
    let mut out = Vec::with_capacity(rank);
    for (d, &s) in x.iter().zip(&scales) {
        out.push(match d {
            Dim::Fixed(n) => {
                // ONNX's inference multiplies in float32, runtimes may not: a size the two
                // roundings disagree on is unknown to the optimizer, float32's to the check.
                let (single, double) = ((*n as f32 * s).floor(), (*n as f64 * s as f64).floor());
                if single as f64 != double && unknown.is_none() {
                    return Ok(None);
                }
                Dim::Fixed(single as i64)
            }
            Dim::Param(_) if s == 1.0 => d.clone(),
            Dim::Param(_) => match &unknown {
                Some(u) => u.clone(),
                None => return Ok(None),
            },
        });
    }
    Ok(Some(out))
}

/// The float contents of a small constant (Resize scales).
fn const_floats(facts: &dyn Facts, node: &Node, i: usize) -> Option<Vec<f32>> {
    let t = facts.constant(input(node, i)?)?;
    if t.dtype != Float || t.numel() > 64 || t.raw.len() != t.numel() as usize * 4 {
        return None;
    }
    Some(t.raw.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect())
}

fn antialias(c: &FormCtx) -> bool {
    attr_int(c.node, "antialias", 0) != 0
}

fn resize_axes(c: &FormCtx) -> bool {
    c.node.attr("axes").is_some()
}

fn keep_aspect_ratio_policy(c: &FormCtx) -> bool {
    attr_str(c.node, "keep_aspect_ratio_policy").is_some_and(|p| p != "stretch")
}

fn half_pixel_symmetric(c: &FormCtx) -> bool {
    attr_str(c.node, "coordinate_transformation_mode") == Some("half_pixel_symmetric")
}

fn output_half_pixel(c: &FormCtx) -> bool {
    attr_str(c.node, "coordinate_transformation_mode") == Some("output_half_pixel")
}
