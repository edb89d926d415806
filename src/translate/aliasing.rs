//! In-place mutations of views: found before lowering, refused until they can be written back.
//!
//! The driver functionalizes an in-place op by rebinding the mutated name to the result. That is
//! exact while nothing else aliases the tensor. When the tensor is a view (`slice`, `select`,
//! `view`, `transpose`, ...) of a base, or has views of its own, torch's mutation is seen through
//! every alias; a rebinding is not, so a later read of the base or of another view would see the
//! old value: a model that runs and gives wrong numbers. Such programs are refused here, with the
//! nodes involved, until the lowering writes mutations back into their bases.
//!
//! Which ops alias and which mutate comes from the ATen schemas' alias annotations, not a list:
//! a view takes `Tensor(a) self` and returns `Tensor(a)`; an in-place op takes `Tensor(a!) self`.

use super::dsl::target_key;
use super::schemas;
use crate::hash::FxHashMap;
use crate::pt2::schema::{self, Argument};

/// How an op treats its first argument, by the alias annotations of its schema.
#[derive(Clone, Copy, PartialEq, Debug)]
enum FirstArg {
    /// The output is a view of it (`Tensor(a) self -> Tensor(a)`).
    Viewed,
    /// The op mutates it (`Tensor(a!) self`).
    Mutated,
    Other,
}

fn first_arg(schema: &str) -> FirstArg {
    let Some((args, returns)) = schema.split_once(") -> ") else { return FirstArg::Other };
    let Some(first) = args.split_once('(').map(|(_, a)| a) else { return FirstArg::Other };
    if first.starts_with("Tensor(a!)") {
        FirstArg::Mutated
    } else if (first.starts_with("Tensor(a)") || first.starts_with("Tensor(a -> *)")) && returns.contains("Tensor(a)") {
        FirstArg::Viewed
    } else {
        FirstArg::Other
    }
}

/// The in-place mutation of a view that the lowering cannot express.
#[derive(Debug, PartialEq)]
pub(crate) struct ViewMutation {
    /// The in-place node.
    pub node: String,
    pub target: String,
    pub message: String,
}

/// The first in-place op of `graph` (subgraphs included) that mutates a tensor aliased by a value
/// read afterwards.
pub(crate) fn find_view_mutation(graph: &schema::Graph) -> Option<ViewMutation> {
    let mut last_read: FxHashMap<&str, usize> = FxHashMap::default();
    for (i, node) in graph.nodes.iter().enumerate() {
        for input in &node.inputs {
            if let Argument::Graph(g) = &input.arg {
                if let Some(found) = find_view_mutation(&g.graph) {
                    return Some(found);
                }
            }
            crate::fx::for_each_value_name(&input.arg, &mut |name| {
                last_read.insert(name, i);
            });
        }
    }
    for output in &graph.outputs {
        crate::fx::for_each_value_name(output, &mut |name| {
            last_read.insert(name, usize::MAX);
        });
    }

    // Every value that aliases another one, mapped to the base it aliases (a base maps to none).
    let mut base: FxHashMap<&str, &str> = FxHashMap::default();
    // Base → the values aliasing it, base included.
    let mut aliases: FxHashMap<&str, Vec<&str>> = FxHashMap::default();
    for (i, node) in graph.nodes.iter().enumerate() {
        let Some(how) = schemas::schema(&target_key(&node.target)).map(first_arg) else { continue };
        let Some(Argument::Tensor(first)) = node.inputs.first().map(|a| &a.arg) else { continue };
        let root = base.get(first.name.as_str()).copied().unwrap_or(first.name.as_str());
        match how {
            FirstArg::Viewed => {
                let group = aliases.entry(root).or_insert_with(|| vec![root]);
                for out in crate::fx::output_slots(node).into_iter().flatten() {
                    base.insert(out, root);
                    group.push(out);
                }
            }
            FirstArg::Mutated => {
                let outputs: Vec<&str> = crate::fx::output_slots(node).into_iter().flatten().collect();
                let group = aliases.get(root).map(Vec::as_slice).unwrap_or(&[]);
                let stale = group.iter().find(|&&alias| {
                    alias != first.name.as_str()
                        && !outputs.contains(&alias)
                        && last_read.get(alias).is_some_and(|&last| last > i)
                });
                if let Some(stale) = stale {
                    let reader = last_reader(graph, stale, i);
                    return Some(ViewMutation {
                        node: crate::fx::node_name(node).to_string(),
                        target: node.target.to_string(),
                        message: format!(
                            "mutates `{}` in place, which shares its memory with `{stale}` (a view or the base of \
                             one), read afterwards by {reader}; fxonnx does not yet write a mutation of a view back \
                             into its base, and exporting without that would give wrong results. Workaround: export \
                             the program after `ep.run_decompositions()`, which makes such updates functional \
                             (slice_scatter, select_scatter, ...), or write the update out of place",
                            first.name
                        ),
                    });
                }
                // The result aliases what it mutated.
                for out in outputs {
                    base.insert(out, root);
                    if let Some(group) = aliases.get_mut(root) {
                        group.push(out);
                    }
                }
            }
            FirstArg::Other => {}
        }
    }
    None
}

/// Who reads `name` after node `after`: `node `x``, or the graph's outputs.
fn last_reader(graph: &schema::Graph, name: &str, after: usize) -> String {
    for node in graph.nodes.iter().skip(after + 1) {
        let mut reads = false;
        for input in &node.inputs {
            crate::fx::for_each_value_name(&input.arg, &mut |n| reads |= n == name);
        }
        if reads {
            return format!("node `{}`", crate::fx::node_name(node));
        }
    }
    "the graph's outputs".to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alias_annotations() {
        let first = |key: &str| first_arg(schemas::schema(key).expect(key));
        assert_eq!(first("aten::slice.Tensor"), FirstArg::Viewed);
        assert_eq!(first("aten::select.int"), FirstArg::Viewed);
        assert_eq!(first("aten::view.default"), FirstArg::Viewed);
        assert_eq!(first("aten::transpose.int"), FirstArg::Viewed);
        assert_eq!(first("aten::split.Tensor"), FirstArg::Viewed);
        assert_eq!(first("aten::fill_.Scalar"), FirstArg::Mutated);
        assert_eq!(first("aten::copy_.default"), FirstArg::Mutated);
        assert_eq!(first("aten::add_.Tensor"), FirstArg::Mutated);
        assert_eq!(first("aten::add.Tensor"), FirstArg::Other);
        assert_eq!(first("aten::clone.default"), FirstArg::Other);
    }
}
