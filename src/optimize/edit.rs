//! Machinery shared by the linear passes: one forward sweep over the main graph that lets a pass
//! drop a node and say which value stands for each of its outputs, then keeps every reader right.
//!
//! A sweep is linear: nodes are visited once in topological order, substitutions are applied to a
//! node's inputs (and to the reads of its subgraphs, which may name outer values) just before the
//! pass looks at it, and graph outputs are fixed up once at the end so they keep their names.

use std::cell::RefCell;
use std::rc::Rc;

use crate::onnx::ir::{AttrValue, DType, Dim, Graph, MetadataProps, Model, Node, TensorData, Value, ValueInfo};
pub(crate) use crate::onnx::operators::{attr_int, attr_ints, input};

const NONE: u32 = u32::MAX;

/// What a pass decided about one node.
pub(crate) enum Action {
    Keep(Node),
    /// Drop the node; each `(output, replacement)` pair redirects the output's readers.
    Replace {
        node: Node,
        with: Vec<(Value, Value)>,
    },
    /// Keep the node, but let every later reader of an output read its replacement instead (the
    /// node stays for a graph output it must keep producing under its name).
    Redirect {
        node: Node,
        with: Vec<(Value, Value)>,
    },
}

/// Who reads each value of the main graph, as a pass needs it while it decides (computed once per
/// sweep).
pub(crate) struct Uses {
    /// Per value: how many times it is read (node inputs, subgraph reads, graph outputs).
    pub counts: Vec<u32>,
    /// Per value: it is a main-graph output.
    pub is_output: Vec<bool>,
    /// Per value: it is a main-graph input.
    pub is_input: Vec<bool>,
}

impl Uses {
    pub fn new(model: &Model) -> Self {
        let n = model.values.len();
        let mut uses = vec![0u32; n];
        let mut is_output = vec![false; n];
        let mut is_input = vec![false; n];
        for &i in &model.graph.inputs {
            is_input[i.index()] = true;
        }
        fn count(g: &Graph, uses: &mut [u32]) {
            for node in &g.nodes {
                for v in node.inputs.iter().flatten() {
                    uses[v.index()] += 1;
                }
                for a in &node.attributes {
                    if let AttrValue::Graph(sub) = &a.value {
                        for &o in &sub.outputs {
                            uses[o.index()] += 1;
                        }
                        count(sub, uses);
                    }
                }
            }
        }
        count(&model.graph, &mut uses);
        for &o in &model.graph.outputs {
            uses[o.index()] += 1;
            is_output[o.index()] = true;
        }
        Uses { counts: uses, is_output, is_input }
    }

    pub fn count(&self, v: Value) -> u32 {
        self.counts.get(v.index()).copied().unwrap_or(0)
    }

    pub fn is_output(&self, v: Value) -> bool {
        self.is_output.get(v.index()).copied().unwrap_or(false)
    }
}

thread_local! {
    /// While the linear passes run: the uses of the graph as it is now, if a sweep counted them
    /// and nothing changed since (a pass that made no rewrite changed nothing). `None` outside.
    static CACHED_USES: RefCell<Option<Option<Rc<Uses>>>> = const { RefCell::new(None) };
}

/// Keeps the uses one sweep counted for the next while the graph does not change (counting every
/// read of every node is a good part of a sweep that rewrites nothing). Dropping it ends the reuse.
pub(crate) struct UsesCache(());

impl UsesCache {
    pub fn new() -> Self {
        CACHED_USES.with(|c| *c.borrow_mut() = Some(None));
        UsesCache(())
    }

    /// The graph changed: uses must be counted again.
    pub fn invalidate(&self) {
        CACHED_USES.with(|c| *c.borrow_mut() = Some(None));
    }
}

impl Drop for UsesCache {
    fn drop(&mut self) {
        CACHED_USES.with(|c| *c.borrow_mut() = None);
    }
}

/// The uses of `model` now: cached ones while they hold, else counted.
fn uses_of(model: &Model) -> Rc<Uses> {
    CACHED_USES.with(|c| {
        let mut c = c.borrow_mut();
        match &mut *c {
            Some(Some(f)) => f.clone(),
            Some(slot) => {
                let f = Rc::new(Uses::new(model));
                *slot = Some(f.clone());
                f
            }
            None => Rc::new(Uses::new(model)),
        }
    })
}

