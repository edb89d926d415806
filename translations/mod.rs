//! The built-in translation table, one file per op family (like onnxscript's torchlib).
//!
//! Each file is one `translations!` block; [`default_table`] registers them all. A translation is
//! named after its ATen op, carries the op's schema line as its doc comment, and is registered under
//! every overload it serves.
//!
//! `numerics/` holds the families that re-implement numerical libraries (matrix decompositions,
//! special and Bessel functions); `shared/` the building blocks several families use. A family
//! never imports another family's helpers.

use crate::translate::prelude::TranslationTable;

pub mod activation;
pub mod control_flow;
pub mod creation;
pub mod elementwise;
pub mod embedding;
pub mod fft;
pub mod indexing;
pub mod joins;
pub mod linalg;
pub mod loss;
pub mod math;
pub mod nn;
pub mod numerics;
pub mod operator;
pub mod padding;
pub mod pooling;
pub mod python;
pub mod quantized;
pub mod random;
pub mod recurrent;
pub mod reduction;
pub mod reorder;
pub mod reshaping;
pub(crate) mod shared;
pub mod slicing;
pub mod sorting;
pub mod statistics;
pub mod torchvision;
pub mod unfolding;

/// A family's registration function (each `translations!` block defines one, `register`).
pub type Register = fn(&mut TranslationTable);

/// Every translation file, by name, with its registration function.
pub const FAMILIES: &[(&str, Register)] = &[
    ("activation", activation::register),
    ("bessel", numerics::bessel::register),
    ("control_flow", control_flow::register),
    ("creation", creation::register),
    ("decompositions", numerics::decompositions::register),
    ("elementwise", elementwise::register),
    ("embedding", embedding::register),
    ("fft", fft::register),
    ("indexing", indexing::register),
    ("joins", joins::register),
    ("linalg", linalg::register),
    ("loss", loss::register),
    ("math", math::register),
    ("nn", nn::register),
    ("operator", operator::register),
    ("padding", padding::register),
    ("pooling", pooling::register),
    ("python", python::register),
    ("quantized", quantized::register),
    ("random", random::register),
    ("recurrent", recurrent::register),
    ("reduction", reduction::register),
    ("reorder", reorder::register),
    ("reshaping", reshaping::register),
    ("slicing", slicing::register),
    ("sorting", sorting::register),
    ("special", numerics::special::register),
    ("statistics", statistics::register),
    ("torchvision", torchvision::register),
    ("unfolding", unfolding::register),
];

impl TranslationTable {
    /// Every built-in translation (what an export uses when no custom table is given).
    pub fn builtin() -> Self {
        default_table()
    }
}

/// Every built-in translation.
pub fn default_table() -> TranslationTable {
    let mut table = TranslationTable::new();
    for (_, register) in FAMILIES {
        register(&mut table);
    }
    table
}
