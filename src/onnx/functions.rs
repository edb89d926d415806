//! Repeated module calls as ONNX functions (`--functions`, [`crate::ExportOptions::module_functions`]).
//!
//! Every node carries its module stack (torch.onnx's `name_scopes` and `class_hierarchy`
//! metadata). The nodes of one call of a chosen module class (`model.encoder.layer.3`, a
//! `BertLayer`) become one call node of a model-local `FunctionProto`; calls of the same class
//! with the same structure — the same nodes, attributes and constants, inputs of the same element
//! types and shapes (symbolic dims aside) — share one function, named after the class
//! (`BertLayer`, then `BertLayer_2` for a second structure) in the domain [`DOMAIN`]. A call's
//! inputs are the values its nodes read from outside, weights included (ONNX functions take
//! tensors as inputs, not as attributes); its outputs are the values read outside it. Scalars
//! and small integer constants (shape arithmetic) move into the body as `Constant` nodes, so calls
//! do not pass them; a folded bias is data, passed like a weight. The nodes inside keep their
//! metadata (the first call's); the call node gets the module's own.
//!
//! It runs on the optimized graph, so the optimizer has already worked on every body; nothing
//! later breaks a function apart. A call whose nodes are not a convex part of the graph (a fusion
//! joined them with nodes outside, so that a path leaves the call and comes back) stays inline,
//! and so does one with subgraphs (If, Loop, Scan bodies).

use std::collections::{HashMap, HashSet};

use super::keys::{CLASS_HIERARCHY, NAMESPACE, NAME_SCOPES};
use crate::onnx::ir::{
    AttrValue, Attribute, DType, Dim, Function, Graph, MetadataProps, Model, Node, TensorData, Value, ValueInfo,
};

/// The domain of the module functions.
pub const DOMAIN: &str = "pkg.fxonnx";

/// Which module classes become functions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ModuleFunctions {
    /// Classes called at least twice outside any other chosen class, outermost first.
    Auto,
    /// These classes, by full name (`transformers.models.bert.modeling_bert.BertLayer`) or the
    /// name after the last dot (`BertLayer`).
    Classes(Vec<String>),
}

/// What [`extract`] did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FunctionStats {
    /// `(function name, calls)` per function made.
    pub functions: Vec<(String, usize)>,
    /// Module calls left inline, with why.
    pub inline: Vec<(String, String)>,
}

/// Integer constants of at most this many elements, without a name of their own, go into the body.
const INLINE_CONSTANT: i64 = 64;

/// One node's module stack: `(scope, class)` from the outermost in.
fn stack(node: &Node) -> Vec<(String, String)> {
    let (mut scopes, mut classes) = (None, None);
    node.metadata.for_each(|key, prefix, rest| {
        if key == NAME_SCOPES {
            scopes = Some(py_list(&format!("{prefix}{rest}")));
        } else if key == CLASS_HIERARCHY {
            classes = Some(py_list(&format!("{prefix}{rest}")));
        }
    });
    let (Some(scopes), Some(classes)) = (scopes, classes) else { return Vec::new() };
    // The last entry of each is the node itself (its name, its op), not a module.
    let n = scopes.len().min(classes.len()).saturating_sub(1);
    scopes.into_iter().zip(classes).take(n).collect()
}

/// `['a', 'b.c']` (Python's repr of a list of strings) as its strings.
fn py_list(text: &str) -> Vec<String> {
    let inner = text.trim().trim_start_matches('[').trim_end_matches(']').trim();
    if inner.is_empty() {
        return Vec::new();
    }
    inner.split(", ").map(|s| s.trim_matches(|c| c == '\'' || c == '"').to_string()).collect()
}

fn short(class: &str) -> &str {
    class.rsplit('.').next().unwrap_or(class)
}

