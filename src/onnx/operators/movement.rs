//! Operators that move elements without computing on them: reshapes, transposes, slices, gathers,
//! concatenation and splitting, padding and tiling, shape queries and constant fills.

use super::dims::{broadcast_checked, or_unknown, product, shape_of, shape_text};
use super::eval::{self, broadcast_dims, broadcast_index, gather_bytes, numel, OUTPUT_LIMIT};
use super::{
    attr_int, attr_ints, attr_str, const_ints, fixed, input, ints, norm_axis, Facts, Form, FormCtx, Inferred, Older,
    Op, Rewrite, Shape, SymInts,
};
use crate::onnx::ir::{AttrValue, DType, Dim, Node, TensorData, Value};

use DType::*;

/// Ends at least this large mean "to the end" (torch writes `sys.maxsize`, ONNX examples `INT64_MAX`).
const END_OF_AXIS: i64 = i64::MAX / 2;

const fn rule(name: &'static str, shape: fn(&dyn Facts, &Node, usize) -> Inferred) -> Op {
    Op { name, shape: Shape::Rule(shape), ..Op::NONE }
}

pub(super) const OPS: &[Op] = &[
    Op {
        rank: Some(reshape_rank),
        learned: true,
        eval: Some(reshape_eval),
        shape_input: Some(reshape_target),
        regroups: true,
        noop: Some(reshape_noop),
        identity_at_output: true,
        forms: &[
            Form { since: 14, form: ALLOWZERO, used: allowzero_with_zero, older: Older::Nothing },
            Form { since: 14, form: ALLOWZERO, used: allowzero, older: Older::DropAttribute("allowzero") },
        ],
        ..rule("Reshape", reshape)
    },
    rule("Flatten", flatten),
    Op { learned: true, syms: Some(squeeze_syms), eval: Some(squeeze_eval), ..rule("Squeeze", squeeze) },
    Op { learned: true, syms: Some(unsqueeze_syms), eval: Some(unsqueeze_eval), ..rule("Unsqueeze", unsqueeze) },
    Op {
        learned: true,
        eval: Some(transpose_eval),
        derive: Some(transpose_derive),
        noop: Some(identity_transpose),
        identity_at_output: true,
        ..rule("Transpose", transpose)
    },
    Op { learned: true, syms: Some(shape_syms), forms: SHAPE_FORMS, ..rule("Shape", shape) },
    Op { learned: true, syms: Some(size_syms), ..rule("Size", size) },
    Op {
        rank: Some(rank_of_input),
        learned: true,
        syms: Some(concat_syms),
        eval: Some(concat_eval),
        noop: Some(single_input_concat),
        ..rule("Concat", concat)
    },
    Op {
        rank: Some(rank_of_input),
        forms: &[Form { since: 18, form: "", used: num_outputs, older: Older::Rewrite(Rewrite::SplitSizes) }],
        ..rule("Split", split)
    },
    Op {
        rank: Some(rank_of_input),
        syms: Some(slice_syms),
        eval: Some(slice_eval),
        noop: Some(full_slice),
        identity_at_output: true,
        ..rule("Slice", slice)
    },
    Op { learned: true, syms: Some(gather_syms), eval: Some(gather_eval), ..rule("Gather", gather) },
    rule("GatherElements", gather_elements),
    Op { rank: Some(gather_nd_rank), eval: Some(gather_nd_eval), ..rule("GatherND", gather_nd) },
    Op { shape: Shape::Same, eval: Some(scatter_elements_eval), forms: SCATTER_FORMS, ..Op::NONE }
        .named("ScatterElements"),
    Op { shape: Shape::Same, forms: SCATTER_FORMS, ..Op::NONE }.named("ScatterND"),
    Op {
        rank: Some(expand_rank),
        learned: true,
        eval: Some(expand_eval),
        shape_input: Some(expand_target),
        noop: Some(expand_noop),
        identity_at_output: true,
        ..rule("Expand", expand)
    },
    Op { rank: Some(rank_of_input), eval: Some(tile_eval), noop: Some(tile_by_ones), ..rule("Tile", tile) },
    Op {
        rank: Some(rank_of_input),
        noop: Some(pad_by_zeros),
        runtime_gaps: &[Int16, Uint16],
        introduced: Some(2),
        forms: &[
            Form { since: 18, form: "", used: pad_axes, older: Older::Rewrite(Rewrite::PadAxesAtRunTime) },
            Form { since: 19, form: "in wrap mode", used: wrap_mode, older: Older::Nothing },
        ],
        for_runtimes: Some(Rewrite::PadAxesSpread),
        ..rule("Pad", pad)
    },
    Op {
        rank: Some(constant_of_shape_rank),
        learned: true,
        eval: Some(constant_of_shape_eval),
        types: Some(constant_of_shape_type),
        ..rule("ConstantOfShape", constant_of_shape)
    },
    Op { types: Some(constant_type), ..Op::NONE }.named("Constant"),
    Op { rank: Some(range_rank), eval: Some(range_eval), ..rule("Range", range) },
    Op {
        shape: Shape::Same,
        runtime_gaps: &[Int8, Uint8, Int16, Uint16, Uint32],
        forms: &[Form { since: 14, form: "", used: always, older: Older::Rewrite(Rewrite::TriluByMask) }],
        ..Op::NONE
    }
    .named("Trilu"),
    rule("DepthToSpace", blocks),
    rule("SpaceToDepth", blocks),
    Op { rank: Some(rank_of_input), ..Op::NONE }.named("ReverseSequence"),
    Op { rank: Some(rank_of_input), ..Op::NONE }.named("CenterCropPad"),
    Op { rank: Some(nonzero_rank), runtime_gaps: &[Int8, Int16, Uint16, Uint32], ..Op::NONE }.named("NonZero"),
    Op { rank: Some(unique_rank), runtime_gaps: &[Bool, Uint8, Int16, Uint16, Int32, Uint32, BFloat16], ..Op::NONE }
        .named("Unique"),
];

fn always(_: &FormCtx) -> bool {
    true
}

fn rank_of_input(facts: &dyn Facts, node: &Node, _: usize) -> Option<usize> {
    shape_of(facts, node, 0).map(<[Dim]>::len)
}

/// The length of the 1-D shape input `k`.
fn length(facts: &dyn Facts, node: &Node, k: usize) -> Option<usize> {
    match shape_of(facts, node, k) {
        Some([Dim::Fixed(n)]) => usize::try_from(*n).ok(),
        _ => None,
    }
}

