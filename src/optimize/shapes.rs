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

use super::edit::{self, attr_int, const_ints, input, norm_axis, Action, Facts};
use super::Fire;
use crate::hash::FxHashMap;
use crate::onnx::ir::{AttrValue, DType, Dim, Graph, Model, Node, TensorData, Value};

/// Largest int64 tensor whose contents are tracked (shapes and indices are short).
const MAX_SYM_LEN: usize = 64;

/// The contents of a small int64 tensor of rank 0 or 1, element by element.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct SymInts {
    pub scalar: bool,
    pub items: Vec<Dim>,
}

/// The operators whose output shapes the optimizer learns, besides the broadcasting ones
/// (`shape_rules::BROADCAST`). The rules cover more, for [`check`]: widening this set changes
/// which rewrites fire (6 of 212 reference archives shrink), a change to measure on its own.
const LEARNED: &[&str] = &[
    "Identity",
    "Cast",
    "CastLike",
    "Relu",
    "Sigmoid",
    "Tanh",
    "Neg",
    "Abs",
    "Sqrt",
    "Exp",
    "Log",
    "Erf",
    "Reciprocal",
    "Not",
    "Softmax",
    "LogSoftmax",
    "Gelu",
    "LayerNormalization",
    "Dropout",
    "Clip",
    "Sin",
    "Cos",
    "Floor",
    "Ceil",
    "Round",
    "Sign",
    "HardSigmoid",
    "HardSwish",
    "LeakyRelu",
    "Elu",
    "Softplus",
    "IsNaN",
    "IsInf",
    "BatchNormalization",
    "RMSNormalization",
    "Transpose",
    "Unsqueeze",
    "Squeeze",
    "Shape",
    "Size",
    "Gather",
    "Concat",
    "MatMul",
    "Reshape",
    "ConstantOfShape",
    "Expand",
];

/// Shapes and symbolic int contents per value, filled in as a sweep walks the graph.
///
/// Both are sparse: most values have their shape in the model and few are small int64 tensors,
/// and two dense tables per sweep (tens of MB on large graphs) cost more in page faults than the
/// lookups they saved.
pub(crate) struct ShapeTable {
    shapes: FxHashMap<Value, Vec<Dim>>,
    syms: FxHashMap<Value, SymInts>,
    /// Shapes may hold dims known to be unknown ([`ShapeTable::unknown`]): for [`check`], which
    /// compares ranks and numbers, never for the optimizer, which would take them as symbols.
    partial: bool,
}

