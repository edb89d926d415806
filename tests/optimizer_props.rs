//! The optimizer's rewrites as properties: random small graphs of the operators translations emit
//! (`fxonnx::internals::random`: random shapes, some symbolic, and element types, and the patterns
//! the e-graph fuses), each optimized, must keep their outputs' names, types and shapes, pass the
//! shape check, and — with `FXONNX_PYTHON` — compute the same outputs in ONNX Runtime as the graph
//! did (`tests/check_pairs.py`, symbolic dims at 1, 2 and 3). `FXONNX_PROP_CASES` (default 400)
//! and `FXONNX_PROP_SEED` (default 1) choose the cases, a failure names its case; with
//! `FXONNX_PROP_KEEP=DIR` the pairs stay in DIR (`case<i>/a.onnx`, `b.onnx`) to be looked at, and
//! `FXONNX_PROP_FIRST=i` starts at case i (one case: `FXONNX_PROP_FIRST=i FXONNX_PROP_CASES=1`).

#[path = "support/fixture_check.rs"]
#[allow(dead_code)]
mod fixture_check;

use std::collections::BTreeMap;
use std::path::Path;

use fxonnx::internals::save::{save_model, DataPlacement, Sources};

/// The bytes of case `i` of `seed` (xorshift: reproducible, no dependency).
fn case_bytes(seed: u64, i: u64) -> Vec<u8> {
    let mut state = (seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ i.wrapping_mul(0xD1B5_4A32_D192_ED03)) | 1;
    (0..384)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 24) as u8
        })
        .collect()
}

#[test]
fn optimized_random_graphs_compute_what_they_did() {
    let env = |k: &str, d: u64| std::env::var(k).ok().and_then(|v| v.parse().ok()).unwrap_or(d);
    let (cases, seed, first) = (env("FXONNX_PROP_CASES", 400), env("FXONNX_PROP_SEED", 1), env("FXONNX_PROP_FIRST", 0));
    let temp = tempfile::tempdir().expect("tempdir");
    let kept = std::env::var_os("FXONNX_PROP_KEEP").map(std::path::PathBuf::from);
    let dir = kept.as_deref().unwrap_or(temp.path());
    std::fs::create_dir_all(dir).expect("mkdir");
    let mut fired: BTreeMap<String, usize> = BTreeMap::new();
    let (mut changed, mut failures) = (0, Vec::new());
    for i in first..first + cases {
        let bytes = case_bytes(seed, i);
        let case = match fxonnx::internals::random::case(&bytes) {
            Ok(c) => c,
            Err(e) => {
                failures.push(format!("case {i} (seed {seed}): {e}"));
                continue;
            }
        };
        for (rule, n) in &case.stats.rules_fired {
            *fired.entry(rule.clone()).or_default() += n;
        }
        changed += usize::from(case.stats.nodes_after != case.stats.nodes_before || !case.stats.rules_fired.is_empty());
        let folder = dir.join(format!("case{i:06}"));
        std::fs::create_dir_all(&folder).expect("mkdir");
        for (name, model) in [("a.onnx", &case.original), ("b.onnx", &case.optimized)] {
            save_model(model, &folder.join(name), &DataPlacement::Inline, &Sources::none()).expect("save");
        }
    }
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
    eprintln!("{cases} random graphs (seed {seed}), {changed} changed by the optimizer; rules fired: {fired:?}");
    assert!(changed * 2 > cases as usize, "the optimizer changed only {changed} of {cases} graphs");
    let Some(py) = fixture_check::python() else { return };
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/check_pairs.py");
    let o = std::process::Command::new(py).arg(script).arg(dir).output().expect("run python");
    let report = String::from_utf8_lossy(&o.stdout);
    eprintln!("ONNX Runtime: {report}");
    assert!(o.status.success(), "{report}\n{}", String::from_utf8_lossy(&o.stderr));
    let report: serde_json::Value = serde_json::from_str(report.trim()).expect("one JSON line");
    let evaluated = report["evaluated"].as_u64().expect("evaluated");
    assert!(evaluated * 10 >= cases * 9, "only {evaluated} of {cases} graphs ran in ONNX Runtime: {report}");
}