fn arg<'a>(inputs: &[Option<&'a TensorData>], i: usize) -> Option<&'a TensorData> {
    inputs.get(i).copied().flatten()
}

/// Output 0 has input 0's shape exactly (a no-op when the element type also is the same).
fn same_shape(facts: &dyn Facts, node: &Node) -> Option<Value> {
    let x = input(node, 0)?;
    let out = *node.outputs.first()?;
    matches!((facts.shape(x), facts.shape(out)), (Some(a), Some(b)) if a == b).then_some(x)
}

// --- Reshape, Flatten, Squeeze, Unsqueeze -------------------------------------------------------

const ALLOWZERO: &str = "with allowzero (a 0 in the shape that is an empty axis)";

fn allowzero(c: &FormCtx) -> bool {
    attr_int(c.node, "allowzero", 0) != 0
}

/// `allowzero` that matters: without a constant shape free of 0, nothing older computes the same.
fn allowzero_with_zero(c: &FormCtx) -> bool {
    let shape = input(c.node, 1).and_then(|s| c.facts.constant(s)).and_then(TensorData::to_i64s);
    allowzero(c) && !matches!(shape, Some(s) if !s.contains(&0))
}

/// Reshape to its target, from an input whose shape may be unknown (then only the target's own
/// numbers say the output's, where unknown dims may be written).
fn reshape(facts: &dyn Facts, node: &Node, _: usize) -> Inferred {
    let x = shape_of(facts, node, 0);
    if x.is_none() && facts.unknown().is_none() {
        return Ok(None);
    }
    reshape_to(ints(facts, node, 1), node, x, facts.unknown())
}

fn reshape_to(target: Option<Vec<i64>>, node: &Node, x: Option<&[Dim]>, unknown: Option<Dim>) -> Inferred {
    let Some(target) = target else { return Ok(None) };
    let allowzero = attr_int(node, "allowzero", 0) != 0;
    if target.iter().any(|&d| d < -1) || target.iter().filter(|&&d| d == -1).count() > 1 {
        return Err(format!("Reshape target {target:?}"));
    }
    let mut out: Vec<Option<Dim>> = Vec::with_capacity(target.len());
    for (i, &d) in target.iter().enumerate() {
        out.push(match d {
            0 if !allowzero => match x {
                Some(x) => Some(
                    x.get(i)
                        .cloned()
                        .ok_or_else(|| format!("Reshape target {target:?} copies dim {i} of {}", shape_text(x)))?,
                ),
                None => None,
            },
            -1 => None,
            d => Some(Dim::Fixed(d)),
        });
    }
    let known: Option<Vec<Dim>> = out.iter().cloned().collect();
    let numel = x.and_then(product);
    let x = x.unwrap_or_default();
    match (known, numel) {
        (Some(s), Some(n)) => match product(&s) {
            Some(m) if m != n => Err(format!("Reshape of {} ({n} elements) into {}", shape_text(x), shape_text(&s))),
            _ => Ok(Some(s)),
        },
        (Some(s), None) => Ok(Some(s)),
        (None, Some(n)) => {
            let rest: Option<i64> = out.iter().flatten().try_fold(1i64, |p, d| p.checked_mul(fixed(d)?));
            match rest {
                Some(0) => Ok(None),
                Some(r) if n % r != 0 => Err(format!("Reshape of {} ({n} elements) into {target:?}", shape_text(x))),
                Some(r) => Ok(Some(out.into_iter().map(|d| d.unwrap_or(Dim::Fixed(n / r))).collect())),
                None => Ok(unknown.map(|u| out.into_iter().map(|d| d.unwrap_or_else(|| u.clone())).collect())),
            }
        }
        (None, None) => Ok(unknown.map(|u| out.into_iter().map(|d| d.unwrap_or_else(|| u.clone())).collect())),
    }
}

fn reshape_rank(facts: &dyn Facts, node: &Node, _: usize) -> Option<usize> {
    length(facts, node, 1)
}

/// The same rule over numbers: the target with its `0`s and `-1` resolved, then the bytes as they are.
fn reshape_eval(node: &Node, inputs: &[Option<&TensorData>]) -> Option<TensorData> {
    let x = arg(inputs, 0)?;
    let x_dims: Vec<Dim> = x.dims.iter().map(|&d| Dim::Fixed(d)).collect();
    let dims = reshape_to(Some(eval::ints(arg(inputs, 1))?), node, Some(&x_dims), None).ok()??;
    let dims = dims.iter().map(fixed).collect::<Option<Vec<i64>>>()?;
    (numel(&dims)? as i64 == x.numel()).then(|| TensorData { dims, ..x.clone() })
}

/// A constant `Reshape` target for output shape `out`, with every other dim positive so nothing
/// depends on a runtime zero: at most one symbolic dim, written `-1`; or (without `allowzero`) every
/// symbolic dim at a position where the input has that very dim, written `0` ("copy the input's").
fn reshape_target(node: &Node, x: Option<&[Dim]>, out: &[Dim]) -> Option<Vec<i64>> {
    if out.iter().any(|d| matches!(d, Dim::Fixed(n) if *n <= 0)) {
        return None;
    }
    let params = out.iter().filter(|d| matches!(d, Dim::Param(_))).count();
    if params <= 1 {
        return Some(out.iter().map(|d| if let Dim::Fixed(n) = d { *n } else { -1 }).collect());
    }
    let x = x?;
    if attr_int(node, "allowzero", 0) != 0 {
        return None;
    }
    out.iter()
        .enumerate()
        .map(|(i, d)| match d {
            Dim::Fixed(n) => Some(*n),
            Dim::Param(_) => (x.get(i) == Some(d)).then_some(0),
        })
        .collect()
}

fn reshape_noop(facts: &dyn Facts, node: &Node) -> Option<(Value, &'static str)> {
    same_shape(facts, node).map(|x| (x, "noop: Reshape to the same shape"))
}

fn flatten(facts: &dyn Facts, node: &Node, _: usize) -> Inferred {
    let Some(x) = shape_of(facts, node, 0) else { return Ok(None) };
    let rank = x.len();
    let axis = attr_int(node, "axis", 1);
    let axis = if axis < 0 { axis + rank as i64 } else { axis };
    if !(0..=rank as i64).contains(&axis) {
        return Err(format!("axis {axis} is out of range for rank {rank}"));
    }
    let (a, b) = x.split_at(axis as usize);
    let one = |s: &[Dim]| match s {
        [d] => Some(d.clone()),
        _ => product(s).map(Dim::Fixed),
    };
    Ok(match (one(a), one(b)) {
        (Some(p), Some(q)) => Some(vec![p, q]),
        _ => None,
    })
}

