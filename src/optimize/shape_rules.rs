//! The shape of each output of an ONNX node, from its inputs' shapes, constant inputs and
//! attributes — ONNX's own shape inference, for the operators fxonnx emits.
//!
//! Two users: the optimizer ([`super::shapes`]) learns shapes that the graph does not record, and
//! [`super::shapes::check`] compares every recorded shape with the computed one, so that a program
//! whose metadata contradicts its own nodes fails the export instead of giving a model that
//! `onnx.checker` rejects (or, worse, one the optimizer rewrote from the wrong shapes).
//!
//! A rule answers `Ok(Some(shape))` when the shape follows exactly, `Ok(None)` when it does not (a
//! symbolic dim where a number is needed, a computed argument, an operator without a rule), and
//! `Err` when the inputs cannot be an operand of the operator at all, where ONNX's inference fails
//! too (dims that do not broadcast, a `MatMul` whose inner dims differ). Unknown is never an error.

use super::edit::{attr_int, attr_ints, const_ints, constant, input, norm_axis};
use super::shapes::{fixed, ShapeTable};
use crate::onnx::ir::{AttrValue, DType, Dim, Model, Node};

/// What a rule says of one output.
pub(crate) type Inferred = Result<Option<Vec<Dim>>, String>;

/// Operators whose outputs have their first input's shape, besides the one-input operators the
/// builder already knows ([`crate::onnx::infer::SAME_SHAPE`]).
const ALSO_SAME_SHAPE: &[&str] = &[
    "CumSum",
    "DequantizeLinear",
    "Dropout",
    "GroupNormalization",
    "Hardmax",
    "InstanceNormalization",
    "LpNormalization",
    "PRelu",
    "QuantizeLinear",
    "RandomNormalLike",
    "RandomUniformLike",
    "ScatterElements",
    "ScatterND",
    "Shrink",
    "Trilu",
];

/// Operators whose output is their inputs broadcast together.
pub(crate) const BROADCAST: &[&str] = &[
    "Add",
    "Sub",
    "Mul",
    "Div",
    "Pow",
    "Mod",
    "And",
    "Or",
    "Xor",
    "Equal",
    "Less",
    "Greater",
    "LessOrEqual",
    "GreaterOrEqual",
    "Where",
    "Max",
    "Min",
    "Mean",
    "Sum",
    "BitwiseAnd",
    "BitwiseOr",
    "BitwiseXor",
    "BitShift",
];

/// The reductions (`axes` an input from opset 18, `ReduceSum`'s from 13).
pub(crate) const REDUCE: &[&str] = &[
    "ReduceL1",
    "ReduceL2",
    "ReduceLogSum",
    "ReduceLogSumExp",
    "ReduceMax",
    "ReduceMean",
    "ReduceMin",
    "ReduceProd",
    "ReduceSum",
    "ReduceSumSquare",
];

/// `[2, s77]`, as messages print shapes.
pub(crate) fn shape_text(s: &[Dim]) -> String {
    let dims: Vec<String> = s.iter().map(|d| d.to_string()).collect();
    format!("[{}]", dims.join(", "))
}

/// Broadcasting that fails where ONNX's does: two different numbers, neither 1. With `unknown`
/// (the check's partial table) it also follows ONNX where a symbol meets a number: the number
/// (other than 1) wins, and two different symbols give the unknown dim.
fn broadcast_checked(a: &[Dim], b: &[Dim], unknown: Option<&Dim>) -> Inferred {
    let r = a.len().max(b.len());
    let mut out = Vec::with_capacity(r);
    for i in 0..r {
        let da = (i + a.len()).checked_sub(r).map(|j| &a[j]);
        let db = (i + b.len()).checked_sub(r).map(|j| &b[j]);
        if let (Some(&Dim::Fixed(x)), Some(&Dim::Fixed(y))) = (da, db) {
            if x != y && x != 1 && y != 1 {
                return Err(format!("shapes {} and {} do not broadcast", shape_text(a), shape_text(b)));
            }
        }
        out.push(match (da, db) {
            (Some(x), None) | (None, Some(x)) => x.clone(),
            (Some(x), Some(y)) if x == y => x.clone(),
            (Some(Dim::Fixed(1)), Some(y)) | (Some(y), Some(Dim::Fixed(1))) => y.clone(),
            (Some(n @ Dim::Fixed(_)), Some(_)) | (Some(_), Some(n @ Dim::Fixed(_))) if unknown.is_some() => n.clone(),
            _ => match unknown {
                Some(u) => u.clone(),
                None => return Ok(None),
            },
        });
    }
    Ok(Some(out))
}

