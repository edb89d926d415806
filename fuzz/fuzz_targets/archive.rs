//! Any bytes as a .pt2 archive (seeds: the fixtures).
#![no_main]

#[path = "common.rs"]
mod common;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    common::export_and_check(data.to_vec());
});
