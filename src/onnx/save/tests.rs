//! The two writers give the same bytes, inline and with external data, on every fixture.

use std::path::{Path, PathBuf};

use super::*;
use crate::onnx::ir::Model;
use crate::pt2::Archive;

fn fixtures() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("tests/fixtures")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "pt2"))
        .collect();
    v.sort();
    v
}

/// The optimized model of `archive`, as `fxonnx export` makes it, or `None` when the fixture is
/// one that fails to export (error fixtures).
fn export(archive: &Archive) -> Option<Model> {
    let loaded = archive.load("model").ok()?;
    let program = crate::fx::Program::new(&loaded).ok()?;
    let table = crate::translations::default_table();
    let options = crate::translate::lower::LowerOptions {
        opset: crate::DEFAULT_OPSET,
        table: &table,
        dim_names: &Default::default(),
        input_names: &[],
        output_names: &[],
        debug_outputs: false,
        max_memory: None,
        mutations_as_outputs: true,
    };
    let (mut model, _) = crate::translate::lower::lower(&program, &options).ok()?;
    crate::optimize::optimize(&mut model);
    Some(model)
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn plain_and_streamed_saves_are_byte_identical() {
    // One folder per writer: the data file's name is written in the model.
    let (plain_dir, stream_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (plain_path, stream_path) = (plain_dir.path().join("m.onnx"), stream_dir.path().join("m.onnx"));
    let mut exported = 0;
    let mut external_tensors = 0;
    for fixture in fixtures() {
        let archive = Archive::open(&fixture).unwrap_or_else(|e| panic!("{}: {e}", fixture.display()));
        let Some(model) = export(&archive) else { continue };
        exported += 1;
        // A low threshold puts nearly every weight in the data file; the default keeps small ones.
        for threshold in [None, Some(64), Some(1024)] {
            let placement = match threshold {
                None => DataPlacement::Inline,
                Some(threshold) => DataPlacement::External { threshold },
            };
            let what = format!("{} ({placement:?})", fixture.display());
            plain::save(&model, &plain_path, &placement, &Sources::none()).unwrap_or_else(|e| panic!("{what}: {e}"));
            // With the archive's file (weights read from it) and without (copied from memory).
            for file in [archive.file(), None] {
                let sources = Sources::archive(file.as_ref());
                save_model(&model, &stream_path, &placement, &sources).unwrap_or_else(|e| panic!("{what}: {e}"));
                assert!(read(&plain_path) == read(&stream_path), "{what}: the .onnx files differ");
                if threshold.is_some() {
                    let (plain_data, stream_data) = (data_files_of(&plain_path), data_files_of(&stream_path));
                    assert_eq!(plain_data.len(), stream_data.len(), "{what}");
                    for (p, s) in plain_data.iter().zip(&stream_data) {
                        assert_eq!(p.file_name(), s.file_name(), "{what}");
                        assert!(read(p) == read(s), "{what}: the .data files differ");
                    }
                }
            }
            if threshold == Some(64) {
                let encoder = Encoder::new(&model, &placement, &stream_path).unwrap();
                external_tensors += usize::from(encoder.data_len() > 0);
                assert_eq!(read(&stream_path).len(), encoder.encoded_len(), "{what}");
            }
        }
    }
    assert!(exported >= 10 && external_tensors >= 10, "{exported} fixtures exported, {external_tensors} external");
}
