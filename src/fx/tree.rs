//! The program's input and output trees (the pytree specs of its call signature), and each leaf's
//! path in them, dotted: `past_key_values.0.key`, `present.1.value` — the names ONNX Runtime GenAI
//! and Optimum give a decoder's cache. The i-th in_spec leaf is the i-th user or constant input;
//! the i-th out_spec leaf is the i-th user output (`docs/pt2-format.md`, section 12).
//!
//! transformers' cache objects (`DynamicCache`, `EncoderDecoderCache`, `StaticCache`), registered
//! as pytree nodes the way `transformers.exporters` does, are named as ONNX Runtime GenAI and
//! Optimum expect: `past_key_values.0.key` in, `present.0.key` out (`past_key_values.0.decoder.key`
//! and `.encoder.key` for an encoder-decoder cache), and [`decoder_dims`] names their dims.

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
    /// Whether an input is (or holds) a transformers cache object.
    pub has_cache: bool,
}

/// A leaf's steps from the root, and where a cache object starts on them (the number of steps
/// before its first step of its own).
struct Leaf {
    steps: Vec<Step>,
    cache_at: Option<usize>,
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
    walk(args, &fields, &mut Walk::default(), &mut arg_leaves)?;
    walk(kwargs, &fields, &mut Walk::default(), &mut kwarg_leaves)?;
    let has_cache = arg_leaves.iter().chain(&kwarg_leaves).any(|l| l.cache_at.is_some());
    let step_text = |s: &Step| match s {
        Step::Index(i) => i.to_string(),
        Step::Key(k) => k.clone(),
    };
    for leaf in &arg_leaves {
        // The first step is the argument's position: its forward name instead.
        let mut parts: Vec<String> = leaf.steps.iter().map(step_text).collect();
        if let (Some(Step::Index(i)), Some(first)) = (leaf.steps.first(), parts.first_mut()) {
            *first = sig.forward_arg_names.get(*i).cloned().unwrap_or_else(|| format!("input_{i}"));
        }
        inputs.push(parts.join("."));
    }
    inputs.extend(kwarg_leaves.iter().map(|leaf| leaf.steps.iter().map(step_text).collect::<Vec<_>>().join(".")));
    let out_spec = spec_root(&sig.out_spec)?;
    let mut out_leaves = Vec::new();
    walk(&out_spec, &fields, &mut Walk::default(), &mut out_leaves)?;
    let outputs = out_leaves
        .into_iter()
        .map(|leaf| {
            let steps = match leaf.cache_at {
                // The cache a step returns is the next step's past: `present`, in place of the
                // step that led to it (`past_key_values`).
                Some(at) => {
                    let mut steps = leaf.steps;
                    steps.splice(at.saturating_sub(1)..at, [Step::Key("present".into())]);
                    steps
                }
                None => leaf.steps,
            };
            let named = steps.iter().any(|s| matches!(s, Step::Key(_)));
            named.then(|| steps.iter().map(step_text).collect::<Vec<_>>().join("."))
        })
        .collect();
    Ok(Paths { inputs, outputs, has_cache })
}

/// Where [`walk`] is: the steps so far and where a cache object started on them.
#[derive(Default)]
struct Walk {
    steps: Vec<Step>,
    cache_at: Option<usize>,
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
    at: &mut Walk,
    out: &mut Vec<Leaf>,
) -> Result<(), TreeError> {
    if is_leaf(node) {
        out.push(Leaf { steps: at.steps.clone(), cache_at: at.cache_at });
        return Ok(());
    }
    let kind = node.get("type").and_then(Json::as_str).unwrap_or_default();
    // `context` is JSON text: dict keys, a namedtuple's type name, a ModelOutput's field names,
    // a cache object's state, or null.
    let context: Json = match node.get("context").and_then(Json::as_str) {
        Some(text) => serde_json::from_str(text).unwrap_or(Json::Null),
        None => Json::Null,
    };
    let children = children(node)?;
    if let Some(names) = cache_leaf_steps(kind, &context, children.len()) {
        let outer = at.cache_at.replace(at.steps.len());
        for (child, steps) in children.iter().zip(names) {
            let depth = at.steps.len();
            at.steps.extend(steps);
            walk(child, fields, at, out)?;
            at.steps.truncate(depth);
        }
        at.cache_at = outer;
        return Ok(());
    }
    let names: Option<Vec<String>> = match kind {
        "builtins.dict" | "collections.OrderedDict" | "torch.fx.immutable_collections.immutable_dict" => {
            context.as_array().map(|keys| keys.iter().map(key_text).collect())
        }
        "collections.namedtuple" => context
            .as_str()
            .and_then(|t| fields.get(t))
            .and_then(Json::as_array)
            .map(|f| f.iter().map(key_text).collect()),
        // A transformers ModelOutput (and any node whose context is its children's names): its
        // field names, one per child.
        _ => context
            .as_array()
            .filter(|keys| keys.len() == children.len() && keys.iter().all(Json::is_string))
            .map(|keys| keys.iter().map(key_text).collect()),
    };
    for (i, child) in children.iter().enumerate() {
        at.steps.push(match names.as_ref().and_then(|n| n.get(i)) {
            Some(k) => Step::Key(k.clone()),
            None => Step::Index(i),
        });
        walk(child, fields, at, out)?;
        at.steps.pop();
    }
    Ok(())
}

