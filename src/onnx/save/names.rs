//! The names a saved model uses, settled in one walk over the graph.
//!
//! Values the lowering did not name become `val_<k>`, nodes `node_<OpType>_<k>`, numbered in the
//! order the writer visits them, so the same model always saves to the same bytes. Both writers
//! ([`super::plain`] and [`super::stream`]) take their names from here.

use std::collections::{HashMap, HashSet};

use crate::onnx::ir::{AttrValue, Graph, Model, Value};

/// The value or node has a name of its own in the IR.
const GIVEN: u32 = u32::MAX;
/// The value is not referenced by the saved model.
const UNNAMED: u32 = u32::MAX - 1;

/// Every name of the saved model. Generated names are stored as their number only: a graph of a
/// million values allocates no string per value.
pub(crate) struct Names<'m> {
    pub(super) model: &'m Model,
    /// Per value: [`GIVEN`], [`UNNAMED`] or `k` of `val_<k>`.
    values: Vec<u32>,
    /// Per node of every graph: [`GIVEN`] or `k` of `node_<OpType>_<k>`; each graph's nodes are a
    /// contiguous run starting at `graphs[&graph address]`.
    nodes: Vec<u32>,
    graphs: HashMap<*const Graph, usize>,
}

/// A name as the writer emits it, without allocating the generated ones.
#[derive(Clone, Copy)]
pub(super) enum Name<'a> {
    Given(&'a str),
    Value(u32),
    Node(&'a str, u32),
}

impl Name<'_> {
    /// Length in bytes of the written name.
    pub(super) fn len(self) -> usize {
        match self {
            Name::Given(s) => s.len(),
            Name::Value(k) => 4 + digits(k),
            Name::Node(op, k) => 6 + op.len() + digits(k),
        }
    }

    pub(super) fn owned(self) -> String {
        match self {
            Name::Given(s) => s.to_string(),
            Name::Value(k) => format!("val_{k}"),
            Name::Node(op, k) => format!("node_{op}_{k}"),
        }
    }
}

fn digits(mut k: u32) -> usize {
    let mut n = 1;
    while k >= 10 {
        k /= 10;
        n += 1;
    }
    n
}

impl<'m> Names<'m> {
    pub(crate) fn new(model: &'m Model) -> Self {
        // Only given names shaped like generated ones can collide with them.
        let used: HashSet<&str> = model
            .values
            .iter()
            .map(|v| v.name.as_str())
            .filter(|n| n.starts_with("val_") || n.starts_with("node_"))
            .collect();
        let check_values = used.iter().any(|n| n.starts_with("val_"));
        let check_nodes = used.iter().any(|n| n.starts_with("node_"));
        let mut walk = NameWalk {
            names: Names {
                model,
                values: vec![UNNAMED; model.values.len()],
                nodes: Vec::with_capacity(model.graph.nodes.len()),
                graphs: HashMap::new(),
            },
            used,
            check_values,
            check_nodes,
            next_value: 0,
            next_node: 0,
        };
        walk.graph(&model.graph, true);
        // After the main graph: a model without functions is named as before.
        for f in &model.functions {
            walk.graph(&f.body, false);
        }
        walk.names
    }

    pub(super) fn value(&self, v: Value) -> Name<'m> {
        match self.values[v.index()] {
            GIVEN => Name::Given(&self.model.values[v.index()].name),
            UNNAMED => Name::Given(""), // unreachable: the walk names every value the writer uses
            k => Name::Value(k),
        }
    }

    /// Where the node names of `graph` start in `nodes`.
    pub(super) fn base(&self, graph: &Graph) -> usize {
        self.graphs.get(&(graph as *const Graph)).copied().unwrap_or(0)
    }

    /// The name of node `j` of `graph`, whose [`Self::base`] is `base`.
    pub(super) fn node<'a>(&self, graph: &'a Graph, base: usize, j: usize) -> Name<'a> {
        let node = &graph.nodes[j];
        match self.nodes.get(base + j).copied().unwrap_or(GIVEN) {
            GIVEN => Name::Given(&node.name),
            k => Name::Node(&node.op_type, k),
        }
    }
}

struct NameWalk<'m> {
    names: Names<'m>,
    /// Names given in the IR, which generated names must avoid.
    used: HashSet<&'m str>,
    // Only when some given name looks like a generated one do candidates need a lookup.
    check_values: bool,
    check_nodes: bool,
    next_value: u32,
    next_node: u32,
}

impl NameWalk<'_> {
    fn value(&mut self, v: Value) {
        let i = v.index();
        if self.names.values[i] != UNNAMED {
            return;
        }
        if !self.names.model.values[i].name.is_empty() {
            self.names.values[i] = GIVEN;
            return;
        }
        loop {
            let k = self.next_value;
            self.next_value += 1;
            if !self.check_values || !self.used.contains(format!("val_{k}").as_str()) {
                self.names.values[i] = k;
                return;
            }
        }
    }

    fn node(&mut self, op_type: &str) -> u32 {
        loop {
            let k = self.next_node;
            self.next_node += 1;
            if !self.check_nodes || !self.used.contains(format!("node_{op_type}_{k}").as_str()) {
                return k;
            }
        }
    }

    /// Visit `g` in the writer's order: inputs, then per node its name, inputs, outputs and
    /// subgraphs, then outputs and (main graph) initializers.
    fn graph(&mut self, g: &Graph, main: bool) {
        let base = self.names.nodes.len();
        self.names.graphs.insert(g as *const Graph, base);
        self.names.nodes.resize(base + g.nodes.len(), GIVEN);
        for &v in &g.inputs {
            self.value(v);
        }
        for (j, node) in g.nodes.iter().enumerate() {
            if node.name.is_empty() {
                self.names.nodes[base + j] = self.node(&node.op_type);
            }
            for &v in node.inputs.iter().flatten() {
                self.value(v);
            }
            for &v in &node.outputs {
                self.value(v);
            }
            for a in &node.attributes {
                if let AttrValue::Graph(sub) = &a.value {
                    self.graph(sub, false);
                }
            }
        }
        for &v in &g.outputs {
            self.value(v);
        }
        if main {
            for &v in &g.initializers {
                if self.names.model.value(v).constant.is_some() {
                    self.value(v);
                }
            }
        }
    }
}
