//! The errors of the translation stage.

use crate::pt2::ArchiveError;

/// One op the table cannot translate, with every node that uses it.
#[derive(Debug, Clone, PartialEq)]
pub struct UnsupportedOp {
    /// The FX target (`torch.ops.fxonnx_samples.mix.default`).
    pub target: String,
    /// The table key looked up (`fxonnx_samples::mix.default`).
    pub key: String,
    pub nodes: Vec<String>,
    /// Why the built-in table declines the target, when it does on purpose
    /// (`src/translate/refused.rs`); `None` for a target it does not know.
    pub reason: Option<&'static str>,
}

/// Errors of the translation stage: unsupported operators (all of them at once), a node that
/// could not be translated (its FX name and target), or a program ONNX cannot express.
#[derive(Debug, thiserror::Error)]
pub enum TranslateError {
    #[error("{}", unsupported_message(.0))]
    Unsupported(Vec<UnsupportedOp>),
    #[error("node `{node}` ({target}): {message}{}", hint_suffix(.hint))]
    Node { node: String, target: String, message: String, hint: Option<String> },
    #[error("{message}{}", hint_suffix(.hint))]
    Program { message: String, hint: Option<String> },
    #[error(transparent)]
    Archive(#[from] ArchiveError),
}

/// The hint unsupported operators get: how to add translations.
pub const UNSUPPORTED_HINT: &str = "add translations with fxonnx::translations! and pass them as \
                                    ExportOptions::custom_translation_table; `fxonnx ops` lists the supported targets";

impl TranslateError {
    /// A program ONNX cannot express.
    pub fn program(message: impl Into<String>) -> Self {
        TranslateError::Program { message: message.into(), hint: None }
    }

    /// What the user can do about it.
    pub fn hint(&self) -> Option<&str> {
        match self {
            TranslateError::Unsupported(_) => Some(UNSUPPORTED_HINT),
            TranslateError::Node { hint, .. } | TranslateError::Program { hint, .. } => hint.as_deref(),
            TranslateError::Archive(e) => e.hint(),
        }
    }
}

fn hint_suffix(hint: &Option<String>) -> String {
    hint.as_ref().map(|h| format!("; hint: {h}")).unwrap_or_default()
}

fn unsupported_message(ops: &[UnsupportedOp]) -> String {
    let mut s = format!("{} operator(s) have no ONNX translation:", ops.len());
    for op in ops {
        s.push_str(&format!("\n  {} (nodes: {})", op.target, op.nodes.join(", ")));
        if let Some(reason) = op.reason {
            s.push_str(&format!("\n    not translated on purpose: {reason}"));
        }
    }
    s.push_str("\nhint: ");
    s.push_str(UNSUPPORTED_HINT);
    s
}