impl ShapeTable {
    pub fn new(model: &Model) -> Self {
        // Shapes the model already knows are read from it, not copied: copying every value's dims
        // (symbolic ones are strings) was most of the pass's time on large graphs.
        let mut t = ShapeTable { shapes: FxHashMap::default(), syms: FxHashMap::default(), partial: false };
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

    /// A dim a rule cannot compute, in a shape whose rank and other dims it can: a symbol no
    /// real dim is named (`?`), only in a partial table; `None` (the whole shape unknown) else.
    pub(crate) fn unknown(&self) -> Option<Dim> {
        self.partial.then(|| Dim::Param("?".into()))
    }

    pub fn syms(&self, v: Value) -> Option<&SymInts> {
        self.syms.get(&v)
    }

    pub(crate) fn set_shape(&mut self, v: Value, s: Vec<Dim>) {
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
        let op = node.op_type.as_str();
        if model.value(out).shape.is_none() && (LEARNED.contains(&op) || super::shape_rules::BROADCAST.contains(&op)) {
            if let Ok(Some(s)) = self.infer_output(model, node, 0) {
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

pub(crate) fn fixed(d: &Dim) -> Option<i64> {
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

/// A recorded shape or element type that the nodes computing the value contradict.
#[derive(Debug)]
pub(crate) struct Conflict {
    /// The FX node the ONNX node came from (its name), or the ONNX node's name.
    pub node: String,
    pub op: String,
    pub message: String,
    /// The program contradicts itself (a corrupt archive), rather than asking for an element type
    /// ONNX's operator does not take.
    pub inconsistent: bool,
}

/// Compare every shape and element type the model records (the program's metadata, copied onto
/// the values) with what ONNX computes from each node's inputs, main graph and subgraphs, in
/// order. A program torch wrote is consistent; a contradiction means a corrupt or hostile
/// archive, whose model `onnx.checker` would reject and whose shapes the optimizer must not
/// trust.
pub(crate) fn check(model: &Model) -> Result<(), Conflict> {
    for &v in model.graph.inputs.iter().chain(&model.graph.outputs) {
        let info = model.value(v);
        if info.dtype.is_none() {
            return Err(Conflict {
                node: info.name.clone(),
                op: "graph input or output".into(),
                message: format!("the program records no element type for `{}`", info.name),
                inconsistent: true,
            });
        }
    }
    let mut table = ShapeTable { partial: true, ..ShapeTable::new(model) };
    check_nodes(model, &model.graph.nodes, &mut table)
}

fn check_nodes(model: &Model, nodes: &[Node], table: &mut ShapeTable) -> Result<(), Conflict> {
    for node in nodes {
        let fail = |message: String| Conflict {
            node: fx_node_name(node),
            op: node.op_type.clone(),
            message,
            inconsistent: true,
        };
        for a in &node.attributes {
            if let AttrValue::Graph(g) = &a.value {
                if node.op_type == "Scan" {
                    scan_body_inputs(model, node, g, table).map_err(fail)?;
                }
                check_nodes(model, &g.nodes, table)?;
                body_types(model, node, g).map_err(fail)?;
            }
        }
        input_types(model, node).map_err(|(message, inconsistent)| Conflict { inconsistent, ..fail(message) })?;
        for (i, &out) in node.outputs.iter().enumerate() {
            let computed = match node.op_type.as_str() {
                "Scan" => Ok(scan_output(model, node, table, i)),
                "If" => Ok(if_output(model, node, table, i)),
                _ => table.infer_output(model, node, i),
            };
            let computed = computed
                .map_err(|why| fail(format!("{} cannot compute `{}`: {why}", node.op_type, value_name(model, out))))?;
            let Some(computed) = computed else {
                let Some(rank) = table.infer_rank(model, node, i) else { continue };
                let Some(recorded) = model.value(out).shape.as_deref() else {
                    // The rank alone still checks the nodes that read the value.
                    if let Some(u) = table.unknown() {
                        table.set_shape(out, vec![u; rank]);
                    }
                    continue;
                };
                if rank != recorded.len() {
                    return Err(fail(format!(
                        "the program records the shape {} for `{}`, but {} computes a rank-{rank} value from its inputs",
                        super::shape_rules::shape_text(recorded),
                        value_name(model, out),
                        node.op_type
                    )));
                }
                continue;
            };
            match model.value(out).shape.as_deref() {
                Some(recorded) if clash(recorded, &computed) => {
                    return Err(fail(format!(
                        "the program records the shape {} for `{}`, but {} computes {} from its inputs",
                        super::shape_rules::shape_text(recorded),
                        value_name(model, out),
                        node.op_type,
                        super::shape_rules::shape_text(&computed)
                    )))
                }
                Some(_) => {}
                None => table.set_shape(out, computed),
            }
        }
        table.learn(model, node);
    }
    Ok(())
}

/// Two shapes that cannot describe the same value: ranks or numbers differ (a symbolic dim
/// agrees with anything, as in ONNX's merging).
fn clash(a: &[Dim], b: &[Dim]) -> bool {
    a.len() != b.len() || a.iter().zip(b).any(|(x, y)| matches!((x, y), (Dim::Fixed(p), Dim::Fixed(q)) if p != q))
}

fn value_name(model: &Model, v: Value) -> &str {
    let n = &model.value(v).name;
    if n.is_empty() {
        "an intermediate value"
    } else {
        n
    }
}

/// The FX node an ONNX node was translated from (`pkg.torch.onnx.fx_node` starts with `%name`),
/// else the ONNX node's own name.
fn fx_node_name(node: &Node) -> String {
    let mut found = None;
    node.metadata.for_each(|key, prefix, rest| {
        if key == crate::translate::metadata::FX_NODE && found.is_none() {
            let text = format!("{prefix}{rest}");
            found = text.strip_prefix('%').and_then(|v| v.split([' ', ':']).next()).map(str::to_string);
        }
    });
    found.filter(|n| !n.is_empty()).unwrap_or_else(|| node.name.clone())
}

/// The element types of a node's inputs against its operator's type constraints: the inputs of
/// one type variable share a type, and that type is one the operator accepts.
fn input_types(model: &Model, node: &Node) -> Result<(), (String, bool)> {
    if !node.domain.is_empty() {
        return Ok(());
    }
    for c in crate::onnx::ops::type_constraints(&node.op_type) {
        let mut first: Option<DType> = None;
        for (i, v) in node.inputs.iter().enumerate() {
            let bound = c.inputs.contains(&i) || c.variadic_from.is_some_and(|from| i >= from);
            let Some(t) = v.filter(|_| bound).and_then(|v| model.value(v).dtype) else { continue };
            if c.allowed & (1 << t as u32) == 0 {
                return Err((format!("ONNX's {} does not accept {} (input {i})", node.op_type, t.name()), false));
            }
            match first {
                // Loop and Scan carry values of any types through one variadic type variable.
                Some(f) if f != t && !matches!(node.op_type.as_str(), "Loop" | "Scan") => {
                    let message = format!(
                        "{}'s inputs must share a type, but it reads {} and {}",
                        node.op_type,
                        f.name(),
                        t.name()
                    );
                    return Err((message, true));
                }
                _ => first = Some(t),
            }
        }
    }
    Ok(())
}

/// How many of a Scan's inputs are loop-carried states (the rest are scanned).
fn scan_states(node: &Node) -> usize {
    node.inputs.len().saturating_sub(attr_int(node, "num_scan_inputs", 0).max(0) as usize)
}

/// Scan's body reads each state input as it is and each scanned input without its first dim.
fn scan_body_inputs(model: &Model, node: &Node, body: &Graph, table: &mut ShapeTable) -> Result<(), String> {
    if node.attr("scan_input_axes").is_some() {
        return Ok(());
    }
    let states = scan_states(node);
    for (k, (&outer, &inner)) in node.inputs.iter().zip(&body.inputs).enumerate() {
        let state = k < states;
        if let (Some(a), Some(b)) = (outer.and_then(|v| model.value(v).dtype), model.value(inner).dtype) {
            if a != b {
                return Err(format!(
                    "the body's input {k} is recorded as {}, but the loop gives it {}",
                    b.name(),
                    a.name()
                ));
            }
        }
        let Some(outer) = outer.and_then(|v| table.shape(model, v)) else { continue };
        let expected = if state {
            outer
        } else if let Some((_, rest)) = outer.split_first() {
            rest
        } else {
            return Err(format!("scanned input {k} is a scalar"));
        };
        match model.value(inner).shape.as_deref() {
            Some(declared) if clash(declared, expected) => {
                return Err(format!(
                    "the body's input {k} is recorded as {}, but the loop gives it {}",
                    super::shape_rules::shape_text(declared),
                    super::shape_rules::shape_text(expected)
                ));
            }
            Some(_) => {}
            // As ONNX's inference does: the body then checks against what the loop gives.
            None => {
                let expected = expected.to_vec();
                table.set_shape(inner, expected);
            }
        }
    }
    Ok(())
}

/// Scan output `i`: a state as the body leaves it, or the body's per-step outputs stacked on a
/// first dim as long as the scanned inputs.
fn scan_output(model: &Model, node: &Node, table: &ShapeTable, i: usize) -> Option<Vec<Dim>> {
    if node.attr("scan_output_axes").is_some() || node.attr("scan_input_axes").is_some() {
        return None;
    }
    let Some(AttrValue::Graph(body)) = node.attr("body") else { return None };
    let scanned = attr_int(node, "num_scan_inputs", 0).max(0) as usize;
    let states = node.inputs.len().checked_sub(scanned)?;
    let per_step = table.shape(model, *body.outputs.get(i)?)?;
    if i < states {
        return Some(per_step.to_vec());
    }
    let first = node.inputs.get(states).copied().flatten()?;
    let mut out = vec![table.shape(model, first)?.first()?.clone()];
    out.extend_from_slice(per_step);
    Some(out)
}

/// If output `i`: the branches' shapes merged dim by dim, as ONNX does (a dim the branches
/// disagree on is unknown); nothing when their ranks differ.
fn if_output(model: &Model, node: &Node, table: &ShapeTable, i: usize) -> Option<Vec<Dim>> {
    let branch = |name: &str| match node.attr(name) {
        Some(AttrValue::Graph(g)) => g.outputs.get(i).and_then(|&v| table.shape(model, v)),
        _ => None,
    };
    let (a, b) = (branch("then_branch")?, branch("else_branch")?);
    if a.len() != b.len() {
        return None;
    }
    a.iter().zip(b).map(|(x, y)| if x == y { Some(x.clone()) } else { table.unknown() }).collect()
}

/// The element types a control-flow node's outputs get from its branches or body.
fn body_types(model: &Model, node: &Node, body: &Graph) -> Result<(), String> {
    // Loop's body returns its condition first.
    let skip = match node.op_type.as_str() {
        "If" | "Scan" => 0,
        "Loop" => 1,
        _ => return Ok(()),
    };
    for (k, (&inner, &outer)) in body.outputs.iter().skip(skip).zip(&node.outputs).enumerate() {
        if let (Some(a), Some(b)) = (model.value(inner).dtype, model.value(outer).dtype) {
            if a != b {
                return Err(format!(
                    "output {k} of `{}` is {} in the body, but the program records {}",
                    body.name,
                    a.name(),
                    b.name()
                ));
            }
        }
    }
    // A loop-carried state leaves each step with the type it entered with.
    let (states, first_in) = match node.op_type.as_str() {
        "Scan" => (scan_states(node), 0),
        "Loop" => (node.inputs.len().saturating_sub(2), 2),
        _ => return Ok(()),
    };
    let carried = body.inputs.iter().skip(first_in).zip(body.outputs.iter().skip(skip)).take(states);
    for (k, (&enters, &leaves)) in carried.enumerate() {
        if let (Some(a), Some(b)) = (model.value(enters).dtype, model.value(leaves).dtype) {
            if a != b {
                return Err(format!(
                    "state {k} of `{}` enters a step as {} and leaves it as {}",
                    body.name,
                    a.name(),
                    b.name()
                ));
            }
        }
    }
    Ok(())
}
