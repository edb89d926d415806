//! Control flow: `If`, `Loop` and `Scan`, whose outputs come from their subgraphs.

use super::dims::{clash, shape_text};
use super::{attr_graph, attr_int, Body, Facts, Inferred, Op, Shape};
use crate::onnx::ir::{Dim, Graph, Node, Value};

pub(super) const OPS: &[Op] = &[
    Op {
        shape: Shape::Rule(if_output),
        body: Some(Body { skip_outputs: 0, states: no_states, inputs: None }),
        ..Op::NONE
    }
    .named("If"),
    // The body returns its condition first; the states follow the trip count and condition.
    Op { body: Some(Body { skip_outputs: 1, states: loop_states, inputs: None }), ..Op::NONE }.named("Loop"),
    Op {
        shape: Shape::Rule(scan_output),
        body: Some(Body { skip_outputs: 0, states: scan_states, inputs: Some(scan_body_inputs) }),
        ..Op::NONE
    }
    .named("Scan"),
];

fn no_states(_: &Node) -> (usize, usize) {
    (0, 0)
}

fn loop_states(node: &Node) -> (usize, usize) {
    (node.inputs.len().saturating_sub(2), 2)
}

/// How many of a Scan's inputs are loop-carried states (the rest are scanned).
fn scan_states(node: &Node) -> (usize, usize) {
    (node.inputs.len().saturating_sub(attr_int(node, "num_scan_inputs", 0).max(0) as usize), 0)
}

/// If output `i`: the branches' shapes merged dim by dim, as ONNX does (a dim the branches
/// disagree on is unknown); nothing when their ranks differ.
fn if_output(facts: &dyn Facts, node: &Node, i: usize) -> Inferred {
    let branch = |name: &str| attr_graph(node, name).and_then(|g| g.outputs.get(i)).and_then(|&v| facts.shape(v));
    let (Some(a), Some(b)) = (branch("then_branch"), branch("else_branch")) else { return Ok(None) };
    if a.len() != b.len() {
        return Ok(None);
    }
    Ok(a.iter().zip(b).map(|(x, y)| if x == y { Some(x.clone()) } else { facts.unknown() }).collect())
}

/// Scan output `i`: a state as the body leaves it, or the body's per-step outputs stacked on a
/// first dim as long as the scanned inputs.
fn scan_output(facts: &dyn Facts, node: &Node, i: usize) -> Inferred {
    Ok(scan_output_shape(facts, node, i))
}

fn scan_output_shape(facts: &dyn Facts, node: &Node, i: usize) -> Option<Vec<Dim>> {
    if node.attr("scan_output_axes").is_some() || node.attr("scan_input_axes").is_some() {
        return None;
    }
    let body = attr_graph(node, "body")?;
    let scanned = attr_int(node, "num_scan_inputs", 0).max(0) as usize;
    let states = node.inputs.len().checked_sub(scanned)?;
    let per_step = facts.shape(*body.outputs.get(i)?)?;
    if i < states {
        return Some(per_step.to_vec());
    }
    let first = node.inputs.get(states).copied().flatten()?;
    let mut out = vec![facts.shape(first)?.first()?.clone()];
    out.extend_from_slice(per_step);
    Some(out)
}

/// Scan's body reads each state input as it is and each scanned input without its first dim:
/// the shapes of the body inputs that record none, or why what the body records contradicts them.
fn scan_body_inputs(facts: &dyn Facts, node: &Node, body: &Graph) -> Result<Vec<(Value, Vec<Dim>)>, String> {
    let mut given = Vec::new();
    if node.attr("scan_input_axes").is_some() {
        return Ok(given);
    }
    let (states, _) = scan_states(node);
    for (k, (&outer, &inner)) in node.inputs.iter().zip(&body.inputs).enumerate() {
        let state = k < states;
        if let (Some(a), Some(b)) = (outer.and_then(|v| facts.dtype(v)), facts.dtype(inner)) {
            if a != b {
                return Err(format!(
                    "the body's input {k} is recorded as {}, but the loop gives it {}",
                    b.name(),
                    a.name()
                ));
            }
        }
        let Some(outer) = outer.and_then(|v| facts.shape(v)) else { continue };
        let expected = if state {
            outer
        } else if let Some((_, rest)) = outer.split_first() {
            rest
        } else {
            return Err(format!("scanned input {k} is a scalar"));
        };
        match facts.shape(inner) {
            Some(declared) if clash(declared, expected) => {
                return Err(format!(
                    "the body's input {k} is recorded as {}, but the loop gives it {}",
                    shape_text(declared),
                    shape_text(expected)
                ));
            }
            Some(_) => {}
            // As ONNX's inference does: the body then checks against what the loop gives.
            None => given.push((inner, expected.to_vec())),
        }
    }
    Ok(given)
}
