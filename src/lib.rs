//! fxonnx converts PyTorch programs captured with `torch.export` and saved as `.pt2` archives into
//! ONNX models, without Python.
//!
//! ```no_run
//! let program = fxonnx::export("model.pt2", &fxonnx::ExportOptions::default())?;
//! program.save("model.onnx")?;
//! # Ok::<(), fxonnx::Error>(())
//! ```
//!
//! The public surface:
//! - [`export`], [`export_bytes`] (an archive in memory), [`export_entries`] (its entries in memory) and [`export_to_file`] with [`ExportOptions`] (named after `torch.onnx.export`'s),
//!   returning an [`OnnxProgram`] or an [`Error`] that says which stage failed, at which node, and
//!   what to do ([`ErrorKind`], one error type per stage: [`ArchiveError`], [`ProgramError`],
//!   [`TranslateError`], [`SaveError`]);
//! - [`view`]: a read-only view of the exported model (inputs, outputs, nodes, metadata);
//! - [`TranslationTable`] and [`translate::prelude`]: the DSL in which translations are written,
//!   to extend or override the built-in table (torch's `custom_translation_table`);
//! - [`cli`]: the `fxonnx` command line itself, for programs that embed it (the Python package);
//! - [`inspect`]: the text forms `fxonnx inspect` prints, and an archive's untranslated ops;
//! - [`genai`]: `genai_config.json` for ONNX Runtime GenAI beside an exported decoder;
//! - [`Stage`] and [`ProgressEvent`] for progress callbacks;
//! - [`install_truncation_guard`]: an archive truncated while mapped ends the process with an
//!   error message instead of SIGBUS (for programs that own their signal handlers, as the CLI).
//!
//! ARCHITECTURE.md maps the stages to the modules behind them.

pub mod cli;
mod error;
mod export;
mod fx;
pub mod genai;
mod hash;
mod input;
pub mod inspect;
mod onnx;
mod optimize;
mod pt2;
mod report;
mod sym;
pub mod translate;
#[path = "../translations/mod.rs"]
mod translations;
mod util;
pub mod view;
mod weights;

pub use error::{ArchiveError, Error, ErrorKind, ProgramError, SaveError, TranslateError, UnsupportedOp};
pub use export::{
    export, export_bytes, export_entries, export_to_file, parse_size, ExportOptions, OnnxProgram, DEFAULT_OPSET,
    SUPPORTED_OPSETS,
};
pub use onnx::functions::{FunctionStats, ModuleFunctions};
pub use optimize::{OptimizeStats, PassRecord, Target, WeightQuantization};
pub use pt2::{install_recovering_truncation_guard, install_truncation_guard};
pub use report::{Interrupt, Progress, ProgressEvent, Stage};
pub use translate::dsl::TranslationTable;
pub use weights::{apply_weights, WeightsError, WEIGHT_KEY};

/// The stages' internals, for fxonnx's own tests and benches. Not part of the API: anything here
/// may change in any release.
#[doc(hidden)]
pub mod internals {
    pub use crate::fx::{format_program, Program};
    pub use crate::onnx::{ir, proto, save, text};
    /// The property test's random graphs (feature `testing`: this crate's tests and fuzz targets).
    #[cfg(feature = "testing")]
    pub use crate::optimize::random;
    pub use crate::optimize::{clean_up, optimize, optimize_for};
    pub use crate::pt2::{Archive, ArchiveError, Weight};
    pub mod lower {
        pub use crate::translate::lower::{check_types, find_unsupported, lower, LowerOptions};
    }
    pub mod aten_schemas {
        pub use crate::translate::aten_schemas::{arg_names, schema};
    }
    pub use crate::translate::dsl::target_key;
    pub use crate::translations::{default_table, FAMILIES};
    /// Graphs as text with their constants' values, compared token by token (`UPDATE_EXPECT`).
    pub mod testing {
        pub use crate::onnx::testing::{compare, parse, print};
    }
}

/// The README's code examples compile and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
