//! Re-implementations of numerical libraries, unrolled into ONNX: matrix decompositions and solvers
//! (LU, Cholesky, QR, symmetric eigenvalues by Jacobi rotations), the special functions of Cephes
//! and torch (gamma and error-function families, orthogonal polynomials) and Bessel functions.
//!
//! They are families like the others (each file registers its ops) and are kept apart because they
//! follow their sources line by line rather than reading like the ONNX of one op.

// Coefficient tables are copied digit for digit from Cephes and torch, so they can be compared
// with the source.
#![allow(clippy::excessive_precision)]

pub mod bessel;
pub mod decompositions;
mod float64;
pub mod special;