/// The float contents of a small constant (Resize scales).
fn const_floats(model: &Model, node: &Node, i: usize) -> Option<Vec<f32>> {
    let t = constant(model, input(node, i)?)?;
    if t.dtype != DType::Float || t.numel() > 64 || t.raw.len() != t.numel() as usize * 4 {
        return None;
    }
    Some(t.raw.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect())
}

/// The product of `dims` when all are numbers.
fn product(dims: &[Dim]) -> Option<i64> {
    dims.iter().try_fold(1i64, |n, d| n.checked_mul(fixed(d)?))
}

impl ShapeTable {
    /// The rank of output `i` of `node` where its shape is not known but its rank is.
    pub(crate) fn infer_rank(&self, model: &Model, node: &Node, i: usize) -> Option<usize> {
        let multi = matches!(node.op_type.as_str(), "MaxPool" | "TopK" | "Split" | "Unique" | "LSTM" | "GRU" | "RNN");
        if !node.domain.is_empty() || i > 0 && !multi {
            return None;
        }
        let rank = |k: usize| input(node, k).and_then(|v| self.shape(model, v)).map(<[Dim]>::len);
        // The length of a 1-D shape input.
        let length = |k: usize| match input(node, k).and_then(|v| self.shape(model, v)) {
            Some([Dim::Fixed(n)]) => usize::try_from(*n).ok(),
            _ => None,
        };
        match node.op_type.as_str() {
            "Resize" | "Slice" | "Tile" | "Pad" | "Conv" | "ConvTranspose" | "MaxPool" | "AveragePool" | "LpPool"
            | "Concat" | "TopK" | "Split" | "ReverseSequence" | "CenterCropPad" | "GridSample" => rank(0),
            "Range" => Some(1),
            "NonZero" => Some(2),
            // Without an axis every output is 1-D.
            "Unique" if node.attr("axis").is_none() => Some(1),
            // Y is [seq, directions, batch, hidden]; Y_h and Y_c drop the sequence.
            "LSTM" | "GRU" | "RNN" => Some(if i == 0 { 4 } else { 3 }),
            "Reshape" => length(1),
            "ConstantOfShape" => length(0),
            "Expand" => Some(rank(0)?.max(length(1)?)),
            "GatherND" => {
                let last = match input(node, 1).and_then(|v| self.shape(model, v))?.last()? {
                    Dim::Fixed(n) => usize::try_from(*n).ok()?,
                    Dim::Param(_) => return None,
                };
                let b = usize::try_from(attr_int(node, "batch_dims", 0)).ok()?;
                (rank(0)? + rank(1)?).checked_sub(last + 1 + b)
            }
            _ => None,
        }
    }

    /// Range's length when start, limit and delta are known integers: `max(ceil((limit -
    /// start) / delta), 0)`.
    fn range(&self, model: &Model, node: &Node) -> Option<Vec<Dim>> {
        let scalar = |k: usize| match const_ints(model, node, k) {
            Some(v) => v.first().map(|&n| n as i128).filter(|_| v.len() == 1),
            None => match self.syms(input(node, k)?) {
                Some(s) if s.scalar => fixed(s.items.first()?).map(i128::from),
                _ => None,
            },
        };
        let (Some(start), Some(limit), Some(delta)) = (scalar(0), scalar(1), scalar(2)) else {
            return self.unknown().map(|u| vec![u]);
        };
        if delta == 0 {
            return None;
        }
        let span = limit - start;
        let n = if (span > 0) == (delta > 0) { (span + delta - delta.signum()) / delta } else { 0 };
        Some(vec![Dim::Fixed(i64::try_from(n.max(0)).ok()?)])
    }

