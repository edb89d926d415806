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

/// The scope strings of one `nn_module_stack`, computed once per distinct stack (nodes of one
/// module share it): the prefixes of `namespace`, `class_hierarchy` and `name_scopes`.
#[derive(Default)]
pub struct ScopeCache {
    stacks: crate::hash::FxHashMap<String, std::rc::Rc<ScopePrefixes>>,
}

pub struct ScopePrefixes {
    /// `path: Class/` per module, or empty.
    namespace: String,
    /// `['Class', ` (open list with a trailing separator), or `[`.
    classes: String,
    /// `['path', `, or `[`.
    scopes: String,
}

/// Append `s` as a Python string literal in single quotes (as `repr` of a list item prints it).
fn push_quoted(out: &mut String, s: &str) {
    out.push('\'');
    for c in s.chars() {
        if c == '\\' || c == '\'' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('\'');
}

impl ScopeCache {
    fn prefixes(&mut self, stack: &str) -> std::rc::Rc<ScopePrefixes> {
        if let Some(p) = self.stacks.get(stack) {
            return p.clone();
        }
        let (mut namespace, mut classes, mut scopes) = (String::new(), String::from("["), String::from("["));
        for entry in stack.split(';').filter(|e| !e.is_empty()) {
            let parts = split_entry(entry);
            if let [_, path, class] = parts[..] {
                namespace.push_str(&format!("{path}: {class}/"));
                push_quoted(&mut classes, class);
                classes.push_str(", ");
                push_quoted(&mut scopes, path);
                scopes.push_str(", ");
            }
        }
        let p = std::rc::Rc::new(ScopePrefixes { namespace, classes, scopes });
        self.stacks.insert(stack.to_string(), p.clone());
        p
    }
}

/// The five keys torch.onnx puts on every node made for an FX node.
pub fn node_metadata(node: &schema::Node, num_users: usize) -> Metadata {
    node_metadata_cached(node, num_users, &mut ScopeCache::default())
}

/// [`node_metadata`], with the module-stack strings of earlier nodes reused from `cache`.
pub fn node_metadata_cached(node: &schema::Node, num_users: usize, cache: &mut ScopeCache) -> Metadata {
    let name = fx::node_name(node);
    let target = short_target(&node.target);
    let stack = node.metadata.get("nn_module_stack");
    let stack = stack.as_deref().unwrap_or("");
    let p = cache.prefixes(stack);
    // Every string sized exactly up front: these five live as long as the model, one set per FX
    // node, and a string grown by pushes keeps up to twice the room it needs.
    let mut namespace = String::with_capacity(p.namespace.len() + name.len() + 2 + target.len());
    namespace.push_str(&p.namespace);
    namespace.push_str(name);
    namespace.push_str(": ");
    namespace.push_str(target);
    let quoted = |s: &str| s.len() + 2 + s.bytes().filter(|&b| b == b'\\' || b == b'\'').count();
    let mut classes = String::with_capacity(p.classes.len() + quoted(target) + 1);
    classes.push_str(&p.classes);
    push_quoted(&mut classes, target);
    classes.push(']');
    let mut scopes = String::with_capacity(p.scopes.len() + quoted(name) + 1);
    scopes.push_str(&p.scopes);
    push_quoted(&mut scopes, name);
    scopes.push(']');
    let mut fx_node = fx::format_node(node, num_users);
    fx_node.shrink_to_fit();
    vec![
        (NAMESPACE, namespace),
        (CLASS_HIERARCHY, classes),
        (NAME_SCOPES, scopes),
        (FX_NODE, fx_node),
        (STACK_TRACE, node.metadata.get("stack_trace").map(|s| s.into_owned()).unwrap_or_default()),
    ]
}

/// The arguments one reader of values has: a node's, or the graph outputs.
enum Readers<'g, 'a> {
    Node(&'g [schema::NamedArgument<'a>]),
    Output(&'g [schema::Argument<'a>]),
}

/// How many nodes read each value of `graph` (the output node counting as one), for FX's
/// `[num_users=N]`.
pub fn user_counts<'g>(graph: &'g schema::Graph<'_>) -> crate::hash::FxHashMap<&'g str, usize> {
    let mut counts = crate::hash::FxHashMap::with_capacity_and_hasher(graph.nodes.len(), Default::default());
    let readers =
        graph.nodes.iter().map(|n| Readers::Node(&n.inputs)).chain(std::iter::once(Readers::Output(&graph.outputs)));
    let mut seen = Vec::new();
    for args in readers {
        seen.clear();
        match args {
            Readers::Node(inputs) => inputs.iter().for_each(|i| fx::for_each_value_name(&i.arg, &mut |n| seen.push(n))),
            Readers::Output(outputs) => outputs.iter().for_each(|a| fx::for_each_value_name(a, &mut |n| seen.push(n))),
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
