//! The operator-corpus cases copied into `tests/fixtures/ops/` and the ModuleInfo cases in
//! `tests/fixtures/modules/` (see their READMEs) pass, through the same
//! runner as the full corpus (`examples/conformance.rs`): with `FXONNX_PYTHON` set, every case must
//! export, pass `onnx.checker` and match PyTorch's outputs in onnxruntime; without Python, every case
//! must still export. CI must not skip the numeric part: it panics if `CI` is set without
//! `FXONNX_PYTHON` (the convention of `tests/fixtures.rs`).

#[path = "support/conformance.rs"]
mod conformance;
#[allow(dead_code)]
#[path = "support/fixture_check.rs"]
mod fixture_check;

use fixture_check::python;

use std::path::{Path, PathBuf};

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ops")
}

#[test]
fn every_fixture_case_passes() {
    passes_all(&corpus(), "tests/fixtures/ops");
}

/// The ModuleInfo cases (`tests/fixtures/modules/`, see its README): layers with dynamic batch,
/// sequence and spatial sizes, each also checked on its second input set.
#[test]
fn every_module_case_passes() {
    passes_all(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/modules"), "tests/fixtures/modules");
}

fn passes_all(dir: &Path, label: &str) {
    let options = conformance::Options { python: python(), label: label.into(), ..Default::default() };
    let run = conformance::run(dir, &options).unwrap_or_else(|e| panic!("{e}"));
    // A wrong folder or a broken refresh would otherwise pass vacuously.
    assert!(run.cases.len() >= 20, "only {} cases in {}", run.cases.len(), dir.display());

    let failing: Vec<String> = run
        .cases
        .iter()
        .filter(|c| if run.checked { !c.passed() } else { !c.exported() })
        .map(|c| format!("{}: {}", c.case.name, c.failure().map(|(_, reason)| reason).unwrap_or_default()))
        .collect();
    assert!(failing.is_empty(), "{} of {} cases fail:\n{}", failing.len(), run.cases.len(), failing.join("\n"));

    // The reports render from any run (the full-corpus report is made by the same code).
    let md = conformance::render_markdown(&run);
    if run.checked {
        assert!(md.contains(&format!("| fxonnx | {n} | {n} |", n = run.cases.len())), "{md}");
    }
    let json: serde_json::Value = serde_json::from_str(&conformance::render_json(&run)).expect("coverage JSON parses");
    assert_eq!(json["cases"].as_array().map(Vec::len), Some(run.cases.len()));
}

/// A broken model fails alone, with the stage that broke; the cases around it still pass.
#[test]
fn checker_isolates_a_broken_model() {
    let Some(python) = python() else { return };
    let cases = conformance::discover(&corpus(), None).unwrap_or_else(|e| panic!("{e}"));
    let case = cases.first().expect("at least one fixture case");
    let work = tempfile::tempdir().expect("tempdir");
    let good = work.path().join("good.onnx");
    conformance::export_case(case, &good).unwrap_or_else(|e| panic!("{}: {e:?}", case.name));
    let broken = work.path().join("broken.onnx");
    std::fs::write(&broken, b"not a protobuf").expect("write");

    let entries = [
        conformance::ManifestEntry::for_case(case, good.clone()),
        conformance::ManifestEntry { case: "broken".into(), ..conformance::ManifestEntry::for_case(case, broken) },
        conformance::ManifestEntry { case: "again".into(), ..conformance::ManifestEntry::for_case(case, good) },
    ];
    let results = conformance::check(&python, &entries, work.path(), 1, false).unwrap_or_else(|e| panic!("{e}"));
    let passed: Vec<(&str, bool)> = results.iter().map(|r| (r.case.as_str(), r.passed)).collect();
    assert_eq!(passed, [(case.name.as_str(), true), ("broken", false), ("again", true)], "{results:#?}");
    let error = results[1].error.as_deref().unwrap_or("");
    assert!(error.starts_with("checker: "), "{error}");
    assert!(!error.contains(work.path().to_str().unwrap_or("?")), "temporary paths leak into messages: {error}");
}