    /// The integer contents of input `k` of `node`: a constant, or a shape computation whose
    /// every element is known (`Concat(Shape(x)[0:1], [8])` of a static `x`).
    fn ints(&self, model: &Model, node: &Node, k: usize) -> Option<Vec<i64>> {
        const_ints(model, node, k).or_else(|| {
            let s = self.syms(input(node, k)?)?;
            if s.scalar {
                return None;
            }
            s.items.iter().map(fixed).collect()
        })
    }

    /// The shape of output `i` of `node`.
    pub(crate) fn infer_output(&self, model: &Model, node: &Node, i: usize) -> Inferred {
        if !node.domain.is_empty() {
            return Ok(None);
        }
        let op = node.op_type.as_str();
        let shape_of = |k: usize| input(node, k).and_then(|v| self.shape(model, v));
        let Some(x) = shape_of(0) else {
            return match op {
                "ConstantOfShape" => Ok(const_ints(model, node, 0).map(|s| s.iter().map(|&d| Dim::Fixed(d)).collect())),
                // The target's numbers still say the rank and the dims it sets.
                "Reshape" if self.unknown().is_some() => reshape(self.ints(model, node, 1), node, None, self.unknown()),
                _ => Ok(None),
            };
        };
        // Outputs past the first: only where a rule below says so.
        let multi = matches!(op, "Split" | "TopK" | "MaxPool" | "Dropout");
        if i > 0 && !multi {
            return Ok(None);
        }
        if crate::onnx::infer::SAME_SHAPE.contains(&op) || ALSO_SAME_SHAPE.contains(&op) {
            // BatchNormalization and LayerNormalization's extra outputs are statistics.
            return Ok((i == 0 || op == "Dropout").then(|| x.to_vec()));
        }
        if BROADCAST.contains(&op) {
            let mut acc: Option<Vec<Dim>> = Some(Vec::new());
            for v in node.inputs.iter() {
                let Some(s) = v.and_then(|v| self.shape(model, v)) else {
                    acc = None;
                    continue;
                };
                if let Some(a) = &acc {
                    acc = broadcast_checked(a, s, self.unknown().as_ref())?;
                }
            }
            return Ok(acc);
        }
        if REDUCE.contains(&op) {
            return Ok(reduce(model, node, x));
        }
        let rank = x.len();
        Ok(Some(match op {
            "Transpose" => match attr_ints(node, "perm") {
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
            },
            "Unsqueeze" => {
                let Some(axes) = const_ints(model, node, 1) else { return Ok(None) };
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
                (0..r)
                    .map(|i| if axes.contains(&i) { Some(Dim::Fixed(1)) } else { it.next().cloned() })
                    .collect::<Option<_>>()
                    .ok_or("axes")?
            }
            "Squeeze" => match input(node, 1) {
                Some(_) => {
                    let Some(axes) = const_ints(model, node, 1) else { return Ok(None) };
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
            },
            "Shape" => {
                let r = rank as i64;
                let clamp = |i: i64| if i < 0 { (i + r).max(0) } else { i.min(r) };
                let (start, end) = (clamp(attr_int(node, "start", 0)), clamp(attr_int(node, "end", r)));
                vec![Dim::Fixed((end - start).max(0))]
            }
            "Size" => vec![],
            "Gather" => {
                let Some(idx) = shape_of(1) else { return Ok(None) };
                let axis = attr_int(node, "axis", 0);
                let Some(axis) = norm_axis(axis, rank) else {
                    return Err(format!("axis {axis} is out of range for rank {rank}"));
                };
                let mut out = x[..axis].to_vec();
                out.extend_from_slice(idx);
                out.extend_from_slice(&x[axis + 1..]);
                out
            }
            "GatherElements" => match shape_of(1) {
                Some(idx) if idx.len() == rank => idx.to_vec(),
                Some(idx) => return Err(format!("indices of rank {} for data of rank {rank}", idx.len())),
                None => return Ok(None),
            },
            "Concat" => return concat(self, model, node, x),
            "MatMul" => return matmul(x, shape_of(1), self.unknown().as_ref()),
            "Gemm" => {
                let Some(b) = shape_of(1) else { return Ok(None) };
                if rank != 2 || b.len() != 2 {
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
                vec![m.clone(), n.clone()]
            }
            "Reshape" => return reshape(self.ints(model, node, 1), node, Some(x), self.unknown()),
            "Expand" => {
                let target: Vec<Dim> = match input(node, 1).and_then(|v| self.syms(v)) {
                    Some(s) if !s.scalar => s.items.clone(),
                    _ => return Ok(None),
                };
                return broadcast_checked(x, &target, self.unknown().as_ref());
            }
            "Flatten" => {
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
                match (one(a), one(b)) {
                    (Some(p), Some(q)) => vec![p, q],
                    _ => return Ok(None),
                }
            }
            "Slice" => return slice(model, node, x, self.unknown()),
            "Split" => return split(model, node, x, i),
            "Tile" => {
                let Some(reps) = self.ints(model, node, 1) else { return Ok(None) };
                if reps.len() != rank {
                    return Err(format!("{} repeats for rank {rank}", reps.len()));
                }
                let mut out = Vec::with_capacity(rank);
                for (d, &r) in x.iter().zip(&reps) {
                    out.push(match (d, r) {
                        (_, 1) => d.clone(),
                        (Dim::Fixed(n), r) if r >= 0 => Dim::Fixed(n.checked_mul(r).ok_or("overflow")?),
                        _ => match self.unknown() {
                            Some(u) => u,
                            None => return Ok(None),
                        },
                    });
                }
                out
            }
            "Pad" => {
                let Some(pads) = const_ints(model, node, 1) else { return Ok(None) };
                let axes: Vec<usize> = match input(node, 3) {
                    None => (0..rank).collect(),
                    Some(_) => match const_ints(model, node, 3) {
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
                        Dim::Param(_) => match self.unknown() {
                            Some(u) => u,
                            None => return Ok(None),
                        },
                    };
                }
                out
            }
            "ArgMax" | "ArgMin" => {
                let axis = attr_int(node, "axis", 0);
                let Some(axis) = norm_axis(axis, rank) else {
                    return Err(format!("axis {axis} is out of range for rank {rank}"));
                };
                let mut out = x.to_vec();
                if attr_int(node, "keepdims", 1) != 0 {
                    out[axis] = Dim::Fixed(1);
                } else {
                    out.remove(axis);
                }
                out
            }
            "TopK" => {
                let Some(k) = const_ints(model, node, 1) else { return Ok(None) };
                let axis = attr_int(node, "axis", -1);
                let (Some(axis), [k]) = (norm_axis(axis, rank), k.as_slice()) else {
                    return Err(format!("axis {axis} of rank {rank}, k {k:?}"));
                };
                let mut out = x.to_vec();
                out[axis] = Dim::Fixed(*k);
                out
            }
            "GlobalAveragePool" | "GlobalMaxPool" | "GlobalLpPool" => {
                if rank < 2 {
                    return Err(format!("pooling a rank-{rank} input"));
                }
                let mut out = x[..2].to_vec();
                out.resize(rank, Dim::Fixed(1));
                out
            }
            "Conv" | "MaxPool" | "AveragePool" | "LpPool" => return window(node, x, shape_of(1), self.unknown()),
            "DepthToSpace" | "SpaceToDepth" => {
                let b = attr_int(node, "blocksize", 0);
                let [n, c, h, w] = x else { return Err(format!("{op} of a rank-{rank} input")) };
                let (Some(c), Some(h), Some(w)) = (fixed(c), fixed(h), fixed(w)) else { return Ok(None) };
                if b <= 0 {
                    return Ok(None);
                }
                if op == "DepthToSpace" {
                    if c % (b * b) != 0 {
                        return Err(format!("{c} channels do not divide into blocks of {b}×{b}"));
                    }
                    vec![n.clone(), Dim::Fixed(c / (b * b)), Dim::Fixed(h * b), Dim::Fixed(w * b)]
                } else {
                    if h % b != 0 || w % b != 0 {
                        return Err(format!("{h}×{w} does not divide into blocks of {b}"));
                    }
                    vec![n.clone(), Dim::Fixed(c * b * b), Dim::Fixed(h / b), Dim::Fixed(w / b)]
                }
            }
            "Col2Im" => {
                // [N, C·∏block, L] with image_shape [H, W, ...] → [N, C, H, W, ...].
                let (Some(image), Some(block)) = (self.ints(model, node, 1), self.ints(model, node, 2)) else {
                    return Ok(None);
                };
                if rank != 3 || image.len() != block.len() {
                    return Err(format!("Col2Im of {} with image {image:?} and block {block:?}", shape_text(x)));
                }
                let cells = block.iter().try_fold(1i64, |n, &b| n.checked_mul(b)).filter(|&n| n > 0);
                let channels = match (&x[1], cells) {
                    (Dim::Fixed(c), Some(k)) if c % k == 0 => Dim::Fixed(c / k),
                    (Dim::Fixed(c), Some(k)) => return Err(format!("{c} columns do not hold blocks of {k}")),
                    _ => match self.unknown() {
                        Some(u) => u,
                        None => return Ok(None),
                    },
                };
                let mut out = vec![x[0].clone(), channels];
                out.extend(image.iter().map(|&d| Dim::Fixed(d)));
                out
            }
            "GatherND" => {
                let Some(idx) = shape_of(1) else { return Ok(None) };
                let b = usize::try_from(attr_int(node, "batch_dims", 0)).map_err(|_| "negative batch_dims")?;
                let Some(Dim::Fixed(k)) = idx.last() else { return Ok(None) };
                let k = usize::try_from(*k).map_err(|_| "negative index depth")?;
                if b + k > rank || idx.len() <= b {
                    return Err(format!("GatherND of {} with indices {}", shape_text(x), shape_text(idx)));
                }
                let mut out = idx[..idx.len() - 1].to_vec();
                out.extend_from_slice(&x[b + k..]);
                out
            }
            "Range" => return Ok(self.range(model, node)),
            "Resize" => return resize(model, node, x, self.ints(model, node, 3), self.unknown()),
            _ => return Ok(None),
        }))
    }
}

fn concat(table: &ShapeTable, model: &Model, node: &Node, first: &[Dim]) -> Inferred {
    let rank = first.len();
    let axis = attr_int(node, "axis", 0);
    let Some(axis) = norm_axis(axis, rank) else {
        return Err(format!("axis {axis} is out of range for rank {rank}"));
    };
    let mut total = Some(0i64);
    let mut out = first.to_vec();
    for v in &node.inputs {
        let Some(s) = v.and_then(|v| table.shape(model, v)) else { return Ok(None) };
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
                    match table.unknown() {
                        Some(u) => out[i] = u,
                        None => return Ok(None),
                    }
                }
            }
        }
    }
    match total.map(Dim::Fixed).or_else(|| table.unknown()) {
        Some(d) => {
            out[axis] = d;
            Ok(Some(out))
        }
        None => Ok(None),
    }
}

