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

/// Run `side` on a second thread while this one runs `main`, when `worth_it` (the side work is
/// large); otherwise both here, `main` first. Waking a thread on an idle core of a virtual machine
/// can take milliseconds, more than a small program's side work.
pub(crate) fn join_if<M, S>(worth_it: bool, main: impl FnOnce() -> M, side: impl FnOnce() -> S + Send) -> (M, S)
where
    S: Send,
{
    if !worth_it {
        let m = main();
        return (m, side());
    }
    std::thread::scope(|scope| {
        let side = scope.spawn(side);
        let m = main();
        (m, side.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
    })
}

pub use export::{export, export_to_file, Error, ExportOptions, OnnxProgram, DEFAULT_OPSET};
pub use translate::dsl::TranslationTable;
