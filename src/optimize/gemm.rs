//! Transposes read by a `Gemm` become its `transA`/`transB`: `Gemm(a, Transpose(b))` is
//! `Gemm(a, b, transB=1)`. A linear decomposed to core ATen is `addmm(bias, x, permute(weight,
//! [1, 0]))`; without this the weight's transpose was folded into a new initializer (computed
//! while saving, a copy of the parameter under another name), now the weight is read as stored.
//!
//! It runs before constant folding, which would otherwise fold the transpose of a weight first.
//! The `Transpose` stays for any other reader (dead-code elimination drops it otherwise).

use super::edit::{self, attr_int, attr_ints, input, Action};
use super::Fire;
use crate::hash::{FxHashMap, FxHashSet};
use crate::onnx::ir::{AttrValue, Attribute, Model, Node, Value};

pub(crate) fn run(model: &mut Model, fired: &mut super::Firings) -> usize {
    // A sweep moves every node; most graphs have no Gemm reading a Transpose, and one scan says so
    // (on the 100k-node synthetic transformer the sweep alone was 10 % of the optimizer's time).
    if !any_gemm_reads_a_transpose(model) {
        return 0;
    }
    // Output of each kept Transpose that swaps two axes → its input.
    let mut swapped: FxHashMap<Value, Value> = FxHashMap::default();
    let mut rewrites = 0;
    edit::sweep(model, |_, _, mut node| {
        if !node.domain.is_empty() {
            return Action::Keep(node);
        }
        match node.op_type.as_str() {
            // Gemm's operands are 2-D, so a transpose it reads without a perm swaps the two axes.
            "Transpose" if attr_ints(&node, "perm").is_none_or(|p| p == [1, 0]) => {
                if let (Some(x), Some(&out)) = (input(&node, 0), node.outputs.first()) {
                    swapped.insert(out, x);
                }
            }
            "Gemm" => {
                for (i, flag) in [(0, "transA"), (1, "transB")] {
                    if let Some(source) = input(&node, i).and_then(|v| swapped.get(&v).copied()) {
                        let flipped = 1 - attr_int(&node, flag, 0).clamp(0, 1);
                        node.inputs[i] = Some(source);
                        set_int(&mut node, flag, flipped);
                        fired.fire("gemm: operand transpose into trans flag");
                        rewrites += 1;
                    }
                }
            }
            _ => {}
        }
        Action::Keep(node)
    });
    rewrites
}

fn any_gemm_reads_a_transpose(model: &Model) -> bool {
    let nodes = &model.graph.nodes;
    let of = |op: &'static str| nodes.iter().filter(move |n| n.domain.is_empty() && n.op_type == op);
    let transposed: FxHashSet<Value> = of("Transpose").filter_map(|n| n.outputs.first().copied()).collect();
    !transposed.is_empty() && of("Gemm").any(|n| n.inputs.iter().take(2).flatten().any(|v| transposed.contains(v)))
}

fn set_int(node: &mut Node, name: &str, v: i64) {
    match node.attributes.iter_mut().find(|a| a.name == name) {
        Some(a) => a.value = AttrValue::Int(v),
        None => node.attributes.push(Attribute { name: name.to_string(), value: AttrValue::Int(v) }),
    }
}
