//! Archives written by `tests/support/pt2_writer.rs` (no torch): the writer's zip layout is the one
//! pt2-format.md describes, its programs export, and (with `FXONNX_PYTHON`) the exports run in
//! ONNX Runtime and match a numpy interpreter of the FX graph. Also the save path's guarantees:
//! weights reach the output byte for byte, exports are deterministic, and the streamed protobuf
//! encoding is byte-identical to prost's `encode_to_vec`.

#[path = "support/pt2_writer.rs"]
mod pt2_writer;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

use prost::Message;
use pt2_writer::{write_archive, ConvNet, Program, Transformer};

fn small_transformer() -> Transformer {
    Transformer { blocks: 3, d_model: 16, heads: 2, ffn: 64, seq: 4 }
}

fn small_convnet() -> ConvNet {
    ConvNet { blocks: 2, channels: 4, hw: 5 }
}

fn python() -> Option<String> {
    match std::env::var("FXONNX_PYTHON") {
        Ok(p) if !p.is_empty() => Some(p),
        _ => {
            assert!(std::env::var("CI").is_err(), "CI is set but FXONNX_PYTHON is not");
            None
        }
    }
}

fn write(dir: &Path, name: &str, program: &dyn Program) -> (PathBuf, pt2_writer::ArchiveInfo) {
    let path = dir.join(format!("{name}.pt2"));
    let info = write_archive(&path, program, None).expect("write archive");
    (path, info)
}

fn export(archive: &Path, out: &Path, external_data: bool, optimize: bool) -> fxonnx::OnnxProgram {
    let options = fxonnx::ExportOptions { external_data, optimize, ..Default::default() };
    let program = fxonnx::export(archive, &options).unwrap_or_else(|e| panic!("export {}: {e}", archive.display()));
    program.save(out).unwrap_or_else(|e| panic!("save {}: {e}", out.display()));
    program
}

#[test]
fn writer_lays_out_the_zip_like_torch() {
    let dir = tempfile::tempdir().unwrap();
    let (path, info) = write(dir.path(), "tiny_model", &small_transformer());
    assert_eq!(info.fx_nodes, small_transformer().fx_nodes());
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(bytes.len() as u64, info.file_bytes);
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(&bytes[..])).expect("zip");
    let mut names = Vec::new();
    for i in 0..zip.len() {
        let mut f = zip.by_index(i).unwrap();
        names.push(f.name().to_string());
        assert_eq!(f.compression(), zip::CompressionMethod::Stored, "{}", f.name());
        assert_eq!(f.data_start() % 64, 0, "{} is not 64-byte aligned", f.name());
        // The local header: flags 0x0808, zero CRC and DOS date, an FB padding block.
        let h = f.header_start() as usize;
        assert_eq!(&bytes[h..h + 4], b"PK\x03\x04");
        assert_eq!(u16::from_le_bytes([bytes[h + 6], bytes[h + 7]]), 0x0808);
        assert_eq!(&bytes[h + 10..h + 18], &[0; 8]);
        let (nl, el) = (
            u16::from_le_bytes([bytes[h + 26], bytes[h + 27]]) as usize,
            u16::from_le_bytes([bytes[h + 28], bytes[h + 29]]) as usize,
        );
        assert_eq!(&bytes[h + 30 + nl..h + 32 + nl], b"FB");
        assert_eq!(h + 30 + nl + el, f.data_start() as usize);
        // Reading to the end checks the CRC.
        let mut data = Vec::new();
        f.read_to_end(&mut data).expect("CRC ok");
    }
    for n in ["archive_format", "archive_version", "byteorder", ".data/version", "models/model.json"] {
        assert!(names.contains(&format!("tiny_model/{n}")), "{n} missing: {names:?}");
    }
    // Zip64 end record, locator, then the classic end record.
    let eocd = bytes.len() - 22;
    assert_eq!(&bytes[eocd..eocd + 4], b"PK\x05\x06");
    assert_eq!(&bytes[eocd - 20..eocd - 16], b"PK\x06\x07");
    assert_eq!(&bytes[eocd - 76..eocd - 72], b"PK\x06\x06");

    let archive = fxonnx::internals::Archive::open(&path).expect("fxonnx opens it");
    let loaded = archive.load("model").expect("parse");
    assert_eq!(loaded.program.graph_module.graph.nodes.len(), info.fx_nodes);
    for t in &info.tensors {
        let w = loaded.tensor(&t.fqn, true).expect("tensor");
        assert_eq!(&w.raw[..], &pt2_writer::tensor_bytes(t, None)[..], "{}", t.fqn);
    }
}

