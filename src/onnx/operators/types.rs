//! The element types of a node's outputs: the schema's rule ([`onnx_schemas::output_type`]), unless the
//! operator's record says otherwise (an attribute decides: `Cast`'s `to`, `Constant`'s `value`,
//! `LayerNormalization`'s `stash_type`).

use super::onnx_schemas::{self, OutType};
use crate::onnx::ir::{AttrValue, Container, DType, Node, Value};

/// The element type of output `i` of `node`, where the operator and its inputs' types (`input(k)`)
/// decide it.
pub(crate) fn output_type(node: &Node, input: &dyn Fn(usize) -> Option<DType>, i: usize) -> Option<DType> {
    if let Some(rule) = super::of(node).and_then(|op| op.types) {
        return rule(node, input, i);
    }
    if !node.domain.is_empty() {
        return None;
    }
    match onnx_schemas::output_type(&node.op_type, i) {
        OutType::Input(k) => input(k),
        OutType::Fixed(t) => Some(t),
        OutType::Unknown => None,
    }
}

/// What output `i` of `node` holds (a tensor, an optional or a sequence of tensors), where the
/// operator decides it; `input(k)` says what input `k` holds and `value(v)` what a subgraph's
/// value holds. The schema states these as type constraints over all types; fxonnx writes
/// containers of tensors only, from these operators.
pub(crate) fn output_container(
    node: &Node,
    input: &dyn Fn(usize) -> Container,
    value: &dyn Fn(Value) -> Container,
    i: usize,
) -> Container {
    if !node.domain.is_empty() {
        return Container::Tensor;
    }
    match node.op_type.as_str() {
        "Optional" => Container::Optional,
        "SequenceConstruct" | "SequenceEmpty" | "SequenceInsert" | "SequenceErase" | "SplitToSequence" => {
            Container::Sequence
        }
        "Identity" => input(0),
        // A branch's result; a loop's final states are what it carries (after the trip count and
        // condition), its scan outputs tensors.
        "If" => match node.attr("then_branch") {
            Some(AttrValue::Graph(g)) => g.outputs.get(i).map_or(Container::Tensor, |&v| value(v)),
            _ => Container::Tensor,
        },
        "Loop" if i + 2 < node.inputs.len() => input(i + 2),
        _ => Container::Tensor,
    }
}
