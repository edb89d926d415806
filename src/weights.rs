//! Weight-free models (`--no-weights`) and putting their weights back (`fxonnx apply-weights`).
//!
//! A weight-free model holds each initializer read from the archive — a parameter, buffer or
//! constant, or a weight the optimizer folded from one (a transpose, a BatchNormalization folded
//! into a convolution) — as a graph input of its type and shape, after the model's own inputs:
//! the graph passes `onnx.checker`, and runtimes that take weights as inputs run it. Each such
//! input records in its `metadata_props` ([`WEIGHT_KEY`]) where the initializer was and how to
//! read it again: its place among the initializers, its archive entry, offset and CRC-32, and
//! for a folded weight the computation ([`Recipe`]). Initializers the translations built (small
//! constants, shape arithmetic) stay in the graph.
//!
//! [`apply_weights`] reads a weight-free model and its archive, turns each such input back into
//! its initializer at its place and writes the model: byte for byte what a normal export of the
//! archive with the same options writes.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::onnx::ir::derived::Recipe;
use crate::onnx::ir::{DType, Derived, Model, TensorData, Value};
use crate::onnx::proto;
use crate::onnx::save::{self, DataPlacement, SaveError, Sources};
use crate::pt2::{Archive, ArchiveError, Locator};

/// The `metadata_props` key of a withheld weight's graph input.
pub const WEIGHT_KEY: &str = "pkg.fxonnx.weight";

/// Where a withheld initializer was and how to read it again (JSON under [`WEIGHT_KEY`]).
#[derive(Serialize, Deserialize)]
struct Withheld {
    /// Its position among the graph's initializers.
    index: usize,
    /// The archive entry its bytes lie in (relative to the archive's top folder).
    entry: String,
    offset: usize,
    /// The entry's CRC-32 as the archive's writer recorded it: the archive it is put back from
    /// must be the one it was exported from (a folded weight's constants came from it too).
    crc32: u32,
    /// For a folded weight: how it is computed from the stored bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    derived: Option<Recipe>,
}