fn squeeze(facts: &dyn Facts, node: &Node, _: usize) -> Inferred {
    let Some(x) = shape_of(facts, node, 0) else { return Ok(None) };
    let rank = x.len();
    Ok(Some(match input(node, 1) {
        Some(_) => {
            let Some(axes) = const_ints(facts, node, 1) else { return Ok(None) };
            let axes: Vec<usize> = match axes.iter().map(|&a| norm_axis(a, rank)).collect::<Option<_>>() {
                Some(a) => a,
                None => return Err(format!("axes {axes:?} are out of range for rank {rank}")),
            };
            if let Some(&a) = axes.iter().find(|&&a| matches!(x[a], Dim::Fixed(n) if n != 1)) {
                return Err(format!("dim {a} of {} is not 1", shape_text(x)));
            }
            if axes.iter().any(|&a| x[a] != Dim::Fixed(1)) {
                return Ok(None);
            }
            x.iter().enumerate().filter(|(i, _)| !axes.contains(i)).map(|(_, d)| d.clone()).collect()
        }
        // Without axes every 1 goes; a symbolic dim might be 1.
        None if x.iter().all(|d| matches!(d, Dim::Fixed(_))) => {
            x.iter().filter(|d| **d != Dim::Fixed(1)).cloned().collect()
        }
        None => return Ok(None),
    }))
}

fn squeeze_syms(facts: &dyn Facts, node: &Node) -> Option<SymInts> {
    let s = facts.syms(input(node, 0)?)?;
    let ok_axes = match input(node, 1) {
        None => true,
        Some(_) => matches!(const_ints(facts, node, 1)?.as_slice(), [0] | [-1]),
    };
    (!s.scalar && s.items.len() == 1 && ok_axes).then(|| SymInts { scalar: true, items: s.items.clone() })
}

fn squeeze_eval(node: &Node, inputs: &[Option<&TensorData>]) -> Option<TensorData> {
    let x = arg(inputs, 0)?;
    let axes: Vec<usize> = match arg(inputs, 1) {
        Some(a) => eval::ints(Some(a))?.iter().map(|&a| norm_axis(a, x.dims.len())).collect::<Option<_>>()?,
        None if node.inputs.len() > 1 => return None,
        None => (0..x.dims.len()).filter(|&i| x.dims[i] == 1).collect(),
    };
    if axes.iter().any(|&a| x.dims[a] != 1) {
        return None;
    }
    let dims = x.dims.iter().enumerate().filter(|(i, _)| !axes.contains(i)).map(|(_, &d)| d).collect();
    Some(TensorData { dims, ..x.clone() })
}

fn unsqueeze(facts: &dyn Facts, node: &Node, _: usize) -> Inferred {
    let Some(x) = shape_of(facts, node, 0) else { return Ok(None) };
    let Some(axes) = const_ints(facts, node, 1) else { return Ok(None) };
    let rank = x.len();
    let r = rank + axes.len();
    let mut axes: Vec<usize> = match axes.iter().map(|&a| norm_axis(a, r)).collect::<Option<_>>() {
        Some(a) => a,
        None => return Err(format!("axes {axes:?} are out of range for rank {r}")),
    };
    axes.sort_unstable();
    axes.dedup();
    if axes.len() + rank != r {
        return Err("repeated axes".into());
    }
    let mut it = x.iter();
    let out = (0..r)
        .map(|i| if axes.contains(&i) { Some(Dim::Fixed(1)) } else { it.next().cloned() })
        .collect::<Option<_>>()
        .ok_or("axes")?;
    Ok(Some(out))
}

fn unsqueeze_syms(facts: &dyn Facts, node: &Node) -> Option<SymInts> {
    let s = facts.syms(input(node, 0)?)?;
    let ok_axes = matches!(const_ints(facts, node, 1)?.as_slice(), [0] | [-1]);
    (s.scalar && ok_axes).then(|| SymInts { scalar: false, items: s.items.clone() })
}

fn unsqueeze_eval(_: &Node, inputs: &[Option<&TensorData>]) -> Option<TensorData> {
    let x = arg(inputs, 0)?;
    let axes = eval::ints(arg(inputs, 1))?;
    let r = x.dims.len() + axes.len();
    let mut axes: Vec<usize> = axes.iter().map(|&a| norm_axis(a, r)).collect::<Option<_>>()?;
    axes.sort_unstable();
    axes.dedup();
    if axes.len() + x.dims.len() != r {
        return None;
    }
    let mut it = x.dims.iter();
    let dims = (0..r).map(|i| if axes.contains(&i) { Some(1) } else { it.next().copied() }).collect::<Option<_>>()?;
    Some(TensorData { dims, ..x.clone() })
}

// --- Transpose ----------------------------------------------------------------------------------

fn transpose(facts: &dyn Facts, node: &Node, _: usize) -> Inferred {
    let Some(x) = shape_of(facts, node, 0) else { return Ok(None) };
    let rank = x.len();
    Ok(Some(match attr_ints(node, "perm") {
        Some(p) => {
            let mut seen = vec![false; rank];
            let valid = p.len() == rank
                && p.iter().all(|&a| {
                    usize::try_from(a)
                        .ok()
                        .filter(|&a| a < rank)
                        .is_some_and(|a| !std::mem::replace(&mut seen[a], true))
                });
            if !valid {
                return Err(format!("perm {p:?} is not a permutation of the dims of a rank-{rank} input"));
            }
            p.iter().map(|&a| x[a as usize].clone()).collect()
        }
        None => x.iter().rev().cloned().collect(),
    }))
}

fn transpose_eval(node: &Node, inputs: &[Option<&TensorData>]) -> Option<TensorData> {
    eval::transpose(arg(inputs, 0)?, attr_ints(node, "perm"))
}

/// A transposed weight, computed while the model is written.
fn transpose_derive(node: &Node, inputs: &[Option<&TensorData>], second: bool) -> Option<TensorData> {
    if second {
        return None;
    }
    let x = arg(inputs, 0)?;
    let r = x.dims.len();
    let perm: Vec<usize> = match attr_ints(node, "perm") {
        Some(p) => p.iter().map(|&a| usize::try_from(a).ok()).collect::<Option<_>>()?,
        None => (0..r).rev().collect(),
    };
    crate::onnx::ir::Derived::transpose(x, &perm)
}

