//! Translation of FX nodes into ONNX: the DSL translations are written in ([`dsl`]), helpers they
//! share ([`helpers`]), and the driver that walks the FX graph ([`lower`]).

pub mod dsl;
pub mod helpers;
pub mod lower;
pub mod metadata;
pub mod schemas;

/// Everything a translation file needs: `use fxonnx::translate::prelude::*;`.
pub mod prelude {
    pub use super::dsl::{
        onnx_dtype, Ignored, NodeCtx, OpError, OpResult, Operand, OperatorName, Scalar, SubGraph, SymInt, Tensor,
        TranslationTable,
    };
    pub use super::helpers::*;
    pub use crate::bail;
    pub use crate::onnx::builder::Builder;
    pub use crate::onnx::ir::{DType, Dim, TensorData, Value};
    pub use crate::pt2::ScalarType;
}
