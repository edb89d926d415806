//! Regenerates `src/onnx/proto.rs` from `src/onnx/onnx.proto3` (prost-build +
//! protox, no protoc) and fails if the committed file has drifted.
//!
//! To update the committed file: `FXONNX_BLESS=1 cargo test --test proto_codegen`.

use std::path::{Path, PathBuf};

/// Prepended verbatim to the prost-build output. Must stay in sync with the
/// top of `src/onnx/proto.rs` (this test enforces that).
///
/// `#![cfg_attr(rustfmt, rustfmt::skip)]` keeps `cargo fmt` from reformatting
/// the file (stable rustfmt formats `@generated` files by default), which would
/// otherwise break the byte-for-byte check. rustc never sees the inner tool
/// attribute because the `rustfmt` cfg is only set by rustfmt itself.
const HEADER: &str = "\
// @generated from `src/onnx/onnx.proto3` (ONNX 1.23.2, package `onnx`) by
// `tests/proto_codegen.rs` (protox + prost-build, `Config::bytes([\".\"])`).
// Do not edit by hand. Regenerate with:
//     FXONNX_BLESS=1 cargo test --test proto_codegen
#![cfg_attr(rustfmt, rustfmt::skip)]
#![allow(clippy::all, clippy::pedantic, missing_docs, rustdoc::all)]

";

fn generate() -> String {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let proto_dir = manifest.join("src").join("onnx");

    let fds = protox::compile(["onnx.proto3"], [&proto_dir]).expect("protox failed to compile onnx.proto3");

    let out_dir: PathBuf = std::env::temp_dir().join(format!(
        "fxonnx-proto-codegen-{}-{}",
        std::process::id(),
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos())
    ));
    std::fs::create_dir_all(&out_dir).expect("create temp out dir");

    let mut config = prost_build::Config::new();
    config.bytes(["."]).out_dir(&out_dir);
    config.compile_fds(fds).expect("prost-build failed");

    let generated = std::fs::read_to_string(out_dir.join("onnx.rs")).expect("read generated onnx.rs");
    let _ = std::fs::remove_dir_all(&out_dir);

    format!("{HEADER}{generated}")
}

#[test]
fn proto_rs_is_up_to_date() {
    let expected = generate();
    let committed_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/onnx/proto.rs");

    if std::env::var("FXONNX_BLESS").as_deref() == Ok("1") {
        std::fs::write(&committed_path, &expected).expect("write src/onnx/proto.rs");
        return;
    }

    let committed = std::fs::read_to_string(&committed_path).unwrap_or_default();
    assert!(
        committed == expected,
        "src/onnx/proto.rs is out of date with src/onnx/onnx.proto3 (or the prost-build version changed); \
         regenerate with `FXONNX_BLESS=1 cargo test --test proto_codegen`"
    );
}