fn identity_transpose(facts: &dyn Facts, node: &Node) -> Option<(Value, &'static str)> {
    let x = input(node, 0)?;
    node.outputs.first()?;
    let identity = match attr_ints(node, "perm") {
        Some(p) => p.iter().enumerate().all(|(i, &a)| a == i as i64),
        None => facts.shape(x).is_some_and(|s| s.len() <= 1),
    };
    identity.then_some((x, "noop: identity Transpose"))
}

// --- Shape and Size -----------------------------------------------------------------------------

/// Before 15, `Shape` has no `start`/`end`: the whole shape, sliced.
const SHAPE_FORMS: &[Form] =
    &[Form { since: 15, form: "", used: shape_bounds, older: Older::Rewrite(Rewrite::ShapeThenSlice) }];

fn shape_bounds(c: &FormCtx) -> bool {
    c.node.attr("start").is_some() || c.node.attr("end").is_some()
}

/// `start`/`end` of a `Shape` node, clamped to `[0, rank]` as ONNX does.
fn shape_range(node: &Node, rank: i64) -> (i64, i64) {
    let clamp = |i: i64| if i < 0 { (i + rank).max(0) } else { i.min(rank) };
    (clamp(attr_int(node, "start", 0)), clamp(attr_int(node, "end", rank)))
}

fn shape(facts: &dyn Facts, node: &Node, _: usize) -> Inferred {
    let Some(x) = shape_of(facts, node, 0) else { return Ok(None) };
    let (start, end) = shape_range(node, x.len() as i64);
    Ok(Some(vec![Dim::Fixed((end - start).max(0))]))
}

fn shape_syms(facts: &dyn Facts, node: &Node) -> Option<SymInts> {
    let s = shape_of(facts, node, 0)?;
    let (start, end) = shape_range(node, s.len() as i64);
    Some(SymInts { scalar: false, items: s[start as usize..end.max(start) as usize].to_vec() })
}

fn size(facts: &dyn Facts, node: &Node, _: usize) -> Inferred {
    Ok(shape_of(facts, node, 0).map(|_| vec![]))
}

fn size_syms(facts: &dyn Facts, node: &Node) -> Option<SymInts> {
    let s = shape_of(facts, node, 0)?;
    let mut n = 1i64;
    for d in s {
        n = n.checked_mul(fixed(d)?)?;
    }
    Some(SymInts { scalar: true, items: vec![Dim::Fixed(n)] })
}

// --- Concat and Split ---------------------------------------------------------------------------

fn concat(facts: &dyn Facts, node: &Node, _: usize) -> Inferred {
    let Some(first) = shape_of(facts, node, 0) else { return Ok(None) };
    let rank = first.len();
    let axis = attr_int(node, "axis", 0);
    let Some(axis) = norm_axis(axis, rank) else {
        return Err(format!("axis {axis} is out of range for rank {rank}"));
    };
    let mut total = Some(0i64);
    let mut out = first.to_vec();
    for v in &node.inputs {
        let Some(s) = v.and_then(|v| facts.shape(v)) else { return Ok(None) };
        if s.len() != rank {
            return Err(format!("inputs of ranks {rank} and {}", s.len()));
        }
        total = total.zip(fixed(&s[axis])).and_then(|(t, n)| t.checked_add(n));
        for (i, (a, b)) in s.iter().zip(first).enumerate() {
            if let (Dim::Fixed(p), Dim::Fixed(q)) = (a, b) {
                if i != axis && p != q {
                    return Err(format!("inputs {} and {} differ off axis {axis}", shape_text(first), shape_text(s)));
                }
            }
            if i != axis && a != b {
                out[i] = if matches!(b, Dim::Fixed(_)) { b.clone() } else { a.clone() };
                if !matches!(out[i], Dim::Fixed(_)) {
                    match or_unknown(facts) {
                        Ok(u) => out[i] = u,
                        Err(none) => return none,
                    }
                }
            }
        }
    }
    match total.map(Dim::Fixed).or_else(|| facts.unknown()) {
        Some(d) => {
            out[axis] = d;
            Ok(Some(out))
        }
        None => Ok(None),
    }
}

fn concat_syms(facts: &dyn Facts, node: &Node) -> Option<SymInts> {
    let mut items = Vec::new();
    for v in &node.inputs {
        let s = facts.syms((*v)?)?;
        if s.scalar {
            return None;
        }
        items.extend_from_slice(&s.items);
    }
    Some(SymInts { scalar: false, items })
}

fn concat_eval(node: &Node, inputs: &[Option<&TensorData>]) -> Option<TensorData> {
    let parts: Vec<&TensorData> = inputs.iter().copied().collect::<Option<_>>()?;
    let first = *parts.first()?;
    let axis = norm_axis(attr_int(node, "axis", 0), first.dims.len())?;
    let es = first.dtype.size()?;
    let mut dims = first.dims.clone();
    dims[axis] = 0;
    for p in &parts {
        if p.dtype != first.dtype || p.dims.len() != dims.len() {
            return None;
        }
        for (i, (&a, &b)) in p.dims.iter().zip(&first.dims).enumerate() {
            if i != axis && a != b {
                return None;
            }
        }
        dims[axis] += p.dims[axis];
    }
    let outer = numel(&first.dims[..axis])?;
    let mut raw = Vec::with_capacity(numel(&dims)? * es);
    for o in 0..outer {
        for p in &parts {
            let chunk = numel(&p.dims[axis..])? * es;
            raw.extend_from_slice(p.raw.get(o * chunk..(o + 1) * chunk)?);
        }
    }
    Some(TensorData { dtype: first.dtype, dims, raw: raw.into() })
}

fn single_input_concat(facts: &dyn Facts, node: &Node) -> Option<(Value, &'static str)> {
    let out = *node.outputs.first()?;
    if node.inputs.len() == 1 {
        return Some((input(node, 0)?, "noop: single-input Concat"));
    }
    // The others empty along the axis (transformers' partial rotation with nothing left to pass
    // through: `cat([rotated, x[..., d:]])` where `d` is the whole head).
    let out_shape = facts.shape(out)?;
    let axis = norm_axis(attr_int(node, "axis", 0), out_shape.len())?;
    let mut kept = None;
    for v in &node.inputs {
        let v = (*v)?;
        if facts.shape(v)?.get(axis) == Some(&Dim::Fixed(0)) {
            continue;
        }
        if kept.replace(v).is_some() {
            return None;
        }
    }
    let kept = kept?;
    (facts.shape(kept) == Some(out_shape)).then_some((kept, "noop: Concat of one non-empty input"))
}

