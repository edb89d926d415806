//! The e-graph rewriter: rules (`rules/`, through the machinery of `engine.rs`) run by egg's
//! equality saturation on small windows of the graph (`window.rs`), and the smallest equivalent
//! graph is extracted back (`extract.rs`).
//!
//! Per window: build an e-graph of the window's nodes (values from outside are leaves, every value
//! read outside the window or a graph output hangs off one root), saturate under iteration and
//! e-node limits (counts, never time: the output must not depend on the machine's load), extract,
//! and splice the extracted nodes in place of the window's. Values read outside keep their ids (so
//! graph outputs keep their names); a node built by a rule takes the metadata of the original node
//! whose value it now computes. Only windows where a rule fired are
//! spliced. The graph is put back in topological order once per round, not per window.

pub mod analysis;
pub mod engine;
pub mod extract;
pub mod lang;
pub mod rules;
pub mod window;

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, HashSet};
use std::rc::Rc;
use std::sync::OnceLock;
use std::time::Duration;

use egg::{Id, Runner, SimpleScheduler, StopReason};

use self::analysis::{add_with, Data, OGraph, OnnxAnalysis};
use self::lang::{attr_set, to_attributes, ONode, OpKey};
use super::{OptimizeStats, Target};
use crate::onnx::ir::{AttrValue, Graph, MetadataProps, Model, Node, Value, ValueInfo};

/// The variants of the rule set for `target`, parsed and commuted once per process: the window
/// selection and the rule machinery take them from here, and know no concrete rule. Standard ONNX
/// gets `rules::RULES` alone (the same variants, so the same windows and bytes, as before targets
/// existed); ONNX Runtime gets `rules::ONNXRUNTIME_RULES` after them.
pub fn variants(target: Target) -> &'static [engine::Variant] {
    static STANDARD: OnceLock<Vec<engine::Variant>> = OnceLock::new();
    static ONNXRUNTIME: OnceLock<Vec<engine::Variant>> = OnceLock::new();
    if target.is_onnxruntime() {
        ONNXRUNTIME.get_or_init(|| engine::variants(&[rules::RULES, rules::ONNXRUNTIME_RULES]))
    } else {
        STANDARD.get_or_init(|| engine::variants(&[rules::RULES]))
    }
}

/// Bounds on the work per window. All count work, none measures time: the same model gives the
/// same rewrites however loaded the machine is.
#[derive(Clone, Debug)]
pub struct Limits {
    /// Graph nodes per window.
    pub max_window_nodes: usize,
    /// Saturation iterations per window.
    pub iter_limit: usize,
    /// E-nodes per window's e-graph (checked between iterations).
    pub node_limit: usize,
    /// Rounds of window selection (a rewrite can expose a match that crosses windows).
    pub rounds: usize,
    /// Most rounds in all: past `rounds`, another round runs while the last one rewrote something
    /// and left candidates out of its windows for the node limit. Matches that share nodes share a
    /// window (every rotary embedding of a decoder reads the one `Cos` of the angles: sixteen of
    /// them in 8 layers pass the limit), so each round takes as many as fit and the next the rest.
    pub max_rounds: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { max_window_nodes: 96, iter_limit: 8, node_limit: 3000, rounds: 2, max_rounds: 64 }
    }
}

/// Rewrite `model` in place with the rules of `target` valid at `opset`; `model` has no dead nodes
/// (the linear passes end with dead-code elimination).
pub fn rewrite(model: &mut Model, opset: i64, target: Target, stats: &mut OptimizeStats) {
    rewrite_rounds(model, opset, target, &Limits::default(), stats, true)
}

/// [`rewrite`] with other limits, keeping nodes the rewrite made dead (for the tests of limits).
#[cfg(test)]
pub fn rewrite_with(model: &mut Model, opset: i64, limits: &Limits, stats: &mut OptimizeStats) {
    rewrite_rounds(model, opset, Target::Onnx, limits, stats, false)
}

fn rewrite_rounds(
    model: &mut Model,
    opset: i64,
    target: Target,
    limits: &Limits,
    stats: &mut OptimizeStats,
    clean: bool,
) {
    // egg times its work with quanta, whose first use calibrates the TSC against the OS clock in a
    // busy loop of up to 200 ms (3 ms median on the zoo, a tenth of a small export). A mock clock
    // that never advances skips the calibration; no limit is a time (see `Limits`).
    let (clock, _) = quanta::Clock::mock();
    quanta::with_clock(&clock, || rewrite_rounds_timed(model, opset, target, limits, stats, clean))
}

