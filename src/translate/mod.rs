//! Translation of FX nodes into ONNX. Public: the DSL translations are written in ([`dsl`]) and
//! the [`prelude`] a translation file imports. Inside the crate: the helpers translations share,
//! and the driver that walks the FX graph and calls them (`lower`).

pub(crate) mod aliases;
pub(crate) mod aten_schemas;
pub mod dsl;
mod helpers;
pub(crate) mod lower;
pub(crate) mod metadata;
pub(crate) mod refused;
pub(crate) mod universe;
pub(crate) mod vmap;

/// Everything a translation file needs: `use fxonnx::translate::prelude::*;`.
pub mod prelude {
    pub use super::dsl::{
        onnx_dtype, Ignored, NodeCtx, OpError, OpResult, Operand, OperatorName, Scalar, SubGraph, SymInt, Tensor,
        TranslationTable,
    };
    pub use super::helpers::*;
    pub use crate::bail;
    pub use crate::onnx::builder::Builder;
    /// A node attribute's value, for translations that copy nodes built elsewhere (an ONNX graph a
    /// Python custom translation made).
    pub use crate::onnx::ir::AttrValue;
    pub use crate::onnx::ir::{Container, DType, Dim, TensorData, Value};
    /// The builder's per-operator node types (`ops::Resize<'_>`), for helpers that set attributes.
    pub use crate::onnx::ops;
    /// ONNX's protobuf types, which such graphs arrive in.
    pub use crate::onnx::proto;
    /// The FX program's argument kinds, as `ctx.arg` and `ctx.node` give them.
    pub use crate::pt2::schema::{Argument, SymBoolArgument, SymFloatArgument, SymIntArgument};
    pub use crate::pt2::ScalarType;
}