/// Errors of [`apply_weights`].
#[derive(Debug, thiserror::Error)]
pub enum WeightsError {
    #[error("cannot read {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{path} is not a regular file (a pipe, a directory or a device); hint: pass the path of the model written by `fxonnx export --no-weights`")]
    NotAFile { path: PathBuf },
    #[error("{path} is not an ONNX model: {detail}")]
    NotOnnx { path: PathBuf, detail: String },
    #[error("{path} has no withheld weights (graph inputs with `{WEIGHT_KEY}` metadata); hint: {NO_WEIGHTS_HINT}")]
    NothingWithheld { path: PathBuf },
    #[error("weight `{name}`: {detail}; hint: {EDITED_HINT}")]
    BadRecord { name: String, detail: String },
    #[error(
        "weight `{name}`: the archive's entry `{entry}` is not the one the model was exported from (CRC-32 {found:08x}, expected {expected:08x}); hint: {OTHER_ARCHIVE_HINT}"
    )]
    OtherArchive { name: String, entry: String, expected: u32, found: u32 },
    #[error(transparent)]
    Archive(#[from] ArchiveError),
    #[error(transparent)]
    Save(#[from] SaveError),
}

const NO_WEIGHTS_HINT: &str = "export it with --no-weights";
const EDITED_HINT: &str = "the model was edited after export, or written by another fxonnx";
const OTHER_ARCHIVE_HINT: &str = "apply the weights of the archive the model was exported from";

impl WeightsError {
    /// What the user can do about it.
    pub fn hint(&self) -> Option<&str> {
        match self {
            WeightsError::NothingWithheld { .. } => Some(NO_WEIGHTS_HINT),
            WeightsError::BadRecord { .. } => Some(EDITED_HINT),
            WeightsError::OtherArchive { .. } => Some(OTHER_ARCHIVE_HINT),
            WeightsError::Archive(e) => e.hint(),
            WeightsError::Save(e) => e.hint(),
            _ => None,
        }
    }
}

/// What a weight-free model records of initializer `index` (`t`) to withhold it; `None` for one
/// that stays (its bytes are not the archive's).
fn locate(index: usize, t: &TensorData, locator: &Locator) -> Option<Withheld> {
    let (bytes, derived) = match t.raw.derived() {
        Some(d) => (d.source(), Some(d.recipe())),
        None => (t.raw.existing()?, None),
    };
    let (entry, offset, crc32) = locator.find(bytes)?;
    Some(Withheld { index, entry: entry.to_string(), offset, crc32, derived })
}

/// `model` as a `ModelProto` with every initializer read from the archive withheld (see the
/// module documentation).
pub(crate) fn withhold(model: &Model, locator: &Locator) -> proto::ModelProto {
    // The initializers as written (those with contents), each located once.
    let written: Vec<Value> =
        model.graph.initializers.iter().copied().filter(|&v| model.value(v).constant.is_some()).collect();
    let records: HashMap<Value, Withheld> = written
        .iter()
        .enumerate()
        .filter_map(|(index, &v)| Some((v, locate(index, model.value(v).constant.as_deref()?, locator)?)))
        .collect();
    let mut proto = save::to_proto_withholding(model, &|v| records.contains_key(&v));
    let Some(graph) = proto.graph.as_mut() else { return proto };
    let mut kept = Vec::with_capacity(graph.initializer.len());
    for (header, v) in std::mem::take(&mut graph.initializer).into_iter().zip(&written) {
        match records.get(v) {
            Some(record) => graph.input.push(as_input(header, record)),
            None => kept.push(header),
        }
    }
    graph.initializer = kept;
    proto
}

/// The graph input that stands for initializer `header` (which has no bytes).
fn as_input(header: proto::TensorProto, record: &Withheld) -> proto::ValueInfoProto {
    use proto::tensor_shape_proto::{dimension::Value as D, Dimension};
    let dims = header.dims.iter().map(|&d| Dimension { value: Some(D::DimValue(d)), ..Default::default() });
    let shape = proto::TensorShapeProto { dim: dims.collect() };
    let tensor = proto::type_proto::Tensor { elem_type: header.data_type, shape: Some(shape) };
    let mut metadata_props = header.metadata_props;
    let json = serde_json::to_string(record).unwrap_or_default();
    metadata_props.push(proto::StringStringEntryProto { key: WEIGHT_KEY.into(), value: json });
    proto::ValueInfoProto {
        name: header.name,
        r#type: Some(proto::TypeProto {
            value: Some(proto::type_proto::Value::TensorType(tensor)),
            ..Default::default()
        }),
        metadata_props,
        ..Default::default()
    }
}