fn rewrite_rounds_timed(
    model: &mut Model,
    opset: i64,
    target: Target,
    limits: &Limits,
    stats: &mut OptimizeStats,
    clean: bool,
) {
    let dropped_before = stats.egraph_candidates_dropped;
    for r in 0..limits.max_rounds.max(limits.rounds) {
        // Readers are counted on live nodes only: a dead reader would block every single-use fusion.
        if r > 0 || !clean {
            crate::onnx::dce::eliminate_dead_code(&mut model.graph);
        }
        let (rewrote, dropped) = round(model, opset, target, limits, stats);
        // Counted for the last round only: a candidate a later round took was not left out.
        stats.egraph_candidates_dropped = dropped_before + dropped;
        if !rewrote || (r + 1 >= limits.rounds && dropped == 0) {
            break;
        }
    }
}

/// Readers of every value (subgraph reads included), and values that must stay as they are named:
/// graph outputs and values read inside subgraph bodies.
fn readers(model: &Model) -> (Vec<u32>, Vec<bool>) {
    let mut uses = vec![0u32; model.values.len()];
    let mut pinned = vec![false; model.values.len()];
    fn walk(g: &Graph, uses: &mut [u32], pinned: &mut [bool], nested: bool) {
        for n in &g.nodes {
            for v in n.inputs.iter().flatten() {
                uses[v.index()] = uses[v.index()].saturating_add(1);
                if nested {
                    pinned[v.index()] = true;
                }
            }
            for a in &n.attributes {
                if let AttrValue::Graph(sub) = &a.value {
                    walk(sub, uses, pinned, true);
                }
            }
        }
        for v in &g.outputs {
            uses[v.index()] = uses[v.index()].saturating_add(1);
            pinned[v.index()] = true;
        }
    }
    walk(&model.graph, &mut uses, &mut pinned, false);
    (uses, pinned)
}

/// What one window turned into.
struct Spliced {
    nodes: Vec<(usize, Node)>,
    aliases: Vec<(Value, Value)>,
    initializers: Vec<Value>,
}

/// One round: whether it rewrote anything, and how many candidates it left out of its windows.
fn round(model: &mut Model, opset: i64, target: Target, limits: &Limits, stats: &mut OptimizeStats) -> (bool, usize) {
    let all = variants(target);
    let selection = window::select(model, all, opset, limits.max_window_nodes);
    let dropped = selection.dropped;
    if selection.windows.is_empty() {
        return (false, dropped);
    }
    let (uses, pinned) = readers(model);
    let mut removed = vec![false; model.graph.nodes.len()];
    let mut spliced = Vec::new();
    for (w, picked) in &selection.windows {
        stats.egraph_windows += 1;
        let rewrites: Vec<_> = picked.iter().map(|&i| all[i].rewrite()).collect();
        if let Some(s) = run_window(model, w, &uses, &pinned, opset, limits, &rewrites, stats) {
            for &i in w.iter() {
                removed[i] = true;
            }
            spliced.push(s);
        }
    }
    if spliced.is_empty() {
        return (false, dropped);
    }
    (splice(model, removed, spliced), dropped)
}

fn value_data(info: &ValueInfo, uses: u32) -> Data {
    Data { dtype: info.dtype, shape: info.shape.clone(), konst: info.constant.as_deref().cloned(), uses }
}