fn split(facts: &dyn Facts, node: &Node, i: usize) -> Inferred {
    let Some(x) = shape_of(facts, node, 0) else { return Ok(None) };
    let rank = x.len();
    let axis = attr_int(node, "axis", 0);
    let Some(axis) = norm_axis(axis, rank) else {
        return Err(format!("axis {axis} is out of range for rank {rank}"));
    };
    let n = node.outputs.len() as i64;
    let sizes: Vec<i64> = match input(node, 1) {
        Some(_) => match const_ints(facts, node, 1) {
            Some(s) => s,
            None => return Ok(None),
        },
        None => {
            let Dim::Fixed(d) = x[axis] else { return Ok(None) };
            let parts = attr_int(node, "num_outputs", n);
            if parts <= 0 {
                return Err(format!("num_outputs {parts}"));
            }
            // ONNX: chunks of ceil(d / n), the last one smaller.
            let chunk = (d + parts - 1) / parts;
            (0..parts).map(|k| if k + 1 < parts { chunk } else { d - chunk * (parts - 1) }).collect()
        }
    };
    if sizes.len() as i64 != n || sizes.iter().any(|&s| s < 0) {
        return Err(format!("Split sizes {sizes:?} for {n} outputs"));
    }
    if let Dim::Fixed(d) = x[axis] {
        if sizes.iter().sum::<i64>() != d {
            return Err(format!("Split sizes {sizes:?} of a dim of {d}"));
        }
    }
    let mut out = x.to_vec();
    out[axis] = Dim::Fixed(sizes[i]);
    Ok(Some(out))
}

fn num_outputs(c: &FormCtx) -> bool {
    c.node.attr("num_outputs").is_some()
}

// --- Slice --------------------------------------------------------------------------------------

fn slice(facts: &dyn Facts, node: &Node, _: usize) -> Inferred {
    let Some(x) = shape_of(facts, node, 0) else { return Ok(None) };
    let rank = x.len();
    let unknown = facts.unknown();
    let (Some(starts), Some(ends)) = (const_ints(facts, node, 1), const_ints(facts, node, 2)) else {
        // Computed bounds: the sliced axes (when constant) are unknown, the others stay.
        let Some(u) = unknown else { return Ok(None) };
        let axes = match input(node, 3) {
            Some(_) => const_ints(facts, node, 3),
            None => None,
        };
        return Ok(Some(match axes.and_then(|a| a.iter().map(|&a| norm_axis(a, rank)).collect::<Option<Vec<_>>>()) {
            Some(axes) => {
                x.iter().enumerate().map(|(i, d)| if axes.contains(&i) { u.clone() } else { d.clone() }).collect()
            }
            None => vec![u; rank],
        }));
    };
    let axes = match input(node, 3) {
        Some(_) => match const_ints(facts, node, 3) {
            Some(a) => a,
            None => return Ok(None),
        },
        None => (0..starts.len() as i64).collect(),
    };
    let steps = match input(node, 4) {
        Some(_) => match const_ints(facts, node, 4) {
            Some(s) => s,
            None => return Ok(None),
        },
        None => vec![1; starts.len()],
    };
    if ends.len() != starts.len() || axes.len() != starts.len() || steps.len() != starts.len() {
        return Err("Slice's starts, ends, axes and steps differ in length".into());
    }
    let mut out = x.to_vec();
    for k in 0..starts.len() {
        let Some(a) = norm_axis(axes[k], rank) else {
            return Err(format!("axis {} is out of range for rank {rank}", axes[k]));
        };
        let step = steps[k] as i128;
        if step == 0 {
            return Err("a Slice step of 0".into());
        }
        let Dim::Fixed(d) = x[a] else {
            match &unknown {
                Some(u) => {
                    out[a] = u.clone();
                    continue;
                }
                None => return Ok(None),
            }
        };
        let d = d as i128;
        let (mut s, mut e) = (starts[k] as i128, ends[k] as i128);
        if s < 0 {
            s += d;
        }
        if e < 0 {
            e += d;
        }
        let len = if d == 0 {
            0
        } else if step > 0 {
            let (s, e) = (s.clamp(0, d), e.clamp(0, d));
            ((e - s + step - 1) / step).max(0)
        } else {
            let (s, e) = (s.clamp(0, d - 1), e.clamp(-1, d - 1));
            ((s - e + (-step) - 1) / (-step)).max(0)
        };
        out[a] = Dim::Fixed(len as i64);
    }
    Ok(Some(out))
}

fn slice_syms(facts: &dyn Facts, node: &Node) -> Option<SymInts> {
    let s = facts.syms(input(node, 0)?)?;
    if s.scalar {
        return None;
    }
    let n = s.items.len() as i64;
    let one = |i: usize| const_ints(facts, node, i).and_then(|v| (v.len() == 1).then(|| v[0]));
    let (start, end) = (one(1)?, one(2)?);
    if input(node, 3).is_some() && !matches!(one(3)?, 0 | -1) {
        return None;
    }
    if input(node, 4).is_some() && one(4)? != 1 {
        return None;
    }
    let clamp = |i: i64| if i < 0 { (i + n).max(0) } else { i.min(n) };
    let (a, b) = (clamp(start), clamp(end));
    Some(SymInts { scalar: false, items: s.items[a as usize..b.max(a) as usize].to_vec() })
}

fn slice_eval(_: &Node, inputs: &[Option<&TensorData>]) -> Option<TensorData> {
    eval::slice(arg(inputs, 0)?, arg(inputs, 1), arg(inputs, 2), arg(inputs, 3), arg(inputs, 4))
}

/// A `Slice` that takes every element: step 1 from the start to at least the end of each axis.
fn full_slice(facts: &dyn Facts, node: &Node) -> Option<(Value, &'static str)> {
    let x = input(node, 0)?;
    node.outputs.first()?;
    let shape = facts.shape(x)?;
    let starts = const_ints(facts, node, 1)?;
    let ends = const_ints(facts, node, 2)?;
    let axes = match input(node, 3) {
        Some(_) => const_ints(facts, node, 3)?,
        None => (0..starts.len() as i64).collect(),
    };
    let steps = match input(node, 4) {
        Some(_) => const_ints(facts, node, 4)?,
        None => vec![1; starts.len()],
    };
    if starts.len() != ends.len() || axes.len() != starts.len() || steps.len() != starts.len() {
        return None;
    }
    for i in 0..starts.len() {
        let axis = norm_axis(axes[i], shape.len())?;
        let start_ok = starts[i] == 0 || matches!(shape[axis], Dim::Fixed(n) if starts[i] <= -n);
        let end_ok = ends[i] >= END_OF_AXIS || matches!(shape[axis], Dim::Fixed(n) if ends[i] >= n);
        if steps[i] != 1 || !start_ok || !end_ok {
            return None;
        }
    }
    Some((x, "noop: full-range Slice"))
}