/// Put the weights of `archive` back into the weight-free model at `model` (see the module
/// documentation) and write it to `output`, its weights inline or, with `external_data` or over
/// protobuf's 2 GiB limit, in `<output file name>.<hash>.data`. Returns how many weights were put
/// back. `output` must be neither `model` nor `archive`: the refusal writes nothing.
///
/// ```no_run
/// fxonnx::apply_weights("graph.onnx", "model.pt2", "model.onnx", false)?;
/// # Ok::<(), fxonnx::WeightsError>(())
/// ```
pub fn apply_weights(
    model: impl AsRef<Path>,
    archive: impl AsRef<Path>,
    output: impl AsRef<Path>,
    external_data: bool,
) -> Result<usize, WeightsError> {
    let (model, output) = (model.as_ref(), output.as_ref());
    let bytes = crate::input::read_regular(model).map_err(|e| match e {
        crate::input::OpenError::Io(source) => WeightsError::Io { path: model.to_path_buf(), source },
        crate::input::OpenError::NotAFile => WeightsError::NotAFile { path: model.to_path_buf() },
    })?;
    let mut proto = <proto::ModelProto as prost::Message>::decode(bytes.as_slice())
        .map_err(|e| WeightsError::NotOnnx { path: model.to_path_buf(), detail: e.to_string() })?;
    let archive = Archive::open(archive.as_ref())?;
    let graph = proto
        .graph
        .as_mut()
        .ok_or_else(|| WeightsError::NotOnnx { path: model.to_path_buf(), detail: "it has no graph".into() })?;
    let mut restored = Vec::new();
    let mut inputs = Vec::with_capacity(graph.input.len());
    for input in std::mem::take(&mut graph.input) {
        match input.metadata_props.iter().position(|p| p.key == WEIGHT_KEY) {
            Some(k) => restored.push(restore(input, k, &archive)?),
            None => inputs.push(input),
        }
    }
    graph.input = inputs;
    if restored.is_empty() {
        return Err(WeightsError::NothingWithheld { path: model.to_path_buf() });
    }
    restored.sort_by_key(|(index, _)| *index);
    let count = restored.len();
    for (index, tensor) in restored {
        if index > graph.initializer.len() {
            let detail = format!("its place {index} is past the model's {} initializers", graph.initializer.len());
            return Err(WeightsError::BadRecord { name: tensor.name, detail });
        }
        graph.initializer.insert(index, tensor);
    }
    // As an export saves: external when asked, or when the weights would not fit inline.
    let placement = if external_data || prost::Message::encoded_len(&proto) > save::PROTOBUF_LIMIT {
        DataPlacement::EXTERNAL
    } else {
        DataPlacement::Inline
    };
    // Neither input may be written over (the model was read whole, but it is the user's file).
    let sources = Sources::archive(archive.file().as_ref())
        .and_file(archive.path(), "the archive the weights are read from")
        .and_file(model, "the weight-free model whose weights are applied");
    save::save_proto(proto, output, &placement, &sources)?;
    Ok(count)
}

/// The initializer that graph input `input` (whose metadata entry `k` is its record) stands for,
/// read from `archive`, with its place among the initializers.
fn restore(
    mut input: proto::ValueInfoProto,
    k: usize,
    archive: &Archive,
) -> Result<(usize, proto::TensorProto), WeightsError> {
    let name = input.name.clone();
    let bad = |detail: String| WeightsError::BadRecord { name: name.clone(), detail };
    let record: Withheld =
        serde_json::from_str(&input.metadata_props.remove(k).value).map_err(|e| bad(format!("its record: {e}")))?;
    let Some(proto::type_proto::Value::TensorType(tensor)) = input.r#type.and_then(|t| t.value) else {
        return Err(bad("it is not a tensor".into()));
    };
    let dtype = DType::from_onnx(tensor.elem_type).ok_or_else(|| bad(format!("element type {}", tensor.elem_type)))?;
    let dims: Vec<i64> = tensor
        .shape
        .iter()
        .flat_map(|s| &s.dim)
        .map(|d| match d.value {
            Some(proto::tensor_shape_proto::dimension::Value::DimValue(n)) if n >= 0 => Ok(n),
            _ => Err(bad("a dim that is not a number".into())),
        })
        .collect::<Result<_, _>>()?;
    let found = archive.entry_crc32(&record.entry)?;
    if found != record.crc32 {
        return Err(WeightsError::OtherArchive { name, entry: record.entry, expected: record.crc32, found });
    }
    let entry = archive.entry(&record.entry)?;
    let size = |n: usize| crate::pt2::element_count(&dims).and_then(|c| usize::try_from(c).ok()?.checked_mul(n));
    let len = match &record.derived {
        Some(r) => Some(r.source_len),
        None => dtype.size().and_then(size),
    };
    let end = len.and_then(|l| record.offset.checked_add(l)).filter(|&e| e <= entry.len());
    let end = end.ok_or_else(|| bad(format!("its bytes run past the end of entry `{}`", record.entry)))?;
    let source = entry.slice(record.offset..end);
    let t = match &record.derived {
        Some(recipe) => Derived::from_recipe(dtype, dims, source, recipe).map_err(bad)?,
        None => TensorData { dtype, dims, raw: source.into() },
    };
    let tensor = proto::TensorProto {
        name: input.name,
        dims: t.dims.clone(),
        data_type: t.dtype as i32,
        metadata_props: input.metadata_props,
        raw_data: t.raw.to_bytes(),
        ..Default::default()
    };
    Ok((record.index, tensor))
}
