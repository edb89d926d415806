//! The built-in translation table, one file per op family (like onnxscript's torchlib).
//!
//! Each file is one `translations!` block; [`default_table`] registers them all. A translation is
//! named after its ATen op, carries the op's schema line as its doc comment, and is registered under
//! every overload it serves.

use crate::translate::dsl::TranslationTable;

pub mod activation;
pub mod control_flow;
pub mod creation;
pub mod decompositions;
pub mod elementwise;
pub mod indexing;
pub mod linalg;
pub mod loss;
pub mod math;
pub mod nn;
pub mod operator;
pub mod pooling;
pub mod reduction;
pub mod shape;
pub mod sorting;
pub mod special;

/// Every built-in translation.
pub fn default_table() -> TranslationTable {
    let mut table = TranslationTable::new();
    activation::register(&mut table);
    control_flow::register(&mut table);
    creation::register(&mut table);
    decompositions::register(&mut table);
    elementwise::register(&mut table);
    indexing::register(&mut table);
    linalg::register(&mut table);
    loss::register(&mut table);
    math::register(&mut table);
    nn::register(&mut table);
    operator::register(&mut table);
    pooling::register(&mut table);
    reduction::register(&mut table);
    shape::register(&mut table);
    sorting::register(&mut table);
    special::register(&mut table);
    table
}