/// Value substitutions made during one sweep.
pub(crate) struct Subst {
    /// Per value: its replacement, or `NONE`. Allocated on the first substitution: most sweeps of
    /// a converged graph make none, and then reads need no rewriting at all.
    to: Vec<u32>,
    /// Values the model had when the sweep started (the size `to` takes when first needed).
    values: usize,
    /// Metadata of dropped nodes whose output was a graph output (for an `Identity`, if one is needed).
    output_meta: Vec<(Value, Rc<MetadataProps>)>,
    /// Substituted values whose node was kept ([`Action::Redirect`]): a graph output among them is
    /// still produced as it is.
    still_produced: Vec<Value>,
}

impl Subst {
    pub fn new(values: usize) -> Self {
        Subst { to: Vec::new(), values, output_meta: Vec::new(), still_produced: Vec::new() }
    }

    /// No value has been substituted yet.
    pub fn is_empty(&self) -> bool {
        self.to.is_empty()
    }

    /// The value `v` now stands for.
    pub fn get(&self, v: Value) -> Value {
        let mut v = v;
        // Chains are short: `set` always stores a resolved target.
        while let Some(&t) = self.to.get(v.index()) {
            if t == NONE {
                break;
            }
            v = Value(t);
        }
        v
    }

    /// The value graph output `o` now stands for.
    fn output(&self, o: Value) -> Value {
        if self.still_produced.contains(&o) {
            o
        } else {
            self.get(o)
        }
    }

    pub fn set(&mut self, old: Value, new: Value) {
        let new = self.get(new);
        if new == old {
            return;
        }
        if self.to.len() <= old.index() {
            self.to.resize(self.values.max(old.index() + 1), NONE);
        }
        self.to[old.index()] = new.0;
    }

    /// Rewrite the reads of `node` (inputs and subgraph reads of outer values).
    pub fn apply(&self, node: &mut Node) {
        if self.is_empty() {
            return;
        }
        self.apply_node(node);
    }

    fn apply_node(&self, node: &mut Node) {
        for v in node.inputs.iter_mut().flatten() {
            *v = self.get(*v);
        }
        for a in &mut node.attributes {
            if let AttrValue::Graph(g) = &mut a.value {
                self.apply_graph(g);
            }
        }
    }

    fn apply_graph(&self, g: &mut Graph) {
        for n in &mut g.nodes {
            self.apply_node(n);
        }
        for o in &mut g.outputs {
            *o = self.get(*o);
        }
    }
}

/// One sweep over the main graph: `decide` sees each node with its inputs already substituted.
/// Returns how many nodes were dropped.
pub(crate) fn sweep(model: &mut Model, mut decide: impl FnMut(&mut Model, &Uses, Node) -> Action) -> usize {
    let subst = Subst::new(model.values.len());
    sweep_kept(model, subst, |model, uses, _, node| decide(model, uses, node))
}

/// [`sweep`], starting from substitutions already made (values replaced outside any node).
pub(crate) fn sweep_from(
    model: &mut Model,
    subst: Subst,
    mut decide: impl FnMut(&mut Model, &Uses, Node) -> Action,
) -> usize {
    sweep_kept(model, subst, |model, uses, _, node| decide(model, uses, node))
}

/// [`sweep_from`] where `decide` also sees the nodes kept so far (in order; a kept node's index
/// in that slice stays valid for the rest of the sweep).
pub(crate) fn sweep_kept(
    model: &mut Model,
    mut subst: Subst,
    mut decide: impl FnMut(&mut Model, &Uses, &[Node], Node) -> Action,
) -> usize {
    let uses = uses_of(model);
    // Kept nodes are compacted in place: a fresh vector per sweep (tens of MB on large graphs) was
    // mostly page faults. A taken slot holds a placeholder until a kept node lands in it.
    let mut nodes = std::mem::take(&mut model.graph.nodes);
    let placeholder_meta: Rc<MetadataProps> = Rc::default();
    let mut kept = 0;
    let mut dropped = 0;
    for i in 0..nodes.len() {
        let mut node = std::mem::replace(&mut nodes[i], placeholder(&placeholder_meta));
        subst.apply(&mut node);
        match decide(model, &uses, &nodes[..kept], node) {
            Action::Keep(n) => {
                nodes[kept] = n;
                kept += 1;
            }
            Action::Replace { node, with } => {
                dropped += 1;
                for (old, new) in with {
                    if uses.is_output(old) {
                        subst.output_meta.push((old, node.metadata.clone()));
                    }
                    subst.set(old, new);
                }
            }
            Action::Redirect { node, with } => {
                for (old, new) in with {
                    subst.set(old, new);
                    subst.still_produced.push(old);
                }
                nodes[kept] = node;
                kept += 1;
            }
        }
    }
    nodes.truncate(kept);
    model.graph.nodes = nodes;
    fix_outputs(model, &subst);
    dropped
}