// --- Gather -------------------------------------------------------------------------------------

fn gather(facts: &dyn Facts, node: &Node, _: usize) -> Inferred {
    let Some(x) = shape_of(facts, node, 0) else { return Ok(None) };
    let rank = x.len();
    let Some(idx) = shape_of(facts, node, 1) else { return Ok(None) };
    let axis = attr_int(node, "axis", 0);
    let Some(axis) = norm_axis(axis, rank) else {
        return Err(format!("axis {axis} is out of range for rank {rank}"));
    };
    let mut out = x[..axis].to_vec();
    out.extend_from_slice(idx);
    out.extend_from_slice(&x[axis + 1..]);
    Ok(Some(out))
}

fn gather_syms(facts: &dyn Facts, node: &Node) -> Option<SymInts> {
    let s = facts.syms(input(node, 0)?)?;
    if s.scalar || norm_axis(attr_int(node, "axis", 0), 1) != Some(0) {
        return None;
    }
    let idx = facts.syms(input(node, 1)?)?;
    let n = s.items.len() as i64;
    let items = idx
        .items
        .iter()
        .map(|i| {
            let i = fixed(i)?;
            let i = if i < 0 { i + n } else { i };
            (0..n).contains(&i).then(|| s.items[i as usize].clone())
        })
        .collect::<Option<Vec<_>>>()?;
    Some(SymInts { scalar: idx.scalar, items })
}

fn gather_eval(node: &Node, inputs: &[Option<&TensorData>]) -> Option<TensorData> {
    let x = arg(inputs, 0)?;
    let idx = eval::ints(arg(inputs, 1))?;
    let idx_dims = arg(inputs, 1)?.dims.clone();
    let axis = norm_axis(attr_int(node, "axis", 0), x.dims.len())?;
    let n = x.dims[axis];
    let outer = numel(&x.dims[..axis])?;
    let inner = numel(&x.dims[axis + 1..])?;
    let mut map = Vec::with_capacity(outer * idx.len() * inner);
    for o in 0..outer {
        for &i in &idx {
            let i = if i < 0 { i + n } else { i };
            if !(0..n).contains(&i) {
                return None;
            }
            let base = (o * n as usize + i as usize) * inner;
            map.extend(base..base + inner);
        }
    }
    let mut dims = x.dims[..axis].to_vec();
    dims.extend(idx_dims);
    dims.extend_from_slice(&x.dims[axis + 1..]);
    gather_bytes(x, &map, dims)
}

fn gather_elements(facts: &dyn Facts, node: &Node, _: usize) -> Inferred {
    let Some(x) = shape_of(facts, node, 0) else { return Ok(None) };
    let rank = x.len();
    match shape_of(facts, node, 1) {
        Some(idx) if idx.len() == rank => Ok(Some(idx.to_vec())),
        Some(idx) => Err(format!("indices of rank {} for data of rank {rank}", idx.len())),
        None => Ok(None),
    }
}

fn gather_nd(facts: &dyn Facts, node: &Node, _: usize) -> Inferred {
    let Some(x) = shape_of(facts, node, 0) else { return Ok(None) };
    let rank = x.len();
    let Some(idx) = shape_of(facts, node, 1) else { return Ok(None) };
    let b = usize::try_from(attr_int(node, "batch_dims", 0)).map_err(|_| "negative batch_dims")?;
    let Some(Dim::Fixed(k)) = idx.last() else { return Ok(None) };
    let k = usize::try_from(*k).map_err(|_| "negative index depth")?;
    if b + k > rank || idx.len() <= b {
        return Err(format!("GatherND of {} with indices {}", shape_text(x), shape_text(idx)));
    }
    let mut out = idx[..idx.len() - 1].to_vec();
    out.extend_from_slice(&x[b + k..]);
    Ok(Some(out))
}

fn gather_nd_rank(facts: &dyn Facts, node: &Node, _: usize) -> Option<usize> {
    let last = match shape_of(facts, node, 1)?.last()? {
        Dim::Fixed(n) => usize::try_from(*n).ok()?,
        Dim::Param(_) => return None,
    };
    let b = usize::try_from(attr_int(node, "batch_dims", 0)).ok()?;
    let (r0, r1) = (shape_of(facts, node, 0)?.len(), shape_of(facts, node, 1)?.len());
    (r0 + r1).checked_sub(last + 1 + b)
}

/// Indexing a constant with constant indices (a relative-position bias table).
fn gather_nd_eval(node: &Node, inputs: &[Option<&TensorData>]) -> Option<TensorData> {
    if attr_int(node, "batch_dims", 0) != 0 {
        return None;
    }
    let (x, idx) = (arg(inputs, 0)?, arg(inputs, 1)?);
    let k = *idx.dims.last()? as usize;
    if k == 0 || k > x.dims.len() {
        return None;
    }
    let inner = numel(&x.dims[k..])?;
    let ids = eval::ints(Some(idx))?;
    let mut map = Vec::with_capacity(ids.len() / k * inner);
    for tuple in ids.chunks(k) {
        let mut flat = 0usize;
        for (&i, &n) in tuple.iter().zip(&x.dims) {
            let i = if i < 0 { i + n } else { i };
            if !(0..n).contains(&i) {
                return None;
            }
            flat = flat * n as usize + i as usize;
        }
        map.extend(flat * inner..(flat + 1) * inner);
    }
    let mut dims = idx.dims[..idx.dims.len() - 1].to_vec();
    dims.extend_from_slice(&x.dims[k..]);
    gather_bytes(x, &map, dims)
}

// --- Scatter ------------------------------------------------------------------------------------

/// The reductions of `ScatterElements` and `ScatterND`: `none` is version 13's only behaviour,
/// `add` and `mul` come at 16, `max` and `min` at 18.
const SCATTER_FORMS: &[Form] = &[
    Form { since: 16, form: "", used: reduction_none, older: Older::DropAttribute("reduction") },
    Form { since: 16, form: "with a reduction", used: reduction_add_mul, older: Older::Nothing },
    Form { since: 18, form: "with reduction max or min", used: reduction_max_min, older: Older::Nothing },
];

