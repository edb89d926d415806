//! The ONNX side: the in-memory graph ([`ir`]), what fxonnx knows of each operator
//! ([`operators`]), the builder translations write to ([`builder`], with one typed method per
//! operator in [`ops`]), the export check ([`check`]), saving as an ONNX file ([`save`]), and a
//! readable text form of ONNX models ([`text`]).

pub mod builder;
pub(crate) mod check;
pub mod dce;
mod downgrade;
pub mod functions;
pub mod ir;
pub mod keys;
pub(crate) mod legalize;
pub(crate) mod operators;
pub mod ops;
pub mod proto;
pub mod save;
pub(crate) mod shape_table;
/// Graphs as text for tests (the crate's and, through `internals::testing`, the integration tests').
pub(crate) mod testing;
pub mod text;
