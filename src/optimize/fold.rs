//! Constant folding: a node whose inputs are all constants is evaluated here and its outputs become
//! constants (initializers keeping the outputs' names).
//!
//! The evaluator covers what translations emit on constants and shapes: data movement for any
//! element type (`Identity`, `Reshape`, `Unsqueeze`, `Squeeze`, `Transpose`, `Gather`, `Slice`,
//! `Concat`, `Expand`, `Where`, `ConstantOfShape`), integer arithmetic, comparisons and logic,
//! integer `Range`, float32/float64 `Add`/`Sub`/`Mul`/`Div`/`Neg`/`Sqrt` (one IEEE operation each,
//! so the result is bit-exact with any runtime), `Floor`/`Ceil`/`Round`/`Sign`/`Abs`/`Clip`
//! (exact), float32 `Log`/`Exp` (correctly rounded through float64), and `Cast` between integer,
//! bool, float32 and float64 where the conversion is exact, correctly rounded or the same on every
//! machine. Anything else, or any doubt, is left alone.
//!
//! Sizes are bounded like onnxscript's folder: inputs of at most [`INPUT_LIMIT`] elements, outputs of
//! at most [`OUTPUT_LIMIT`]. Larger results fold only as [`Derived`] tensors, recorded here and
//! computed in chunks when the model is written (weights stay in the archive's map, no anonymous
//! copy): a `Transpose` of a constant, and float32/float64 `Add`/`Sub`/`Mul`/`Div` of a constant
//! with a small one that does not widen it, in both cases when the large constant is read by
//! nothing else (so the original weight dies and the file does not grow).

use super::edit::{self, attr_int, attr_ints, input, norm_axis, Action};
use super::Fire;
use crate::onnx::ir::{AttrValue, BinOp, DType, Derived, Model, Node, TensorData};

pub const INPUT_LIMIT: i64 = 8192;
pub const OUTPUT_LIMIT: i64 = 262_144;

pub(crate) fn run(model: &mut Model, rules: &mut super::Rules) -> usize {
    edit::sweep(model, |model, facts, node| {
        if !node.domain.is_empty() || node.outputs.is_empty() || node.outputs.iter().any(|&o| facts.is_output(o)) {
            return Action::Keep(node);
        }
        let mut consts = Vec::with_capacity(node.inputs.len());
        for v in &node.inputs {
            match v {
                Some(v) => match edit::constant(model, *v) {
                    Some(c) => consts.push(Some(c)),
                    None => return Action::Keep(node),
                },
                None => consts.push(None),
            }
        }
        // A large constant read only here: the result may be recorded as a derived tensor.
        let big = |i: usize| {
            consts.get(i).copied().flatten().is_some_and(|c| c.numel() > INPUT_LIMIT)
                && input(&node, i).is_some_and(|x| facts.uses(x) == 1)
        };
        let out = if consts.iter().flatten().all(|c| c.numel() <= INPUT_LIMIT) {
            match eval(&node, &consts) {
                // A new constant counts toward the export's memory bound, which many folds of
                // small inputs could otherwise pass: past it the node stays and computes at run time.
                Some(out) if out.numel() <= OUTPUT_LIMIT && model.bound.charge(out.raw.len() as u64) => out,
                _ => return Action::Keep(node),
            }
        } else if big(0) || big(1) {
            match derive(&node, &consts, big(1) && !big(0)) {
                Some(out) => out,
                None => return Action::Keep(node),
            }
        } else {
            return Action::Keep(node);
        };
        // The folded value must have the type the graph says it has.
        let o = node.outputs[0];
        if model.value(o).dtype.is_some_and(|t| t != out.dtype) || node.outputs.len() != 1 {
            return Action::Keep(node);
        }
        rules.fire(&format!("fold: {}", node.op_type));
        edit::make_constant(model, o, out);
        Action::Replace { node, with: vec![] }
    })
}

/// `node` on a large constant (input 1 when `second`, else input 0) recorded as a derived tensor:
/// a transpose, or a float op with a small constant that broadcasts to the large one's shape.
fn derive(node: &Node, inputs: &[Option<&TensorData>], second: bool) -> Option<TensorData> {
    let arg = |i: usize| inputs.get(i).copied().flatten();
    match node.op_type.as_str() {
        "Transpose" if !second => {
            let x = arg(0)?;
            let r = x.dims.len();
            let perm: Vec<usize> = match attr_ints(node, "perm") {
                Some(p) => p.iter().map(|&a| usize::try_from(a).ok()).collect::<Option<_>>()?,
                None => (0..r).rev().collect(),
            };
            Derived::transpose(x, &perm)
        }
        op @ ("Add" | "Sub" | "Mul" | "Div") if inputs.len() == 2 => {
            let (x, k) = if second { (arg(1)?, arg(0)?) } else { (arg(0)?, arg(1)?) };
            if k.numel() > INPUT_LIMIT || broadcast_dims(&x.dims, &k.dims)? != x.dims {
                return None;
            }
            Derived::binary(x, BinOp::from_onnx(op)?, k, second)
        }
        _ => None,
    }
}

