//! Shapes as facts: what the IR knows about each value's shape (torch's TensorMeta on FX values,
//! propagated through the ops translations emit), and the symbolic contents of small int64 tensors
//! (`Shape(x)` of a `[s43, s53]` value is the vector `[s43, s53]`).
//!
//! The pass uses them to fold shape arithmetic: a shape computation whose contents are all known
//! numbers becomes a constant; two computations with equal symbolic contents become one; the shape
//! input of `Reshape` is rewritten to a constant (with `-1` for its one symbolic dim) and that of
//! `Expand` to a constant with `1` where the input already has the symbolic dim, so the chains of
//! `Shape`/`Gather`/`Unsqueeze`/`Concat` that computed them die.
//!
//! Symbolic dims are compared by their printed expression (sym.rs prints canonically): equal text
//! means equal dims; different text is treated as unknown, never as different.

use super::edit::{self, attr_int, attr_ints, const_ints, input, norm_axis, Action, Facts};
use super::Fire;
use crate::hash::FxHashMap;
use crate::onnx::ir::{DType, Dim, Model, Node, TensorData, Value};

/// Largest int64 tensor whose contents are tracked (shapes and indices are short).
const MAX_SYM_LEN: usize = 64;

/// The contents of a small int64 tensor of rank 0 or 1, element by element.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct SymInts {
    pub scalar: bool,
    pub items: Vec<Dim>,
}

/// Shapes and symbolic int contents per value, filled in as a sweep walks the graph.
///
/// Both are sparse: most values have their shape in the model and few are small int64 tensors,
/// and two dense tables per sweep (tens of MB on large graphs) cost more in page faults than the
/// lookups they saved.
pub(crate) struct ShapeTable {
    shapes: FxHashMap<Value, Vec<Dim>>,
    syms: FxHashMap<Value, SymInts>,
}

impl ShapeTable {
    pub fn new(model: &Model) -> Self {
        // Shapes the model already knows are read from it, not copied: copying every value's dims
        // (symbolic ones are strings) was most of the pass's time on large graphs.
        let mut t = ShapeTable { shapes: FxHashMap::default(), syms: FxHashMap::default() };
        // Every constant a main-graph node can read is a main-graph initializer (constants are
        // made with one, and passes that drop one redirect its readers).
        for &v in &model.graph.initializers {
            if let Some(s) = model.value(v).constant.as_deref().and_then(const_syms) {
                t.syms.insert(v, s);
            }
        }
        t
    }

    /// The shape of `v`: the model's, or else the one learned from its producer.
    pub fn shape<'a>(&'a self, model: &'a Model, v: Value) -> Option<&'a [Dim]> {
        model.value(v).shape.as_deref().or_else(|| self.shapes.get(&v).map(|s| s.as_slice()))
    }

    pub fn syms(&self, v: Value) -> Option<&SymInts> {
        self.syms.get(&v)
    }

    fn set_shape(&mut self, v: Value, s: Vec<Dim>) {
        self.shapes.entry(v).or_insert(s);
    }

    fn set_syms(&mut self, v: Value, s: SymInts) {
        self.syms.insert(v, s);
    }

    /// Record what `node` tells about its outputs (after the pass has decided to keep it).
    pub fn learn(&mut self, model: &Model, node: &Node) {
        if !node.domain.is_empty() || node.outputs.is_empty() {
            return;
        }
        let out = node.outputs[0];
        if model.value(out).shape.is_none() {
            if let Some(s) = self.infer_shape(model, node) {
                self.set_shape(out, s);
            }
        }
        if model.value(out).dtype == Some(DType::Int64) {
            if let Some(s) = self.infer_syms(model, node) {
                if s.items.len() <= MAX_SYM_LEN {
                    self.set_syms(out, s);
                }
            }
        }
    }

