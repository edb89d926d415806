//! A DAG-aware extractor: the cost of a choice is the number of distinct operator nodes it needs,
//! shared subterms counted once (egg's stock extractor sums tree costs, which counts a residual
//! branch once per path and overflows on deep nets, and is quadratic on long chains).
//!
//! Each e-class keeps the set of classes its best choice reaches, as a bitset; passes over the
//! classes improve choices until nothing changes. Windows are bounded, so a bitset is a few words.
//! A choice whose children reach the class itself is a cycle and is never taken. Ties keep nodes
//! of the original graph, so a window no rule improved comes back as it was (and outputs of
//! multi-output nodes, see below).
//!
//! An operator costs [`OP`]; a leaf that is computed outside the window and read only here costs 1,
//! because a choice that stops reading it lets its producer die (a Reshape whose computed shape is
//! replaced by a constant is smaller, though the window holds only the Reshape).

use std::collections::{HashMap, HashSet};

use egg::{Id, Language};

use super::analysis::OGraph;
use super::lang::ONode;

const MAX_PASSES: usize = 64;
const OP: u64 = 1000;

fn weight(eg: &OGraph, class: Id, node: &ONode) -> u64 {
    match node {
        ONode::Op(..) => OP,
        ONode::Leaf(_) => {
            let d = &eg[class].data;
            (d.uses <= 1 && d.konst.is_none()) as u64
        }
        _ => 0,
    }
}

/// The chosen e-node of every class reachable from `root`, or `None` if the root has no acyclic
/// choice (the caller then keeps the window as it was).
pub fn extract(eg: &OGraph, root: Id, original: &HashSet<ONode>) -> Option<HashMap<Id, ONode>> {
    let mut ids: Vec<Id> = eg.classes().map(|c| c.id).collect();
    ids.sort_unstable();
    let index: HashMap<Id, usize> = ids.iter().enumerate().map(|(i, &id)| (id, i)).collect();
    let n = ids.len();
    let words = n.div_ceil(64);
    let mut best_set: Vec<Option<Vec<u64>>> = vec![None; n];
    let mut best_node: Vec<usize> = vec![usize::MAX; n];
    let mut best_cost: Vec<u64> = vec![u64::MAX; n];
    // Weight of each class's current choice.
    let mut weights = vec![0u64; n];
    let bit = |s: &[u64], i: usize| s[i / 64] >> (i % 64) & 1 == 1;
    let canon_original: HashSet<ONode> = original.iter().map(|nd| nd.clone().map_children(|c| eg.find(c))).collect();
    for _ in 0..MAX_PASSES {
        let mut changed = false;
        for ci in 0..n {
            let class = &eg[ids[ci]];
            let mut pick: Option<(u64, u8, usize, Vec<u64>)> = None; // (cost, rank, node, set)
            'nodes: for (ni, node) in class.nodes.iter().enumerate() {
                let mut set = vec![0u64; words];
                for ch in node.children() {
                    let k = index[&eg.find(*ch)];
                    match &best_set[k] {
                        Some(s) if !bit(s, ci) => set.iter_mut().zip(s).for_each(|(a, b)| *a |= b),
                        _ => continue 'nodes,
                    }
                }
                let is_op = matches!(node, ONode::Op(..));
                let mut cost = weight(eg, ids[ci], node);
                for (wi, &word) in set.iter().enumerate() {
                    let mut bits = word;
                    while bits != 0 {
                        let b = bits.trailing_zeros() as usize;
                        cost += weights[wi * 64 + b];
                        bits &= bits - 1;
                    }
                }
                set[ci / 64] |= 1 << (ci % 64);
                // Ties keep original nodes; an output of a multi-output node (only rules make them)
                // wins one, since another output of the same node is then free (a fused sum read
                // after its norm: the norm chose the fused node first).
                let rank = match node {
                    ONode::Proj(..) => 2,
                    _ if !is_op || canon_original.contains(node) => 1,
                    _ => 0,
                };
                let better = match &pick {
                    None => true,
                    Some((c, r, _, _)) => cost < *c || (cost == *c && rank > *r),
                };
                if better {
                    pick = Some((cost, rank, ni, set));
                }
            }
            if let Some((cost, _, ni, set)) = pick {
                if best_node[ci] != ni || best_cost[ci] != cost || best_set[ci].as_ref() != Some(&set) {
                    changed = true;
                    weights[ci] = weight(eg, ids[ci], &class.nodes[ni]);
                    best_node[ci] = ni;
                    best_cost[ci] = cost;
                    best_set[ci] = Some(set);
                }
            }
        }
        if !changed {
            break;
        }
    }
    // A class that chose another node than an output of a multi-output node the extraction keeps
    // anyway takes that output: it costs nothing more (a class's cost cannot see that another
    // class pays for the node), and the value would otherwise be computed twice (an `Attention`
    // whose present key is also the cache's own Concat). Not where the node reads the class.
    let reached = reachable(eg, root, &index, &best_node);
    for (ci, &id) in ids.iter().enumerate() {
        if !reached[ci] || matches!(eg[id].nodes.get(best_node[ci]), Some(ONode::Proj(..))) {
            continue;
        }
        let free = eg[id].nodes.iter().position(|n| match n {
            ONode::Proj(_, [t]) => {
                let t = index[&eg.find(*t)];
                reached[t] && best_set[t].as_ref().is_some_and(|s| !bit(s, ci))
            }
            _ => false,
        });
        if let Some(ni) = free {
            best_node[ci] = ni;
        }
    }
    let mut out = HashMap::new();
    let mut stack = vec![eg.find(root)];
    while let Some(id) = stack.pop() {
        if out.contains_key(&id) {
            continue;
        }
        let ci = index[&id];
        let node = eg[id].nodes.get(best_node[ci])?.clone().map_children(|c| eg.find(c));
        stack.extend(node.children().iter().copied());
        out.insert(id, node);
    }
    Some(out)
}

/// Which classes (by their `index`) the choices reach from `root`.
fn reachable(eg: &OGraph, root: Id, index: &HashMap<Id, usize>, best_node: &[usize]) -> Vec<bool> {
    let mut seen = vec![false; index.len()];
    let mut stack = vec![eg.find(root)];
    while let Some(id) = stack.pop() {
        let ci = index[&id];
        if std::mem::replace(&mut seen[ci], true) {
            continue;
        }
        if let Some(node) = eg[id].nodes.get(best_node[ci]) {
            stack.extend(node.children().iter().map(|&c| eg.find(c)));
        }
    }
    seen
}
