//! The element types of a node's outputs: the schema's rule ([`onnx_schemas::output_type`]), unless the
//! operator's record says otherwise (an attribute decides: `Cast`'s `to`, `Constant`'s `value`,
//! `LayerNormalization`'s `stash_type`).

use super::onnx_schemas::{self, OutContainer, OutType};
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

/// What output `i` of `node` holds (a tensor, an optional or a sequence of tensors): what the
/// schema's type constraint allows ([`onnx_schemas::output_container`]: `Optional`'s output, the
/// sequence operators', `Identity`'s input's), else, for an operator with a subgraph, what the
/// subgraph's matching output holds (`If`'s branches, `Loop`'s body, as its [`super::Body`]
/// record pairs them). `input(k)` says what input `k` holds, `value(v)` what a subgraph's value holds.
pub(crate) fn output_container(
    node: &Node,
    input: &dyn Fn(usize) -> Container,
    value: &dyn Fn(Value) -> Container,
    i: usize,
) -> Container {
    if !node.domain.is_empty() {
        return Container::Tensor;
    }
    match onnx_schemas::output_container(&node.op_type, i) {
        OutContainer::Fixed(c) => c,
        OutContainer::Input(k) => input(k),
        OutContainer::Unknown => {
            let Some(body) = super::of(node).and_then(|op| op.body) else { return Container::Tensor };
            let graph = node.attributes.iter().find_map(|a| match &a.value {
                AttrValue::Graph(g) => Some(g),
                _ => None,
            });
            graph.and_then(|g| g.outputs.get(i + body.skip_outputs)).map_or(Container::Tensor, |&v| value(v))
        }
    }
}
