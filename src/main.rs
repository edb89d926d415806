//! The `fxonnx` binary: the command line of [`fxonnx::cli`] with an allocator tuned for one
//! short process.

use std::process::ExitCode;

mod allocator;

fn main() -> ExitCode {
    allocator::tune();
    allocator::prefault_in_background();
    fxonnx::install_truncation_guard();
    ExitCode::from(fxonnx::cli::run(std::env::args_os()).clamp(0, 255) as u8)
}
