//! Dead-code elimination over a graph and its subgraphs.

use super::ir::{AttrValue, Graph, Node, Value};

/// Live values by id (one flag per value of the shared arena, grown on demand). One set serves a
/// graph and its subgraphs: value ids are unique across scopes, and whatever a live subgraph marks
/// is read by its live node, which the enclosing graph marks anyway.
struct Live(Vec<bool>);

impl Live {
    fn contains(&self, v: Value) -> bool {
        self.0.get(v.index()).copied().unwrap_or(false)
    }

    fn insert(&mut self, v: Value) {
        if self.0.len() <= v.index() {
            // Grow geometrically: ids are dense, and the first reads are near the largest.
            let n = (v.index() + 1).max(self.0.len() * 2);
            self.0.resize(n, false);
        }
        self.0[v.index()] = true;
    }
}

/// Mark every value a node reads, including values its subgraphs read from enclosing scopes.
fn mark_reads(node: &Node, live: &mut Live) {
    node.for_each_read(&mut |v| live.insert(v));
}

/// Remove nodes whose outputs nobody reads (walking backwards from the graph outputs) and
/// initializers nobody reads. Subgraphs are cleaned the same way, rooted at their own outputs.
pub fn eliminate_dead_code(graph: &mut Graph) {
    eliminate_dead_code_observed(graph, &mut |_| {});
}

/// [`eliminate_dead_code`], showing `removed` every node it drops (of any graph) before dropping it.
pub fn eliminate_dead_code_observed(graph: &mut Graph, removed: &mut dyn FnMut(&Node)) {
    let mut live = Live(Vec::new());
    eliminate(graph, &mut live, removed);
}

fn eliminate(graph: &mut Graph, live: &mut Live, removed: &mut dyn FnMut(&Node)) {
    for &o in &graph.outputs {
        live.insert(o);
    }
    let mut keep = vec![false; graph.nodes.len()];
    for (i, node) in graph.nodes.iter_mut().enumerate().rev() {
        if node.outputs.iter().any(|&o| live.contains(o)) {
            keep[i] = true;
            for a in &mut node.attributes {
                if let AttrValue::Graph(g) = &mut a.value {
                    eliminate(g, live, removed);
                }
            }
            mark_reads(node, live);
        }
    }
    if keep.iter().any(|k| !k) {
        let mut i = 0;
        graph.nodes.retain(|n| {
            i += 1;
            if !keep[i - 1] {
                removed(n);
            }
            keep[i - 1]
        });
    }
    graph.initializers.retain(|&v| live.contains(v));
}
