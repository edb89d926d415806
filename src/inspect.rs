//! What `fxonnx inspect` and `fxonnx ops --check` show: a program as text, an ONNX model as text,
//! and the targets of an archive that no translation serves.
//!
//! ```no_run
//! print!("{}", fxonnx::inspect::program_text("model.pt2", "model")?);
//! let table = fxonnx::TranslationTable::builtin();
//! for op in fxonnx::inspect::untranslated_ops("model.pt2", "model", &table)? {
//!     println!("{}: {} node(s)", op.target, op.nodes.len());
//! }
//! # Ok::<(), fxonnx::Error>(())
//! ```

use std::path::Path;

use crate::error::Error;
use crate::pt2::Archive;
use crate::translate::dsl::TranslationTable;

pub use crate::translate::lower::UnsupportedOp;
pub use crate::translate::universe::{Source, Status, Target};

/// The program `model` of the archive at `path` as text, close to `print(exported_program)`:
/// the FX graph with shapes, the signature and the range constraints.
pub fn program_text(path: impl AsRef<Path>, model: &str) -> Result<String, Error> {
    let archive = Archive::open(path.as_ref())?;
    let loaded = archive.load(model)?;
    Ok(crate::fx::format_program(&loaded))
}

/// The targets of program `model` in the archive at `path` that `table` has no translation for,
/// each with the nodes that call it.
pub fn untranslated_ops(
    path: impl AsRef<Path>,
    model: &str,
    table: &TranslationTable,
) -> Result<Vec<UnsupportedOp>, Error> {
    untranslated(Archive::open(path.as_ref())?, model, table)
}

/// [`untranslated_ops`] of an archive held in memory (as [`crate::export_bytes`] takes it).
pub fn untranslated_ops_in_bytes(
    data: impl Into<bytes::Bytes>,
    model: &str,
    table: &TranslationTable,
) -> Result<Vec<UnsupportedOp>, Error> {
    untranslated(Archive::from_bytes(Path::new("<archive in memory>"), data.into())?, model, table)
}

/// [`untranslated_ops`] of archive entries held in memory (as [`crate::export_entries`] takes them).
pub fn untranslated_ops_in_entries(
    entries: impl IntoIterator<Item = (String, bytes::Bytes)>,
    model: &str,
    table: &TranslationTable,
) -> Result<Vec<UnsupportedOp>, Error> {
    untranslated(Archive::from_entries(entries)?, model, table)
}

fn untranslated(archive: Archive, model: &str, table: &TranslationTable) -> Result<Vec<UnsupportedOp>, Error> {
    let loaded = archive.load(model)?;
    Ok(crate::translate::lower::find_unsupported(&loaded.program.graph_module.graph, table))
}

/// The operator universe (torch.onnx's registry, the Core ATen IR, every overload of ATen's
/// aliases) with what `table` does with each target: translated, refused with a reason, missing.
///
/// ```
/// use fxonnx::inspect::{universe, Status};
/// let table = fxonnx::TranslationTable::builtin();
/// for t in universe(&table) {
///     if let Status::Refused(why) = t.status {
///         println!("{} ({}): {why}", t.key, t.source.label());
///     }
/// }
/// ```
pub fn universe(table: &TranslationTable) -> Vec<Target> {
    crate::translate::universe::universe(table)
}

/// Why bytes are not an ONNX model.
#[derive(Debug, thiserror::Error)]
#[error("not an ONNX model: {0}")]
pub struct NotAModel(pub String);

/// A serialized ONNX model as text after `onnx.printer.to_text` (signature, initializers by name
/// and shape, one line per node, subgraphs nested), with `metadata_props` as comments when
/// `metadata`. Weights are never printed, so external data files are not needed.
pub fn onnx_text(bytes: Vec<u8>, metadata: bool) -> Result<String, NotAModel> {
    // Decoding from `Bytes` lets the weights' raw_data point into the buffer instead of copying it.
    let proto = <crate::onnx::proto::ModelProto as prost::Message>::decode(bytes::Bytes::from(bytes))
        .map_err(|e| NotAModel(e.to_string()))?;
    if proto.ir_version <= 0 || (proto.graph.is_none() && proto.functions.is_empty()) {
        return Err(NotAModel("it decodes as protobuf but has no ir_version or graph".into()));
    }
    Ok(crate::onnx::text::model_text(&proto, metadata))
}