/// The classes `which` names, or for [`ModuleFunctions::Auto`] every class, outermost first
/// (`extract` keeps those with repeated calls).
fn candidates(stacks: &[Vec<(String, String)>], which: &ModuleFunctions) -> Vec<String> {
    // Instances (scopes) per class, with the depth they are found at.
    let mut scopes: HashMap<&str, HashSet<&str>> = HashMap::new();
    let mut depth: HashMap<&str, usize> = HashMap::new();
    for s in stacks {
        // The root module (depth 0) is the program itself.
        for (d, (scope, class)) in s.iter().enumerate().skip(1) {
            scopes.entry(class).or_default().insert(scope);
            let e = depth.entry(class).or_insert(d);
            *e = (*e).min(d);
        }
    }
    match which {
        ModuleFunctions::Classes(names) => {
            let mut picked: Vec<String> = scopes
                .keys()
                .filter(|c| names.iter().any(|n| n == *c || n == short(c)))
                .map(|c| c.to_string())
                .collect();
            picked.sort();
            picked
        }
        ModuleFunctions::Auto => {
            let mut classes: Vec<&str> = scopes.keys().copied().collect();
            classes.sort_by_key(|c| (depth[c], *c));
            classes.into_iter().map(str::to_string).collect()
        }
    }
}

/// A call: its scope and class, and its nodes' positions in the main graph.
struct Call {
    scope: String,
    class: String,
    depth: usize,
    nodes: Vec<usize>,
}

/// Group the calls of the classes `which` picks into functions (see the module documentation).
pub(crate) fn extract(model: &mut Model, which: &ModuleFunctions) -> FunctionStats {
    let mut stats = FunctionStats::default();
    let stacks: Vec<Vec<(String, String)>> = model.graph.nodes.iter().map(stack).collect();
    let producer = producers(&model.graph);
    let readers = readers(&model.graph);
    let outputs: HashSet<Value> = model.graph.outputs.iter().copied().collect();
    let mut classes = candidates(&stacks, which);
    if *which == ModuleFunctions::Auto {
        // A class whose free calls (outside the classes kept already) repeat a structure: a
        // container whose calls all differ (T5Stack's encoder and decoder, torchvision's
        // Sequential stages) gives way to the layers inside it.
        let mut kept: Vec<String> = Vec::new();
        for class in classes {
            kept.push(class.clone());
            let mut seen = HashSet::new();
            let mut calls = group(&stacks, &kept);
            hoist_shared(model, &mut calls, &producer, &readers);
            let repeated = calls.iter().filter(|c| c.class == class).any(|call| {
                interface(model, call, &producer, &readers, &outputs)
                    .is_ok_and(|i| !seen.insert(signature(model, call, &i)))
            });
            if !repeated {
                kept.pop();
            }
        }
        classes = kept;
    }
    if classes.is_empty() {
        return stats;
    }
    let mut calls = group(&stacks, &classes);
    hoist_shared(model, &mut calls, &producer, &readers);
    // Interfaces and structure of each call that can be one.
    let mut shaped: Vec<(usize, Interface, String)> = Vec::new();
    for (k, call) in calls.iter().enumerate() {
        match interface(model, call, &producer, &readers, &outputs) {
            Ok(i) => {
                let sig = signature(model, call, &i);
                shaped.push((k, i, sig));
            }
            Err(why) => stats.inline.push((call.scope.clone(), why)),
        }
    }
    // One function per (class, structure), named in order of first call.
    let mut names: HashMap<(String, String), String> = HashMap::new();
    let mut per_class: HashMap<String, usize> = HashMap::new();
    let mut bodies: Vec<(String, usize, usize)> = Vec::new(); // (name, representative, calls)
    let mut call_of: Vec<(usize, String)> = Vec::new();
    for (pos, (k, _, sig)) in shaped.iter().enumerate() {
        let class = &calls[*k].class;
        let name = names.entry((class.clone(), sig.clone())).or_insert_with(|| {
            let n = per_class.entry(class.clone()).or_insert(0);
            *n += 1;
            let base = short(class).replace(|c: char| !c.is_ascii_alphanumeric() && c != '_', "_");
            let name = if *n == 1 { base } else { format!("{base}_{n}") };
            bodies.push((name.clone(), pos, 0));
            name
        });
        if let Some(b) = bodies.iter_mut().find(|b| &b.0 == name) {
            b.2 += 1;
        }
        call_of.push((pos, name.clone()));
    }
    // Build the bodies from each function's first call, then replace every call.
    let mut functions = Vec::new();
    for (name, rep, count) in &bodies {
        let (k, i, _) = &shaped[*rep];
        functions.push(body(model, &calls[*k], i, name));
        stats.functions.push((name.clone(), *count));
    }
    let in_call: HashSet<usize> =
        call_of.iter().flat_map(|(pos, _)| calls[shaped[*pos].0].nodes.iter().copied()).collect();
    let mut replaced: HashMap<usize, Node> = HashMap::new(); // a call's last node -> its call node
    let mut after: HashMap<usize, Vec<usize>> = HashMap::new(); // ... -> nodes that move after it
    let mut moved: HashSet<usize> = HashSet::new();
    for (pos, name) in &call_of {
        let (k, i, _) = &shaped[*pos];
        let call = &calls[*k];
        let last = *call.nodes.last().unwrap_or(&0);
        let node = Node {
            op_type: name.clone(),
            domain: DOMAIN.into(),
            name: String::new(),
            inputs: i.inputs.iter().map(|&v| Some(v)).collect(),
            outputs: i.outputs.clone(),
            attributes: Vec::new(),
            metadata: std::rc::Rc::new(call_metadata(&model.graph.nodes[call.nodes[0]], call)),
        };
        // Nodes of other calls go with their own call node.
        let later: Vec<usize> = i.moved_after.iter().copied().filter(|m| !in_call.contains(m)).collect();
        moved.extend(later.iter().copied());
        after.insert(last, later);
        replaced.insert(last, node);
    }
    let mut nodes = Vec::with_capacity(model.graph.nodes.len());
    for (j, node) in model.graph.nodes.iter().enumerate() {
        if let Some(call) = replaced.remove(&j) {
            nodes.push(call);
            nodes.extend(after.get(&j).into_iter().flatten().map(|&m| model.graph.nodes[m].clone()));
        } else if !in_call.contains(&j) && !moved.contains(&j) {
            nodes.push(node.clone());
        }
    }
    // Calls whose nodes interleave could order a call after a node that reads it: then nothing
    // changes (not met on the zoo; said in the statistics).
    if let Some(why) = misordered(model, &nodes) {
        stats.functions.clear();
        stats.inline.push(("the whole graph".into(), why));
        return stats;
    }
    model.graph.nodes = nodes;
    model.functions = functions;
    if !model.functions.is_empty() && !model.opset_imports.iter().any(|(d, _)| d == DOMAIN) {
        model.opset_imports.push((DOMAIN.into(), 1));
    }
    // Constants now in the bodies, read nowhere else.
    crate::onnx::dce::eliminate_dead_code(&mut model.graph);
    stats
}

