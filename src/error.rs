//! The errors of an export: one type per stage that can fail, each nameable from the crate root,
//! and [`Error`], which says which stage failed, at which node, what to do about it, and where the
//! report of the failed export is.
//!
//! ```no_run
//! use fxonnx::{ErrorKind, TranslateError};
//!
//! match fxonnx::export("model.pt2", &fxonnx::ExportOptions::default()) {
//!     Ok(program) => program.save("model.onnx")?,
//!     Err(e) => match e.kind() {
//!         ErrorKind::Translate(TranslateError::Unsupported(ops)) => {
//!             for op in ops {
//!                 eprintln!("{} has no translation (nodes {})", op.target, op.nodes.join(", "));
//!             }
//!         }
//!         _ => eprintln!("{e} (stage: {:?}, node: {:?}, hint: {:?})", e.stage(), e.node(), e.hint()),
//!     },
//! }
//! # Ok::<(), fxonnx::Error>(())
//! ```

use std::path::{Path, PathBuf};

pub use crate::fx::ProgramError;
pub use crate::onnx::save::SaveError;
pub use crate::pt2::ArchiveError;
use crate::report::Stage;
pub use crate::translate::lower::{TranslateError, UnsupportedOp};

/// A failed export: what failed ([`ErrorKind`]), in which [`Stage`], and the report written for it.
/// Its message is the kind's.
#[derive(Debug)]
pub struct Error(Box<Failure>);

#[derive(Debug)]
struct Failure {
    kind: ErrorKind,
    stage: Option<Stage>,
    report: Option<PathBuf>,
}

/// What failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ErrorKind {
    /// An option the export cannot be run with (a usage error: the command line exits with 2).
    #[error("invalid option: {0}")]
    Options(String),
    /// The archive cannot be read.
    #[error(transparent)]
    Archive(#[from] ArchiveError),
    /// The program's signature is inconsistent.
    #[error(transparent)]
    Program(#[from] ProgramError),
    /// A node has no translation, or cannot be translated.
    #[error(transparent)]
    Translate(#[from] TranslateError),
    /// The model cannot be written.
    #[error(transparent)]
    Save(#[from] SaveError),
    /// The export report cannot be written.
    #[error("cannot write the export report to {path}: {source}")]
    Report { path: PathBuf, source: std::io::Error },
    /// [`ExportOptions::interrupt`](crate::ExportOptions::interrupt) stopped the export after
    /// `stage`; nothing was written.
    #[error("interrupted after the stage `{stage}`; nothing was written")]
    Interrupted { stage: Stage },
    /// A bug: fxonnx panicked. The export failed cleanly (no output file); please report it.
    #[error(
        "internal error during {}: {message}; this is a bug in fxonnx, please report it with the archive",
        stage_text(.stage)
    )]
    Internal { stage: Option<Stage>, message: String },
}

fn stage_text(stage: &Option<Stage>) -> String {
    stage.map_or_else(|| "the export".to_string(), |s| s.to_string())
}

impl Error {
    pub(crate) fn options(message: impl Into<String>) -> Self {
        ErrorKind::Options(message.into()).into()
    }

    /// The same error, failed in `stage`, with the report written for it.
    pub(crate) fn located(mut self, stage: Option<Stage>, report: Option<PathBuf>) -> Self {
        let f = &mut self.0;
        f.stage = f.stage.or(stage);
        f.report = report.or(f.report.take());
        self
    }

    pub fn kind(&self) -> &ErrorKind {
        &self.0.kind
    }

    /// The stage that failed (`None` when the export did not start: options, or the report).
    pub fn stage(&self) -> Option<Stage> {
        self.0.stage
    }

    /// The FX node that failed (its name in the program).
    pub fn node(&self) -> Option<&str> {
        match self.kind() {
            ErrorKind::Translate(TranslateError::Node { node, .. }) => Some(node),
            _ => None,
        }
    }

    /// The failed node's target (`torch.ops.aten.gelu.default`).
    pub fn target(&self) -> Option<&str> {
        match self.kind() {
            ErrorKind::Translate(TranslateError::Node { target, .. }) => Some(target),
            _ => None,
        }
    }

    /// The operators without a translation, with their nodes (all of them at once).
    pub fn unsupported(&self) -> &[UnsupportedOp] {
        match self.kind() {
            ErrorKind::Translate(TranslateError::Unsupported(ops)) => ops,
            _ => &[],
        }
    }

    /// What the user can do about it (the message ends with it too).
    pub fn hint(&self) -> Option<&str> {
        match self.kind() {
            ErrorKind::Archive(e) => e.hint(),
            ErrorKind::Translate(e) => e.hint(),
            ErrorKind::Save(e) => e.hint(),
            _ => None,
        }
    }

    /// The report of the failed export, when [`crate::ExportOptions::report`] asked for one.
    pub fn report_path(&self) -> Option<&Path> {
        self.0.report.as_deref()
    }
}

impl<E> From<E> for Error
where
    ErrorKind: From<E>,
{
    fn from(e: E) -> Self {
        Error(Box::new(Failure { kind: e.into(), stage: None, report: None }))
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.kind().fmt(f)
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        std::error::Error::source(self.kind())
    }
}
