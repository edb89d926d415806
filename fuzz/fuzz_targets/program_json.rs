//! Any bytes as the program JSON (`models/model.json`) of a fixture; the first byte picks it.
#![no_main]

#[path = "common.rs"]
mod common;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Some((&pick, json)) = data.split_first() else { return };
    let mut entries = common::entries(common::FIXTURES[pick as usize % common::FIXTURES.len()]);
    for (name, bytes) in &mut entries {
        if name.ends_with("models/model.json") {
            *bytes = json.to_vec();
        }
    }
    common::export_and_check(common::archive(&entries));
});