/// An empty node (allocates nothing) for a slot whose node was taken.
fn placeholder(metadata: &Rc<MetadataProps>) -> Node {
    Node {
        op_type: String::new(),
        domain: String::new(),
        name: String::new(),
        inputs: Vec::new(),
        outputs: Vec::new(),
        attributes: Vec::new(),
        metadata: metadata.clone(),
    }
}

/// Graph outputs keep their names: an output whose value was replaced either hands its name to the
/// replacement (when that is a plain node output of the main graph) or is re-produced by an
/// `Identity` of the replacement.
fn fix_outputs(model: &mut Model, subst: &Subst) {
    let outputs = model.graph.outputs.clone();
    if outputs.iter().all(|&o| subst.output(o) == o) {
        return;
    }
    let mut produced = vec![false; model.values.len()];
    for n in &model.graph.nodes {
        for o in &n.outputs {
            produced[o.index()] = true;
        }
    }
    let mut taken: Vec<bool> = vec![false; model.values.len()];
    for &o in &outputs {
        if subst.output(o) == o {
            taken[o.index()] = true;
        }
    }
    for (i, &old) in outputs.iter().enumerate() {
        let new = subst.output(old);
        if new == old {
            continue;
        }
        let renameable = produced[new.index()] && !taken[new.index()] && model.values[new.index()].constant.is_none();
        if renameable {
            taken[new.index()] = true;
            let old_info = std::mem::take(&mut model.values[old.index()]);
            let info = &mut model.values[new.index()];
            info.name = old_info.name;
            info.metadata = old_info.metadata;
            if old_info.shape.is_some() {
                info.shape = old_info.shape;
            }
            if old_info.dtype.is_some() {
                info.dtype = old_info.dtype;
            }
            model.graph.outputs[i] = new;
        } else {
            let metadata =
                subst.output_meta.iter().find(|(v, _)| *v == old).map(|(_, m)| m.clone()).unwrap_or_default();
            model.graph.nodes.push(Node::identity(new, old, metadata));
        }
    }
}

/// Whether a value may take over a graph output's name (see [`fix_outputs`]); passes use it to avoid
/// dropping a node only for an `Identity` to come back in its place.
pub(crate) fn can_stand_for_output(model: &Model, uses: &Uses, v: Value) -> bool {
    let info = model.value(v);
    info.constant.is_none() && !uses.is_output(v) && !uses.is_input.get(v.index()).copied().unwrap_or(true)
}

/// Turn `v` into a constant of the main graph (it keeps its name and metadata).
pub(crate) fn make_constant(model: &mut Model, v: Value, data: TensorData) {
    let info = &mut model.values[v.index()];
    info.dtype = Some(data.dtype);
    info.shape = Some(data.dims.iter().map(|&d| Dim::Fixed(d)).collect());
    info.constant = Some(Box::new(data));
    model.graph.initializers.push(v);
}

/// A new constant value of the main graph.
pub(crate) fn new_constant(model: &mut Model, data: TensorData) -> Value {
    let v = Value(model.values.len() as u32);
    model.values.push(ValueInfo::default());
    make_constant(model, v, data);
    v
}

/// The constant contents of `v`.
pub(crate) fn constant(model: &Model, v: Value) -> Option<&TensorData> {
    model.value(v).constant.as_deref()
}

/// The constant contents of input `i` as integers (axes, shapes, starts), for small int tensors.
pub(crate) fn const_ints(model: &Model, node: &Node, i: usize) -> Option<Vec<i64>> {
    let t = constant(model, input(node, i)?)?;
    if t.numel() > 1 << 16 || !matches!(t.dtype, DType::Int64 | DType::Int32) {
        return None;
    }
    t.to_i64s()
}