fn reduction_none(c: &FormCtx) -> bool {
    attr_str(c.node, "reduction") == Some("none")
}

fn reduction_add_mul(c: &FormCtx) -> bool {
    matches!(attr_str(c.node, "reduction"), Some("add" | "mul"))
}

fn reduction_max_min(c: &FormCtx) -> bool {
    matches!(attr_str(c.node, "reduction"), Some("max" | "min"))
}

/// Without a reduction only: every position written once (repeated indices are undefined in
/// ONNX, so they are left to the runtime).
fn scatter_elements_eval(node: &Node, inputs: &[Option<&TensorData>]) -> Option<TensorData> {
    if node.attr("reduction").is_some() {
        return None;
    }
    eval::scatter_elements(node, arg(inputs, 0)?, arg(inputs, 1)?, arg(inputs, 2)?)
}

// --- Expand and Tile ----------------------------------------------------------------------------

fn expand(facts: &dyn Facts, node: &Node, _: usize) -> Inferred {
    let Some(x) = shape_of(facts, node, 0) else { return Ok(None) };
    let target: Vec<Dim> = match input(node, 1).and_then(|v| facts.syms(v)) {
        Some(s) if !s.scalar => s.items.clone(),
        _ => return Ok(None),
    };
    broadcast_checked(x, &target, facts.unknown().as_ref())
}

fn expand_rank(facts: &dyn Facts, node: &Node, _: usize) -> Option<usize> {
    Some(shape_of(facts, node, 0)?.len().max(length(facts, node, 1)?))
}

fn expand_eval(_: &Node, inputs: &[Option<&TensorData>]) -> Option<TensorData> {
    let x = arg(inputs, 0)?;
    let dims = broadcast_dims(&x.dims, &eval::ints(arg(inputs, 1))?)?;
    if numel(&dims)? as i64 > OUTPUT_LIMIT {
        return None;
    }
    gather_bytes(x, &broadcast_index(&x.dims, &dims)?, dims)
}

/// A constant `Expand` target giving the same result: fixed dims as they are, a symbolic dim as `1`
/// where the input has that very dim (broadcasting `1` against it gives it back).
fn expand_target(_: &Node, x: Option<&[Dim]>, out: &[Dim]) -> Option<Vec<i64>> {
    let x = x?;
    if x.len() > out.len() {
        return None;
    }
    let lead = out.len() - x.len();
    out.iter()
        .enumerate()
        .map(|(i, d)| match d {
            Dim::Fixed(n) => Some(*n),
            Dim::Param(_) => (i >= lead && &x[i - lead] == d).then_some(1),
        })
        .collect()
}

fn expand_noop(facts: &dyn Facts, node: &Node) -> Option<(Value, &'static str)> {
    same_shape(facts, node).map(|x| (x, "noop: Expand to the same shape"))
}

fn tile(facts: &dyn Facts, node: &Node, _: usize) -> Inferred {
    let Some(x) = shape_of(facts, node, 0) else { return Ok(None) };
    let rank = x.len();
    let Some(reps) = ints(facts, node, 1) else { return Ok(None) };
    if reps.len() != rank {
        return Err(format!("{} repeats for rank {rank}", reps.len()));
    }
    let mut out = Vec::with_capacity(rank);
    for (d, &r) in x.iter().zip(&reps) {
        out.push(match (d, r) {
            (_, 1) => d.clone(),
            (Dim::Fixed(n), r) if r >= 0 => Dim::Fixed(n.checked_mul(r).ok_or("overflow")?),
            _ => match or_unknown(facts) {
                Ok(u) => u,
                Err(none) => return none,
            },
        });
    }
    Ok(Some(out))
}

/// A constant repeated: exact data movement, as Expand.
fn tile_eval(_: &Node, inputs: &[Option<&TensorData>]) -> Option<TensorData> {
    let x = arg(inputs, 0)?;
    let reps = eval::ints(arg(inputs, 1))?;
    if reps.len() != x.dims.len() || reps.iter().any(|&r| r < 0) {
        return None;
    }
    let dims: Vec<i64> = x.dims.iter().zip(&reps).map(|(&d, &r)| d * r).collect();
    let n = numel(&dims)?;
    if n as i64 > OUTPUT_LIMIT {
        return None;
    }
    // Output position -> input position: each coordinate modulo the input's size.
    let mut map = Vec::with_capacity(n);
    for flat in 0..n {
        let (mut rest, mut src, mut stride) = (flat, 0usize, 1usize);
        for (&d, &od) in x.dims.iter().zip(&dims).rev() {
            let c = rest % od as usize;
            rest /= od as usize;
            src += (c % d as usize) * stride;
            stride *= d as usize;
        }
        map.push(src);
    }
    gather_bytes(x, &map, dims)
}

fn tile_by_ones(facts: &dyn Facts, node: &Node) -> Option<(Value, &'static str)> {
    let x = input(node, 0)?;
    node.outputs.first()?;
    const_ints(facts, node, 1)?.iter().all(|&r| r == 1).then_some((x, "noop: Tile by ones"))
}

// --- Pad ----------------------------------------------------------------------------------------

fn pad(facts: &dyn Facts, node: &Node, _: usize) -> Inferred {
    let Some(x) = shape_of(facts, node, 0) else { return Ok(None) };
    let rank = x.len();
    let Some(pads) = const_ints(facts, node, 1) else { return Ok(None) };
    let axes: Vec<usize> = match input(node, 3) {
        None => (0..rank).collect(),
        Some(_) => match const_ints(facts, node, 3) {
            Some(a) => match a.iter().map(|&a| norm_axis(a, rank)).collect::<Option<_>>() {
                Some(a) => a,
                None => return Err(format!("axes {a:?} are out of range for rank {rank}")),
            },
            None => return Ok(None),
        },
    };
    if pads.len() != 2 * axes.len() {
        return Err(format!("{} pads for {} axes", pads.len(), axes.len()));
    }
    let mut out = x.to_vec();
    for (k, &a) in axes.iter().enumerate() {
        let add = pads[k].saturating_add(pads[k + axes.len()]);
        out[a] = match &x[a] {
            _ if add == 0 => x[a].clone(),
            Dim::Fixed(n) => Dim::Fixed(n.saturating_add(add)),
            Dim::Param(_) => match or_unknown(facts) {
                Ok(u) => u,
                Err(none) => return none,
            },
        };
    }
    Ok(Some(out))
}