/// The values `node`'s subgraphs define: their inputs and their nodes' outputs, recursively.
fn defined_inside(node: &Node, into: &mut HashSet<Value>) {
    for a in &node.attributes {
        if let AttrValue::Graph(g) = &a.value {
            into.extend(g.inputs.iter().chain(&g.initializers).copied());
            for n in &g.nodes {
                into.extend(n.outputs.iter().copied());
                defined_inside(n, into);
            }
        }
    }
}

/// Why `nodes` are not in an order where each reads only values made before it, if they are not.
fn misordered(model: &Model, nodes: &[Node]) -> Option<String> {
    let g = &model.graph;
    let mut ready: HashSet<Value> = g.inputs.iter().chain(&g.initializers).copied().collect();
    for n in nodes {
        // A subgraph reads its own inputs and what its nodes make too.
        defined_inside(n, &mut ready);
        let mut missing = None;
        n.for_each_read(&mut |v| {
            if !ready.contains(&v) && model.value(v).constant.is_none() && missing.is_none() {
                missing = Some(v);
            }
        });
        if let Some(v) = missing {
            return Some(format!("calls interleave: `{}` would be read before it is made", model.value(v).name));
        }
        ready.extend(n.outputs.iter().copied());
    }
    None
}

/// The calls of `classes`: each node goes to the outermost call of one on its stack.
fn group(stacks: &[Vec<(String, String)>], classes: &[String]) -> Vec<Call> {
    let mut calls: Vec<Call> = Vec::new();
    let mut by_scope: HashMap<&str, usize> = HashMap::new();
    for (j, s) in stacks.iter().enumerate() {
        let Some((depth, (scope, class))) = s.iter().enumerate().find(|(_, (_, c))| classes.contains(c)) else {
            continue;
        };
        let k = *by_scope.entry(scope.as_str()).or_insert_with(|| {
            calls.push(Call { scope: scope.clone(), class: class.clone(), depth, nodes: Vec::new() });
            calls.len() - 1
        });
        calls[k].nodes.push(j);
    }
    calls
}

