//! The ONNX side: the in-memory graph ([`ir`]), the builder translations write to ([`builder`],
//! with one typed method per operator in [`ops`]), saving as an ONNX file ([`save`]),
//! and a readable text form of ONNX models ([`text`]).

pub mod builder;
pub mod dce;
pub mod derived;
pub mod infer;
pub mod ir;
pub mod ops;
pub mod proto;
pub mod save;
pub mod text;

/// The former paths of what the optimizer's tests use; remove once they call [`save`] directly.
#[doc(hidden)]
pub mod encode {
    pub use super::save::{to_proto, DataPlacement};

    /// [`super::save::save_model`] with weights copied from memory (no archive file).
    pub fn save_model(
        model: &super::ir::Model,
        path: &std::path::Path,
        placement: &DataPlacement,
    ) -> Result<(), super::save::SaveError> {
        super::save::save_model(model, path, placement, None)
    }
}
