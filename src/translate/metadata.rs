//! The `metadata_props` torch.onnx writes, with its exact keys and value formats, so Netron and
//! existing scripts read fxonnx models the same way. The lowering stamps them; translations never do.

use crate::fx;
use crate::onnx::ir::Metadata;
use crate::pt2::schema;

pub const NAMESPACE: &str = "namespace";
pub const CLASS_HIERARCHY: &str = "pkg.torch.onnx.class_hierarchy";
pub const NAME_SCOPES: &str = "pkg.torch.onnx.name_scopes";
pub const FX_NODE: &str = "pkg.torch.onnx.fx_node";
pub const STACK_TRACE: &str = "pkg.torch.onnx.stack_trace";
pub const ORIGINAL_NODE_NAME: &str = "pkg.torch.onnx.original_node_name";
pub const INPUT_KIND: &str = "pkg.torch.export.graph_signature.InputSpec.kind";
pub const INPUT_PERSISTENT: &str = "pkg.torch.export.graph_signature.InputSpec.persistent";
pub const OUTPUT_KIND: &str = "pkg.torch.export.graph_signature.OutputSpec.kind";
pub const GRAPH_SIGNATURE: &str = "pkg.torch.export.ExportedProgram.graph_signature";
pub const RANGE_CONSTRAINTS: &str = "pkg.torch.export.ExportedProgram.range_constraints";

/// Split an `nn_module_stack` entry `key,path,type` on the commas outside brackets.
fn split_entry(entry: &str) -> Vec<&str> {
    let mut parts = Vec::with_capacity(3);
    let mut depth = 0i32;
    let mut start = 0;
    for (i, c) in entry.char_indices() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&entry[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&entry[start..]);
    parts
}

/// `torch.ops.aten.linear.default` → `aten.linear.default` (how torch prints an OpOverload).
fn short_target(target: &str) -> &str {
    target.strip_prefix("torch.ops.higher_order.").or_else(|| target.strip_prefix("torch.ops.")).unwrap_or(target)
}

fn py_list(items: &[String]) -> String {
    let quoted: Vec<String> = items.iter().map(|s| format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'"))).collect();
    format!("[{}]", quoted.join(", "))
}

/// The five keys torch.onnx puts on every node made for an FX node.
pub fn node_metadata(node: &schema::Node, num_users: usize) -> Metadata {
    let name = node.name.clone().or_else(|| fx::first_output_name(node)).unwrap_or_default();
    let target = short_target(&node.target);
    let mut scopes = Vec::new();
    let mut classes = Vec::new();
    if let Some(stack) = node.metadata.get("nn_module_stack") {
        for entry in stack.split(';').filter(|e| !e.is_empty()) {
            let parts = split_entry(entry);
            if let [_, path, class] = parts[..] {
                scopes.push(path.to_string());
                classes.push(class.to_string());
            }
        }
    }
    let mut namespace: Vec<String> = scopes.iter().zip(&classes).map(|(s, c)| format!("{s}: {c}")).collect();
    namespace.push(format!("{name}: {target}"));
    scopes.push(name.clone());
    classes.push(target.to_string());
    vec![
        (NAMESPACE.into(), namespace.join("/")),
        (CLASS_HIERARCHY.into(), py_list(&classes)),
        (NAME_SCOPES.into(), py_list(&scopes)),
        (FX_NODE.into(), fx::format_node(node, num_users)),
        (STACK_TRACE.into(), node.metadata.get("stack_trace").cloned().unwrap_or_default()),
    ]
}

/// How many nodes read each value of `graph` (the output node counting as one), for FX's
/// `[num_users=N]`.
pub fn user_counts(graph: &schema::Graph) -> std::collections::HashMap<&str, usize> {
    let mut counts = std::collections::HashMap::with_capacity(graph.nodes.len());
    let readers = graph
        .nodes
        .iter()
        .map(|n| n.inputs.iter().map(|i| &i.arg).collect::<Vec<_>>())
        .chain(std::iter::once(graph.outputs.iter().collect()));
    let mut seen = Vec::new();
    for args in readers {
        seen.clear();
        for arg in args {
            fx::for_each_value_name(arg, &mut |n| seen.push(n));
        }
        seen.sort_unstable();
        seen.dedup();
        for n in &seen {
            *counts.entry(*n).or_insert(0) += 1;
        }
    }
    counts
}

/// The graph-level keys: the signature and range constraints as torch prints them.
pub fn graph_metadata(program: &schema::ExportedProgram) -> Metadata {
    vec![
        // torch prints the signature with a leading newline.
        (GRAPH_SIGNATURE.into(), format!("\n{}", fx::format_signature(&program.graph_module.signature))),
        (RANGE_CONSTRAINTS.into(), fx::format_range_constraints(&program.range_constraints)),
    ]
}

/// Keys of a graph input or initializer: its input spec kind, persistence and placeholder name.
pub fn input_metadata(kind: &fx::InputKind, placeholder: &str) -> Metadata {
    let (kind, persistent) = match kind {
        fx::InputKind::Parameter { .. } => ("PARAMETER", "None"),
        fx::InputKind::Buffer { persistent, .. } => ("BUFFER", if *persistent { "True" } else { "False" }),
        fx::InputKind::Constant { .. } => ("CONSTANT_TENSOR", "None"),
        _ => ("USER_INPUT", "None"),
    };
    vec![
        (INPUT_KIND.into(), kind.into()),
        (INPUT_PERSISTENT.into(), persistent.into()),
        (ORIGINAL_NODE_NAME.into(), placeholder.to_string()),
    ]
}
