//! Shape folding, from what is known of each value's shape (torch's TensorMeta on FX values,
//! propagated through the operators by their records) and of the contents of small int64 tensors
//! (`Shape(x)` of a `[s43, s53]` value is the vector `[s43, s53]`): a shape computation whose
//! contents are all known numbers becomes a constant; two computations with equal symbolic contents
//! become one; a shape input that the output's known shape determines (`Reshape`'s target,
//! `Expand`'s) becomes a constant, so the chains of `Shape`/`Gather`/`Unsqueeze`/`Concat` that
//! computed them die; and a regrouping of a regrouping (`Reshape` of `Reshape`) reads the first
//! one's input.

use super::edit::{self, input, Action, Uses};
use super::Fire;
use crate::hash::FxHashMap;
use crate::onnx::ir::{DType, Model, Node, TensorData, Value};
use crate::onnx::operators::{self, fixed, SymInts};
use crate::onnx::shape_table::{ShapeTable, MAX_SYM_LEN};

/// The shape pass. Returns the number of rewrites (folded values, merged values, materialized shapes).
pub(crate) fn run(model: &mut Model, fired: &mut super::Firings) -> usize {
    let mut table = ShapeTable::new(model);
    // Symbolic contents already computed by a kept node → that node's output.
    let mut seen: FxHashMap<SymInts, Value> = FxHashMap::default();
    // Constant targets made by this run, by contents: equal Reshape targets share one initializer
    // (as deduplication would merge them next round) instead of each adding a value to the model.
    let mut targets: FxHashMap<Vec<i64>, Value> = FxHashMap::default();
    // Output of each kept regrouping (Reshape) → its data input.
    let mut reshaped: FxHashMap<Value, Value> = FxHashMap::default();
    let mut rewrites = 0;
    edit::sweep(model, |model, uses, mut node| {
        if let (Some(op), &[out]) = (operators::of(&node), node.outputs.as_slice()) {
            if let Some(with) = fold_syms(model, uses, &mut table, &seen, &node, fired) {
                rewrites += 1;
                return Action::Replace { node, with };
            }
            if let Some(shape_input) = op.shape_input {
                let target = match (input(&node, 1), table.shape(model, out)) {
                    (Some(s), Some(out_shape)) if model.value(s).constant.is_none() => {
                        let x = input(&node, 0).and_then(|x| table.shape(model, x));
                        shape_input(&node, x, out_shape)
                    }
                    _ => None,
                };
                if let Some(t) = target {
                    let c = match targets.get(&t) {
                        Some(&c) => c,
                        None => {
                            let c = edit::new_constant(model, TensorData::from_i64s(vec![t.len() as i64], &t));
                            targets.insert(t, c);
                            c
                        }
                    };
                    node.inputs[1] = Some(c);
                    fired.fire(&format!("shapes: constant {} target", node.op_type));
                    rewrites += 1;
                }
            }
            if op.regroups {
                // A regrouping of a regrouping reads the first one's input: the element count is
                // the same, and a constant target without 0 (a 0 copies an input dim) says the
                // rest. Here rather than as an e-graph rule: `linear` writes Gemm · Reshape, and
                // the view after it made this the most frequent rewrite of transformer graphs,
                // each an e-graph window.
                let source = input(&node, 0).and_then(|x| reshaped.get(&x).copied());
                let target = edit::const_ints(model, &node, 1);
                if let (Some(source), Some(t)) = (source, target) {
                    if !t.contains(&0) {
                        node.inputs[0] = Some(source);
                        fired.fire(&format!("shapes: {0} of a {0}", node.op_type));
                        rewrites += 1;
                    }
                }
                if let Some(x) = input(&node, 0) {
                    reshaped.insert(out, x);
                }
            }
        }
        table.learn(model, &node);
        if node.outputs.len() == 1 {
            if let Some(s) = table.syms(node.outputs[0]) {
                seen.entry(s.clone()).or_insert(node.outputs[0]);
            }
        }
        Action::Keep(node)
    });
    rewrites
}

/// A node whose int64 output has contents known from shapes: a constant when all are numbers, or a
/// value computed earlier with the same contents.
fn fold_syms(
    model: &mut Model,
    uses: &Uses,
    table: &mut ShapeTable,
    seen: &FxHashMap<SymInts, Value>,
    node: &Node,
    fired: &mut super::Firings,
) -> Option<Vec<(Value, Value)>> {
    let out = node.outputs[0];
    if model.value(out).dtype != Some(DType::Int64) || uses.is_output(out) {
        return None;
    }
    let syms = table.infer_syms(model, node)?;
    if syms.items.len() > MAX_SYM_LEN {
        return None;
    }
    if let Some(vals) = syms.items.iter().map(fixed).collect::<Option<Vec<i64>>>() {
        let dims = if syms.scalar { vec![] } else { vec![vals.len() as i64] };
        if syms.scalar && vals.len() != 1 {
            return None;
        }
        edit::make_constant(model, out, TensorData::from_i64s(dims, &vals));
        table.set_syms(out, syms);
        fired.fire(&format!("shapes: {} folded", node.op_type));
        return Some(vec![]);
    }
    let earlier = *seen.get(&syms)?;
    fired.fire(&format!("shapes: {} merged", node.op_type));
    Some(vec![(out, earlier)])
}