    /// The shape of output 0 of `node`, where it follows exactly from its inputs.
    fn infer_shape(&self, model: &Model, node: &Node) -> Option<Vec<Dim>> {
        let x = || input(node, 0).and_then(|v| self.shape(model, v));
        let op = node.op_type.as_str();
        Some(match op {
            "Identity" | "Cast" | "CastLike" | "Relu" | "Sigmoid" | "Tanh" | "Neg" | "Abs" | "Sqrt" | "Exp" | "Log"
            | "Erf" | "Reciprocal" | "Not" | "Softmax" | "LogSoftmax" | "Gelu" | "LayerNormalization" | "Dropout"
            | "Clip" | "Sin" | "Cos" | "Floor" | "Ceil" | "Round" | "Sign" | "HardSigmoid" | "HardSwish"
            | "LeakyRelu" | "Elu" | "Softplus" | "IsNaN" | "IsInf" | "BatchNormalization" | "RMSNormalization" => {
                x()?.to_vec()
            }
            "Add" | "Sub" | "Mul" | "Div" | "Pow" | "Mod" | "And" | "Or" | "Xor" | "Equal" | "Less" | "Greater"
            | "LessOrEqual" | "GreaterOrEqual" | "Where" | "Max" | "Min" | "BitwiseAnd" | "BitwiseOr" => {
                let mut acc: Vec<Dim> = Vec::new();
                for v in node.inputs.iter() {
                    acc = broadcast(&acc, self.shape(model, (*v)?)?)?;
                }
                acc
            }
            "Transpose" => {
                let s = x()?;
                match attr_ints(node, "perm") {
                    Some(p) => {
                        if p.len() != s.len() {
                            return None;
                        }
                        p.iter().map(|&i| s.get(usize::try_from(i).ok()?).cloned()).collect::<Option<_>>()?
                    }
                    None => s.iter().rev().cloned().collect(),
                }
            }
            "Unsqueeze" => {
                let s = x()?;
                let axes = const_ints(model, node, 1)?;
                let r = s.len() + axes.len();
                let mut axes: Vec<usize> = axes.iter().map(|&a| norm_axis(a, r)).collect::<Option<_>>()?;
                axes.sort_unstable();
                axes.dedup();
                if axes.len() + s.len() != r {
                    return None;
                }
                let mut it = s.iter();
                (0..r)
                    .map(|i| if axes.contains(&i) { Some(Dim::Fixed(1)) } else { it.next().cloned() })
                    .collect::<Option<_>>()?
            }
            "Squeeze" => {
                let s = x()?;
                match input(node, 1) {
                    Some(_) => {
                        let axes: Vec<usize> = const_ints(model, node, 1)?
                            .iter()
                            .map(|&a| norm_axis(a, s.len()))
                            .collect::<Option<_>>()?;
                        if axes.iter().any(|&a| s[a] != Dim::Fixed(1)) {
                            return None;
                        }
                        s.iter().enumerate().filter(|(i, _)| !axes.contains(i)).map(|(_, d)| d.clone()).collect()
                    }
                    // Without axes every 1 goes; a symbolic dim might be 1.
                    None if s.iter().all(|d| matches!(d, Dim::Fixed(_))) => {
                        s.iter().filter(|d| **d != Dim::Fixed(1)).cloned().collect()
                    }
                    None => return None,
                }
            }
            "Shape" => {
                let r = x()?.len() as i64;
                let (start, end) = shape_range(node, r);
                vec![Dim::Fixed((end - start).max(0))]
            }
            "Size" => vec![],
            "Gather" => {
                let s = x()?;
                let idx = self.shape(model, input(node, 1)?)?;
                let axis = norm_axis(attr_int(node, "axis", 0), s.len())?;
                let mut out = s[..axis].to_vec();
                out.extend_from_slice(idx);
                out.extend_from_slice(&s[axis + 1..]);
                out
            }
            "Concat" => {
                let first = x()?;
                let axis = norm_axis(attr_int(node, "axis", 0), first.len())?;
                let mut total = 0i64;
                for v in &node.inputs {
                    let s = self.shape(model, (*v)?)?;
                    if s.len() != first.len() {
                        return None;
                    }
                    match &s[axis] {
                        Dim::Fixed(n) => total += n,
                        Dim::Param(_) => return None,
                    }
                    for (i, (a, b)) in s.iter().zip(first).enumerate() {
                        if i != axis && a != b {
                            return None;
                        }
                    }
                }
                let mut out = first.to_vec();
                out[axis] = Dim::Fixed(total);
                out
            }
            "MatMul" => {
                let a = x()?;
                let b = self.shape(model, input(node, 1)?)?;
                if a.len() < 2 || b.len() < 2 {
                    return None;
                }
                let mut out = broadcast(&a[..a.len() - 2], &b[..b.len() - 2])?;
                out.push(a[a.len() - 2].clone());
                out.push(b[b.len() - 1].clone());
                out
            }
            "Reshape" => {
                let target = const_ints(model, node, 1)?;
                if target.iter().all(|&d| d > 0) {
                    target.iter().map(|&d| Dim::Fixed(d)).collect()
                } else {
                    return None;
                }
            }
            "ConstantOfShape" => const_ints(model, node, 0)?.iter().map(|&d| Dim::Fixed(d)).collect(),
            "Expand" => {
                let target: Vec<Dim> = match self.syms(input(node, 1)?) {
                    Some(s) if !s.scalar => s.items.clone(),
                    _ => return None,
                };
                broadcast(x()?, &target)?
            }
            _ => return None,
        })
    }

