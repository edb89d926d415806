//! The program's input and output trees (the pytree specs of its call signature), and each leaf's
//! path in them, dotted: `past_key_values.0.key`, `present.1.value` — the names ONNX Runtime GenAI
//! and Optimum give a decoder's cache. The i-th in_spec leaf is the i-th user or constant input;
//! the i-th out_spec leaf is the i-th user output (`docs/pt2-format.md`, section 12).

use serde::Deserialize;
use serde_json::Value as Json;

use crate::pt2::schema::GraphModule;

#[derive(Debug, thiserror::Error)]
#[error("the program's input/output trees: {0}")]
pub struct TreeError(String);

#[derive(Deserialize)]
struct Signature {
    in_spec: String,
    out_spec: String,
    #[serde(default)]
    forward_arg_names: Vec<String>,
}

/// One step from a node to a child.
#[derive(Clone, Debug, PartialEq)]
enum Step {
    /// A tuple or list position (or a custom container's).
    Index(usize),
    /// A dict key or a namedtuple field.
    Key(String),
}

/// The dotted paths of the user inputs' and the user outputs' leaves, in order. An input path
/// starts with the forward argument's name (`input_ids`, `past_key_values.0.key`); an output leaf
/// reached only through tuples and lists has no name of its own (`None`: it keeps its FX name).
pub struct Paths {
    pub inputs: Vec<String>,
    pub outputs: Vec<Option<String>>,
}

pub fn paths(module: &GraphModule<'_>) -> Result<Paths, TreeError> {
    let root = module
        .module_call_graph
        .iter()
        .find(|e| e.fqn.is_empty())
        .and_then(|e| e.signature)
        .ok_or_else(|| TreeError("the archive records no call signature for the program".into()))?;
    let sig: Signature = serde_json::from_str(root.get()).map_err(|e| TreeError(format!("signature: {e}")))?;
    let fields: serde_json::Map<String, Json> = match module.treespec_namedtuple_fields {
        Some(raw) => serde_json::from_str(raw.get()).map_err(|e| TreeError(format!("namedtuple fields: {e}")))?,
        None => Default::default(),
    };
    let mut inputs = Vec::new();
    let in_spec = spec_root(&sig.in_spec)?;
    // The in_spec root is (args tuple, kwargs dict): arguments by their forward names, kwargs by key.
    let children = children(&in_spec)?;
    let [args, kwargs] = children else { return Err(TreeError("in_spec root is not (args, kwargs)".into())) };
    let (mut arg_leaves, mut kwarg_leaves) = (Vec::new(), Vec::new());
    walk(args, &fields, &mut Vec::new(), &mut arg_leaves)?;
    walk(kwargs, &fields, &mut Vec::new(), &mut kwarg_leaves)?;
    let step_text = |s: &Step| match s {
        Step::Index(i) => i.to_string(),
        Step::Key(k) => k.clone(),
    };
    for path in &arg_leaves {
        // The first step is the argument's position: its forward name instead.
        let mut parts: Vec<String> = path.iter().map(step_text).collect();
        if let (Some(Step::Index(i)), Some(first)) = (path.first(), parts.first_mut()) {
            *first = sig.forward_arg_names.get(*i).cloned().unwrap_or_else(|| format!("input_{i}"));
        }
        inputs.push(parts.join("."));
    }
    inputs.extend(kwarg_leaves.iter().map(|path| path.iter().map(step_text).collect::<Vec<_>>().join(".")));
    let out_spec = spec_root(&sig.out_spec)?;
    let mut out_leaves = Vec::new();
    walk(&out_spec, &fields, &mut Vec::new(), &mut out_leaves)?;
    let outputs = out_leaves
        .iter()
        .map(|path| {
            let named = path.iter().any(|s| matches!(s, Step::Key(_)));
            named.then(|| path.iter().map(step_text).collect::<Vec<_>>().join("."))
        })
        .collect();
    Ok(Paths { inputs, outputs })
}

/// `[1, node]` (treespec text) → node.
fn spec_root(text: &str) -> Result<Json, TreeError> {
    let v: Json = serde_json::from_str(text).map_err(|e| TreeError(format!("treespec: {e}")))?;
    match v {
        Json::Array(mut a) if a.len() == 2 => Ok(a.swap_remove(1)),
        _ => Err(TreeError("treespec is not [version, node]".into())),
    }
}

fn children_of(node: &Json) -> Option<&Vec<Json>> {
    node.get("children_spec")?.as_array()
}

fn children(node: &Json) -> Result<&[Json], TreeError> {
    children_of(node).map(|c| c.as_slice()).ok_or_else(|| TreeError("treespec node without children_spec".into()))
}

fn is_leaf(node: &Json) -> bool {
    node.get("type").is_none_or(Json::is_null)
}

/// Depth-first, as torch flattens: every leaf's path of steps.
fn walk(
    node: &Json,
    fields: &serde_json::Map<String, Json>,
    path: &mut Vec<Step>,
    out: &mut Vec<Vec<Step>>,
) -> Result<(), TreeError> {
    if is_leaf(node) {
        out.push(path.clone());
        return Ok(());
    }
    let kind = node.get("type").and_then(Json::as_str).unwrap_or_default();
    // `context` is JSON text: dict keys, a namedtuple's type name, or null.
    let context: Json = match node.get("context").and_then(Json::as_str) {
        Some(text) => serde_json::from_str(text).unwrap_or(Json::Null),
        None => Json::Null,
    };
    let names: Option<Vec<String>> = match kind {
        "builtins.dict" | "collections.OrderedDict" | "torch.fx.immutable_collections.immutable_dict" => {
            context.as_array().map(|keys| keys.iter().map(key_text).collect())
        }
        "collections.namedtuple" => context
            .as_str()
            .and_then(|t| fields.get(t))
            .and_then(Json::as_array)
            .map(|f| f.iter().map(key_text).collect()),
        _ => None,
    };
    for (i, child) in children(node)?.iter().enumerate() {
        path.push(match names.as_ref().and_then(|n| n.get(i)) {
            Some(k) => Step::Key(k.clone()),
            None => Step::Index(i),
        });
        walk(child, fields, path, out)?;
        path.pop();
    }
    Ok(())
}

fn key_text(k: &Json) -> String {
    match k {
        Json::String(s) => s.clone(),
        other => other.to_string(),
    }
}
