//! The library API: [`export`], [`ExportOptions`], [`OnnxProgram`].

use std::collections::HashMap;
use std::path::Path;

use crate::fx::{Program, SignatureError};
use crate::onnx::encode::{self, DataPlacement, SaveError};
use crate::onnx::ir::Model;
use crate::onnx::proto::ModelProto;
use crate::pt2::{Archive, Pt2Error};
use crate::translate::dsl::TranslationTable;
use crate::translate::lower::{self, LowerError, LowerOptions};

/// torch.onnx's default opset.
pub const DEFAULT_OPSET: i64 = 20;
/// Opsets fxonnx emits.
pub const SUPPORTED_OPSETS: std::ops::RangeInclusive<i64> = 18..=23;

/// What can go wrong in an export, by stage.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Archive(#[from] Pt2Error),
    #[error(transparent)]
    Signature(#[from] SignatureError),
    #[error(transparent)]
    Lower(#[from] LowerError),
    #[error(transparent)]
    Save(#[from] SaveError),
    #[error("invalid option: {0}")]
    Options(String),
}

/// Options of [`export`], named after `torch.onnx.export`'s.
#[derive(Clone, Default)]
pub struct ExportOptions {
    /// Which program of the archive (`model` unless the archive was packaged with several).
    pub model_name: Option<String>,
    /// Default-domain opset (18 to 23; default 20, like torch.onnx).
    pub opset_version: Option<i64>,
    /// Names for the graph inputs, in order (the rest keep their FX names).
    pub input_names: Vec<String>,
    /// Names for the user outputs, in order.
    pub output_names: Vec<String>,
    /// Names for symbolic dimensions: `{"s77": "batch"}`.
    pub dim_names: HashMap<String, String>,
    /// Save weights to `<file>.data` beside the model (always done above protobuf's 2 GiB limit).
    pub external_data: bool,
    /// Translations that extend or override the built-in table, entry by entry.
    pub custom_translation_table: Option<TranslationTable>,
}

/// An exported model.
pub struct OnnxProgram {
    model: Model,
    external_data: bool,
    warnings: Vec<String>,
}

/// Export the program of the `.pt2` archive at `path`.
pub fn export(path: impl AsRef<Path>, options: &ExportOptions) -> Result<OnnxProgram, Error> {
    let archive = Archive::open(path.as_ref())?;
    export_archive(&archive, options)
}

/// Export a program of an already opened archive.
pub fn export_archive(archive: &Archive, options: &ExportOptions) -> Result<OnnxProgram, Error> {
    let opset = options.opset_version.unwrap_or(DEFAULT_OPSET);
    if !SUPPORTED_OPSETS.contains(&opset) {
        return Err(Error::Options(format!(
            "opset {opset} is not supported; choose one of {}..={}",
            SUPPORTED_OPSETS.start(),
            SUPPORTED_OPSETS.end()
        )));
    }
    let name = options.model_name.as_deref().unwrap_or("model");
    let loaded = archive.load(name)?;
    let program = Program::new(&loaded)?;
    let mut table = crate::translations::default_table();
    if let Some(custom) = &options.custom_translation_table {
        table.merge(custom);
    }
    let lower_options = LowerOptions {
        opset,
        table: &table,
        dim_names: &options.dim_names,
        input_names: &options.input_names,
        output_names: &options.output_names,
    };
    let (model, warnings) = lower::lower(&program, &lower_options)?;
    Ok(OnnxProgram { model, external_data: options.external_data, warnings })
}

impl OnnxProgram {
    /// The model as an ONNX `ModelProto` (weights inline; they are shared, not copied).
    pub fn model_proto(&self) -> ModelProto {
        encode::to_proto(&self.model)
    }

    /// The in-memory graph.
    pub fn model(&self) -> &Model {
        &self.model
    }

    /// Things the export dropped or changed that a user should know about.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Total bytes of the initializers.
    pub fn weight_bytes(&self) -> usize {
        self.model
            .graph
            .initializers
            .iter()
            .filter_map(|&v| self.model.value(v).constant.as_ref())
            .map(|t| t.raw.len())
            .sum()
    }

    /// Write the model to `path`. Weights go to `<file name>.data` beside it when the export asked for
    /// external data or when they would not fit in one protobuf message (2 GiB).
    pub fn save(&self, path: impl AsRef<Path>) -> Result<(), Error> {
        let path = path.as_ref();
        let external = self.external_data || self.weight_bytes() + (64 << 20) >= encode::PROTOBUF_LIMIT;
        let placement = if external {
            let file =
                path.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_else(|| "model.onnx".into());
            DataPlacement::External { location: format!("{file}.data"), threshold: 1024 }
        } else {
            DataPlacement::Inline
        };
        encode::save(self.model_proto(), path, &placement)?;
        Ok(())
    }
}