fn pad_by_zeros(facts: &dyn Facts, node: &Node) -> Option<(Value, &'static str)> {
    let x = input(node, 0)?;
    node.outputs.first()?;
    const_ints(facts, node, 1)?.iter().all(|&p| p == 0).then_some((x, "noop: Pad by zeros"))
}

fn pad_axes(c: &FormCtx) -> bool {
    input(c.node, 3).is_some()
}

fn wrap_mode(c: &FormCtx) -> bool {
    attr_str(c.node, "mode") == Some("wrap")
}

// --- Constants and ranges -----------------------------------------------------------------------

/// `Constant` is the type of its `value`.
fn constant_type(node: &Node, _: &dyn Fn(usize) -> Option<DType>, i: usize) -> Option<DType> {
    match node.attr("value") {
        Some(AttrValue::Tensor(t)) if i == 0 => Some(t.dtype),
        _ => None,
    }
}

/// `ConstantOfShape` is the type of its `value`, float32 without one.
fn constant_of_shape_type(node: &Node, _: &dyn Fn(usize) -> Option<DType>, i: usize) -> Option<DType> {
    match node.attr("value") {
        _ if i > 0 => None,
        Some(AttrValue::Tensor(t)) => Some(t.dtype),
        _ => Some(Float),
    }
}

/// The output of a constant shape; where the shape input's own shape is known, the rule answers
/// nothing (the optimizer learns these shapes from the folded constant instead).
fn constant_of_shape(facts: &dyn Facts, node: &Node, _: usize) -> Inferred {
    if shape_of(facts, node, 0).is_some() {
        return Ok(None);
    }
    Ok(const_ints(facts, node, 0).map(|s| s.iter().map(|&d| Dim::Fixed(d)).collect()))
}

fn constant_of_shape_rank(facts: &dyn Facts, node: &Node, _: usize) -> Option<usize> {
    length(facts, node, 0)
}

fn constant_of_shape_eval(node: &Node, inputs: &[Option<&TensorData>]) -> Option<TensorData> {
    let dims = eval::ints(arg(inputs, 0))?;
    let n = numel(&dims)?;
    if n as i64 > OUTPUT_LIMIT {
        return None;
    }
    let value = match node.attr("value") {
        Some(AttrValue::Tensor(t)) if t.numel() == 1 => (**t).clone(),
        Some(_) => return None,
        None => TensorData { dtype: Float, dims: vec![1], raw: vec![0u8; 4].into() },
    };
    let es = value.dtype.size()?;
    let raw: Vec<u8> = value.raw.get(..es)?.repeat(n);
    Some(TensorData { dtype: value.dtype, dims, raw: raw.into() })
}

/// Range's length when start, limit and delta are known integers: `max(ceil((limit - start) /
/// delta), 0)`.
fn range(facts: &dyn Facts, node: &Node, _: usize) -> Inferred {
    if shape_of(facts, node, 0).is_none() {
        return Ok(None);
    }
    let scalar = |k: usize| match const_ints(facts, node, k) {
        Some(v) => v.first().map(|&n| n as i128).filter(|_| v.len() == 1),
        None => match facts.syms(input(node, k)?) {
            Some(s) if s.scalar => fixed(s.items.first()?).map(i128::from),
            _ => None,
        },
    };
    let (Some(start), Some(limit), Some(delta)) = (scalar(0), scalar(1), scalar(2)) else {
        return Ok(facts.unknown().map(|u| vec![u]));
    };
    if delta == 0 {
        return Ok(None);
    }
    let span = limit - start;
    let n = if (span > 0) == (delta > 0) { (span + delta - delta.signum()) / delta } else { 0 };
    Ok(i64::try_from(n.max(0)).ok().map(|n| vec![Dim::Fixed(n)]))
}

fn range_rank(_: &dyn Facts, _: &Node, _: usize) -> Option<usize> {
    Some(1)
}

fn range_eval(_: &Node, inputs: &[Option<&TensorData>]) -> Option<TensorData> {
    let (s, l, d) = (arg(inputs, 0)?, arg(inputs, 1)?, arg(inputs, 2)?);
    if !s.dtype.is_int() || s.dtype != l.dtype || s.dtype != d.dtype {
        return None;
    }
    let (s, l, d) = (s.to_i64s()?[0], l.to_i64s()?[0], d.to_i64s()?[0]);
    if d == 0 {
        return None;
    }
    let span = l.checked_sub(s)?;
    let n = if (span > 0) == (d > 0) && span != 0 { (span.abs() + d.abs() - 1) / d.abs() } else { 0 };
    if n > OUTPUT_LIMIT {
        return None;
    }
    let vals: Vec<i64> = (0..n).map(|i| s + i * d).collect();
    eval::encode(&eval::Num::I(vals), arg(inputs, 0)?.dtype, vec![n])
}

// --- Blocks, indices ----------------------------------------------------------------------------

/// `DepthToSpace` and `SpaceToDepth` of a static NCHW input.
fn blocks(facts: &dyn Facts, node: &Node, _: usize) -> Inferred {
    let Some(x) = shape_of(facts, node, 0) else { return Ok(None) };
    let op = node.op_type.as_str();
    let b = attr_int(node, "blocksize", 0);
    let [n, c, h, w] = x else { return Err(format!("{op} of a rank-{} input", x.len())) };
    let (Some(c), Some(h), Some(w)) = (fixed(c), fixed(h), fixed(w)) else { return Ok(None) };
    if b <= 0 {
        return Ok(None);
    }
    Ok(Some(if op == "DepthToSpace" {
        if c % (b * b) != 0 {
            return Err(format!("{c} channels do not divide into blocks of {b}×{b}"));
        }
        vec![n.clone(), Dim::Fixed(c / (b * b)), Dim::Fixed(h * b), Dim::Fixed(w * b)]
    } else {
        if h % b != 0 || w % b != 0 {
            return Err(format!("{h}×{w} does not divide into blocks of {b}"));
        }
        vec![n.clone(), Dim::Fixed(c * b * b), Dim::Fixed(h / b), Dim::Fixed(w / b)]
    }))
}

fn nonzero_rank(_: &dyn Facts, _: &Node, _: usize) -> Option<usize> {
    Some(2)
}

/// Without an axis every output of `Unique` is 1-D.
fn unique_rank(_: &dyn Facts, node: &Node, _: usize) -> Option<usize> {
    node.attr("axis").is_none().then_some(1)
}
