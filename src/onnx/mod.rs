//! The ONNX side: the in-memory graph ([`ir`]), the builder translations write to ([`builder`],
//! with one typed method per operator in [`ops`]), saving as an ONNX file ([`save`]),
//! and a readable text form of ONNX models ([`text`]).

pub mod builder;
pub mod dce;
pub mod derived;
mod downgrade;
pub mod functions;
pub mod infer;
pub mod ir;
pub(crate) mod legalize;
pub mod ops;
pub mod proto;
pub mod save;
pub mod text;
