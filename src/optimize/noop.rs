//! No-op removal: nodes whose output is provably their input (same element type, same shape, same
//! elements), as each operator's record says (`Op::noop`: `Identity`, `Cast` to the type it
//! already has, `Reshape`/`Expand` to the shape it already has, the identity `Transpose`, a full
//! `Slice`, inference `Dropout`, `Tile` by ones, `Pad` by zeros, ...). This is the only pass that
//! removes no-ops; the e-graph rules fuse.

use super::edit::{self, Action};
use super::Fire;
use crate::onnx::ir::{Model, Node};
use crate::onnx::operators;
use crate::onnx::shape_table::ShapeTable;

pub(crate) fn run(model: &mut Model, fired: &mut super::Firings) -> usize {
    let mut table = ShapeTable::new(model);
    let mut rewrites = 0;
    let dropped = edit::sweep(model, |model, uses, node| {
        let op = operators::of(&node).filter(|_| !node.outputs.is_empty());
        let found = op.and_then(|op| op.noop).and_then(|noop| noop(&table.facts(model).with_uses(&uses.counts), &node));
        if let (Some(op), Some((with, rule)), Some(&out)) = (op, found, node.outputs.first()) {
            if !uses.is_output(out) || edit::can_stand_for_output(model, uses, with) {
                fired.fire(rule);
                return Action::Replace { node, with: vec![(out, with)] };
            }
            // A graph output that only an Identity can keep producing (its input is a graph input,
            // a constant or another output): the no-op becomes that Identity, and other readers
            // read its input.
            if op.identity_at_output {
                fired.fire(rule);
                rewrites += 1;
                let node = Node::identity(with, out, node.metadata.clone());
                table.learn(model, &node);
                return Action::Redirect { node, with: vec![(out, with)] };
            }
        }
        table.learn(model, &node);
        Action::Keep(node)
    });
    dropped + rewrites
}
