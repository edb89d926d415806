//! The optimizer's rewrites as properties: any bytes make a small graph of the operators
//! translations emit (`fxonnx::internals::random`, random shapes and element types, the patterns
//! the e-graph fuses); the graph must pass the shape check, and its optimized form too, with the
//! outputs' names, types and shapes kept (else a panic: a crash). With `FXONNX_FUZZ_SAVE=DIR` each
//! pair is kept (`DIR/<hash>/a.onnx`, `b.onnx`) for `python tests/check_pairs.py DIR`, which runs
//! both in ONNX Runtime and compares every output (`tests/optimizer_props.rs` does that in CI).
#![no_main]

use fxonnx::internals::save::{save_model, DataPlacement, Sources};

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let case = fxonnx::internals::random::case(data).unwrap_or_else(|e| panic!("{e}"));
    let Some(dir) = std::env::var_os("FXONNX_FUZZ_SAVE") else { return };
    let dir = std::path::Path::new(&dir);
    if std::fs::read_dir(dir).map_or(0, |d| d.count()) >= 10_000 {
        return;
    }
    let hash = std::hash::BuildHasher::hash_one(
        &std::hash::BuildHasherDefault::<std::hash::DefaultHasher>::default(),
        data,
    );
    let folder = dir.join(format!("{hash:016x}"));
    if std::fs::create_dir_all(&folder).is_ok() {
        for (name, model) in [("a.onnx", &case.original), ("b.onnx", &case.optimized)] {
            let _ = save_model(model, &folder.join(name), &DataPlacement::Inline, &Sources::none());
        }
    }
});