// ------------------------------------------------------------------------------------------ numbers

/// Decoded elements: integers and bools as i64, float32 and float64 as themselves.
#[derive(Clone, Debug)]
enum Num {
    I(Vec<i64>),
    F(Vec<f32>),
    D(Vec<f64>),
}

fn decode(t: &TensorData) -> Option<Num> {
    let b = &t.raw[..];
    let n = usize::try_from(t.numel()).ok()?;
    if b.len() < n * t.dtype.size()? {
        return None;
    }
    let chunk = |i: usize, w: usize| &b[i * w..i * w + w];
    Some(match t.dtype {
        DType::Float => Num::F((0..n).map(|i| f32::from_le_bytes(chunk(i, 4).try_into().unwrap_or([0; 4]))).collect()),
        DType::Double => Num::D((0..n).map(|i| f64::from_le_bytes(chunk(i, 8).try_into().unwrap_or([0; 8]))).collect()),
        DType::Int64 | DType::Int32 | DType::Bool | DType::Uint8 | DType::Int8 => Num::I(t.to_i64s()?),
        DType::Int16 => Num::I((0..n).map(|i| i16::from_le_bytes([b[2 * i], b[2 * i + 1]]) as i64).collect()),
        DType::Uint16 => Num::I((0..n).map(|i| u16::from_le_bytes([b[2 * i], b[2 * i + 1]]) as i64).collect()),
        DType::Uint32 => {
            Num::I((0..n).map(|i| u32::from_le_bytes(chunk(i, 4).try_into().unwrap_or([0; 4])) as i64).collect())
        }
        _ => return None,
    })
}

/// Encode as `dtype` (integers wrap to the type's width, as C++ casts do).
fn encode(num: &Num, dtype: DType, dims: Vec<i64>) -> Option<TensorData> {
    let mut raw = Vec::new();
    match (num, dtype) {
        (Num::F(v), DType::Float) => v.iter().for_each(|x| raw.extend_from_slice(&x.to_le_bytes())),
        (Num::D(v), DType::Double) => v.iter().for_each(|x| raw.extend_from_slice(&x.to_le_bytes())),
        (Num::I(v), _) => {
            for &x in v {
                match dtype {
                    DType::Int64 => raw.extend_from_slice(&x.to_le_bytes()),
                    DType::Int32 => raw.extend_from_slice(&(x as i32).to_le_bytes()),
                    DType::Int16 => raw.extend_from_slice(&(x as i16).to_le_bytes()),
                    DType::Uint16 => raw.extend_from_slice(&(x as u16).to_le_bytes()),
                    DType::Uint32 => raw.extend_from_slice(&(x as u32).to_le_bytes()),
                    DType::Int8 | DType::Uint8 => raw.push(x as u8),
                    DType::Bool => raw.push((x != 0) as u8),
                    _ => return None,
                }
            }
        }
        _ => return None,
    }
    Some(TensorData { dtype, dims, raw: raw.into() })
}

fn numel(dims: &[i64]) -> Option<usize> {
    dims.iter().try_fold(1usize, |acc, &d| acc.checked_mul(usize::try_from(d).ok()?))
}

/// Numpy broadcasting of static shapes.
fn broadcast_dims(a: &[i64], b: &[i64]) -> Option<Vec<i64>> {
    let r = a.len().max(b.len());
    (0..r)
        .map(|i| {
            let x = (i + a.len()).checked_sub(r).map_or(1, |j| a[j]);
            let y = (i + b.len()).checked_sub(r).map_or(1, |j| b[j]);
            match (x, y) {
                _ if x == y => Some(x),
                (1, _) => Some(y),
                (_, 1) => Some(x),
                _ => None,
            }
        })
        .collect()
}

