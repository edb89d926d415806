//! Building blocks several families share. These modules register no translations.

pub(crate) mod axes;
pub(crate) mod norms;
pub(crate) mod pointwise;
pub(crate) mod window;
