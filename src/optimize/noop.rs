//! No-op removal: nodes whose output is provably their input (same element type, same shape, same
//! elements): `Identity`, `Cast` to the type it already has, `Reshape`/`Expand` to the shape it
//! already has, the identity `Transpose`, a `Slice` over the full range, inference `Dropout`,
//! single-input `Concat`, `Tile` by ones, `Pad` by zeros, bound-less `Clip`, `And` with true and `Or`
//! with false where the constant does not broadcast the other side. This is the only pass that
//! removes no-ops; the e-graph rules fuse.

use super::edit::{self, attr_int, attr_ints, const_ints, input, norm_axis, Action, Facts};
use super::shapes::ShapeTable;
use super::Fire;
use crate::onnx::ir::{DType, Dim, Model, Node, Value};

/// No-ops that become an `Identity` at a graph output they cannot hand their name to. The others
/// (`Tile` by ones, single-input `Concat`, ...) stay there as they are: both are exact, and the
/// exports of such models keep their bytes.
const IDENTITY_AT_OUTPUT: [&str; 6] = ["Cast", "Transpose", "Reshape", "Expand", "Slice", "Dropout"];

/// Ends at least this large mean "to the end" (torch writes `sys.maxsize`, ONNX examples `INT64_MAX`).
const END_OF_AXIS: i64 = i64::MAX / 2;

pub(crate) fn run(model: &mut Model, rules: &mut super::Rules) -> usize {
    let mut table = ShapeTable::new(model);
    let mut rewrites = 0;
    let dropped = edit::sweep(model, |model, facts, node| {
        if let Some((out, with, rule)) = noop_of(model, facts, &table, &node) {
            if !facts.is_output(out) || edit::can_stand_for_output(model, facts, with) {
                rules.fire(rule);
                return Action::Replace { node, with: vec![(out, with)] };
            }
            // A graph output that only an Identity can keep producing (its input is a graph input,
            // a constant or another output): the no-op becomes that Identity, and other readers
            // read its input.
            if IDENTITY_AT_OUTPUT.contains(&node.op_type.as_str()) {
                rules.fire(rule);
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

/// `(output, the input it equals, rule name)` when `node` is a no-op.
fn noop_of(model: &Model, facts: &Facts, table: &ShapeTable, node: &Node) -> Option<(Value, Value, &'static str)> {
    if !node.domain.is_empty() {
        return None;
    }
    let x = input(node, 0)?;
    let out = *node.outputs.first()?;
    let dtype = |v: Value| model.value(v).dtype;
    let shape = |v: Value| table.shape(model, v);
    let same_shape = || matches!((shape(x), shape(out)), (Some(a), Some(b)) if a == b);
    let rule = match node.op_type.as_str() {
        "Identity" if node.outputs.len() == 1 => "noop: Identity",
        "Cast" if dtype(x).is_some() && dtype(x).map(|t| t as i64) == Some(attr_int(node, "to", -1)) => {
            "noop: Cast to the same type"
        }
        "CastLike" if dtype(x).is_some() && dtype(x) == input(node, 1).and_then(dtype) => {
            "noop: CastLike to the same type"
        }
        "Reshape" if same_shape() => "noop: Reshape to the same shape",
        "Expand" if same_shape() => "noop: Expand to the same shape",
        "Transpose" => {
            let identity = match attr_ints(node, "perm") {
                Some(p) => p.iter().enumerate().all(|(i, &a)| a == i as i64),
                None => shape(x).is_some_and(|s| s.len() <= 1),
            };
            if !identity {
                return None;
            }
            "noop: identity Transpose"
        }
        "Slice" if full_slice(model, node, shape(x)?)? => "noop: full-range Slice",
        "Dropout" => {
            // Inference: output 0 is the input unless training_mode is given and may be true.
            let training = match input(node, 2) {
                None => false,
                Some(t) => edit::constant(model, t)?.to_i64s()?.first().copied() != Some(0),
            };
            let mask_used = node.outputs.get(1).is_some_and(|&m| facts.uses(m) > 0);
            if training || mask_used {
                return None;
            }
            "noop: inference Dropout"
        }
        "Concat" if node.inputs.len() == 1 => "noop: single-input Concat",
        "Tile" if const_ints(model, node, 1)?.iter().all(|&r| r == 1) => "noop: Tile by ones",
        "Pad" if const_ints(model, node, 1)?.iter().all(|&p| p == 0) => "noop: Pad by zeros",
        "Clip" if input(node, 1).is_none() && input(node, 2).is_none() => "noop: Clip without bounds",
        "And" | "Or" => {
            // x AND true = x, x OR false = x, if the constant does not widen the result's shape.
            let want = if node.op_type == "And" { 1 } else { 0 };
            let y = input(node, 1)?;
            let (keep, c) = if is_filled(model, y, want) {
                (x, y)
            } else if is_filled(model, x, want) {
                (y, x)
            } else {
                return None;
            };
            let (ks, cs, os) = (shape(keep)?, shape(c)?, shape(out)?);
            if ks != os || cs.len() > ks.len() || dtype(keep) != Some(DType::Bool) {
                return None;
            }
            return Some((out, keep, if want == 1 { "noop: And with true" } else { "noop: Or with false" }));
        }
        _ => return None,
    };
    Some((out, x, rule))
}

/// Every element of constant `v` equals `want` (a small bool tensor).
fn is_filled(model: &Model, v: Value, want: i64) -> bool {
    match edit::constant(model, v) {
        Some(c) if c.dtype == DType::Bool && c.numel() <= 4096 => {
            c.to_i64s().is_some_and(|vals| vals.iter().all(|&b| b == want))
        }
        _ => false,
    }
}

/// A `Slice` that takes every element: step 1 from the start to at least the end of each axis.
fn full_slice(model: &Model, node: &Node, shape: &[Dim]) -> Option<bool> {
    let starts = const_ints(model, node, 1)?;
    let ends = const_ints(model, node, 2)?;
    let axes = match input(node, 3) {
        Some(_) => const_ints(model, node, 3)?,
        None => (0..starts.len() as i64).collect(),
    };
    let steps = match input(node, 4) {
        Some(_) => const_ints(model, node, 4)?,
        None => vec![1; starts.len()],
    };
    if starts.len() != ends.len() || axes.len() != starts.len() || steps.len() != starts.len() {
        return None;
    }
    for i in 0..starts.len() {
        let axis = norm_axis(axes[i], shape.len())?;
        let start_ok = starts[i] == 0 || matches!(shape[axis], Dim::Fixed(n) if starts[i] <= -n);
        let end_ok = ends[i] >= END_OF_AXIS || matches!(shape[axis], Dim::Fixed(n) if ends[i] >= n);
        if steps[i] != 1 || !start_ok || !end_ok {
            return Some(false);
        }
    }
    Some(true)
}
