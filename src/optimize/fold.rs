//! Constant folding: a node whose inputs are all constants is evaluated here and its outputs become
//! constants (initializers keeping the outputs' names).
//!
//! Each operator's evaluation is the operator table's (`Op::eval`): exact, or not done — data
//! movement for any element type, integer arithmetic, comparisons and logic, single IEEE float
//! operations, correctly rounded float32 `Log`/`Exp`, exact casts. Anything else, or any doubt, is
//! left alone.
//!
//! Sizes are bounded like onnxscript's folder: inputs of at most [`INPUT_LIMIT`] elements, outputs
//! of at most [`OUTPUT_LIMIT`]. Larger results fold only as derived tensors (`Op::derive`), recorded
//! here and computed in chunks when the model is written (weights stay in the archive's map, no
//! anonymous copy): a `Transpose` of a constant, and float32/float64 `Add`/`Sub`/`Mul`/`Div` of a
//! constant with a small one that does not widen it, in both cases when the large constant is read
//! by nothing else (so the original weight dies and the file does not grow).

use super::edit::{self, input, Action};
use super::Fire;
use crate::onnx::ir::{Model, Node, TensorData};
use crate::onnx::operators::{self, INPUT_LIMIT, OUTPUT_LIMIT};

pub(crate) fn run(model: &mut Model, fired: &mut super::Firings) -> usize {
    edit::sweep(model, |model, uses, node| {
        if !node.domain.is_empty() || node.outputs.is_empty() || node.outputs.iter().any(|&o| uses.is_output(o)) {
            return Action::Keep(node);
        }
        let mut consts = Vec::with_capacity(node.inputs.len());
        for v in &node.inputs {
            match v {
                Some(v) => match edit::constant(model, *v) {
                    Some(c) => consts.push(Some(c)),
                    None => return Action::Keep(node),
                },
                None => consts.push(None),
            }
        }
        // A large constant read only here: the result may be recorded as a derived tensor.
        let big = |i: usize| {
            consts.get(i).copied().flatten().is_some_and(|c| c.numel() > INPUT_LIMIT)
                && input(&node, i).is_some_and(|x| uses.count(x) == 1)
        };
        let out = if consts.iter().flatten().all(|c| c.numel() <= INPUT_LIMIT) {
            match operators::eval(&node, &consts) {
                // A new constant counts toward the export's memory bound, which many folds of
                // small inputs could otherwise pass: past it the node stays and computes at run time.
                Some(out) if out.numel() <= OUTPUT_LIMIT && model.bound.charge(out.raw.len() as u64) => out,
                _ => return Action::Keep(node),
            }
        } else if big(0) || big(1) {
            match derive(&node, &consts, big(1) && !big(0)) {
                Some(out) => out,
                None => return Action::Keep(node),
            }
        } else {
            return Action::Keep(node);
        };
        // The folded value must have the type the graph says it has.
        let o = node.outputs[0];
        if model.value(o).dtype.is_some_and(|t| t != out.dtype) || node.outputs.len() != 1 {
            return Action::Keep(node);
        }
        fired.fire(&format!("fold: {}", node.op_type));
        edit::make_constant(model, o, out);
        Action::Replace { node, with: vec![] }
    })
}

/// `node` on a large constant (input 1 when `second`, else input 0) recorded as a derived tensor.
fn derive(node: &Node, inputs: &[Option<&TensorData>], second: bool) -> Option<TensorData> {
    operators::of(node)?.derive?(node, inputs, second)
}

/// Evaluate `node` on constant inputs (`None`: an omitted optional input).
#[cfg(test)]
pub(crate) fn eval(node: &Node, inputs: &[Option<&TensorData>]) -> Option<TensorData> {
    operators::eval(node, inputs)
}
