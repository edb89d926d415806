//! Saving a [`Model`] as an ONNX file, its weights inline or in an external data file.
//!
//! Two writers give the same bytes (tests hold them to it, inline and external):
//!
//! - [`plain`] builds the prost `ModelProto`, moves large weights to the data file and encodes
//!   the message. It defines the output; read it first.
//! - [`stream`] is what exports use: it writes that `ModelProto` field by field, weights read
//!   from the archive file (or computed, for folded weights) into small buffers written out by a
//!   second thread ([`write_behind`]). Building the message instead would hold every weight and
//!   the whole encoded graph in memory at once: the zoo's peak RSS would grow 3–28×, past the
//!   1/5 of torch.onnx's that fxonnx must stay under (reports/performance.md).
//!
//! Both take their names from [`names`], and their files from [`files`] (unnamed until complete,
//! never over a file the save reads, a model and its data file one unit), given the save's
//! [`Sources`]. The data file is `<model file>.data`, as torch.onnx names it ([`data_location`]).

mod files;
mod names;
pub mod plain;
pub mod stream;
mod write_behind;

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use crate::onnx::ir::{Graph, Model, Value};

pub use files::{check_folder, data_files_of, data_location, data_stem, write_new, write_whole, Sources};
pub use plain::{save_proto, to_proto, to_proto_outline, to_proto_withholding};
pub use stream::Encoder;

/// ONNX IR version written (ONNX 1.16+ reads it; it allows metadata_props on nodes and values).
/// The same at every opset, 13 to 17 included: the IR version and the opset are independent, and
/// onnx.checker (full) and onnxruntime 1.31 accept IR 10 with opset 13 (`reports/opsets.md`
/// measured every fixture and zoo model). An IR of 8 would drop the nodes' metadata_props, which
/// `--debug-outputs`, the node diff and the report read.
pub const IR_VERSION: i64 = 10;
const PRODUCER: &str = "fxonnx";
/// Protobuf cannot encode messages of 2 GiB or more.
pub const PROTOBUF_LIMIT: usize = (1 << 31) - 1;
/// External tensors start at multiples of this, so that readers can map each in place.
const ALIGNMENT: usize = 64;

/// Where initializer bytes go when saving.
#[derive(Clone, Debug)]
pub enum DataPlacement {
    /// In the ModelProto's `raw_data`.
    Inline,
    /// In the data file beside the model, for tensors of at least `threshold` bytes:
    /// `model.onnx.data` ([`data_location`]), replaced together with the model ([`files`]).
    External { threshold: usize },
}

impl DataPlacement {
    /// External data as exports write it: tensors of 1 KiB and more.
    pub const EXTERNAL: DataPlacement = DataPlacement::External { threshold: 1024 };
}

/// Errors while writing a model.
#[derive(Debug, thiserror::Error)]
pub enum SaveError {
    #[error("cannot write {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error(
        "the model is {size} bytes with its weights inline, over protobuf's 2 GiB limit; hint: {EXTERNAL_DATA_HINT}"
    )]
    TooLarge { size: usize },
    #[error(
        "the model is {size} bytes without its weights (mostly graph and metadata_props), over protobuf's 2 GiB limit"
    )]
    GraphTooLarge { size: usize },
    /// The output path names something a save must not replace.
    #[error("refusing to write {path}: it is {what}; hint: {hint}")]
    Target { path: PathBuf, what: &'static str, hint: &'static str },
    /// Another save into the folder held its lock (for putting its files in place) too long.
    #[error("cannot write into {dir}: another save into this folder has held its lock for {seconds} s; hint: look for a stopped fxonnx process")]
    Locked { dir: PathBuf, seconds: u64 },
    /// The archive the weights are read from changed while, or since, it was read.
    #[error(transparent)]
    Archive(#[from] crate::pt2::ArchiveError),
}

const EXTERNAL_DATA_HINT: &str = "save with external data (--external-data)";

impl SaveError {
    /// What the user can do about it.
    pub fn hint(&self) -> Option<&str> {
        match self {
            SaveError::TooLarge { .. } => Some(EXTERNAL_DATA_HINT),
            SaveError::Target { hint, .. } => Some(hint),
            _ => None,
        }
    }

    fn too_large(size: usize, placement: &DataPlacement) -> SaveError {
        match placement {
            DataPlacement::Inline => SaveError::TooLarge { size },
            DataPlacement::External { .. } => SaveError::GraphTooLarge { size },
        }
    }
}

/// Write `model` to `path`, its weights placed as `placement` says, with the fast writer
/// ([`stream`]). Stored weights that are slices of the map of `sources`' archive are read from
/// its file; no output replaces a source.
pub fn save_model(model: &Model, path: &Path, placement: &DataPlacement, sources: &Sources) -> Result<(), SaveError> {
    Encoder::new(model, placement, path)?.write(path, sources)
}

/// Values of `g` that get no `value_info` entry of their own: its inputs and outputs are
/// described there already (node outputs are unique, so no other value repeats).
fn io_values(g: &Graph) -> HashSet<Value> {
    g.inputs.iter().chain(&g.outputs).copied().collect()
}

/// Whether node output `o` gets a `value_info` entry: it has a type and shape from the FX graph
/// and is not a graph input or output.
fn described(model: &Model, io: &HashSet<Value>, o: Value) -> bool {
    let info = model.value(o);
    info.shape.is_some() && info.dtype.is_some() && !io.contains(&o)
}

#[cfg(test)]
mod tests;
