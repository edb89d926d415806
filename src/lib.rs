//! fxonnx converts PyTorch programs captured with `torch.export` and saved as `.pt2` archives into
//! ONNX models, without Python.
//!
//! ```no_run
//! let program = fxonnx::export("model.pt2", &fxonnx::ExportOptions::default())?;
//! program.save("model.onnx")?;
//! # Ok::<(), fxonnx::Error>(())
//! ```
//!
//! The data flow, stage by stage (see ARCHITECTURE.md): [`pt2`] reads the archive in place,
//! [`fx`] classifies the program's signature, [`translate`] lowers every FX node through the
//! translation table (built-in entries in `translations/`), [`optimize`] shrinks the ONNX graph,
//! [`onnx`] holds the graph and encodes it.

pub mod fx;
pub mod hash;
pub mod onnx;
pub mod optimize;
pub mod pt2;
pub mod report;
pub mod sym;
pub mod translate;
#[path = "../translations/mod.rs"]
pub mod translations;

pub mod export;

pub use export::{export, export_to_file, Error, ExportOptions, OnnxProgram, DEFAULT_OPSET};
pub use translate::dsl::TranslationTable;
