//! What every target checks of an export: no panic (fxonnx turns one into an "internal error",
//! which is a crash here), and a model that was written is well-formed where fxonnx can tell
//! without onnx: no negative dims, initializers whose bytes match their shapes.

#![allow(dead_code)]

use std::io::{Read, Write};

/// The options every target exports with: the defaults, as `fxonnx export` uses them.
pub fn options() -> fxonnx::ExportOptions {
    fxonnx::ExportOptions::default()
}

/// Exports `archive` with the default options and checks the result.
pub fn export_and_check(archive: Vec<u8>) {
    // Kept only when models are saved: the archive goes next to its model, for `fxonnx export`.
    let kept = std::env::var_os("FXONNX_FUZZ_SAVE").map(|_| archive.clone());
    check(kept.as_deref(), fxonnx::export_bytes(archive, &options()));
}

fn check(archive: Option<&[u8]>, result: Result<fxonnx::OnnxProgram, fxonnx::Error>) {
    let program = match result {
        Ok(p) => p,
        Err(e) => {
            let text = e.to_string();
            assert!(!text.contains("internal error"), "{text}");
            return;
        }
    };
    let model = program.model_proto();
    let graph = model.graph.as_ref().expect("a model has a graph");
    for v in graph.input.iter().chain(&graph.output).chain(&graph.value_info) {
        let dims = v.r#type.as_ref().and_then(|t| t.value.as_ref());
        if let Some(fxonnx::internals::proto::type_proto::Value::TensorType(t)) = dims {
            for d in t.shape.iter().flat_map(|s| &s.dim) {
                if let Some(fxonnx::internals::proto::tensor_shape_proto::dimension::Value::DimValue(n)) = d.value {
                    assert!(n >= 0, "value {} has a negative dim {n}", v.name);
                }
            }
        }
    }
    for t in &graph.initializer {
        assert!(t.dims.iter().all(|&d| d >= 0), "initializer {} has dims {:?}", t.name, t.dims);
        let numel = t.dims.iter().try_fold(1i64, |n, &d| n.checked_mul(d)).expect("initializer size overflows");
        let size = match t.data_type {
            1 | 6 => 4,
            7 | 11 => 8,
            2 | 3 | 9 => 1,
            4 | 5 | 10 | 16 => 2,
            _ => continue,
        };
        if t.data_location == 0 && !t.raw_data.is_empty() {
            assert_eq!(t.raw_data.len() as i64, numel * size, "initializer {} holds the wrong byte count", t.name);
        }
    }
    // The encoder runs as a save would; with FXONNX_FUZZ_SAVE=DIR the model is kept there (by its
    // hash, up to 5000 models) for fuzz/check_models.py to run onnx.checker and ONNX Runtime on, with the
    // archive that made it (`HASH.pt2`).
    let bytes = program.model_bytes();
    if let Some(dir) = std::env::var_os("FXONNX_FUZZ_SAVE") {
        let dir = std::path::Path::new(&dir);
        if std::fs::read_dir(dir).map_or(0, |d| d.count()) < 10_000 {
            let hash = std::hash::BuildHasher::hash_one(
                &std::hash::BuildHasherDefault::<std::hash::DefaultHasher>::default(),
                &bytes,
            );
            let _ = std::fs::write(dir.join(format!("{hash:016x}.onnx")), &bytes);
            if let Some(archive) = archive {
                let _ = std::fs::write(dir.join(format!("{hash:016x}.pt2")), archive);
            }
        }
    }
}

/// The small fixtures the mutating targets start from.
pub const FIXTURES: &[&[u8]] = &[
    include_bytes!("../../tests/fixtures/mlp_bn.pt2"),
    include_bytes!("../../tests/fixtures/convnet.pt2"),
    include_bytes!("../../tests/fixtures/tiny_transformer.pt2"),
    include_bytes!("../../tests/fixtures/cond.pt2"),
    include_bytes!("../../tests/fixtures/nn_ops.pt2"),
    include_bytes!("../../tests/fixtures/hops_loops.pt2"),
    include_bytes!("../../tests/fixtures/windows_norms.pt2"),
    include_bytes!("../../tests/fixtures/more_ops.pt2"),
];

/// The entries of a zip archive, in order.
pub fn entries(archive: &[u8]) -> Vec<(String, Vec<u8>)> {
    let mut z = zip::ZipArchive::new(std::io::Cursor::new(archive)).expect("a fixture is a zip");
    (0..z.len())
        .map(|i| {
            let mut f = z.by_index(i).expect("entry");
            let mut bytes = Vec::new();
            f.read_to_end(&mut bytes).expect("read");
            (f.name().to_string(), bytes)
        })
        .collect()
}

/// A zip archive of `entries`, stored (uncompressed) as torch.export.save writes them.
pub fn archive(entries: &[(String, Vec<u8>)]) -> Vec<u8> {
    let mut z = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    for (name, bytes) in entries {
        z.start_file(name.as_str(), opts).expect("start");
        z.write_all(bytes).expect("write");
    }
    z.finish().expect("finish").into_inner()
}
