//! Dead-code elimination over a graph and its subgraphs.

use std::collections::HashSet;

use super::ir::{AttrValue, Graph, Value};

/// Every value a node reads, including values its subgraphs read from enclosing scopes.
fn node_reads(node: &super::ir::Node, out: &mut Vec<Value>) {
    out.extend(node.inputs.iter().flatten().copied());
    for a in &node.attributes {
        if let AttrValue::Graph(g) = &a.value {
            graph_reads(g, out);
        }
    }
}

fn graph_reads(g: &Graph, out: &mut Vec<Value>) {
    out.extend(g.outputs.iter().copied());
    for n in &g.nodes {
        node_reads(n, out);
    }
}

/// Remove nodes whose outputs nobody reads (walking backwards from the graph outputs) and
/// initializers nobody reads. Subgraphs are cleaned the same way, rooted at their own outputs.
pub fn eliminate_dead_code(graph: &mut Graph) {
    let mut live: HashSet<Value> = graph.outputs.iter().copied().collect();
    let mut keep = vec![false; graph.nodes.len()];
    let mut reads = Vec::new();
    for (i, node) in graph.nodes.iter_mut().enumerate().rev() {
        if node.outputs.iter().any(|o| live.contains(o)) {
            keep[i] = true;
            for a in &mut node.attributes {
                if let AttrValue::Graph(g) = &mut a.value {
                    eliminate_dead_code(g);
                }
            }
            reads.clear();
            node_reads(node, &mut reads);
            live.extend(reads.iter().copied());
        }
    }
    let mut i = 0;
    graph.nodes.retain(|_| {
        i += 1;
        keep[i - 1]
    });
    graph.initializers.retain(|v| live.contains(v));
}
