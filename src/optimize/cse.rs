//! Common-subexpression elimination: a node equal to an earlier one (same operator, same inputs
//! after substitution, same attributes) is dropped and its outputs read from the earlier node.
//!
//! Nodes that must not merge: random generators (two draws differ), nodes with subgraphs, nodes of
//! custom domains (side effects unknown), and nodes without inputs.
//!
//! Nodes are not copied into keys: each is hashed in place (attributes in any order), and a hash hit
//! is confirmed against the earlier kept node itself.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};

use super::edit::{self, Action};
use super::Fire;
use crate::hash::{FxBuild, FxHasher};
use crate::onnx::ir::{AttrValue, Attribute, Model, Node, Value};
use crate::onnx::operators;

const NONE: u32 = u32::MAX;

pub(crate) fn run(model: &mut Model, fired: &mut super::Firings) -> usize {
    let n = model.graph.nodes.len();
    // Hash → first kept node (index among kept nodes) with it; `next` chains kept nodes whose
    // hashes collide.
    let mut first: HashMap<u64, u32, FxBuild> = HashMap::with_capacity_and_hasher(n, FxBuild::default());
    let mut next: Vec<u32> = Vec::new();
    edit::sweep_kept(model, edit::Subst::new(model.values.len()), |model, uses, kept, node| {
        let Some(h) = key_hash(&node) else { return Action::Keep(node) };
        let mut at = first.get(&h).copied().unwrap_or(NONE);
        while at != NONE {
            let earlier = &kept[at as usize];
            if same(earlier, &node) {
                let with: Vec<(Value, Value)> =
                    node.outputs.iter().copied().zip(earlier.outputs.iter().copied()).collect();
                let outputs_ok =
                    with.iter().all(|&(o, e)| !uses.is_output(o) || edit::can_stand_for_output(model, uses, e));
                if outputs_ok {
                    fired.fire(&format!("cse: {}", node.op_type));
                    return Action::Replace { node, with };
                }
                return Action::Keep(node);
            }
            at = next.get(at as usize).copied().unwrap_or(NONE);
        }
        // This node will be kept at index `kept.len()`.
        let me = kept.len() as u32;
        if next.len() <= me as usize {
            next.resize(me as usize + 1, NONE);
        }
        next[me as usize] = first.insert(h, me).unwrap_or(NONE);
        Action::Keep(node)
    })
}

/// The hash of `node`'s key (operator, inputs, output count, attributes in any order), or `None`
/// when the node must not merge.
fn key_hash(node: &Node) -> Option<u64> {
    if !node.domain.is_empty() || node.inputs.is_empty() || operators::get(&node.op_type).is_some_and(|op| op.random) {
        return None;
    }
    let mut h = FxHasher::default();
    node.op_type.hash(&mut h);
    node.inputs.hash(&mut h);
    node.outputs.len().hash(&mut h);
    // Attribute order does not matter: their hashes are summed.
    let mut attrs = 0u64;
    for a in &node.attributes {
        let mut ha = FxHasher::default();
        a.name.hash(&mut ha);
        match &a.value {
            AttrValue::Float(f) => f.to_bits().hash(&mut ha),
            AttrValue::Int(i) => i.hash(&mut ha),
            AttrValue::String(s) => s.hash(&mut ha),
            AttrValue::Tensor(t) => {
                (t.dtype as i32).hash(&mut ha);
                t.dims.hash(&mut ha);
                t.raw[..].hash(&mut ha);
            }
            AttrValue::Graph(_) => return None,
            AttrValue::Floats(v) => v.iter().for_each(|f| f.to_bits().hash(&mut ha)),
            AttrValue::Ints(v) => v.hash(&mut ha),
            AttrValue::Strings(v) => v.hash(&mut ha),
            AttrValue::Type(c, t) => (c, *t as i32).hash(&mut ha),
        }
        attrs = attrs.wrapping_add(ha.finish());
    }
    attrs.hash(&mut h);
    Some(h.finish())
}

/// Equal keys: same operator, inputs and output count, and the same attributes once both lists are
/// sorted by name (floats compared by their bits). Both nodes passed [`key_hash`].
fn same(a: &Node, b: &Node) -> bool {
    if a.op_type != b.op_type || a.inputs != b.inputs || a.outputs.len() != b.outputs.len() {
        return false;
    }
    if a.attributes.len() != b.attributes.len() {
        return false;
    }
    if a.attributes.iter().zip(&b.attributes).all(|(x, y)| x.name == y.name) {
        // Same names in the same order: a stable sort would permute both lists alike.
        return a.attributes.iter().zip(&b.attributes).all(|(x, y)| same_value(&x.value, &y.value));
    }
    fn sorted(n: &Node) -> Vec<&Attribute> {
        let mut v: Vec<&Attribute> = n.attributes.iter().collect();
        v.sort_by(|x, y| x.name.cmp(&y.name));
        v
    }
    sorted(a).iter().zip(sorted(b)).all(|(x, y)| x.name == y.name && same_value(&x.value, &y.value))
}

fn same_value(a: &AttrValue, b: &AttrValue) -> bool {
    match (a, b) {
        (AttrValue::Float(x), AttrValue::Float(y)) => x.to_bits() == y.to_bits(),
        (AttrValue::Int(x), AttrValue::Int(y)) => x == y,
        (AttrValue::String(x), AttrValue::String(y)) => x == y,
        (AttrValue::Tensor(x), AttrValue::Tensor(y)) => x.dtype == y.dtype && x.dims == y.dims && x.raw == y.raw,
        (AttrValue::Floats(x), AttrValue::Floats(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| p.to_bits() == q.to_bits())
        }
        (AttrValue::Ints(x), AttrValue::Ints(y)) => x == y,
        (AttrValue::Strings(x), AttrValue::Strings(y)) => x == y,
        (AttrValue::Type(c, t), AttrValue::Type(d, u)) => c == d && t == u,
        _ => false,
    }
}