/// Take out of each call the nodes whose values other calls of its class read, with what they
/// are computed from inside it, when that reads no weight: a shape or a mask the optimizer's CSE
/// shares between layers sits in the first layer's scope, which would then differ from the
/// others. (A layer's result, which the next layer reads too, is computed from weights.) They
/// stay in the main graph, and every call reads them.
fn hoist_shared(
    model: &Model,
    calls: &mut [Call],
    producer: &HashMap<Value, usize>,
    readers: &HashMap<Value, Vec<usize>>,
) {
    let g = &model.graph;
    let weight = |v: Value| model.value(v).constant.is_some() && !model.value(v).name.is_empty();
    let mut call_of: HashMap<usize, usize> = HashMap::new();
    for (k, c) in calls.iter().enumerate() {
        for &j in &c.nodes {
            call_of.insert(j, k);
        }
    }
    for k in 0..calls.len() {
        let own: HashSet<usize> = calls[k].nodes.iter().copied().collect();
        let class = &calls[k].class;
        let shared = |j: usize| {
            g.nodes[j].outputs.iter().any(|o| {
                readers
                    .get(o)
                    .into_iter()
                    .flatten()
                    .any(|r| call_of.get(r).is_some_and(|&other| other != k && &calls[other].class == class))
            })
        };
        let mut hoisted: HashSet<usize> = HashSet::new();
        for start in calls[k].nodes.iter().copied().filter(|&j| shared(j)) {
            // What computes it inside the call, closed: then the hoisted part reads nothing that
            // stays.
            let mut part: HashSet<usize> = HashSet::new();
            let mut stack = vec![start];
            let mut reads_weight = false;
            while let Some(j) = stack.pop() {
                if !part.insert(j) {
                    continue;
                }
                g.nodes[j].for_each_read(&mut |v| {
                    reads_weight |= weight(v);
                    match producer.get(&v) {
                        Some(&p) if own.contains(&p) => stack.push(p),
                        _ => {}
                    }
                });
            }
            if !reads_weight {
                hoisted.extend(part);
            }
        }
        if !hoisted.is_empty() && hoisted.len() < own.len() {
            calls[k].nodes.retain(|j| !hoisted.contains(j));
        }
    }
}

/// What a call reads and gives, and the nodes between its own that must move after it.
struct Interface {
    inputs: Vec<Value>,
    outputs: Vec<Value>,
    /// Small unnamed constants read by the call: Constant nodes in the body.
    constants: Vec<Value>,
    /// Nodes among the call's own (by position) that depend on it: placed after the call node.
    moved_after: Vec<usize>,
}

fn producers(g: &Graph) -> HashMap<Value, usize> {
    let mut m = HashMap::new();
    for (j, n) in g.nodes.iter().enumerate() {
        for &o in &n.outputs {
            m.insert(o, j);
        }
    }
    m
}

fn readers(g: &Graph) -> HashMap<Value, Vec<usize>> {
    let mut m: HashMap<Value, Vec<usize>> = HashMap::new();
    for (j, n) in g.nodes.iter().enumerate() {
        n.for_each_read(&mut |v| m.entry(v).or_default().push(j));
    }
    m
}