/// Zip64: entries and offsets past 4 GiB, checked on the structure without writing 4 GiB of data
/// through the generators (a sparse file keeps it cheap on disk).
#[test]
fn writer_uses_zip64_past_4_gib() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.zip");
    /// Seeks instead of writing while `skip` is set: the 4 GiB entry becomes a hole in a sparse
    /// file, costing no disk space or IO (the writer still computes its CRC).
    struct Sparse(std::fs::File, std::rc::Rc<std::cell::Cell<bool>>);
    impl std::io::Write for Sparse {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            use std::io::Seek;
            if self.1.get() {
                self.0.seek(std::io::SeekFrom::Current(buf.len() as i64))?;
                Ok(buf.len())
            } else {
                self.0.write(buf)
            }
        }
        fn flush(&mut self) -> std::io::Result<()> {
            self.0.flush()
        }
    }
    let skip = std::rc::Rc::new(std::cell::Cell::new(false));
    let file = std::fs::File::create(&path).unwrap();
    let mut zip = pt2_writer::ZipOut::new(Sparse(file, skip.clone()), "big");
    let size = (1u64 << 32) + 100;
    zip.begin("data/weights/weight_0", size).unwrap();
    skip.set(true);
    let chunk = vec![0u8; 1 << 24];
    let mut left = size;
    while left > 0 {
        let n = left.min(chunk.len() as u64) as usize;
        std::io::Write::write_all(&mut zip, &chunk[..n]).unwrap();
        left -= n as u64;
    }
    skip.set(false);
    zip.end().unwrap();
    zip.entry("archive_format", b"pt2").unwrap();
    zip.finish().unwrap();
    let file = std::fs::File::open(&path).unwrap();
    let mut z = zip::ZipArchive::new(file).expect("zip64 archive opens");
    let big = z.by_index_raw(0).unwrap();
    assert_eq!(big.size(), size);
    assert_eq!(big.data_start() % 64, 0);
    drop(big);
    let small = z.by_index_raw(1).unwrap();
    assert!(small.header_start() > u32::MAX as u64);
    assert_eq!(small.data_start() % 64, 0);
    assert_eq!(small.size(), 3);
}

fn check_in_onnxruntime(onnx: &Path, archive: &Path) {
    let Some(py) = python() else { return };
    let out = Command::new(py)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/check_synthetic.py"))
        .arg(onnx)
        .arg(archive)
        .output()
        .expect("run check_synthetic.py");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{}: numeric check failed:\n{text}", archive.display());
    eprint!("{}: {text}", onnx.display());
}

#[test]
fn generated_programs_export_and_run() {
    let dir = tempfile::tempdir().unwrap();
    for (name, program) in
        [("transformer", &small_transformer() as &dyn Program), ("convnet", &small_convnet() as &dyn Program)]
    {
        let (archive, _) = write(dir.path(), name, program);
        for external in [false, true] {
            let out = dir.path().join(format!("{name}_{external}.onnx"));
            export(&archive, &out, external, true);
            check_in_onnxruntime(&out, &archive);
        }
    }
}