#[allow(clippy::too_many_arguments)]
fn run_window(
    model: &mut Model,
    window: &[usize],
    uses: &[u32],
    pinned: &[bool],
    opset: i64,
    limits: &Limits,
    rewrites: &[&egg::Rewrite<ONode, OnnxAnalysis>],
    stats: &mut OptimizeStats,
) -> Option<Spliced> {
    let nodes = &model.graph.nodes;
    let mut eg = OGraph::new(OnnxAnalysis { opset, ..Default::default() });
    let mut class_of: HashMap<Value, Id> = HashMap::new();
    let mut original: HashSet<ONode> = HashSet::new();
    let mut inside_reads: HashMap<Value, u32> = HashMap::new();
    for &i in window {
        let n = &nodes[i];
        let mut children = Vec::with_capacity(n.inputs.len() + 1);
        for input in &n.inputs {
            children.push(match input {
                None => eg.add(ONode::Absent),
                Some(v) => {
                    *inside_reads.entry(*v).or_default() += 1;
                    match class_of.get(v) {
                        Some(&id) => id,
                        None => {
                            let info = &model.values[v.index()];
                            eg.analysis.leaves.insert(v.0, value_data(info, uses[v.index()]));
                            let id = eg.add(ONode::Leaf(v.0));
                            class_of.insert(*v, id);
                            id
                        }
                    }
                }
            });
        }
        let attrs = eg.analysis.attrs.intern(attr_set(&n.attributes)?);
        children.push(eg.add(ONode::Attrs(attrs)));
        let key = OpKey { op: n.op_type.as_str().into(), domain: n.domain.as_str().into(), outputs: 1 };
        let node = ONode::Op(key, children);
        original.insert(node.clone());
        let out = n.outputs[0];
        let id = add_with(&mut eg, node, value_data(&model.values[out.index()], 0));
        let u = if pinned[out.index()] { u32::MAX } else { uses[out.index()] };
        eg[id].data.uses = eg[id].data.uses.saturating_add(u);
        class_of.insert(out, id);
    }
    // Values something outside the window reads (or a graph output / subgraph read).
    let outputs: Vec<Value> = window
        .iter()
        .map(|&i| nodes[i].outputs[0])
        .filter(|v| pinned[v.index()] || uses[v.index()] > inside_reads.get(v).copied().unwrap_or(0))
        .collect();
    if outputs.is_empty() {
        return None;
    }
    let root = eg.add(ONode::Root(outputs.iter().map(|v| class_of[v]).collect()));
    let runner = Runner::default()
        .with_egraph(eg)
        .with_iter_limit(limits.iter_limit)
        .with_node_limit(limits.node_limit)
        .with_scheduler(SimpleScheduler)
        // A wall-clock limit would make the output depend on the machine's load: the window is
        // bounded by the iteration and e-node limits alone (egg's clock is mocked anyway).
        .with_time_limit(Duration::MAX)
        .run(rewrites.iter().copied());
    if !matches!(runner.stop_reason, Some(StopReason::Saturated)) {
        stats.egraph_windows_stopped += 1;
    }
    let mut eg = runner.egraph;
    for ((rule, why), n) in std::mem::take(&mut eg.analysis.rejected) {
        *stats.rules_rejected.entry(format!("{rule}: {why}")).or_default() += n;
    }
    let fired = std::mem::take(&mut eg.analysis.fired);
    if fired.is_empty() {
        return None;
    }
    let choice = extract::extract(&eg, root, &original)?;
    let mut em = Emitter {
        eg: &eg,
        choice: &choice,
        nodes,
        values: &mut model.values,
        origin: HashMap::new(),
        value_of: HashMap::new(),
        done: HashMap::new(),
        out: Vec::new(),
        initializers: Vec::new(),
    };
    // A class computes the value of the original node(s) it holds; the last one in graph order is
    // the one a pattern was rooted at, whose metadata a replacement inherits.
    for &i in window {
        em.origin.insert(eg.find(class_of[&nodes[i].outputs[0]]), i);
    }
    // Window outputs keep their values (graph outputs first, so they stay node outputs when two
    // outputs became one class); other original values are reused for their classes.
    let graph_outputs: HashSet<Value> = model.graph.outputs.iter().copied().collect();
    let mut ordered: Vec<Value> = outputs.iter().copied().filter(|v| graph_outputs.contains(v)).collect();
    ordered.extend(outputs.iter().copied().filter(|v| !graph_outputs.contains(v)));
    ordered.extend(window.iter().map(|&i| nodes[i].outputs[0]));
    for v in ordered {
        em.value_of.entry(eg.find(class_of[&v])).or_insert(v);
    }
    let mut aliases = Vec::new();
    for &o in &outputs {
        let c = eg.find(class_of[&o]);
        let e = em.emit(c, None)?;
        match e {
            Some(e) if e == o => {}
            Some(e) if graph_outputs.contains(&o) => {
                // A graph output must be produced under its own name.
                let pos = em.origin.get(&c).copied().unwrap_or(window[0]);
                em.out.push((pos, Node::identity(e, o, nodes[pos].metadata.clone())));
            }
            Some(e) => aliases.push((o, e)),
            None => return None,
        }
    }
    for (rule, n) in fired {
        *stats.rules_fired.entry(rule.to_string()).or_default() += n;
    }
    Some(Spliced { nodes: em.out, aliases, initializers: em.initializers })
}

