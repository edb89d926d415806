//! The built-in table against torch's schemas: every parameter a translation reads must exist under
//! that name in the overloads it is registered for (the archive names arguments by schema name), and
//! every registered ATen overload must exist in torch 2.15.

use fxonnx::translate::schemas::{arg_names, schema};

#[test]
fn parameter_names_match_the_aten_schemas() {
    let table = fxonnx::translations::default_table();
    let mut problems = Vec::new();
    for key in table.keys() {
        if !(key.starts_with("aten::") || key.starts_with("prims::")) {
            continue; // Python callables and higher-order ops have no schema.
        }
        let Some(line) = schema(key) else {
            problems.push(format!("{key}: no such overload in torch 2.15"));
            continue;
        };
        let names = arg_names(line);
        let entry = table.get(key).expect("listed key");
        for (param, optional) in (entry.params)() {
            if !names.contains(&param) && !optional {
                problems.push(format!("{key}: `{}` reads required `{param}`, schema is {line}", entry.name));
            }
        }
    }
    // Optional parameters must still be spelled like some overload the function serves.
    let mut spelled: std::collections::HashMap<&str, Vec<&str>> = Default::default();
    for key in table.keys() {
        if let Some(line) = schema(key) {
            let entry = table.get(key).expect("key");
            spelled.entry(entry.name).or_default().extend(arg_names(line));
        }
    }
    for key in table.keys() {
        let entry = table.get(key).expect("key");
        if let Some(known) = spelled.get(entry.name) {
            for (param, _) in (entry.params)() {
                if !known.contains(&param) {
                    problems.push(format!("`{}` reads `{param}`, which none of its overloads has", entry.name));
                }
            }
        }
    }
    problems.sort();
    problems.dedup();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Every target is registered by exactly one file: a second registration would silently win.
#[test]
fn no_target_is_registered_twice() {
    use fxonnx::translations as t;
    let tables = [
        ("activation", t::activation::table()),
        ("control_flow", t::control_flow::table()),
        ("creation", t::creation::table()),
        ("decompositions", t::decompositions::table()),
        ("elementwise", t::elementwise::table()),
        ("indexing", t::indexing::table()),
        ("linalg", t::linalg::table()),
        ("loss", t::loss::table()),
        ("math", t::math::table()),
        ("nn", t::nn::table()),
        ("operator", t::operator::table()),
        ("pooling", t::pooling::table()),
        ("reduction", t::reduction::table()),
        ("shape", t::shape::table()),
        ("sorting", t::sorting::table()),
        ("special", t::special::table()),
    ];
    let mut seen: std::collections::HashMap<String, &str> = Default::default();
    let mut dups = Vec::new();
    let mut total = 0;
    for (file, table) in &tables {
        for key in table.keys() {
            total += 1;
            if let Some(other) = seen.insert(key.to_string(), file) {
                dups.push(format!("{key}: {other}.rs and {file}.rs"));
            }
        }
    }
    assert!(dups.is_empty(), "{}", dups.join("\n"));
    // Every file is listed above.
    assert_eq!(total, fxonnx::translations::default_table().len(), "a translation file is missing from this test");
}