/// The bytes of every initializer of a saved model: `raw_data`, or its slice of the data file.
fn initializer_bytes(onnx: &Path) -> Vec<(String, Vec<u8>, bool)> {
    let model = fxonnx::internals::proto::ModelProto::decode(&std::fs::read(onnx).unwrap()[..]).expect("decode");
    let graph = model.graph.expect("graph");
    let mut out = Vec::new();
    for t in graph.initializer {
        if t.external_data.is_empty() {
            out.push((t.name, t.raw_data.to_vec(), false));
            continue;
        }
        let get = |k: &str| t.external_data.iter().find(|e| e.key == k).map(|e| e.value.clone()).unwrap();
        let data = std::fs::read(onnx.parent().unwrap().join(get("location"))).unwrap();
        let offset: usize = get("offset").parse().unwrap();
        let length: usize = get("length").parse().unwrap();
        assert_eq!(offset % 64, 0, "{}: external data offset not aligned", t.name);
        out.push((t.name, data[offset..offset + length].to_vec(), true));
    }
    out
}

#[test]
fn saved_weights_equal_archive_bytes() {
    let dir = tempfile::tempdir().unwrap();
    for (name, program) in
        [("transformer", &small_transformer() as &dyn Program), ("convnet", &small_convnet() as &dyn Program)]
    {
        let (archive, info) = write(dir.path(), name, program);
        for external in [false, true] {
            let out = dir.path().join(format!("{name}_{external}.onnx"));
            // The data path alone: the optimizer rightly rewrites weights (BatchNormalization
            // folded into the convolution before it becomes new constants).
            export(&archive, &out, external, false);
            let saved = initializer_bytes(&out);
            let mut found = 0;
            for t in &info.tensors {
                if t.fqn.ends_with("num_batches_tracked") {
                    continue; // unused by the graph: dead code
                }
                let (_, bytes, is_external) =
                    saved.iter().find(|(n, ..)| *n == t.fqn).unwrap_or_else(|| panic!("{}: no initializer", t.fqn));
                assert_eq!(bytes[..], pt2_writer::tensor_bytes(t, None)[..], "{} differs", t.fqn);
                assert_eq!(*is_external, external && t.nbytes() >= 1024, "{} placement", t.fqn);
                found += 1;
            }
            assert!(found > 10);
        }
    }
}

/// The transformer's linears (3-D inputs) are MatMul on the weight transposed once, into an
/// initializer, plus the bias: no weight is transposed at run time, and each archive tensor is
/// saved once (as stored, or as that transpose).
#[test]
fn optimized_transformer_transposes_weights_once_at_export() {
    let dir = tempfile::tempdir().unwrap();
    let (archive, info) = write(dir.path(), "transformer", &small_transformer());
    let out = dir.path().join("model.onnx");
    export(&archive, &out, false, true);
    let saved = initializer_bytes(&out);
    let model = fxonnx::internals::proto::ModelProto::decode(&std::fs::read(&out).unwrap()[..]).expect("decode");
    let graph = model.graph.expect("graph");
    let weights: Vec<&str> = graph.initializer.iter().map(|t| t.name.as_str()).collect();
    let on_weights = |op: &str| {
        graph.node.iter().filter(|n| n.op_type == op && n.input.iter().any(|i| weights.contains(&i.as_str()))).count()
    };
    assert_eq!(on_weights("Transpose"), 0, "a weight transposed at run time");
    assert!(on_weights("MatMul") >= 4, "{} MatMul nodes on weights", on_weights("MatMul"));
    let total: usize = saved.iter().map(|(_, b, _)| b.len()).sum();
    let archive_total: u64 = info.tensors.iter().map(|t| t.nbytes()).sum();
    assert!(total as u64 <= archive_total + 4096, "{total} bytes of initializers for {archive_total} of weights");
}

