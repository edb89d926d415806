//! Common-subexpression elimination: a node equal to an earlier one (same operator, same inputs
//! after substitution, same attributes) is dropped and its outputs read from the earlier node.
//!
//! Nodes that must not merge: random generators (two draws differ), nodes with subgraphs, nodes of
//! custom domains (side effects unknown), and nodes without inputs.

use std::collections::HashMap;

use super::edit::{self, Action};
use super::Fire;
use crate::onnx::ir::{AttrValue, Model, Node, Value};

const RANDOM: &[&str] =
    &["RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike", "Multinomial", "Bernoulli"];

#[derive(PartialEq, Eq, Hash)]
struct Key {
    op_type: String,
    inputs: Vec<Option<Value>>,
    outputs: usize,
    attributes: Vec<u8>,
}

pub(crate) fn run(model: &mut Model, rules: &mut super::Rules) -> usize {
    let mut seen: HashMap<Key, Vec<Value>> = HashMap::new();
    edit::sweep(model, |model, facts, node| {
        let Some(key) = key(&node) else { return Action::Keep(node) };
        if let Some(earlier) = seen.get(&key) {
            let with: Vec<(Value, Value)> = node.outputs.iter().copied().zip(earlier.iter().copied()).collect();
            let outputs_ok =
                with.iter().all(|&(o, e)| !facts.is_output(o) || edit::can_stand_for_output(model, facts, e));
            if outputs_ok {
                rules.fire(&format!("cse: {}", node.op_type));
                return Action::Replace { node, with };
            }
            return Action::Keep(node);
        }
        seen.insert(key, node.outputs.clone());
        Action::Keep(node)
    })
}

fn key(node: &Node) -> Option<Key> {
    if !node.domain.is_empty() || node.inputs.is_empty() || RANDOM.contains(&node.op_type.as_str()) {
        return None;
    }
    let mut attributes = Vec::new();
    let mut attrs: Vec<_> = node.attributes.iter().collect();
    attrs.sort_by(|a, b| a.name.cmp(&b.name));
    for a in attrs {
        attributes.extend_from_slice(a.name.as_bytes());
        attributes.push(0);
        match &a.value {
            AttrValue::Float(f) => {
                attributes.push(1);
                attributes.extend_from_slice(&f.to_bits().to_le_bytes());
            }
            AttrValue::Int(i) => {
                attributes.push(2);
                attributes.extend_from_slice(&i.to_le_bytes());
            }
            AttrValue::String(s) => {
                attributes.push(3);
                attributes.extend_from_slice(&(s.len() as u64).to_le_bytes());
                attributes.extend_from_slice(s.as_bytes());
            }
            AttrValue::Tensor(t) => {
                attributes.push(4);
                attributes.extend_from_slice(&(t.dtype as i32).to_le_bytes());
                attributes.extend_from_slice(&(t.dims.len() as u64).to_le_bytes());
                t.dims.iter().for_each(|d| attributes.extend_from_slice(&d.to_le_bytes()));
                attributes.extend_from_slice(&(t.raw.len() as u64).to_le_bytes());
                attributes.extend_from_slice(&t.raw);
            }
            AttrValue::Graph(_) => return None,
            AttrValue::Floats(v) => {
                attributes.push(5);
                attributes.extend_from_slice(&(v.len() as u64).to_le_bytes());
                v.iter().for_each(|f| attributes.extend_from_slice(&f.to_bits().to_le_bytes()));
            }
            AttrValue::Ints(v) => {
                attributes.push(6);
                attributes.extend_from_slice(&(v.len() as u64).to_le_bytes());
                v.iter().for_each(|i| attributes.extend_from_slice(&i.to_le_bytes()));
            }
            AttrValue::Strings(v) => {
                attributes.push(7);
                attributes.extend_from_slice(&(v.len() as u64).to_le_bytes());
                for s in v {
                    attributes.extend_from_slice(&(s.len() as u64).to_le_bytes());
                    attributes.extend_from_slice(s.as_bytes());
                }
            }
        }
    }
    Some(Key { op_type: node.op_type.clone(), inputs: node.inputs.clone(), outputs: node.outputs.len(), attributes })
}