struct Emitter<'a> {
    eg: &'a OGraph,
    choice: &'a HashMap<Id, ONode>,
    nodes: &'a [Node],
    values: &'a mut Vec<ValueInfo>,
    /// Class → index of the original node that computed it.
    origin: HashMap<Id, usize>,
    /// Class → the original value it keeps.
    value_of: HashMap<Id, Value>,
    /// Class → emitted outputs (one for a value, several for a multi-output tuple).
    done: HashMap<Id, Vec<Option<Value>>>,
    /// New nodes with their position key (an original node index).
    out: Vec<(usize, Node)>,
    initializers: Vec<Value>,
}

impl Emitter<'_> {
    fn new_value(&mut self, data: &Data) -> Value {
        let v = Value(self.values.len() as u32);
        self.values.push(ValueInfo { dtype: data.dtype, shape: data.shape.clone(), ..Default::default() });
        v
    }

    fn value_for(&mut self, class: Id) -> Value {
        match self.value_of.get(&class) {
            Some(&v) => v,
            None => {
                let d = self.eg[class].data.clone();
                self.new_value(&d)
            }
        }
    }

    /// Emit the nodes computing `class`; `parent` is the (metadata, position) of the node that
    /// needs it, for nodes that replace no original node.
    fn emit(&mut self, class: Id, parent: Option<(Rc<MetadataProps>, usize)>) -> Option<Option<Value>> {
        Some(self.emit_all(class, parent)?.first().copied().flatten())
    }

    fn emit_all(&mut self, class: Id, parent: Option<(Rc<MetadataProps>, usize)>) -> Option<Vec<Option<Value>>> {
        let class = self.eg.find(class);
        if let Some(v) = self.done.get(&class) {
            return Some(v.clone());
        }
        let node = self.choice.get(&class)?.clone();
        let result = match node {
            ONode::Leaf(v) => vec![Some(Value(v))],
            ONode::Absent => vec![None],
            ONode::Const(k) => {
                let t = self.eg.analysis.consts.get(k as usize)?.clone();
                let d = self.eg[class].data.clone();
                let v = self.new_value(&d);
                self.values[v.index()].constant = Some(Box::new(t));
                self.initializers.push(v);
                vec![Some(v)]
            }
            ONode::Proj(i, [t]) => {
                // The node computing the tuple takes the metadata of the original node whose value
                // this output now computes.
                let here = self.origin.get(&class).map(|&k| (self.nodes[k].metadata.clone(), k));
                let outs = self.emit_all(t, here.or(parent))?;
                vec![*outs.get(i as usize)?]
            }
            ONode::Attrs(_) | ONode::Root(_) => return None,
            ONode::Op(key, children) => {
                let here = match self.origin.get(&class) {
                    Some(&i) => (self.nodes[i].metadata.clone(), i),
                    None => parent.clone()?,
                };
                let (attr_id, inputs) = children.split_last()?;
                let attrs = match self.choice.get(&self.eg.find(*attr_id))? {
                    ONode::Attrs(a) => to_attributes(self.eg.analysis.attrs.get(*a)),
                    _ => return None,
                };
                let mut ins = Vec::with_capacity(inputs.len());
                for &c in inputs {
                    ins.push(self.emit(c, Some(here.clone()))?);
                }
                let outputs: Vec<Value> = if key.outputs == 1 {
                    vec![self.value_for(class)]
                } else {
                    (0..key.outputs)
                        .map(|i| match self.eg.lookup(ONode::Proj(i, [class])).map(|p| self.eg.find(p)) {
                            // The output names its class's value only where the class chose it;
                            // else another node computes that value, and this output is unread.
                            Some(p) if matches!(self.choice.get(&p), Some(ONode::Proj(..))) => self.value_for(p),
                            Some(p) => {
                                let d = self.eg[p].data.clone();
                                self.new_value(&d)
                            }
                            None => self.new_value(&Data::default()),
                        })
                        .collect()
                };
                // Trailing omitted inputs are dropped, as the builder does.
                while matches!(ins.last(), Some(None)) {
                    ins.pop();
                }
                self.out.push((
                    here.1,
                    Node {
                        op_type: key.op.to_string(),
                        domain: key.domain.to_string(),
                        name: String::new(),
                        inputs: ins,
                        outputs: outputs.clone(),
                        attributes: attrs,
                        metadata: here.0,
                    },
                ));
                outputs.into_iter().map(Some).collect()
            }
        };
        self.done.insert(class, result.clone());
        Some(result)
    }
}

