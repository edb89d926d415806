//! The export check: every shape and element type the model records (the program's metadata,
//! copied onto the values) against what ONNX computes from each node's inputs, main graph and
//! subgraphs, in order. A program torch wrote is consistent; a contradiction means a corrupt or
//! hostile archive, whose model `onnx.checker` would reject and whose shapes the optimizer must
//! not trust. Run after the lowering and again after the optimizer.

use super::ir::{AttrValue, Container, DType, Dim, Graph, Model, Node, Value};
use super::keys::FX_NODE;
use super::operators::{self, clash, onnx_schemas, shape_text, Body, Facts};
use super::shape_table::ShapeTable;

/// A recorded shape or element type that the nodes computing the value contradict.
#[derive(Debug)]
pub(crate) struct Conflict {
    /// The FX node the ONNX node came from (its name), or the ONNX node's name.
    pub node: String,
    pub op: String,
    pub message: String,
    /// The program contradicts itself (a corrupt archive), rather than asking for an element type
    /// ONNX's operator does not take.
    pub inconsistent: bool,
    /// The translation is at fault (it fixed a size the program records as symbolic): a bug to
    /// report, not the input's.
    pub translation: bool,
}

/// Check `model` (see the module documentation).
pub(crate) fn check(model: &Model) -> Result<(), Conflict> {
    for &v in model.graph.inputs.iter().chain(&model.graph.outputs) {
        let info = model.value(v);
        if info.dtype.is_none() {
            return Err(Conflict {
                node: info.name.clone(),
                op: "graph input or output".into(),
                message: format!("the program records no element type for `{}`", info.name),
                inconsistent: true,
                translation: false,
            });
        }
    }
    let mut table = ShapeTable::partial(model);
    check_nodes(model, &model.graph.nodes, &mut table)
}

fn check_nodes(model: &Model, nodes: &[Node], table: &mut ShapeTable) -> Result<(), Conflict> {
    for node in nodes {
        let fail = |message: String| Conflict {
            node: fx_node_name(node),
            op: node.op_type.clone(),
            message,
            inconsistent: true,
            translation: false,
        };
        let op = operators::of(node);
        let body = op.and_then(|op| op.body);
        for a in &node.attributes {
            if let AttrValue::Graph(g) = &a.value {
                if let Some(inputs) = body.and_then(|b| b.inputs) {
                    for (v, shape) in inputs(&table.facts(model), node, g).map_err(fail)? {
                        table.set_shape(v, shape);
                    }
                }
                check_nodes(model, &g.nodes, table)?;
                if let Some(body) = body {
                    body_types(model, node, g, &body).map_err(fail)?;
                }
            }
        }
        input_types(model, node).map_err(|(message, inconsistent)| Conflict { inconsistent, ..fail(message) })?;
        for (i, &out) in node.outputs.iter().enumerate() {
            let facts = table.facts(model);
            let computed = match op {
                Some(op) => op.infer_output(&facts, node, i),
                None => Ok(None),
            };
            let computed = computed
                .map_err(|why| fail(format!("{} cannot compute `{}`: {why}", node.op_type, value_name(model, out))))?;
            let Some(computed) = computed else {
                let Some(rank) = op.and_then(|op| op.rank).and_then(|rank| rank(&facts, node, i)) else { continue };
                let unknown = facts.unknown();
                let Some(recorded) = model.value(out).shape.as_deref() else {
                    // The rank alone still checks the nodes that read the value.
                    if let Some(u) = unknown {
                        table.set_shape(out, vec![u; rank]);
                    }
                    continue;
                };
                if rank != recorded.len() {
                    return Err(fail(format!(
                        "the program records the shape {} for `{}`, but {} computes a rank-{rank} value from its inputs",
                        shape_text(recorded),
                        value_name(model, out),
                        node.op_type
                    )));
                }
                continue;
            };
            // A size the program records as symbolic that the node computes as a number: the
            // translation fixed a size of the example in the graph, and the model would be wrong
            // at every other size the range constraints allow.
            if let Some((recorded, d)) =
                model.value(out).shape.as_deref().and_then(|r| baked(r, &computed).map(|d| (r, d)))
            {
                return Err(Conflict {
                    inconsistent: false,
                    translation: true,
                    ..fail(format!(
                        "the program records the shape {} for `{}`, but {} computes {} from its inputs: dim {d} is \
                         fixed to one size where the program's varies, so the model would be wrong at other sizes \
                         (from an archive torch wrote, a bug in this node's translation: please report it)",
                        shape_text(recorded),
                        value_name(model, out),
                        node.op_type,
                        shape_text(&computed)
                    ))
                });
            }
            match model.value(out).shape.as_deref() {
                Some(recorded) if clash(recorded, &computed) => {
                    return Err(fail(format!(
                        "the program records the shape {} for `{}`, but {} computes {} from its inputs",
                        shape_text(recorded),
                        value_name(model, out),
                        node.op_type,
                        shape_text(&computed)
                    )))
                }
                Some(_) => {}
                None => table.set_shape(out, computed),
            }
        }
        table.learn(model, node);
    }
    Ok(())
}

