//! The built-in translation table, one file per op family (like onnxscript's torchlib).
//!
//! Each file is one `translations!` block; [`default_table`] registers them all. A translation is
//! named after its ATen op, carries the op's schema line as its doc comment, and is registered under
//! every overload it serves.

use crate::translate::dsl::TranslationTable;

pub mod control_flow;
pub mod creation;
pub mod elementwise;
pub mod indexing;
pub mod nn;
pub mod operator;
pub mod reduction;
pub mod shape;
pub mod sorting;

/// Every built-in translation.
pub fn default_table() -> TranslationTable {
    let mut table = TranslationTable::new();
    control_flow::register(&mut table);
    creation::register(&mut table);
    elementwise::register(&mut table);
    indexing::register(&mut table);
    nn::register(&mut table);
    operator::register(&mut table);
    reduction::register(&mut table);
    shape::register(&mut table);
    sorting::register(&mut table);
    table
}