fn interface(
    model: &Model,
    call: &Call,
    producer: &HashMap<Value, usize>,
    readers: &HashMap<Value, Vec<usize>>,
    graph_outputs: &HashSet<Value>,
) -> Result<Interface, String> {
    let g = &model.graph;
    let own: HashSet<usize> = call.nodes.iter().copied().collect();
    if call.nodes.iter().any(|&j| g.nodes[j].attributes.iter().any(|a| matches!(a.value, AttrValue::Graph(_)))) {
        return Err("it has subgraphs (If, Loop or Scan)".into());
    }
    let (first, last) = (call.nodes[0], *call.nodes.last().unwrap_or(&call.nodes[0]));
    // Nodes between the call's own that depend on it; none of them may feed it (convexity).
    let mut descendant: HashSet<usize> = HashSet::new();
    for j in first..=last {
        if own.contains(&j) {
            continue;
        }
        let mut from_call = false;
        g.nodes[j].for_each_read(&mut |v| {
            if let Some(&p) = producer.get(&v) {
                from_call |= own.contains(&p) || descendant.contains(&p);
            }
        });
        if from_call {
            descendant.insert(j);
        }
    }
    for &j in &call.nodes {
        let mut cyclic = false;
        g.nodes[j].for_each_read(&mut |v| cyclic |= producer.get(&v).is_some_and(|p| descendant.contains(p)));
        if cyclic {
            return Err("a fused node joins it with nodes outside it (a path leaves it and comes back)".into());
        }
    }
    let (mut inputs, mut constants, mut outputs) = (Vec::new(), Vec::new(), Vec::new());
    let (mut seen, mut produced) = (HashSet::new(), HashSet::new());
    for &j in &call.nodes {
        for &o in &g.nodes[j].outputs {
            produced.insert(o);
        }
    }
    for &j in &call.nodes {
        let node = &g.nodes[j];
        let mut reads = Vec::new();
        node.for_each_read(&mut |v| reads.push(v));
        for v in reads {
            if produced.contains(&v) || !seen.insert(v) {
                continue;
            }
            if inline_constant(model.value(v)) {
                constants.push(v);
            } else {
                inputs.push(v);
            }
        }
        for &o in &node.outputs {
            let outside = readers.get(&o).is_some_and(|r| r.iter().any(|j| !own.contains(j)));
            if outside || graph_outputs.contains(&o) {
                outputs.push(o);
            }
        }
    }
    if outputs.is_empty() {
        return Err("nothing outside reads its results".into());
    }
    if call.nodes.len() < 2 {
        return Err("a single node gains nothing as a function".into());
    }
    let mut moved_after: Vec<usize> = descendant.into_iter().collect();
    moved_after.sort_unstable();
    Ok(Interface { inputs, outputs, constants, moved_after })
}

/// Integer constants (shapes, axes) and scalars are part of a module's structure; float vectors
/// (a folded bias) are its data, passed like weights.
fn inline_constant(info: &ValueInfo) -> bool {
    info.name.is_empty()
        && info.constant.as_ref().is_some_and(|t| {
            t.numel() <= 1 || (t.numel() <= INLINE_CONSTANT && (t.dtype.is_int() || t.dtype == DType::Bool))
        })
}

/// The call's structure as text: equal texts make one function.
fn signature(model: &Model, call: &Call, i: &Interface) -> String {
    use std::fmt::Write;
    let mut local: HashMap<Value, String> = HashMap::new();
    let mut s = String::new();
    for (k, &v) in i.inputs.iter().enumerate() {
        let info = model.value(v);
        let shape: Vec<String> = info
            .shape
            .iter()
            .flatten()
            .map(|d| match d {
                Dim::Fixed(n) => n.to_string(),
                Dim::Param(_) => "?".into(),
            })
            .collect();
        let _ = write!(s, "in{k}:{:?}[{}] ", info.dtype, shape.join(","));
        local.insert(v, format!("i{k}"));
    }
    for &v in &i.constants {
        let t = model.value(v).constant.as_deref();
        let _ = write!(s, "const:{:?} ", t.map(|t| (t.dtype, &t.dims, &t.raw[..])));
        local.insert(v, format!("c{}", local.len()));
    }
    for (n, &j) in call.nodes.iter().enumerate() {
        let node = &model.graph.nodes[j];
        let ins: Vec<String> =
            node.inputs.iter().map(|v| v.and_then(|v| local.get(&v).cloned()).unwrap_or_default()).collect();
        let _ = write!(s, "{}:{}({}){:?};", node.domain, node.op_type, ins.join(","), node.attributes);
        for (o, &out) in node.outputs.iter().enumerate() {
            local.insert(out, format!("n{n}.{o}"));
        }
    }
    let outs: Vec<String> = i.outputs.iter().map(|v| local.get(v).cloned().unwrap_or_default()).collect();
    let _ = write!(s, "->{}", outs.join(","));
    s
}