/// The steps that name each child of a transformers cache object: `0.key`, `0.value` per layer
/// (`0.decoder.key` / `0.encoder.key` for an `EncoderDecoderCache`'s self- and cross-attention
/// caches, `0.cumulative_length` for another tensor of a layer). `None` unless `kind` is a cache
/// class flattened by `transformers.exporters`' generic flattener, whose context is the object's
/// state with `{"_t": "tensor", "i": k}` where its k-th child was.
fn cache_leaf_steps(kind: &str, context: &Json, n: usize) -> Option<Vec<Vec<Step>>> {
    if !kind.ends_with("Cache") || context.get("_t").and_then(Json::as_str) != Some("obj") {
        return None;
    }
    let mut places: Vec<Option<Vec<Step>>> = vec![None; n];
    state_leaves(context, &mut Vec::new(), &mut places);
    Some(
        places
            .into_iter()
            .enumerate()
            .map(|(i, place)| place.map_or_else(|| vec![Step::Index(i)], |p| cache_name(&p)))
            .collect(),
    )
}

/// Every tensor (or symbolic int) marker of a flattened object's state, at its attribute path.
fn state_leaves(v: &Json, path: &mut Vec<Step>, places: &mut [Option<Vec<Step>>]) {
    let mut visit = |step: Step, child: &Json, places: &mut [Option<Vec<Step>>]| {
        path.push(step);
        state_leaves(child, path, places);
        path.pop();
    };
    match v {
        Json::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                visit(Step::Index(i), item, places);
            }
        }
        Json::Object(map) => match map.get("_t").and_then(Json::as_str) {
            Some("tensor" | "sym") => {
                let slot = map.get("i").and_then(Json::as_u64).and_then(|i| places.get_mut(i as usize));
                if let Some(slot) = slot {
                    *slot = Some(path.clone());
                }
            }
            Some("obj") => {
                if let Some(state) = map.get("s") {
                    state_leaves(state, path, places);
                }
            }
            Some("map" | "seq") => {
                if let Some(values) = map.get("v") {
                    state_leaves(values, path, places);
                }
            }
            Some("items") => {
                for pair in map.get("v").and_then(Json::as_array).into_iter().flatten() {
                    if let Some([key, value]) = pair.as_array().map(Vec::as_slice) {
                        visit(Step::Key(key_text(key)), value, places);
                    }
                }
            }
            Some(_) => {}
            None => {
                for (key, value) in map {
                    visit(Step::Key(key.clone()), value, places);
                }
            }
        },
        _ => {}
    }
}

/// `layers.3.keys` → `3.key`; `self_attention_cache.layers.3.values` → `3.decoder.value`,
/// `cross_attention_cache...` → `3.encoder...` (Optimum's names); any other place keeps its path.
fn cache_name(place: &[Step]) -> Vec<Step> {
    let layers = place.iter().position(|s| matches!(s, Step::Key(k) if k == "layers"));
    let (Some(at), Some(Step::Index(layer))) = (layers, layers.and_then(|at| place.get(at + 1))) else {
        return place.to_vec();
    };
    let mut name = vec![Step::Index(*layer)];
    match place.first() {
        Some(Step::Key(k)) if k == "self_attention_cache" => name.push(Step::Key("decoder".into())),
        Some(Step::Key(k)) if k == "cross_attention_cache" => name.push(Step::Key("encoder".into())),
        _ => {}
    }
    for step in &place[at + 2..] {
        name.push(match step {
            Step::Key(k) if k == "keys" => Step::Key("key".into()),
            Step::Key(k) if k == "values" => Step::Key("value".into()),
            other => other.clone(),
        });
    }
    name
}

/// Names for the symbolic dims of a decoder's inputs, as ONNX Runtime GenAI and Optimum name
/// them: `batch_size`, `sequence_length`, `past_sequence_length`, `total_sequence_length` (and
/// Optimum's encoder-decoder names). `inputs` are the graph inputs' names with, per dim, its
/// symbol when the dim is one symbol. A symbol takes the first name an input gives it and a name
/// goes to one symbol only; derived dims follow (`past_sequence_length + sequence_length`).
pub fn decoder_dims(inputs: &[(String, Vec<Option<String>>)]) -> Vec<(String, String)> {
    let mut named: Vec<(String, String)> = Vec::new();
    for (name, dims) in inputs {
        let per_dim: &[&str] = match name.as_str() {
            "input_ids" | "inputs_embeds" | "position_ids" => &["batch_size", "sequence_length"],
            "attention_mask" => &["batch_size", "total_sequence_length"],
            "cache_position" => &["sequence_length"],
            "decoder_input_ids" | "decoder_inputs_embeds" => &["batch_size", "decoder_sequence_length"],
            "encoder_hidden_states" | "encoder_outputs.last_hidden_state" | "encoder_outputs.0" => {
                &["batch_size", "encoder_sequence_length"]
            }
            n if n.starts_with("past_key_values.") => match n.rsplit('.').nth(1) {
                Some("decoder") => &["batch_size", "", "past_decoder_sequence_length"],
                Some("encoder") => &["batch_size", "", "encoder_sequence_length_out"],
                _ if n.ends_with(".key") || n.ends_with(".value") => &["batch_size", "", "past_sequence_length"],
                _ => &[],
            },
            _ => &[],
        };
        for (dim, wanted) in dims.iter().zip(per_dim) {
            let Some(symbol) = dim else { continue };
            if wanted.is_empty() || named.iter().any(|(s, n)| s == symbol || n == wanted) {
                continue;
            }
            named.push((symbol.clone(), wanted.to_string()));
        }
    }
    named
}

fn key_text(k: &Json) -> String {
    match k {
        Json::String(s) => s.clone(),
        other => other.to_string(),
    }
}
