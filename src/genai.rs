//! `genai_config.json` for ONNX Runtime GenAI: the file `onnxruntime_genai.Model(folder)` reads to
//! run an exported decoder (`fxonnx export --genai-config[=MODEL_DIR]`).
//!
//! The model's own inputs and outputs give the names (`input_ids`, `attention_mask`,
//! `position_ids`, `past_key_values.%d.key`, `logits`, `present.%d.key`: what a program whose
//! inputs hold a transformers `DynamicCache` is named), the number of layers, key/value heads, head
//! size and vocabulary. The model folder, when given (a transformers checkpoint: `config.json`,
//! `generation_config.json`, tokenizer files), gives the context length, the special tokens and
//! the search defaults, and its tokenizer files are copied beside the model.

use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value as Json};

use crate::view::{Dim, Model};

/// What can go wrong writing the GenAI files.
#[derive(Debug, thiserror::Error)]
pub enum GenaiError {
    /// The model is not a decoder ONNX Runtime GenAI runs.
    #[error("--genai-config: {0}")]
    NotADecoder(String),
    #[error("--genai-config: cannot read {path}: {message}")]
    Config { path: PathBuf, message: String },
    #[error("--genai-config: cannot write {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
}

/// The files written and what the user should know (values the folder did not give).
#[derive(Debug, Default)]
pub struct GenaiFiles {
    pub written: Vec<PathBuf>,
    pub warnings: Vec<String>,
}

/// Tokenizer files of a transformers checkpoint, copied when present.
const TOKENIZER_FILES: &[&str] = &[
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "added_tokens.json",
    "vocab.json",
    "merges.txt",
    "tokenizer.model",
    "chat_template.jinja",
    "chat_template.json",
];

/// The context length when no model folder gives one.
const DEFAULT_CONTEXT: i64 = 2048;

/// Write `genai_config.json` beside the model saved at `model_path` (and, with `model_dir`, copy
/// the checkpoint's tokenizer files there). Each file is written whole or not at all.
pub fn write_config(model: &Model, model_path: &Path, model_dir: Option<&Path>) -> Result<GenaiFiles, GenaiError> {
    let folder = match model_path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let filename = model_path
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .ok_or_else(|| GenaiError::NotADecoder(format!("{} names no model file", model_path.display())))?;
    let hf = match model_dir {
        Some(dir) => Some(Checkpoint::read(dir)?),
        None => None,
    };
    let mut files = GenaiFiles::default();
    let config = config_json(model, &filename, hf.as_ref(), &mut files.warnings)?;
    let path = folder.join("genai_config.json");
    let text = serde_json::to_string_pretty(&config).unwrap_or_default() + "\n";
    crate::onnx::save::write_whole(&path, text.as_bytes())
        .map_err(|source| GenaiError::Io { path: path.clone(), source })?;
    files.written.push(path);
    if let Some(dir) = model_dir {
        for name in TOKENIZER_FILES {
            let (from, to) = (dir.join(name), folder.join(name));
            if !from.is_file() || same_file(&from, &to) {
                continue;
            }
            let bytes =
                std::fs::read(&from).map_err(|e| GenaiError::Config { path: from.clone(), message: e.to_string() })?;
            crate::onnx::save::write_whole(&to, &bytes)
                .map_err(|source| GenaiError::Io { path: to.clone(), source })?;
            files.written.push(to);
        }
    }
    Ok(files)
}

fn same_file(a: &Path, b: &Path) -> bool {
    matches!((a.canonicalize(), b.canonicalize()), (Ok(x), Ok(y)) if x == y)
}