    /// The symbolic contents of output 0 of `node` (int64 outputs of rank ≤ 1).
    fn infer_syms(&self, model: &Model, node: &Node) -> Option<SymInts> {
        let x = || input(node, 0).and_then(|v| self.syms(v));
        match node.op_type.as_str() {
            "Shape" => {
                let s = self.shape(model, input(node, 0)?)?;
                let (start, end) = shape_range(node, s.len() as i64);
                Some(SymInts { scalar: false, items: s[start as usize..end.max(start) as usize].to_vec() })
            }
            "Size" => {
                let s = self.shape(model, input(node, 0)?)?;
                let mut n = 1i64;
                for d in s {
                    n = n.checked_mul(fixed(d)?)?;
                }
                Some(SymInts { scalar: true, items: vec![Dim::Fixed(n)] })
            }
            "Identity" => x().cloned(),
            "Cast" if attr_int(node, "to", 0) == DType::Int64 as i64 => {
                let v = input(node, 0)?;
                (model.value(v).dtype == Some(DType::Int64)).then(|| x().cloned())?
            }
            "Squeeze" => {
                let s = x()?;
                let ok_axes = match input(node, 1) {
                    None => true,
                    Some(_) => matches!(const_ints(model, node, 1)?.as_slice(), [0] | [-1]),
                };
                (!s.scalar && s.items.len() == 1 && ok_axes).then(|| SymInts { scalar: true, items: s.items.clone() })
            }
            "Unsqueeze" => {
                let s = x()?;
                let ok_axes = matches!(const_ints(model, node, 1)?.as_slice(), [0] | [-1]);
                (s.scalar && ok_axes).then(|| SymInts { scalar: false, items: s.items.clone() })
            }
            "Concat" => {
                let mut items = Vec::new();
                for v in &node.inputs {
                    let s = self.syms((*v)?)?;
                    if s.scalar {
                        return None;
                    }
                    items.extend_from_slice(&s.items);
                }
                Some(SymInts { scalar: false, items })
            }
            "Gather" => {
                let s = x()?;
                if s.scalar || norm_axis(attr_int(node, "axis", 0), 1) != Some(0) {
                    return None;
                }
                let idx = self.syms(input(node, 1)?)?;
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
            "Slice" => {
                let s = x()?;
                if s.scalar {
                    return None;
                }
                let n = s.items.len() as i64;
                let one = |i: usize| const_ints(model, node, i).and_then(|v| (v.len() == 1).then(|| v[0]));
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
            _ => None,
        }
    }
}

fn fixed(d: &Dim) -> Option<i64> {
    match d {
        Dim::Fixed(n) => Some(*n),
        Dim::Param(_) => None,
    }
}

fn const_syms(c: &TensorData) -> Option<SymInts> {
    if c.dtype != DType::Int64 || c.dims.len() > 1 || c.numel() as usize > MAX_SYM_LEN {
        return None;
    }
    let items = c.to_i64s()?.into_iter().map(Dim::Fixed).collect();
    Some(SymInts { scalar: c.dims.is_empty(), items })
}

/// `start`/`end` of a `Shape` node, clamped to `[0, rank]` as ONNX does.
fn shape_range(node: &Node, rank: i64) -> (i64, i64) {
    let clamp = |i: i64| if i < 0 { (i + rank).max(0) } else { i.min(rank) };
    (clamp(attr_int(node, "start", 0)), clamp(attr_int(node, "end", rank)))
}

/// Numpy broadcasting of two shapes, when the result is certain.
pub(crate) fn broadcast(a: &[Dim], b: &[Dim]) -> Option<Vec<Dim>> {
    let r = a.len().max(b.len());
    let mut out = Vec::with_capacity(r);
    for i in 0..r {
        let da = (i + a.len()).checked_sub(r).map(|j| &a[j]);
        let db = (i + b.len()).checked_sub(r).map(|j| &b[j]);
        out.push(match (da, db) {
            (Some(x), None) | (None, Some(x)) => x.clone(),
            (Some(x), Some(y)) if x == y => x.clone(),
            (Some(Dim::Fixed(1)), Some(y)) => y.clone(),
            (Some(x), Some(Dim::Fixed(1))) => x.clone(),
            _ => return None,
        });
    }
    Some(out)
}

/// The output shape of value `v`: the IR's (TensorMeta) or the table's.
fn known_shape<'a>(model: &'a Model, table: &'a ShapeTable, v: Value) -> Option<&'a [Dim]> {
    table.shape(model, v)
}

/// A constant `Reshape` target for output shape `out`, with every other dim positive so nothing
/// depends on a runtime zero: at most one symbolic dim, written `-1`; or (without `allowzero`) every
/// symbolic dim at a position where the input has that very dim, written `0` ("copy the input's").
fn reshape_target(x: Option<&[Dim]>, out: &[Dim], allowzero: bool) -> Option<Vec<i64>> {
    if out.iter().any(|d| matches!(d, Dim::Fixed(n) if *n <= 0)) {
        return None;
    }
    let params = out.iter().filter(|d| matches!(d, Dim::Param(_))).count();
    if params <= 1 {
        return Some(out.iter().map(|d| if let Dim::Fixed(n) = d { *n } else { -1 }).collect());
    }
    let x = x?;
    if allowzero {
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

/// A constant `Expand` target giving the same result: fixed dims as they are, a symbolic dim as `1`
/// where the input has that very dim (broadcasting `1` against it gives it back).
fn expand_target(x: &[Dim], out: &[Dim]) -> Option<Vec<i64>> {
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

/// The shape pass. Returns the number of rewrites (folded values, merged values, materialized shapes).
pub(crate) fn run(model: &mut Model, rules: &mut super::Rules) -> usize {
    let mut table = ShapeTable::new(model);
    // Symbolic contents already computed by a kept node → that node's output.
    let mut seen: FxHashMap<SymInts, Value> = FxHashMap::default();
    // Constant targets made by this run, by contents: equal Reshape targets share one initializer
    // (as deduplication would merge them next round) instead of each adding a value to the model.
    let mut targets: FxHashMap<Vec<i64>, Value> = FxHashMap::default();
    // Output of each kept Reshape → its data input.
    let mut reshaped: FxHashMap<Value, Value> = FxHashMap::default();
    let mut rewrites = 0;
    edit::sweep(model, |model, facts, mut node| {
        if node.domain.is_empty() && node.outputs.len() == 1 {
            let out = node.outputs[0];
            if let Some(with) = fold_syms(model, facts, &mut table, &seen, &node, rules) {
                rewrites += 1;
                return Action::Replace { node, with };
            }
            let op = node.op_type.as_str();
            if op == "Reshape" || op == "Expand" {
                let target = match (input(&node, 1), known_shape(model, &table, out)) {
                    (Some(s), Some(out_shape)) if model.value(s).constant.is_none() => {
                        if op == "Reshape" {
                            let x = input(&node, 0).and_then(|x| known_shape(model, &table, x));
                            reshape_target(x, out_shape, attr_int(&node, "allowzero", 0) != 0)
                        } else {
                            input(&node, 0)
                                .and_then(|x| known_shape(model, &table, x))
                                .and_then(|x| expand_target(x, out_shape))
                        }
                    }
                    _ => None,
                };
                if let Some(t) = target {
                    let c = match targets.get(&t) {
                        Some(&c) => c,
                        None => {
                            let c = edit::new_constant(model, TensorData::from_i64s(vec![t.len() as i64], &t));
                            targets.insert(t, c);
                            c
                        }
                    };
                    node.inputs[1] = Some(c);
                    rules.fire(if op == "Reshape" {
                        "shapes: constant Reshape target"
                    } else {
                        "shapes: constant Expand target"
                    });
                    rewrites += 1;
                }
            }
            if op == "Reshape" {
                // A Reshape of a Reshape reads the first one's input: the element count is the
                // same, and a constant target without 0 (a 0 copies an input dim) says the rest.
                // Here rather than as an e-graph rule: `linear` writes Gemm · Reshape, and the
                // view after it made this the most frequent rewrite of transformer graphs, each
                // an e-graph window.
                let source = input(&node, 0).and_then(|x| reshaped.get(&x).copied());
                let target = edit::const_ints(model, &node, 1);
                if let (Some(source), Some(t)) = (source, target) {
                    if !t.contains(&0) {
                        node.inputs[0] = Some(source);
                        rules.fire("shapes: Reshape of a Reshape");
                        rewrites += 1;
                    }
                }
                if let Some(x) = input(&node, 0) {
                    reshaped.insert(out, x);
                }
            }
        }
        table.learn(model, &node);
        if node.outputs.len() == 1 {
            if let Some(s) = table.syms(node.outputs[0]) {
                seen.entry(s.clone()).or_insert(node.outputs[0]);
            }
        }
        Action::Keep(node)
    });
    rewrites
}

/// A node whose int64 output has contents known from shapes: a constant when all are numbers, or a
/// value computed earlier with the same contents.
fn fold_syms(
    model: &mut Model,
    facts: &Facts,
    table: &mut ShapeTable,
    seen: &FxHashMap<SymInts, Value>,
    node: &Node,
    rules: &mut super::Rules,
) -> Option<Vec<(Value, Value)>> {
    let out = node.outputs[0];
    if model.value(out).dtype != Some(DType::Int64) || facts.is_output(out) {
        return None;
    }
    let syms = table.infer_syms(model, node)?;
    if syms.items.len() > MAX_SYM_LEN {
        return None;
    }
    if let Some(vals) = syms.items.iter().map(fixed).collect::<Option<Vec<i64>>>() {
        let dims = if syms.scalar { vec![] } else { vec![vals.len() as i64] };
        if syms.scalar && vals.len() != 1 {
            return None;
        }
        edit::make_constant(model, out, TensorData::from_i64s(dims, &vals));
        table.set_syms(out, syms);
        rules.fire(&format!("shapes: {} folded", node.op_type));
        return Some(vec![]);
    }
    let earlier = *seen.get(&syms)?;
    rules.fire(&format!("shapes: {} merged", node.op_type));
    Some(vec![(out, earlier)])
}
