//! Windows: the small parts of the graph where some rule could match, found without an e-graph.
//!
//! Every node is tried against the structure (operator types and input counts) of the rule variants
//! rooted at its operator; the nodes of each structural match form a candidate, and overlapping
//! candidates merge into one window while it stays under the node limit. A candidate that would make
//! a window too large is dropped (counted), so a window never grows without bound. The work is linear
//! in the graph size: each node is tried against a fixed set of variants of bounded depth.

use std::collections::BTreeSet;

use super::engine::{eligible, Pat, Precheck, Producers, Variant};
use crate::hash::FxHashMap;
use crate::onnx::ir::Model;

pub struct Selection {
    /// Node indices of each window, in graph order, with the rule variants that matched its
    /// structure (the only ones its e-graph runs; others get their chance in the next round).
    pub windows: Vec<(Vec<usize>, Vec<usize>)>,
    /// Candidate matches left out because their window would have passed the node limit.
    pub dropped: usize,
}

/// Windows of `model` for the rule `variants` (indices into it) valid at `opset`.
pub fn select(model: &Model, variants: &[Variant], opset: i64, max_nodes: usize) -> Selection {
    let graph = &model.graph;
    let mut by_root: FxHashMap<&str, Vec<(&Variant, usize)>> = FxHashMap::default();
    for (vi, v) in variants.iter().enumerate() {
        if v.def.min_opset > opset {
            continue;
        }
        if let Pat::Op { op, .. } = &v.pat {
            by_root.entry(op.as_str()).or_default().push((v, vi));
        }
    }
    let producer = Producers::new(model);
    // Windows whose picked variants all fail their rule's `Precheck::Window` everywhere are dropped
    // below; when no node could keep one (no candidate of a rule without such a test, no node
    // passing one), there is nothing to build, and the bookkeeping of the windows is skipped.
    let mut found = Vec::new();
    let anything = graph.nodes.iter().enumerate().any(|(i, n)| {
        let Some(pats) = by_root.get(n.op_type.as_str()) else { return false };
        eligible(n)
            && pats.iter().any(|&(v, _)| match v.def.precheck {
                Some(Precheck::Window(test)) => test(model, n, &producer),
                Some(Precheck::Root(test)) if !test(model, n, &producer) => false,
                _ => {
                    found.clear();
                    structural(model, &producer, &v.pat, i, &mut found)
                }
            })
    });
    if !anything {
        return Selection { windows: Vec::new(), dropped: 0 };
    }
    let mut win_of: Vec<Option<usize>> = vec![None; graph.nodes.len()];
    let mut windows: Vec<Vec<usize>> = Vec::new();
    let mut matched: Vec<BTreeSet<usize>> = Vec::new();
    let mut dropped = 0;
    for (i, n) in graph.nodes.iter().enumerate() {
        let Some(pats) = by_root.get(n.op_type.as_str()) else { continue };
        if !eligible(n) {
            continue;
        }
        let mut seen: BTreeSet<Vec<usize>> = BTreeSet::new();
        for &(v, vi) in pats {
            if let Some(Precheck::Root(test)) = v.def.precheck {
                if !test(model, n, &producer) {
                    continue;
                }
            }
            found.clear();
            if !structural(model, &producer, &v.pat, i, &mut found) {
                continue;
            }
            found.sort_unstable();
            found.dedup();
            if !seen.insert(found.clone()) {
                // Same nodes as an earlier variant: that window runs this variant too.
                if let Some(w) = win_of[i] {
                    matched[w].insert(vi);
                }
                continue;
            }
            let ws: BTreeSet<usize> = found.iter().filter_map(|&k| win_of[k]).collect();
            let size: usize = ws.iter().map(|&w| windows[w].len()).sum::<usize>()
                + found.iter().filter(|&&k| win_of[k].is_none()).count();
            if size > max_nodes {
                dropped += 1;
                continue;
            }
            let target = match ws.first() {
                Some(&w) => w,
                None => {
                    windows.push(Vec::new());
                    matched.push(BTreeSet::new());
                    windows.len() - 1
                }
            };
            matched[target].insert(vi);
            for &w in ws.iter().skip(1) {
                let members = std::mem::take(&mut windows[w]);
                for &k in &members {
                    win_of[k] = Some(target);
                }
                windows[target].extend(members);
                let m = std::mem::take(&mut matched[w]);
                matched[target].extend(m);
            }
            for &k in found.iter() {
                if win_of[k].is_none() {
                    win_of[k] = Some(target);
                    windows[target].push(k);
                }
            }
        }
    }
    let mut windows: Vec<(Vec<usize>, BTreeSet<usize>)> =
        windows.into_iter().zip(matched).filter(|(w, _)| !w.is_empty()).collect();
    for (w, _) in &mut windows {
        w.sort_unstable();
    }
    windows.sort_unstable_by_key(|(w, _)| w[0]);
    // Pack neighbouring small windows together up to the limit: an e-graph and a runner per window
    // cost more than the few nodes most windows hold (disconnected parts of one e-graph do not
    // interact).
    let mut packed: Vec<(Vec<usize>, Vec<usize>)> = Vec::new();
    let mut packed_sets: Vec<BTreeSet<usize>> = Vec::new();
    for (w, m) in windows {
        match (packed.last_mut(), packed_sets.last_mut()) {
            (Some(last), Some(set)) if last.0.len() + w.len() <= max_nodes => {
                last.0.extend(w);
                last.0.sort_unstable();
                set.extend(m);
            }
            _ => {
                packed.push((w, Vec::new()));
                packed_sets.push(m);
            }
        }
    }
    for (p, set) in packed.iter_mut().zip(packed_sets) {
        p.1 = set.into_iter().collect();
    }
    // A window where no picked variant can fire at any of its nodes would build an e-graph only to
    // reject every match (on large graphs: every biased MatMul is an add-zero and a Gemm candidate).
    // Failing candidates still join windows: a node in a window hands its metadata to the node
    // that replaces the value it computed.
    packed.retain(|(w, picked)| {
        picked.iter().any(|&vi| {
            let v = &variants[vi];
            let (Pat::Op { op, .. }, Some(Precheck::Window(test))) = (&v.pat, v.def.precheck) else {
                return true;
            };
            w.iter().any(|&i| {
                let n = &graph.nodes[i];
                n.op_type == *op && test(model, n, &producer)
            })
        })
    });
    Selection { windows: packed, dropped }
}

/// Does node `i` have the operator structure of `p`? Collects the nodes it spans.
fn structural(model: &Model, producer: &Producers, p: &Pat, i: usize, out: &mut Vec<usize>) -> bool {
    let Pat::Op { op, args, .. } = p else { return false };
    let n = &model.graph.nodes[i];
    if n.op_type != *op || n.inputs.len() != args.len() {
        return false;
    }
    out.push(i);
    for (a, input) in args.iter().zip(&n.inputs) {
        let ok = match a {
            Pat::Var(_, false) => true,
            Pat::Var(_, true) => input.is_some_and(|v| model.value(v).constant.is_some()),
            Pat::Absent => input.is_none(),
            Pat::Op { .. } => match input.and_then(|v| producer.index(v)) {
                Some(j) => structural(model, producer, a, j, out),
                None => false,
            },
        };
        if !ok {
            return false;
        }
    }
    true
}
