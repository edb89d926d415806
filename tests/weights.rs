//! Weight-free models (`--no-weights`, `include_initializers: false`) and `apply_weights`: the
//! round trip gives the normal export byte for byte; a weight-free model is a valid ONNX model
//! whose withheld weights are graph inputs; a wrong archive or a damaged record is an error that
//! writes nothing.

#[path = "support/fixture_check.rs"]
#[allow(dead_code)] // the numeric checks are for models with their weights
mod fixture_check;

use std::path::{Path, PathBuf};
use std::process::Command;

use fixture_check::{fixtures, python, EXPORTABLE};
use fxonnx::{ExportOptions, WeightsError, WEIGHT_KEY};

fn options(model: &str) -> ExportOptions {
    ExportOptions { model_name: Some(model.to_string()), ..Default::default() }
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("fxonnx-weights-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch folder");
    dir
}

/// Export `archive` normally and weight-free into `dir`; returns (normal, weight-free) paths.
fn both(dir: &Path, archive: &Path, model: &str, external: bool) -> (PathBuf, PathBuf) {
    let (normal, free) = (dir.join("normal").join("model.onnx"), dir.join("free.onnx"));
    std::fs::create_dir_all(dir.join("normal")).expect("folder");
    let options = ExportOptions { external_data: external, ..options(model) };
    fxonnx::export_to_file(archive, &normal, &options).expect("normal export");
    let mut program = fxonnx::export(archive, &options).expect("export");
    program.set_include_initializers(false);
    program.save(&free).expect("weight-free save");
    (normal, free)
}

fn withheld_inputs(path: &Path) -> Vec<String> {
    let bytes = std::fs::read(path).expect("read");
    let model = <fxonnx::internals::proto::ModelProto as prost::Message>::decode(&bytes[..]).expect("a ModelProto");
    model
        .graph
        .expect("a graph")
        .input
        .into_iter()
        .filter(|i| i.metadata_props.iter().any(|p| p.key == WEIGHT_KEY))
        .map(|i| i.name)
        .collect()
}

#[test]
fn no_weights_then_apply_weights_is_the_normal_export_byte_for_byte() {
    let dir = scratch("roundtrip");
    let mut withheld = 0;
    for (name, model) in EXPORTABLE {
        let archive = fixtures().join(format!("{name}.pt2"));
        let (normal, free) = both(&dir, &archive, model, false);
        let names = withheld_inputs(&free);
        withheld += names.len();
        let back = dir.join("back").join("model.onnx");
        std::fs::create_dir_all(back.parent().expect("parent")).expect("folder");
        match fxonnx::apply_weights(&free, &archive, &back, false) {
            Ok(n) => assert_eq!(n, names.len(), "{name}"),
            // A program whose weights are all computed constants: nothing to withhold.
            Err(WeightsError::NothingWithheld { .. }) => {
                assert!(names.is_empty(), "{name}");
                continue;
            }
            Err(e) => panic!("{name}: {e}"),
        }
        let (a, b) = (std::fs::read(&normal).expect("normal"), std::fs::read(&back).expect("applied"));
        assert!(a == b, "{name}: apply-weights differs from the normal export");
    }
    assert!(withheld > 100, "only {withheld} weights withheld over the fixtures");
}

#[test]
fn external_data_round_trips_too() {
    let dir = scratch("external");
    let archive = fixtures().join("tiny_transformer.pt2");
    let (normal, free) = both(&dir, &archive, "model", true);
    let back = dir.join("back").join("model.onnx");
    std::fs::create_dir_all(back.parent().expect("parent")).expect("folder");
    fxonnx::apply_weights(&free, &archive, &back, true).expect("apply");
    let read = |p: &Path| std::fs::read(p).expect("read");
    assert!(read(&normal) == read(&back), "model.onnx differs");
    // The data files: named alike (after their contents), the same bytes.
    let data_of = |p: &Path| fxonnx::internals::save::data_files_of(p);
    let (a, b) = (data_of(&normal), data_of(&back));
    assert_eq!(a.len(), 1, "{a:?}");
    assert_eq!(
        a.iter().map(|p| p.file_name()).collect::<Vec<_>>(),
        b.iter().map(|p| p.file_name()).collect::<Vec<_>>()
    );
    assert!(read(&a[0]) == read(&b[0]), "the data files differ");
}

#[test]
fn a_weight_free_model_passes_the_checker_with_its_weights_as_inputs() {
    let Some(py) = python() else { return };
    let dir = scratch("checker");
    for name in ["convnet", "tiny_transformer", "decoder_llama", "cond"] {
        let (_, free) = both(&dir, &fixtures().join(format!("{name}.pt2")), "model", false);
        assert!(!withheld_inputs(&free).is_empty(), "{name}: nothing withheld");
        let out = Command::new(&py)
            .args(["-c", "import onnx, sys; onnx.checker.check_model(onnx.load(sys.argv[1]), full_check=True)"])
            .arg(&free)
            .output()
            .expect("python");
        assert!(out.status.success(), "{name}: {}", String::from_utf8_lossy(&out.stderr));
    }
}

#[test]
fn weights_from_another_archive_or_a_damaged_record_are_refused_and_nothing_is_written() {
    let dir = scratch("refused");
    let mlp = fixtures().join("mlp_bn.pt2");
    let (normal, free) = both(&dir, &mlp, "model", false);
    let out = dir.join("out.onnx");
    // Same entry names, other bytes.
    let err = fxonnx::apply_weights(&free, fixtures().join("convnet.pt2"), &out, false).unwrap_err();
    assert!(matches!(err, WeightsError::OtherArchive { .. } | WeightsError::Archive(_)), "{err}");
    assert!(!out.exists());
    // A model with its weights has nothing to put back.
    let err = fxonnx::apply_weights(&normal, &mlp, &out, false).unwrap_err();
    assert!(err.to_string().contains("--no-weights"), "{err}");
    // A record edited to read past its entry.
    let mut bytes = std::fs::read(&free).expect("read");
    let (from, to) = (b"\"offset\":0", b"\"offset\":9");
    let at = bytes.windows(from.len()).position(|w| w == from).expect("a record");
    bytes[at..at + to.len()].copy_from_slice(to);
    let damaged = dir.join("damaged.onnx");
    std::fs::write(&damaged, &bytes).expect("write");
    let err = fxonnx::apply_weights(&damaged, &mlp, &out, false).unwrap_err();
    assert!(err.to_string().contains("run past the end of entry"), "{err}");
    assert!(!out.exists());
    // Not a model at all.
    let err = fxonnx::apply_weights(&mlp, &mlp, &out, false).unwrap_err();
    assert!(matches!(err, WeightsError::NotOnnx { .. }), "{err}");
    assert!(!out.exists());
}