/// The first dim that `recorded` (the program's shape) has symbolic and `computed` (what the node
/// computes from its inputs) has as a number. A size torch records as data-dependent (its unbacked
/// symbols: `nonzero`'s count, `repeat_interleave` by a tensor) is not one of the example's: a
/// node computing it as a number read it from constants (repeats torch lifted as a constant), and
/// every run has that size.
fn baked(recorded: &[Dim], computed: &[Dim]) -> Option<usize> {
    recorded
        .iter()
        .zip(computed)
        .position(|(r, c)| matches!((r, c), (Dim::Param(p), Dim::Fixed(_)) if !data_dependent(p)))
}

/// Whether a `dim_param` mentions one of torch's unbacked symbols (`u0`, `u17`: `u` and digits;
/// sizes of the example are `s` symbols).
fn data_dependent(dim_param: &str) -> bool {
    dim_param
        .split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
        .any(|w| w.len() > 1 && w.starts_with('u') && w.bytes().skip(1).all(|b| b.is_ascii_digit()))
}

fn value_name(model: &Model, v: Value) -> &str {
    let n = &model.value(v).name;
    if n.is_empty() {
        "an intermediate value"
    } else {
        n
    }
}

/// The FX node an ONNX node was translated from (`pkg.torch.onnx.fx_node` starts with `%name`),
/// else the ONNX node's own name.
fn fx_node_name(node: &Node) -> String {
    let mut found = None;
    node.metadata.for_each(|key, prefix, rest| {
        if key == FX_NODE && found.is_none() {
            let text = format!("{prefix}{rest}");
            found = text.strip_prefix('%').and_then(|v| v.split([' ', ':']).next()).map(str::to_string);
        }
    });
    found.filter(|n| !n.is_empty()).unwrap_or_else(|| node.name.clone())
}

/// The element types of a node's inputs against its operator's type constraints: the inputs of
/// one type variable share a type (unless it binds a heterogeneous variadic input: `Loop`'s and
/// `Scan`'s values), and that type is one the operator accepts.
fn input_types(model: &Model, node: &Node) -> Result<(), (String, bool)> {
    if !node.domain.is_empty() {
        return Ok(());
    }
    for c in onnx_schemas::type_constraints(&node.op_type) {
        let mut first: Option<DType> = None;
        for (i, v) in node.inputs.iter().enumerate() {
            let bound = c.inputs.contains(&i) || c.variadic_from.is_some_and(|from| i >= from);
            // Only tensors: the table records no container types (a sequence's items are checked by
            // ONNX's own checker).
            let tensor = |v: &Value| model.value(*v).container == Container::Tensor;
            let Some(t) = v.filter(|v| bound && tensor(v)).and_then(|v| model.value(v).dtype) else { continue };
            if c.allowed & (1 << t as u32) == 0 {
                return Err((format!("ONNX's {} does not accept {} (input {i})", node.op_type, t.name()), false));
            }
            match first {
                Some(f) if f != t && c.homogeneous => {
                    let message = format!(
                        "{}'s inputs must share a type, but it reads {} and {}",
                        node.op_type,
                        f.name(),
                        t.name()
                    );
                    return Err((message, true));
                }
                _ => first = Some(t),
            }
        }
    }
    Ok(())
}

/// The element types a control-flow node's outputs get from its branches or body, and the types
/// its loop-carried states keep from step to step.
fn body_types(model: &Model, node: &Node, body: &Graph, rule: &Body) -> Result<(), String> {
    let skip = rule.skip_outputs;
    for (k, (&inner, &outer)) in body.outputs.iter().skip(skip).zip(&node.outputs).enumerate() {
        if let (Some(a), Some(b)) = (model.value(inner).dtype, model.value(outer).dtype) {
            if a != b {
                return Err(format!(
                    "output {k} of `{}` is {} in the body, but the program records {}",
                    body.name,
                    a.name(),
                    b.name()
                ));
            }
        }
    }
    // A loop-carried state leaves each step with the type it entered with.
    let (states, first_in) = (rule.states)(node);
    let carried = body.inputs.iter().skip(first_in).zip(body.outputs.iter().skip(skip)).take(states);
    for (k, (&enters, &leaves)) in carried.enumerate() {
        if let (Some(a), Some(b)) = (model.value(enters).dtype, model.value(leaves).dtype) {
            if a != b {
                return Err(format!(
                    "state {k} of `{}` enters a step as {} and leaves it as {}",
                    body.name,
                    a.name(),
                    b.name()
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unbacked_symbols_are_data_dependent_and_example_sizes_are_not() {
        for p in ["u2", "2*u17", "Max(1, u3)", "(u0//2) + 1"] {
            assert!(data_dependent(p), "{p}");
        }
        for p in ["s77", "2*s27", "batch", "u", "user", "s77 - u"] {
            assert!(!data_dependent(p), "{p}");
        }
        let u: Dim = Dim::Param("u2".into());
        let s: Dim = Dim::Param("s77".into());
        assert_eq!(baked(&[u.clone(), s.clone()], &[Dim::Fixed(8), s.clone()]), None);
        assert_eq!(baked(&[u, s], &[Dim::Fixed(8), Dim::Fixed(3)]), Some(1));
    }
}