/// The function made from `call`, its representative. Its inputs are fresh values named after
/// what they are in the module (`attention.self.query.bias` for `model.encoder.layer.0`'s
/// `model.encoder.layer.0.attention.self.query.bias`), else `input_<k>`.
fn body(model: &mut Model, call: &Call, i: &Interface, name: &str) -> Function {
    let mut nodes: Vec<Node> = Vec::with_capacity(call.nodes.len() + i.constants.len());
    for &v in &i.constants {
        if let Some(t) = model.value(v).constant.as_deref() {
            nodes.push(constant_node(v, t));
        }
    }
    nodes.extend(call.nodes.iter().map(|&j| model.graph.nodes[j].clone()));
    let prefix = format!("{}.", call.scope);
    let mut renamed: HashMap<Value, Value> = HashMap::new();
    let mut inputs = Vec::with_capacity(i.inputs.len());
    for (k, &v) in i.inputs.iter().enumerate() {
        let old = model.value(v);
        let name = match old.name.strip_prefix(&prefix) {
            Some(rest) if !rest.is_empty() => rest.to_string(),
            _ => format!("input_{k}"),
        };
        let info = ValueInfo { name, dtype: old.dtype, shape: old.shape.clone(), ..Default::default() };
        let new = Value(u32::try_from(model.values.len()).unwrap_or(u32::MAX));
        model.values.push(info);
        renamed.insert(v, new);
        inputs.push(new);
    }
    for n in &mut nodes {
        for v in n.inputs.iter_mut().flatten() {
            if let Some(&r) = renamed.get(v) {
                *v = r;
            }
        }
    }
    let body = Graph {
        name: name.to_string(),
        inputs,
        outputs: i.outputs.clone(),
        nodes,
        initializers: Vec::new(),
        metadata: Vec::new(),
    };
    Function { name: name.to_string(), domain: DOMAIN.into(), body }
}

fn constant_node(out: Value, t: &TensorData) -> Node {
    Node {
        op_type: "Constant".into(),
        domain: String::new(),
        name: String::new(),
        inputs: Vec::new(),
        outputs: vec![out],
        attributes: vec![Attribute { name: "value".into(), value: AttrValue::Tensor(Box::new(t.clone())) }],
        metadata: Default::default(),
    }
}

/// The call node's metadata: torch.onnx's keys for the module itself (its stack down to it).
fn call_metadata(first: &Node, call: &Call) -> MetadataProps {
    let mut namespace = String::new();
    first.metadata.for_each(|key, prefix, rest| {
        if key == NAMESPACE {
            namespace = format!("{prefix}{rest}");
        }
    });
    let stack = stack(first);
    let upto = &stack[..(call.depth + 1).min(stack.len())];
    let namespace: Vec<&str> = namespace.split('/').take(call.depth + 1).collect();
    let list = |f: &dyn Fn(&(String, String)) -> &str| {
        let items: Vec<String> = upto.iter().map(|e| format!("'{}'", f(e))).collect();
        format!("[{}]", items.join(", "))
    };
    MetadataProps::Pairs(vec![
        (NAMESPACE, namespace.join("/")),
        (CLASS_HIERARCHY, list(&|e| &e.1)),
        (NAME_SCOPES, list(&|e| &e.0)),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::onnx::builder::Builder;

    /// A branch's own values are defined inside it: a graph with an If is in order.
    #[test]
    fn values_made_inside_subgraphs_are_in_order() {
        let mut b = Builder::new(20);
        let x = b.add_input(Some(DType::Float), Some(vec![Dim::Fixed(2)]));
        let cond = b.add_input(Some(DType::Bool), Some(vec![]));
        b.begin_subgraph("then");
        let inner = b.Relu(x);
        let th = b.Neg(inner);
        let then_g = b.end_subgraph(vec![th]);
        b.begin_subgraph("else");
        let el = b.Neg(x);
        let else_g = b.end_subgraph(vec![el]);
        let out = b.If(cond).then_branch(then_g).else_branch(else_g).out();
        let after = b.Relu(out);
        b.graphs[0].outputs = vec![after];
        let m = b.finish();
        assert_eq!(misordered(&m, &m.graph.nodes), None);
        // The If after its reader is out of order.
        let swapped: Vec<Node> = m.graph.nodes.iter().rev().cloned().collect();
        assert!(misordered(&m, &swapped).is_some());
    }

    #[test]
    fn python_lists_of_names_parse() {
        assert_eq!(py_list("['', 'model', 'model.layers.0']"), ["", "model", "model.layers.0"]);
        assert!(py_list("[]").is_empty());
    }
}