#[test]
fn exports_are_byte_identical() {
    let dir = tempfile::tempdir().unwrap();
    let (archive, _) = write(dir.path(), "transformer", &small_transformer());
    for external in [false, true] {
        let mut runs = Vec::new();
        for k in 0..2 {
            let sub = dir.path().join(format!("run{k}_{external}"));
            std::fs::create_dir(&sub).unwrap();
            let out = sub.join("model.onnx");
            export(&archive, &out, external, true);
            let data = fxonnx::internals::save::data_files_of(&out);
            runs.push((std::fs::read(&out).unwrap(), data.first().map(|d| std::fs::read(d).unwrap())));
        }
        assert!(runs[0].0 == runs[1].0, "model bytes differ (external: {external})");
        assert!(runs[0].1 == runs[1].1, "data bytes differ (external: {external})");
        assert_eq!(runs[0].1.is_some(), external);
    }
}

/// The streaming writer (what exports use) writes exactly the bytes of the plain one (a prost
/// `ModelProto`), inline and with external data, on synthetic programs with large weights and
/// folded ones; `src/onnx/save/tests.rs` does the same on every fixture.
#[test]
fn streamed_saves_equal_plain_ones() {
    use fxonnx::internals::save::{data_files_of, plain, save_model, DataPlacement, Sources};
    let dir = tempfile::tempdir().unwrap();
    // Weights of 64 KiB and more are read from the archive file, smaller ones copied.
    let wide = Transformer { blocks: 1, d_model: 128, heads: 4, ffn: 512, seq: 4 };
    let archives = [
        write(dir.path(), "transformer", &small_transformer()).0,
        write(dir.path(), "convnet", &small_convnet()).0,
        write(dir.path(), "wide", &wide).0,
    ];
    // One folder per writer: the data file's name is written in the model.
    let (plain_dir, stream_dir) = (dir.path().join("plain"), dir.path().join("stream"));
    std::fs::create_dir_all(&plain_dir).unwrap();
    std::fs::create_dir_all(&stream_dir).unwrap();
    let read = |p: &Path| std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    let mut data_bytes = 0;
    for archive in &archives {
        for external_data in [false, true] {
            let options = fxonnx::ExportOptions { external_data, ..Default::default() };
            let program = fxonnx::export(archive, &options).unwrap_or_else(|e| panic!("{}: {e}", archive.display()));
            let placement = match external_data {
                false => DataPlacement::Inline,
                true => DataPlacement::EXTERNAL,
            };
            let what = format!("{} ({placement:?})", archive.display());
            plain::save(program.ir(), &plain_dir.join("m.onnx"), &placement, &Sources::none()).unwrap();
            // The export's own save reads stored weights from the archive file; without the
            // archive they are copied from memory.
            program.save(stream_dir.join("m.onnx")).unwrap();
            assert!(read(&plain_dir.join("m.onnx")) == read(&stream_dir.join("m.onnx")), "{what}: .onnx differs");
            save_model(program.ir(), &stream_dir.join("m.onnx"), &placement, &Sources::none()).unwrap();
            assert!(read(&plain_dir.join("m.onnx")) == read(&stream_dir.join("m.onnx")), "{what}: .onnx differs");
            if external_data {
                // One data file each (the last save's; earlier ones went with their models),
                // named alike since alike.
                let (plain_data, stream_data) =
                    (data_files_of(&plain_dir.join("m.onnx")), data_files_of(&stream_dir.join("m.onnx")));
                // None when no weight reaches `EXTERNAL`'s 1,024 bytes (the convnet's are 576).
                let ir = program.ir();
                let external = ir
                    .graph
                    .initializers
                    .iter()
                    .any(|&v| ir.value(v).constant.as_ref().is_some_and(|c| c.raw.len() >= 1024));
                let files = usize::from(external);
                assert_eq!((plain_data.len(), stream_data.len()), (files, files), "{what}");
                for (p, s) in plain_data.iter().zip(&stream_data) {
                    assert_eq!(p.file_name(), s.file_name(), "{what}");
                    let data = read(p);
                    assert!(data == read(s), "{what}: .data differs");
                    data_bytes += data.len();
                }
            }
        }
    }
    // The small convnet's weights are all under the 1 KiB threshold; the others' are not.
    assert!(data_bytes > 0);
}