fn matmul(a: &[Dim], b: Option<&[Dim]>, unknown: Option<&Dim>) -> Inferred {
    let Some(b) = b else { return Ok(None) };
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
    let Some(mut out) = broadcast_checked(&a2[..a2.len() - 2], &b2[..b2.len() - 2], unknown)? else { return Ok(None) };
    if a.len() > 1 {
        out.push(a2[a2.len() - 2].clone());
    }
    if b.len() > 1 {
        out.push(b2[b2.len() - 1].clone());
    }
    Ok(Some(out))
}

/// Reshape to `target`, from an input of shape `x` (unknown: only the target's own numbers).
fn reshape(target: Option<Vec<i64>>, node: &Node, x: Option<&[Dim]>, unknown: Option<Dim>) -> Inferred {
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

/// Reduce* with axes as input 1 (every reduction at opset 18 and above, ReduceSum from 13), or
/// as the `axes` attribute (the others below 18).
fn reduce(model: &Model, node: &Node, x: &[Dim]) -> Option<Vec<Dim>> {
    let rank = x.len();
    let axes: Vec<usize> = match (input(node, 1), attr_ints(node, "axes")) {
        (None, None) => vec![],
        (None, Some(axes)) => axes.iter().map(|&a| norm_axis(a, rank)).collect::<Option<_>>()?,
        (Some(_), _) => const_ints(model, node, 1)?.iter().map(|&a| norm_axis(a, rank)).collect::<Option<_>>()?,
    };
    if axes.is_empty() && attr_int(node, "noop_with_empty_axes", 0) != 0 {
        return Some(x.to_vec());
    }
    let keep = attr_int(node, "keepdims", 1) != 0;
    let all = axes.is_empty();
    Some(
        x.iter()
            .enumerate()
            .filter_map(|(i, d)| match (all || axes.contains(&i), keep) {
                (false, _) => Some(d.clone()),
                (true, true) => Some(Dim::Fixed(1)),
                (true, false) => None,
            })
            .collect(),
    )
}

fn slice(model: &Model, node: &Node, x: &[Dim], unknown: Option<Dim>) -> Inferred {
    let rank = x.len();
    let (Some(starts), Some(ends)) = (const_ints(model, node, 1), const_ints(model, node, 2)) else {
        // Computed bounds: the sliced axes (when constant) are unknown, the others stay.
        let Some(u) = unknown else { return Ok(None) };
        let axes = match input(node, 3) {
            Some(_) => const_ints(model, node, 3),
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
        Some(_) => match const_ints(model, node, 3) {
            Some(a) => a,
            None => return Ok(None),
        },
        None => (0..starts.len() as i64).collect(),
    };
    let steps = match input(node, 4) {
        Some(_) => match const_ints(model, node, 4) {
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

fn split(model: &Model, node: &Node, x: &[Dim], i: usize) -> Inferred {
    let rank = x.len();
    let axis = attr_int(node, "axis", 0);
    let Some(axis) = norm_axis(axis, rank) else {
        return Err(format!("axis {axis} is out of range for rank {rank}"));
    };
    let n = node.outputs.len() as i64;
    let sizes: Vec<i64> = match input(node, 1) {
        Some(_) => match const_ints(model, node, 1) {
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

/// Conv and pooling with explicit pads (`auto_pad` NOTSET), floor rounding.
fn window(node: &Node, x: &[Dim], w: Option<&[Dim]>, unknown: Option<Dim>) -> Inferred {
    let rank = x.len();
    if rank < 3 {
        return Err(format!("{} of a rank-{rank} input", node.op_type));
    }
    let k = rank - 2;
    if !matches!(node.attr("auto_pad"), None | Some(AttrValue::String(_))) {
        return Ok(None);
    }
    if let Some(AttrValue::String(p)) = node.attr("auto_pad") {
        if p != "NOTSET" {
            return Ok(None);
        }
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

/// Resize to constant `sizes`, or by constant `scales` where float32 and float64 rounding agree
/// (torch computes the size in float64, ONNX in float32).
fn resize(model: &Model, node: &Node, x: &[Dim], sizes: Option<Vec<i64>>, unknown: Option<Dim>) -> Inferred {
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
    let Some(scales) = const_floats(model, node, 2) else { return Ok(None) };
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
