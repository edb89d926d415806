//! metadata_props against what torch.onnx writes for the same ExportedProgram
//! (`tests/fixtures/metadata/nested.golden.json`, made once by `generate.py` with torch 2.15).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde_json::Value as Json;

fn dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/metadata")
}

fn props(entries: &[fxonnx::internals::proto::StringStringEntryProto]) -> BTreeMap<String, String> {
    entries.iter().map(|e| (e.key.clone(), e.value.clone())).collect()
}

fn json_props(v: &Json) -> BTreeMap<String, String> {
    v.as_object().expect("object").iter().map(|(k, v)| (k.clone(), v.as_str().expect("string").to_string())).collect()
}

/// The FX node a node's metadata belongs to: the last segment of its namespace.
fn fx_name(meta: &BTreeMap<String, String>) -> String {
    let ns = meta.get("namespace").expect("namespace key");
    ns.rsplit('/').next().and_then(|s| s.split(": ").next()).expect("fx name").to_string()
}

#[test]
fn metadata_matches_torch_onnx() {
    let golden: Json =
        serde_json::from_str(&std::fs::read_to_string(dir().join("nested.golden.json")).expect("golden"))
            .expect("golden json");
    let program = fxonnx::export(dir().join("nested.pt2"), &Default::default()).expect("export");
    let g = program.model_proto().graph.expect("graph");

    assert_eq!(props(&g.metadata_props), json_props(&golden["graph"]), "graph metadata");

    // Per FX node, the metadata torch.onnx put on the nodes it made equals ours.
    let mut theirs: BTreeMap<String, BTreeSet<BTreeMap<String, String>>> = BTreeMap::new();
    for n in golden["nodes"].as_array().expect("nodes") {
        let m = json_props(&n["metadata"]);
        theirs.entry(fx_name(&m)).or_default().insert(m);
    }
    let mut ours: BTreeMap<String, BTreeSet<BTreeMap<String, String>>> = BTreeMap::new();
    for n in &g.node {
        let m = props(&n.metadata_props);
        assert_eq!(m.len(), 5, "node {} ({}) has keys {:?}", n.name, n.op_type, m.keys());
        ours.entry(fx_name(&m)).or_default().insert(m);
    }
    assert_eq!(ours, theirs);

    for (name, meta) in golden["inputs"].as_object().expect("inputs") {
        let v = g.input.iter().find(|i| &i.name == name).unwrap_or_else(|| panic!("input {name}"));
        assert_eq!(props(&v.metadata_props), json_props(meta), "input {name}");
    }
    for (name, meta) in golden["outputs"].as_object().expect("outputs") {
        let v = g.output.iter().find(|o| &o.name == name).unwrap_or_else(|| panic!("output {name}"));
        assert_eq!(props(&v.metadata_props), json_props(meta), "output {name}");
    }
    // Initializers: where torch puts it (a value_info of the same name) and on the TensorProto.
    for name in golden["initializers"].as_array().expect("initializers") {
        let name = name.as_str().expect("name");
        let expected = json_props(&golden["value_info"][name]);
        let vi = g.value_info.iter().find(|v| v.name == name).unwrap_or_else(|| panic!("value_info {name}"));
        assert_eq!(props(&vi.metadata_props), expected, "value_info {name}");
        let t = g.initializer.iter().find(|t| t.name == name).unwrap_or_else(|| panic!("initializer {name}"));
        assert_eq!(props(&t.metadata_props), expected, "initializer {name}");
    }
}

#[test]
fn subgraph_nodes_carry_metadata_too() {
    let program =
        fxonnx::export(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cond.pt2"), &Default::default())
            .expect("export");
    let g = program.model_proto().graph.expect("graph");
    let mut checked = 0;
    for n in g.node.iter().filter(|n| n.op_type == "If") {
        for a in &n.attribute {
            for inner in &a.g.as_ref().expect("branch").node {
                let m = props(&inner.metadata_props);
                assert!(m.contains_key("namespace") && m.contains_key("pkg.torch.onnx.fx_node"), "{m:?}");
                checked += 1;
            }
        }
    }
    assert!(checked > 0);
}