/// For each element of `out` (row-major), the index of the element of an input of shape `dims`
/// broadcast to it.
fn broadcast_index(dims: &[i64], out: &[i64]) -> Option<Vec<usize>> {
    let n = numel(out)?;
    let r = out.len();
    if dims.len() > r {
        return None;
    }
    // Strides of the input, 0 along broadcast axes.
    let mut strides = vec![0usize; r];
    let mut s = 1usize;
    for i in (0..dims.len()).rev() {
        let o = r - dims.len() + i;
        if dims[i] != 1 {
            if dims[i] != out[o] {
                return None;
            }
            strides[o] = s;
        }
        s *= dims[i] as usize;
    }
    let mut idx = Vec::with_capacity(n);
    let mut counter = vec![0i64; r];
    let mut at = 0usize;
    for _ in 0..n {
        idx.push(at);
        for ax in (0..r).rev() {
            counter[ax] += 1;
            at += strides[ax];
            if counter[ax] < out[ax] {
                break;
            }
            at -= strides[ax] * counter[ax] as usize;
            counter[ax] = 0;
        }
    }
    Some(idx)
}

fn gather_bytes(t: &TensorData, idx: &[usize], dims: Vec<i64>) -> Option<TensorData> {
    let es = t.dtype.size()?;
    let mut raw = Vec::with_capacity(idx.len() * es);
    for &i in idx {
        raw.extend_from_slice(t.raw.get(i * es..i * es + es)?);
    }
    Some(TensorData { dtype: t.dtype, dims, raw: raw.into() })
}

/// `ScatterElements(data, indices, updates)`: `data` with each element of `updates` written at its own
/// position, the coordinate along `axis` replaced by the matching index.
fn scatter_elements(node: &Node, data: &TensorData, indices: &TensorData, updates: &TensorData) -> Option<TensorData> {
    let idx = ints(Some(indices))?;
    let rank = data.dims.len();
    if updates.dtype != data.dtype || updates.dims != indices.dims || indices.dims.len() != rank {
        return None;
    }
    let axis = norm_axis(attr_int(node, "axis", 0), rank)?;
    let es = data.dtype.size()?;
    let mut raw = data.raw.get(0..numel(&data.dims)? * es)?.to_vec();
    let mut written = vec![false; numel(&data.dims)?];
    let mut coord = vec![0i64; rank];
    for (j, &i) in idx.iter().enumerate() {
        // The coordinates of update `j` (row-major), with the index along `axis`.
        let mut rest = j as i64;
        for d in (0..rank).rev() {
            coord[d] = rest % updates.dims[d];
            rest /= updates.dims[d];
        }
        let n = data.dims[axis];
        coord[axis] = if i < 0 { i + n } else { i };
        let mut at = 0i64;
        for (&c, &n) in coord.iter().zip(&data.dims) {
            if !(0..n).contains(&c) {
                return None;
            }
            at = at * n + c;
        }
        let at = at as usize;
        if std::mem::replace(written.get_mut(at)?, true) {
            return None;
        }
        raw.get_mut(at * es..at * es + es)?.copy_from_slice(updates.raw.get(j * es..j * es + es)?);
    }
    Some(TensorData { dtype: data.dtype, dims: data.dims.clone(), raw: raw.into() })
}

fn ints(t: Option<&TensorData>) -> Option<Vec<i64>> {
    let t = t?;
    matches!(t.dtype, DType::Int64 | DType::Int32).then(|| t.to_i64s())?
}

// ------------------------------------------------------------------------------------------ the evaluator

