//! Which translation serves each FX node: the table's entry for its target, an in-place op's
//! functional twin, an alias's; the targets nothing serves (all reported at once); the nodes that
//! only feed torch's runtime checks, which are not lowered.

use super::UnsupportedOp;
use crate::fx;
use crate::hash::{FxHashMap, FxHashSet};
use crate::pt2::schema::{self, Argument};
use crate::translate::dsl::{target_key, TranslationTable};

/// Per node of `graph`: whether it is one of torch's runtime checks (`_assert_scalar`,
/// `sym_constrain_range`, ...), which an ONNX graph does not have, or a symbolic-size computation
/// read only by such checks. These nodes are not lowered: a check may read what ONNX cannot
/// compute (the storage offset of a tensor_split piece), and its result would be unused anyway.
pub(super) fn checks_only(graph: &schema::Graph<'_>) -> Vec<bool> {
    const CHECKS: &[&str] = &[
        "aten::_assert_scalar.default",
        "aten::_assert_async.default",
        "aten::_assert_async.msg",
        "aten::sym_constrain_range.default",
        "aten::sym_constrain_range_for_size.default",
    ];
    // Symbolic-size arithmetic only: nothing with a side effect or a tensor result is skipped.
    let pure = |key: &str| {
        key.starts_with("_operator.")
            || key.starts_with("torch.sym_")
            || key.starts_with("math.")
            || key.starts_with("aten::sym_")
    };
    let mut readers: FxHashMap<&str, Vec<usize>> = FxHashMap::default();
    for (i, node) in graph.nodes.iter().enumerate() {
        for input in &node.inputs {
            fx::for_each_value_name(&input.arg, &mut |n| readers.entry(n).or_default().push(i));
        }
    }
    let mut graph_outputs: FxHashSet<&str> = FxHashSet::default();
    for o in &graph.outputs {
        fx::for_each_value_name(o, &mut |n| {
            graph_outputs.insert(n);
        });
    }
    let mut skip = vec![false; graph.nodes.len()];
    for (i, node) in graph.nodes.iter().enumerate().rev() {
        let key = target_key(&node.target);
        if CHECKS.contains(&key.as_str()) {
            skip[i] = true;
            continue;
        }
        if !pure(&key) {
            continue;
        }
        let mut outputs = Vec::new();
        for o in &node.outputs {
            fx::for_each_value_name(o, &mut |n| outputs.push(n));
        }
        skip[i] = !outputs.is_empty()
            && outputs.iter().all(|n| {
                !graph_outputs.contains(n) && readers.get(n).is_some_and(|r| r.iter().all(|&j| j > i && skip[j]))
            });
    }
    skip
}

/// Every target of `graph` (subgraphs included) that `table` cannot translate.
pub fn find_unsupported(graph: &schema::Graph, table: &TranslationTable) -> Vec<UnsupportedOp> {
    let mut found: Vec<UnsupportedOp> = Vec::new();
    visit_nodes(graph, &mut |node, current| {
        let key = target_key(&node.target);
        if crate::translate::vmap::is_bracket(&node.target) {
            return; // lowered by the driver (`vmap`)
        }
        if resolve(table, &key, &crate::translate::dsl::NodeView { node, graph: current }).is_none() {
            let name = node.name.as_deref().unwrap_or_default().to_string();
            match found.iter_mut().find(|u| u.key == key) {
                Some(u) => u.nodes.push(name),
                None => {
                    let reason = crate::translate::refused::reason(&key);
                    found.push(UnsupportedOp { target: node.target.to_string(), key, nodes: vec![name], reason })
                }
            }
        }
    });
    found
}

/// Call `f` on every node of `graph` and of its subgraphs, in order, with the graph holding it.
pub fn visit_nodes<'g>(graph: &'g schema::Graph, f: &mut dyn FnMut(&'g schema::Node, &'g schema::Graph)) {
    for node in &graph.nodes {
        f(node, graph);
        for input in &node.inputs {
            if let Argument::Graph(g) = &input.arg {
                visit_nodes(&g.graph, f);
            }
        }
    }
}

/// The translation for `key` serving `node`: the exact overload; else, for an in-place op
/// (`add_.Tensor`), its functional form (`add.Tensor`); else the op's default overload when its
/// schema has the same arguments. Returns the entry, whether the op mutates its first argument,
/// and the key actually used when it is not `key`.
pub fn resolve<'t>(
    table: &'t TranslationTable,
    key: &str,
    node: &crate::translate::dsl::NodeView<'_>,
) -> Option<(&'t crate::translate::dsl::Entry, bool, Option<String>)> {
    resolve_by(key, &|k| table.select(k, node))
}

/// The key whose translation serves `key` for some node (`key` itself, its functional form, its
/// default overload or the op an alias names), judged without a node: `when` conditions aside.
pub fn serving_key(table: &TranslationTable, key: &str) -> Option<String> {
    resolve_by(key, &|k| table.get(k)).map(|(_, _, used)| used.unwrap_or_else(|| key.to_string()))
}

fn resolve_by<'t>(
    key: &str,
    find: &dyn Fn(&str) -> Option<&'t crate::translate::dsl::Entry>,
) -> Option<(&'t crate::translate::dsl::Entry, bool, Option<String>)> {
    if let Some(e) = find(key) {
        return Some((e, is_inplace(key), None));
    }
    let (ns, rest) = key.split_once("::")?;
    let (name, overload) = rest.split_once('.').unwrap_or((rest, "default"));
    if let Some(functional) = name.strip_suffix('_').filter(|n| !n.ends_with('_') && !n.is_empty()) {
        let fkey = format!("{ns}::{functional}.{overload}");
        if let Some(e) = find(&fkey) {
            return Some((e, true, Some(fkey)));
        }
    }
    let default = format!("{ns}::{name}.default");
    if overload != "default" && same_arguments(key, &default) {
        if let Some(e) = find(&default) {
            return Some((e, is_inplace(key), Some(default)));
        }
    }
    // An alias (`divide`, `clip`, `swapaxes`) is served by the op it names.
    let canonical = crate::translate::aliases::canonical(key)?;
    let (e, inplace, used) = resolve_by(&canonical, find)?;
    Some((e, inplace, Some(used.unwrap_or(canonical))))
}

/// Whether two overloads take the same arguments (names and types, alias annotations aside).
fn same_arguments(a: &str, b: &str) -> bool {
    let args = |k: &str| {
        crate::translate::aten_schemas::schema(k)
            .map(|s| crate::translate::aten_schemas::arguments(s).join(", ").replace("(a!)", "").replace("(a)", ""))
    };
    matches!((args(a), args(b)), (Some(x), Some(y)) if x == y)
}

/// Argument renames from the schema of the translation used to the node's own schema, where they
/// differ (`dropout(Tensor input, ...)` serving `dropout_(Tensor(a!) self, ...)`).
pub(super) fn argument_renames(inplace_key: &str, functional_key: &str) -> Vec<(String, String)> {
    let (Some(i), Some(f)) =
        (crate::translate::aten_schemas::schema(inplace_key), crate::translate::aten_schemas::schema(functional_key))
    else {
        return Vec::new();
    };
    let (i, f) = (crate::translate::aten_schemas::arg_names(i), crate::translate::aten_schemas::arg_names(f));
    f.iter().zip(&i).filter(|(a, b)| a != b).map(|(a, b)| (a.to_string(), b.to_string())).collect()
}

fn is_inplace(key: &str) -> bool {
    key.split_once("::")
        .map(|(_, rest)| rest.split('.').next().unwrap_or(""))
        .is_some_and(|n| n.ends_with('_') && !n.ends_with("__"))
}