/// The configuration: the decoder's names and sizes from the model, the rest from the checkpoint.
fn config_json(
    model: &Model,
    filename: &str,
    hf: Option<&Checkpoint>,
    warnings: &mut Vec<String>,
) -> Result<Json, GenaiError> {
    let inputs: Vec<(&str, Vec<Dim<'_>>)> = model.inputs().map(|v| (v.name(), v.shape().unwrap_or_default())).collect();
    let outputs: Vec<(&str, Vec<Dim<'_>>)> =
        model.outputs().map(|v| (v.name(), v.shape().unwrap_or_default())).collect();
    let names = |vs: &[(&str, Vec<Dim<'_>>)]| vs.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ");
    let not_a_decoder = |why: &str| {
        GenaiError::NotADecoder(format!(
            "{why}; ONNX Runtime GenAI runs a decoder taking input_ids (attention_mask, position_ids) and \
             past_key_values.N.key/value, returning logits and present.N.key/value (the names a program \
             whose inputs hold a transformers DynamicCache gets); the model takes [{}] and returns [{}]",
            names(&inputs),
            names(&outputs)
        ))
    };
    let layers = inputs.iter().filter(|(n, _)| cache_layer(n, "past_key_values", "key").is_some()).count();
    if layers == 0 {
        return Err(not_a_decoder("the model has no past_key_values.N.key inputs"));
    }
    for i in 0..layers {
        for (side, names) in [("past_key_values", &inputs), ("present", &outputs)] {
            for kv in ["key", "value"] {
                let name = format!("{side}.{i}.{kv}");
                if !names.iter().any(|(n, _)| *n == name) {
                    return Err(not_a_decoder(&format!("the model has no `{name}`")));
                }
            }
        }
    }
    const KNOWN: &[&str] = &["input_ids", "inputs_embeds", "attention_mask", "position_ids"];
    if let Some((other, _)) = inputs.iter().find(|(n, _)| !KNOWN.contains(n) && !n.starts_with("past_key_values.")) {
        return Err(not_a_decoder(&format!("ONNX Runtime GenAI feeds no input named `{other}`")));
    }
    let Some((_, logits)) = outputs.iter().find(|(n, _)| *n == "logits") else {
        return Err(not_a_decoder("the model has no `logits` output"));
    };
    let first = |side: &str| format!("{side}.0.key");
    let Some((_, key)) = inputs.iter().find(|(n, _)| *n == first("past_key_values")) else {
        return Err(not_a_decoder("the model has no past_key_values.0.key input"));
    };
    let fixed = |d: Option<&Dim<'_>>| match d {
        Some(Dim::Fixed(n)) => Some(*n),
        _ => None,
    };
    let (Some(kv_heads), Some(head_size)) = (fixed(key.get(1)), fixed(key.get(3))) else {
        return Err(not_a_decoder("past_key_values.0.key is not [batch, key/value heads, past length, head size] with static heads and head size"));
    };
    let Some(vocab) = fixed(logits.last()) else {
        return Err(not_a_decoder("the logits' last dim (the vocabulary) is not static"));
    };

    let mut io_in = Map::new();
    for name in ["input_ids", "inputs_embeds", "attention_mask", "position_ids"] {
        if inputs.iter().any(|(n, _)| *n == name) {
            io_in.insert(name.into(), json!(name));
        }
    }
    io_in.insert("past_key_names".into(), json!("past_key_values.%d.key"));
    io_in.insert("past_value_names".into(), json!("past_key_values.%d.value"));
    let io_out =
        json!({"logits": "logits", "present_key_names": "present.%d.key", "present_value_names": "present.%d.value"});

    let mut decoder = Map::new();
    decoder.insert("filename".into(), json!(filename));
    decoder.insert("session_options".into(), json!({"log_id": "onnxruntime-genai", "provider_options": []}));
    decoder.insert("head_size".into(), json!(head_size));
    decoder.insert("num_hidden_layers".into(), json!(layers));
    decoder.insert("num_key_value_heads".into(), json!(kv_heads));
    let config = hf.map(|c| &c.config);
    let get = |key: &str| config.and_then(|c| c.get(key)).filter(|v| !v.is_null());
    if let Some(heads) = get("num_attention_heads") {
        decoder.insert("num_attention_heads".into(), heads.clone());
    }
    if let Some(hidden) = get("hidden_size") {
        decoder.insert("hidden_size".into(), hidden.clone());
    }
    decoder.insert("inputs".into(), Json::Object(io_in));
    decoder.insert("outputs".into(), io_out);

    let context = ["max_position_embeddings", "n_positions", "seq_length"].iter().find_map(|k| get(k)?.as_i64());
    let context = context.unwrap_or_else(|| {
        warnings.push(format!(
            "genai_config.json: context_length {DEFAULT_CONTEXT} (no config.json gave max_position_embeddings); \
             pass the model folder: --genai-config=DIR"
        ));
        DEFAULT_CONTEXT
    });
    // A token id: generation_config.json's first, as transformers' generate reads it.
    let token = |key: &str| {
        let from = |c: Option<&Json>| c.and_then(|c| c.get(key)).filter(|v| !v.is_null()).cloned();
        from(hf.and_then(|c| c.generation.as_ref())).or_else(|| from(config))
    };
    let mut top = Map::new();
    top.insert("type".into(), json!("decoder"));
    top.insert("vocab_size".into(), json!(vocab));
    top.insert("context_length".into(), json!(context));
    for key in ["bos_token_id", "eos_token_id", "pad_token_id"] {
        match token(key) {
            Some(v) => {
                top.insert(key.into(), v);
            }
            None if key == "eos_token_id" => warnings.push(
                "genai_config.json: no eos_token_id (no model folder gave one): generation stops at max_length only"
                    .into(),
            ),
            None => {}
        }
    }
    top.insert("decoder".into(), Json::Object(decoder));

    let mut search = Map::new();
    search.insert("max_length".into(), json!(context));
    search.insert("min_length".into(), json!(0));
    search.insert("num_beams".into(), json!(1));
    search.insert("num_return_sequences".into(), json!(1));
    search.insert("past_present_share_buffer".into(), json!(false));
    search.insert("early_stopping".into(), json!(true));
    let generation = hf.and_then(|c| c.generation.as_ref());
    for (key, default) in [
        ("do_sample", json!(false)),
        ("temperature", json!(1.0)),
        ("top_k", json!(50)),
        ("top_p", json!(1.0)),
        ("repetition_penalty", json!(1.0)),
    ] {
        let v = generation.and_then(|g| g.get(key)).filter(|v| !v.is_null()).cloned();
        search.insert(key.into(), v.unwrap_or(default));
    }
    Ok(json!({"model": Json::Object(top), "search": Json::Object(search)}))
}

/// `past_key_values.3.key` → 3 (for `side`, `kind`).
fn cache_layer(name: &str, side: &str, kind: &str) -> Option<usize> {
    let rest = name.strip_prefix(side)?.strip_prefix('.')?;
    let (layer, tail) = rest.split_once('.')?;
    (tail == kind).then(|| layer.parse().ok()).flatten()
}

/// A transformers checkpoint folder's `config.json` and `generation_config.json`.
struct Checkpoint {
    config: Json,
    generation: Option<Json>,
}

impl Checkpoint {
    fn read(dir: &Path) -> Result<Checkpoint, GenaiError> {
        let read = |name: &str| -> Result<Option<Json>, GenaiError> {
            let path = dir.join(name);
            if !path.is_file() {
                return Ok(None);
            }
            let text =
                std::fs::read(&path).map_err(|e| GenaiError::Config { path: path.clone(), message: e.to_string() })?;
            let json: Json = serde_json::from_slice(&text)
                .map_err(|e| GenaiError::Config { path: path.clone(), message: e.to_string() })?;
            Ok(Some(json).filter(Json::is_object))
        };
        let config = read("config.json")?.ok_or_else(|| GenaiError::Config {
            path: dir.join("config.json"),
            message: "no config.json (a JSON object) in the model folder; hint: pass a transformers checkpoint folder \
                      (save_pretrained's), or --genai-config without a folder"
                .into(),
        })?;
        Ok(Checkpoint { config, generation: read("generation_config.json")? })
    }
}

#[cfg(test)]
mod tests {
    use super::cache_layer;

    #[test]
    fn cache_layers_by_name() {
        assert_eq!(cache_layer("past_key_values.12.key", "past_key_values", "key"), Some(12));
        assert_eq!(cache_layer("past_key_values.1.value", "past_key_values", "key"), None);
        assert_eq!(cache_layer("past_key_values.0.decoder.key", "past_key_values", "key"), None);
        assert_eq!(cache_layer("present.0.key", "past_key_values", "key"), None);
    }
}