/// Evaluate `node` on constant inputs (`None`: an omitted optional input).
pub(crate) fn eval(node: &Node, inputs: &[Option<&TensorData>]) -> Option<TensorData> {
    let arg = |i: usize| inputs.get(i).copied().flatten();
    let x = arg(0);
    match node.op_type.as_str() {
        "Identity" => x.cloned(),
        "Reshape" => {
            let x = x?;
            let shape = ints(arg(1))?;
            let allowzero = attr_int(node, "allowzero", 0) != 0;
            let mut dims = Vec::with_capacity(shape.len());
            let mut infer = None;
            for (i, &d) in shape.iter().enumerate() {
                dims.push(match d {
                    0 if !allowzero => *x.dims.get(i)?,
                    -1 if infer.is_none() => {
                        infer = Some(i);
                        1
                    }
                    d if d >= 0 => d,
                    _ => return None,
                });
            }
            if let Some(i) = infer {
                let rest: i64 = dims.iter().product();
                if rest == 0 || x.numel() % rest != 0 {
                    return None;
                }
                dims[i] = x.numel() / rest;
            }
            (numel(&dims)? as i64 == x.numel()).then(|| TensorData { dims, ..x.clone() })
        }
        "Unsqueeze" => {
            let x = x?;
            let axes = ints(arg(1))?;
            let r = x.dims.len() + axes.len();
            let mut axes: Vec<usize> = axes.iter().map(|&a| norm_axis(a, r)).collect::<Option<_>>()?;
            axes.sort_unstable();
            axes.dedup();
            if axes.len() + x.dims.len() != r {
                return None;
            }
            let mut it = x.dims.iter();
            let dims =
                (0..r).map(|i| if axes.contains(&i) { Some(1) } else { it.next().copied() }).collect::<Option<_>>()?;
            Some(TensorData { dims, ..x.clone() })
        }
        "Squeeze" => {
            let x = x?;
            let axes: Vec<usize> = match arg(1) {
                Some(a) => ints(Some(a))?.iter().map(|&a| norm_axis(a, x.dims.len())).collect::<Option<_>>()?,
                None if node.inputs.len() > 1 => return None,
                None => (0..x.dims.len()).filter(|&i| x.dims[i] == 1).collect(),
            };
            if axes.iter().any(|&a| x.dims[a] != 1) {
                return None;
            }
            let dims = x.dims.iter().enumerate().filter(|(i, _)| !axes.contains(i)).map(|(_, &d)| d).collect();
            Some(TensorData { dims, ..x.clone() })
        }
        "Transpose" => transpose(x?, attr_ints(node, "perm")),
        "Gather" => {
            let x = x?;
            let idx = ints(arg(1))?;
            let idx_dims = arg(1)?.dims.clone();
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
        "Slice" => slice(x?, arg(1), arg(2), arg(3), arg(4)),
        // A constant repeated: exact data movement, as Expand.
        "Tile" => {
            let x = x?;
            let reps = ints(arg(1))?;
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
        // Indexing a constant with constant indices (a relative-position bias table).
        "GatherND" if attr_int(node, "batch_dims", 0) == 0 => {
            let (x, idx) = (x?, arg(1)?);
            let k = *idx.dims.last()? as usize;
            if k == 0 || k > x.dims.len() {
                return None;
            }
            let inner = numel(&x.dims[k..])?;
            let ids = ints(Some(idx))?;
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
        // Without a reduction only: every position written once (repeated indices are undefined in
        // ONNX, so they are left to the runtime).
        "ScatterElements" if node.attr("reduction").is_none() => scatter_elements(node, x?, arg(1)?, arg(2)?),
        "Concat" => {
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
        "Expand" => {
            let x = x?;
            let dims = broadcast_dims(&x.dims, &ints(arg(1))?)?;
            if numel(&dims)? as i64 > OUTPUT_LIMIT {
                return None;
            }
            gather_bytes(x, &broadcast_index(&x.dims, &dims)?, dims)
        }
        "ConstantOfShape" => {
            let dims = ints(x)?;
            let n = numel(&dims)?;
            if n as i64 > OUTPUT_LIMIT {
                return None;
            }
            let value = match node.attr("value") {
                Some(AttrValue::Tensor(t)) if t.numel() == 1 => (**t).clone(),
                Some(_) => return None,
                None => TensorData { dtype: DType::Float, dims: vec![1], raw: vec![0u8; 4].into() },
            };
            let es = value.dtype.size()?;
            let raw: Vec<u8> = value.raw.get(..es)?.repeat(n);
            Some(TensorData { dtype: value.dtype, dims, raw: raw.into() })
        }
        "Where" => {
            let (c, a, b) = (x?, arg(1)?, arg(2)?);
            if c.dtype != DType::Bool || a.dtype != b.dtype {
                return None;
            }
            let dims = broadcast_dims(&broadcast_dims(&c.dims, &a.dims)?, &b.dims)?;
            let (ci, ai, bi) =
                (broadcast_index(&c.dims, &dims)?, broadcast_index(&a.dims, &dims)?, broadcast_index(&b.dims, &dims)?);
            let es = a.dtype.size()?;
            let mut raw = Vec::with_capacity(ci.len() * es);
            for k in 0..ci.len() {
                let (src, i) = if *c.raw.get(ci[k])? != 0 { (a, ai[k]) } else { (b, bi[k]) };
                raw.extend_from_slice(src.raw.get(i * es..i * es + es)?);
            }
            Some(TensorData { dtype: a.dtype, dims, raw: raw.into() })
        }
        // min(max(x, lo), hi) with scalar bounds (absent ones open): exact, NaN left to the runtime.
        "Clip" if x.is_some_and(|x| x.dtype != DType::Uint64) => {
            let x = x?;
            // Some(None): no bound; None: a bound that cannot be folded.
            let bound = |i: usize| match arg(i) {
                None => Some(None),
                Some(b) if b.dtype == x.dtype && b.numel() == 1 => decode(b).map(Some),
                Some(_) => None,
            };
            let (lo, hi) = (bound(1)?, bound(2)?);
            let out = match decode(x)? {
                Num::F(v) if !v.iter().any(|a| a.is_nan()) => {
                    let end = |b: Option<Num>, open: f32| match b {
                        None => Some(open),
                        Some(Num::F(b)) if !b[0].is_nan() => Some(b[0]),
                        Some(_) => None,
                    };
                    let (lo, hi) = (end(lo, f32::NEG_INFINITY)?, end(hi, f32::INFINITY)?);
                    Num::F(v.iter().map(|&a| a.max(lo).min(hi)).collect())
                }
                Num::I(v) => {
                    let end = |b: Option<Num>, open: i64| match b {
                        None => Some(open),
                        Some(Num::I(b)) => Some(b[0]),
                        Some(_) => None,
                    };
                    let (lo, hi) = (end(lo, i64::MIN)?, end(hi, i64::MAX)?);
                    Num::I(v.iter().map(|&a| a.max(lo).min(hi)).collect())
                }
                _ => return None,
            };
            encode(&out, x.dtype, x.dims.clone())
        }
        // The element count of a reduction over static dims: the product of sizes (integers, exact).
        // Over every axis only: no axes input, and no `axes` attribute (ReduceProd below opset 18).
        "ReduceProd" | "ReduceSum"
            if x.is_some_and(|x| x.dtype == DType::Int64) && arg(1).is_none() && node.attr("axes").is_none() =>
        {
            let x = x?;
            let vals = x.to_i64s()?;
            let v = if node.op_type == "ReduceProd" {
                vals.iter().try_fold(1i64, |a, &b| a.checked_mul(b))?
            } else {
                vals.iter().try_fold(0i64, |a, &b| a.checked_add(b))?
            };
            let dims = if attr_int(node, "keepdims", 1) == 1 { vec![1; x.dims.len()] } else { vec![] };
            Some(TensorData::from_i64s(dims, &[v]))
        }
        "Cast" => cast(x?, crate::onnx::infer::dtype_from_onnx(attr_int(node, "to", 0) as i32)?),
        "CastLike" => cast(x?, arg(1)?.dtype),
        "Range" => {
            let (s, l, d) = (x?, arg(1)?, arg(2)?);
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
            encode(&Num::I(vals), arg(0)?.dtype, vec![n])
        }
        "Neg" | "Abs" | "Not" | "Sign" => {
            let x = x?;
            let out = match (node.op_type.as_str(), decode(x)?) {
                ("Neg", Num::I(v)) if x.dtype != DType::Bool && !is_unsigned(x.dtype) => {
                    Num::I(v.iter().map(|a| a.wrapping_neg()).collect())
                }
                ("Neg", Num::F(v)) => Num::F(v.iter().map(|a| -a).collect()),
                ("Neg", Num::D(v)) => Num::D(v.iter().map(|a| -a).collect()),
                ("Abs", Num::I(v)) if x.dtype != DType::Bool => Num::I(v.iter().map(|a| a.wrapping_abs()).collect()),
                ("Sign", Num::I(v)) if x.dtype != DType::Bool => Num::I(v.iter().map(|a| a.signum()).collect()),
                // 0 and NaN are their own sign.
                ("Sign", Num::F(v)) => {
                    Num::F(v.iter().map(|&a| if a == 0.0 || a.is_nan() { a } else { a.signum() }).collect())
                }
                ("Sign", Num::D(v)) => {
                    Num::D(v.iter().map(|&a| if a == 0.0 || a.is_nan() { a } else { a.signum() }).collect())
                }
                ("Abs", Num::F(v)) => Num::F(v.iter().map(|a| a.abs()).collect()),
                ("Abs", Num::D(v)) => Num::D(v.iter().map(|a| a.abs()).collect()),
                ("Not", Num::I(v)) if x.dtype == DType::Bool => Num::I(v.iter().map(|&a| (a == 0) as i64).collect()),
                _ => return None,
            };
            encode(&out, x.dtype, x.dims.clone())
        }
        op @ ("Sqrt" | "Log" | "Exp" | "Floor" | "Ceil" | "Round") => {
            let x = x?;
            // Exact everywhere: rounding to an integer and the square root (one IEEE
            // operation). libm's log and exp are not correctly rounded, so a float64 result could
            // differ by machine; in float32 they are evaluated in float64 and rounded once, which
            // gives the correctly rounded result (a runtime's own routine is at most an ulp from it).
            let (f, exact): (fn(f64) -> f64, bool) = match op {
                "Sqrt" => (f64::sqrt, true),
                "Floor" => (f64::floor, true),
                "Ceil" => (f64::ceil, true),
                "Round" => (f64::round_ties_even, true),
                "Log" => (f64::ln, false),
                _ => (f64::exp, false),
            };
            let out = match decode(x)? {
                Num::F(v) => Num::F(v.iter().map(|&a| f(a as f64) as f32).collect()),
                Num::D(v) if exact => Num::D(v.iter().map(|&a| f(a)).collect()),
                _ => return None,
            };
            encode(&out, x.dtype, x.dims.clone())
        }
        op @ ("Add" | "Sub" | "Mul" | "Div" | "Equal" | "Less" | "Greater" | "LessOrEqual" | "GreaterOrEqual"
        | "And" | "Or" | "Max" | "Min" | "BitwiseAnd" | "BitwiseOr" | "BitwiseXor") => {
            let (a, b) = (x?, arg(1)?);
            if a.dtype != b.dtype || inputs.len() != 2 {
                return None;
            }
            let dims = broadcast_dims(&a.dims, &b.dims)?;
            let (ia, ib) = (broadcast_index(&a.dims, &dims)?, broadcast_index(&b.dims, &dims)?);
            binary(op, a.dtype, &decode(a)?, &decode(b)?, &ia, &ib, dims)
        }
        _ => None,
    }
}

fn is_unsigned(t: DType) -> bool {
    matches!(t, DType::Uint8 | DType::Uint16 | DType::Uint32 | DType::Uint64)
}

fn binary(op: &str, dtype: DType, a: &Num, b: &Num, ia: &[usize], ib: &[usize], dims: Vec<i64>) -> Option<TensorData> {
    let cmp = matches!(op, "Equal" | "Less" | "Greater" | "LessOrEqual" | "GreaterOrEqual");
    let logic = matches!(op, "And" | "Or");
    if logic != (dtype == DType::Bool) {
        return None;
    }
    let bools = |f: &dyn Fn(usize) -> bool| Num::I((0..ia.len()).map(|k| f(k) as i64).collect());
    macro_rules! compare {
        ($x:expr, $y:expr) => {{
            let (x, y) = ($x, $y);
            match op {
                "Equal" => bools(&|k| x[ia[k]] == y[ib[k]]),
                "Less" => bools(&|k| x[ia[k]] < y[ib[k]]),
                "Greater" => bools(&|k| x[ia[k]] > y[ib[k]]),
                "LessOrEqual" => bools(&|k| x[ia[k]] <= y[ib[k]]),
                _ => bools(&|k| x[ia[k]] >= y[ib[k]]),
            }
        }};
    }
    let out = match (a, b) {
        (Num::I(x), Num::I(y)) if cmp => compare!(x, y),
        (Num::F(x), Num::F(y)) if cmp => compare!(x, y),
        (Num::D(x), Num::D(y)) if cmp => compare!(x, y),
        (Num::I(x), Num::I(y)) if logic => {
            let and = op == "And";
            bools(&|k| if and { x[ia[k]] != 0 && y[ib[k]] != 0 } else { x[ia[k]] != 0 || y[ib[k]] != 0 })
        }
        (Num::I(x), Num::I(y)) => {
            let mut v = Vec::with_capacity(ia.len());
            for k in 0..ia.len() {
                let (p, q) = (x[ia[k]], y[ib[k]]);
                v.push(match op {
                    "Add" => p.wrapping_add(q),
                    "Sub" => p.wrapping_sub(q),
                    "Mul" => p.wrapping_mul(q),
                    // Division by zero traps and MIN / -1 overflows in C++: not folded.
                    "Div" if q == 0 || q == -1 => return None,
                    "Div" => p / q,
                    "Max" => p.max(q),
                    "Min" => p.min(q),
                    // Sign-extended (or zero-extended) values keep their extension.
                    "BitwiseAnd" => p & q,
                    "BitwiseOr" => p | q,
                    "BitwiseXor" => p ^ q,
                    _ => return None,
                });
            }
            Num::I(v)
        }
        (Num::F(x), Num::F(y)) => Num::F(float_op(op, x, y, ia, ib)?),
        (Num::D(x), Num::D(y)) => Num::D(float_op(op, x, y, ia, ib)?),
        _ => return None,
    };
    encode(&out, if cmp || logic { DType::Bool } else { dtype }, dims)
}

/// One IEEE operation per element (bit-exact everywhere). Max/Min are not folded: runtimes differ
/// on NaN.
fn float_op<T>(op: &str, x: &[T], y: &[T], ia: &[usize], ib: &[usize]) -> Option<Vec<T>>
where
    T: Copy
        + std::ops::Add<Output = T>
        + std::ops::Sub<Output = T>
        + std::ops::Mul<Output = T>
        + std::ops::Div<Output = T>,
{
    let f: fn(T, T) -> T = match op {
        "Add" => |p, q| p + q,
        "Sub" => |p, q| p - q,
        "Mul" => |p, q| p * q,
        "Div" => |p, q| p / q,
        _ => return None,
    };
    Some((0..ia.len()).map(|k| f(x[ia[k]], y[ib[k]])).collect())
}

fn cast(x: &TensorData, to: DType) -> Option<TensorData> {
    if x.dtype == to {
        return Some(x.clone());
    }
    let dims = x.dims.clone();
    let num = decode(x)?;
    let out = match (num, to) {
        (Num::I(v), DType::Float) => Num::F(v.iter().map(|&a| a as f32).collect()),
        (Num::I(v), DType::Double) => Num::D(v.iter().map(|&a| a as f64).collect()),
        (Num::I(v), _) if to.is_int() || to == DType::Bool => Num::I(v),
        (Num::F(v), DType::Double) => Num::D(v.iter().map(|&a| a as f64).collect()),
        (Num::D(v), DType::Float) => Num::F(v.iter().map(|&a| a as f32).collect()),
        (Num::F(v), _) => float_to_int(v.iter().map(|&a| a as f64), to)?,
        (Num::D(v), _) => float_to_int(v.into_iter(), to)?,
        _ => return None,
    };
    encode(&out, to, dims)
}

/// Float → integer truncates toward zero; NaN and values out of the target's range are
/// implementation-defined in C++, so they are not folded. Float → bool is `x != 0`.
fn float_to_int(v: impl Iterator<Item = f64>, to: DType) -> Option<Num> {
    // [lo, hi): every float in it truncates to a value of the target type.
    let (lo, hi) = match to {
        DType::Bool => return Some(Num::I(v.map(|a| (a != 0.0) as i64).collect())),
        DType::Int64 => (-9.223372036854776e18, 9.223372036854776e18),
        DType::Int32 => (i32::MIN as f64, i32::MAX as f64 + 1.0),
        DType::Int16 => (i16::MIN as f64, i16::MAX as f64 + 1.0),
        DType::Int8 => (i8::MIN as f64, i8::MAX as f64 + 1.0),
        DType::Uint8 => (0.0, u8::MAX as f64 + 1.0),
        DType::Uint16 => (0.0, u16::MAX as f64 + 1.0),
        DType::Uint32 => (0.0, u32::MAX as f64 + 1.0),
        _ => return None,
    };
    // Below the range of int32 and int64 (-inf included) every runtime gives the type's minimum:
    // x86's conversion answers "integer indefinite" (the minimum) for anything out of range,
    // ARM's saturates. Above the range they disagree, and NaN fails both comparisons.
    let floor = matches!(to, DType::Int32 | DType::Int64).then_some(lo as i64);
    v.map(|a| {
        let t = a.trunc();
        if t < lo {
            return floor;
        }
        (t >= lo && t < hi).then_some(t as i64)
    })
    .collect::<Option<Vec<_>>>()
    .map(Num::I)
}

/// `Transpose` of any element type; the 2-D case (weights) is a blocked copy.
pub(crate) fn transpose(x: &TensorData, perm: Option<&[i64]>) -> Option<TensorData> {
    let r = x.dims.len();
    let perm: Vec<usize> = match perm {
        Some(p) => p.iter().map(|&a| usize::try_from(a).ok().filter(|&a| a < r)).collect::<Option<_>>()?,
        None => (0..r).rev().collect(),
    };
    let mut seen = vec![false; r];
    for &p in &perm {
        if std::mem::replace(&mut seen[p], true) {
            return None;
        }
    }
    if perm.len() != r {
        return None;
    }
    let es = x.dtype.size()?;
    let n = numel(&x.dims)?;
    if x.raw.len() != n * es {
        return None;
    }
    let dims: Vec<i64> = perm.iter().map(|&p| x.dims[p]).collect();
    let mut in_strides = vec![0usize; r];
    let mut s = 1usize;
    for i in (0..r).rev() {
        in_strides[i] = s;
        s *= x.dims[i] as usize;
    }
    let src = &x.raw[..];
    let mut raw = vec![0u8; n * es];
    if r == 2 && perm == [1, 0] {
        let (rows, cols) = (x.dims[0] as usize, x.dims[1] as usize);
        match es {
            4 => transpose_2d::<4>(src, &mut raw, rows, cols),
            2 => transpose_2d::<2>(src, &mut raw, rows, cols),
            8 => transpose_2d::<8>(src, &mut raw, rows, cols),
            1 => transpose_2d::<1>(src, &mut raw, rows, cols),
            _ => return None,
        }
    } else {
        let strides: Vec<usize> = perm.iter().map(|&p| in_strides[p]).collect();
        let mut counter = vec![0i64; r];
        let mut at = 0usize;
        for k in 0..n {
            raw[k * es..k * es + es].copy_from_slice(&src[at * es..at * es + es]);
            for ax in (0..r).rev() {
                counter[ax] += 1;
                at += strides[ax];
                if counter[ax] < dims[ax] {
                    break;
                }
                at -= strides[ax] * counter[ax] as usize;
                counter[ax] = 0;
            }
        }
    }
    Some(TensorData { dtype: x.dtype, dims, raw: raw.into() })
}

/// Blocked 2-D transpose of `rows × cols` elements of `E` bytes each (weights are megabytes, so this
/// is memory-bound): each output row is written in runs of 8 elements gathered from 8 source rows.
/// Measured on a 3072 × 768 float32 weight: 0.75 ns per element, against 1.4 with 32-element runs
/// and 2–5 for tile-buffered or row-order variants.
fn transpose_2d<const E: usize>(src: &[u8], dst: &mut [u8], rows: usize, cols: usize) {
    const B: usize = 8;
    for i0 in (0..rows).step_by(B) {
        let i1 = (i0 + B).min(rows);
        for j0 in (0..cols).step_by(B) {
            let j1 = (j0 + B).min(cols);
            for j in j0..j1 {
                let out = &mut dst[(j * rows + i0) * E..(j * rows + i1) * E];
                for (k, o) in out.chunks_exact_mut(E).enumerate() {
                    let at = ((i0 + k) * cols + j) * E;
                    o.copy_from_slice(&src[at..at + E]);
                }
            }
        }
    }
}

/// ONNX `Slice` with constant parameters (clamping as the spec says, negative steps included).
fn slice(
    x: &TensorData,
    starts: Option<&TensorData>,
    ends: Option<&TensorData>,
    axes: Option<&TensorData>,
    steps: Option<&TensorData>,
) -> Option<TensorData> {
    let r = x.dims.len();
    let starts = ints(starts)?;
    let ends = ints(ends)?;
    let axes = match axes {
        Some(a) => ints(Some(a))?,
        None => (0..starts.len() as i64).collect(),
    };
    let steps = match steps {
        Some(s) => ints(Some(s))?,
        None => vec![1; starts.len()],
    };
    if ends.len() != starts.len() || axes.len() != starts.len() || steps.len() != starts.len() {
        return None;
    }
    // Per axis: first index, step, count.
    let mut ranges: Vec<(i64, i64, i64)> = x.dims.iter().map(|&d| (0, 1, d)).collect();
    let mut done = vec![false; r];
    for k in 0..starts.len() {
        let a = norm_axis(axes[k], r)?;
        if std::mem::replace(&mut done[a], true) || steps[k] == 0 {
            return None;
        }
        let (d, step) = (x.dims[a], steps[k]);
        let fix = |i: i64| if i < 0 { i.saturating_add(d) } else { i };
        let (start, end) = if step > 0 {
            (fix(starts[k]).clamp(0, d), fix(ends[k]).clamp(0, d))
        } else {
            (fix(starts[k]).clamp(-1, d - 1), fix(ends[k]).clamp(-1, d - 1))
        };
        let count = if step > 0 {
            ((end - start).max(0) + step - 1) / step
        } else {
            ((start - end).max(0) + (-step) - 1) / (-step)
        };
        ranges[a] = (start, step, count);
    }
    let dims: Vec<i64> = ranges.iter().map(|r| r.2).collect();
    let n = numel(&dims)?;
    let mut in_strides = vec![0i64; r];
    let mut s = 1i64;
    for i in (0..r).rev() {
        in_strides[i] = s;
        s *= x.dims[i];
    }
    let mut idx = Vec::with_capacity(n);
    let mut counter = vec![0i64; r];
    for _ in 0..n {
        let at: i64 = (0..r).map(|ax| (ranges[ax].0 + counter[ax] * ranges[ax].1) * in_strides[ax]).sum();
        idx.push(usize::try_from(at).ok()?);
        for ax in (0..r).rev() {
            counter[ax] += 1;
            if counter[ax] < dims[ax] {
                break;
            }
            counter[ax] = 0;
        }
    }
    gather_bytes(x, &idx, dims)
}
