//! The `metadata_props` torch.onnx writes, with its exact keys and value formats, so Netron and
//! existing scripts read fxonnx models the same way. The lowering stamps them; translations never do.

use crate::fx;
use std::rc::Rc;

use crate::onnx::ir::{Metadata, MetadataProps, PrefixedProps};
use crate::pt2::schema;

pub use crate::onnx::keys::*;

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
    stacks: crate::hash::FxHashMap<String, Rc<[Box<str>]>>,
    /// Where a node's values are assembled before one exact copy is kept.
    scratch: String,
}

/// The keys of a node's metadata, in the order torch.onnx writes them.
const NODE_KEYS: &[&str] = &[NAMESPACE, CLASS_HIERARCHY, NAME_SCOPES, FX_NODE, STACK_TRACE];

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
    /// The prefixes of [`NODE_KEYS`]' values for nodes of module stack `stack`: `path: Class/`
    /// per module, `['Class', ` and `['path', ` (lists left open), and none for the last two.
    fn prefixes(&mut self, stack: &str) -> Rc<[Box<str>]> {
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
        let p: Rc<[Box<str>]> = Rc::from([namespace.into(), classes.into(), scopes.into(), "".into(), "".into()]);
        self.stacks.insert(stack.to_string(), p.clone());
        p
    }
}

/// The five keys torch.onnx puts on every node made for an FX node, with the module-stack strings
/// of earlier nodes reused from `cache`.
pub fn node_metadata(node: &schema::Node, num_users: usize, cache: &mut ScopeCache) -> MetadataProps {
    let name = fx::node_name(node);
    let target = short_target(&node.target);
    let stack = node.metadata.get("nn_module_stack");
    let prefixes = cache.prefixes(stack.as_deref().unwrap_or(""));
    // The values' own parts, after their prefixes: `name: target`, `'target']`, `'name']`, the
    // FX node, its stack trace. One string per FX node lives as long as the model: assembled in
    // the scratch buffer, then copied once at its exact size.
    let own = &mut cache.scratch;
    own.clear();
    let mut ends = [0u32; NODE_KEYS.len()];
    let mut end = |i: usize, own: &String| ends[i] = u32::try_from(own.len()).unwrap_or(u32::MAX);
    own.push_str(name);
    own.push_str(": ");
    own.push_str(target);
    end(0, own);
    push_quoted(own, target);
    own.push(']');
    end(1, own);
    push_quoted(own, name);
    own.push(']');
    end(2, own);
    fx::write_node(own, node, num_users);
    end(3, own);
    if let Some(trace) = node.metadata.raw("stack_trace") {
        trace.push_to(own);
    }
    end(4, own);
    MetadataProps::Prefixed(PrefixedProps {
        keys: NODE_KEYS,
        prefixes,
        own: own.as_str().into(),
        ends: ends[..].into(),
    })
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
        (GRAPH_SIGNATURE, format!("\n{}", fx::format_signature(&program.graph_module.signature))),
        (RANGE_CONSTRAINTS, fx::format_range_constraints(&program.range_constraints)),
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
        (INPUT_KIND, kind.into()),
        (INPUT_PERSISTENT, persistent.into()),
        (ORIGINAL_NODE_NAME, placeholder.to_string()),
    ]
}
