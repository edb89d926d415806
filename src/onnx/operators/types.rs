//! The element types of a node's outputs: the schema's rule ([`onnx_schemas::output_type`]), unless the
//! operator's record says otherwise (an attribute decides: `Cast`'s `to`, `Constant`'s `value`,
//! `LayerNormalization`'s `stash_type`).

use super::onnx_schemas::{self, OutType};
use crate::onnx::ir::{DType, Node};

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