fn rename(g: &mut Graph, aliases: &HashMap<Value, Value>) {
    let resolve = |v: &mut Value| {
        let mut steps = 0;
        while let Some(&t) = aliases.get(v) {
            *v = t;
            steps += 1;
            if steps > aliases.len() {
                break;
            }
        }
    };
    for n in &mut g.nodes {
        n.inputs.iter_mut().flatten().for_each(resolve);
        for a in &mut n.attributes {
            if let AttrValue::Graph(sub) = &mut a.value {
                sub.outputs.iter_mut().for_each(resolve);
                rename(sub, aliases);
            }
        }
    }
}

/// Replace the removed nodes by the spliced ones and restore topological order (original order
/// wherever dependencies allow). Returns false, leaving the graph untouched, on a cycle.
fn splice(model: &mut Model, removed: Vec<bool>, spliced: Vec<Spliced>) -> bool {
    // Nodes move (no copies): kept ones with their original index as position key, replaced ones
    // aside in case the result has a cycle and the original must be put back.
    let old = std::mem::take(&mut model.graph.nodes);
    let mut keys: Vec<usize> = Vec::with_capacity(old.len());
    let mut nodes: Vec<Node> = Vec::with_capacity(old.len());
    let mut aside: Vec<(usize, Node)> = Vec::new();
    for (i, n) in old.into_iter().enumerate() {
        if removed[i] {
            aside.push((i, n));
        } else {
            keys.push(i);
            nodes.push(n);
        }
    }
    let kept = nodes.len();
    let mut aliases: HashMap<Value, Value> = HashMap::new();
    let mut inits = Vec::new();
    for s in spliced {
        for (k, n) in s.nodes {
            keys.push(k);
            nodes.push(n);
        }
        aliases.extend(s.aliases);
        inits.extend(s.initializers);
    }
    match topological_order(&nodes, &keys, &aliases) {
        Some(order) => {
            let mut slots: Vec<Option<Node>> = nodes.into_iter().map(Some).collect();
            let mut g =
                Graph { nodes: order.into_iter().filter_map(|i| slots[i].take()).collect(), ..Default::default() };
            if !aliases.is_empty() {
                // Every reader, subgraph bodies of nodes outside the windows included.
                rename(&mut g, &aliases);
            }
            model.graph.nodes = g.nodes;
            model.graph.initializers.extend(inits);
            true
        }
        None => {
            // A cycle would be a bug in a rule; put the original graph back.
            let mut orig: Vec<(usize, Node)> = keys.into_iter().zip(nodes).take(kept).collect();
            orig.extend(aside);
            orig.sort_by_key(|(k, _)| *k);
            model.graph.nodes = orig.into_iter().map(|(_, n)| n).collect();
            false
        }
    }
}

/// Kahn's algorithm over the reads after renaming by `aliases`, taking among ready nodes the one
/// with the smallest position key; `None` on a cycle.
fn topological_order(nodes: &[Node], keys: &[usize], aliases: &HashMap<Value, Value>) -> Option<Vec<usize>> {
    let resolve = |mut v: Value| {
        for _ in 0..=aliases.len() {
            match aliases.get(&v) {
                Some(&t) => v = t,
                None => break,
            }
        }
        v
    };
    let producer: HashMap<Value, usize> =
        nodes.iter().enumerate().flat_map(|(i, n)| n.outputs.iter().map(move |&v| (v, i))).collect();
    let mut indeg = vec![0usize; nodes.len()];
    let mut readers: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
    let mut reads = Vec::new();
    for (i, n) in nodes.iter().enumerate() {
        reads.clear();
        n.for_each_read(&mut |v| reads.push(v));
        if !aliases.is_empty() {
            reads.iter_mut().for_each(|v| *v = resolve(*v));
        }
        reads.sort_unstable();
        reads.dedup();
        for v in &reads {
            if let Some(&p) = producer.get(v) {
                if p != i {
                    indeg[i] += 1;
                    readers[p].push(i);
                }
            }
        }
    }
    let mut heap: BinaryHeap<Reverse<(usize, usize)>> =
        (0..nodes.len()).filter(|&i| indeg[i] == 0).map(|i| Reverse((keys[i], i))).collect();
    let mut order = Vec::with_capacity(nodes.len());
    while let Some(Reverse((_, i))) = heap.pop() {
        order.push(i);
        for &r in &readers[i] {
            indeg[r] -= 1;
            if indeg[r] == 0 {
                heap.push(Reverse((keys[r], r)));
            }
        }
    }
    (order.len() == nodes.len()).then_some(order)
}

#[cfg(test)]
mod tests;
