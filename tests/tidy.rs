//! Tidy checks on the source tree: ARCHITECTURE.md's code map names every module and translation
//! file, and macro bodies (which rustfmt skips) keep to the configured width.

use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Every `.rs` file under `dir`, relative to the repository root, with `/` separators.
fn rust_files(dir: &str) -> Vec<String> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).expect("read_dir") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    walk(&root().join(dir), &mut files);
    let mut files: Vec<String> = files
        .iter()
        .map(|p| p.strip_prefix(root()).expect("under root").to_string_lossy().replace('\\', "/"))
        .collect();
    files.sort();
    files
}

/// The code map's rows: (path in the first cell, the whole row).
fn code_map() -> Vec<(String, String)> {
    let text = std::fs::read_to_string(root().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let start = text.find("## Code map").expect("ARCHITECTURE.md has a `## Code map` section");
    let section = &text[start..];
    let end = section[3..].find("\n## ").map_or(section.len(), |i| i + 3);
    section[..end]
        .lines()
        .filter(|l| l.starts_with("| `"))
        .filter_map(|l| {
            let cell = l.split('|').nth(1)?.trim();
            Some((cell.trim_matches('`').to_string(), l.to_string()))
        })
        .collect()
}

/// A file is on the map when a row is its path, or when the row of its folder names it
/// (`encode.rs`); a folder's `mod.rs` is its folder's row.
fn on_map(file: &str, rows: &[(String, String)]) -> bool {
    let (folder, name) = file.rsplit_once('/').expect("a path under a folder");
    rows.iter().any(|(path, row)| {
        path == file
            || (path.trim_end_matches('/') == folder
                && (name == "mod.rs"
                    || row.contains(&format!("`{name}`"))
                    || row.contains(&format!("{folder}/{name}"))))
    })
}

#[test]
fn architecture_code_map_names_every_module() {
    let rows = code_map();
    assert!(!rows.is_empty(), "the code map has no rows");
    let missing: Vec<String> = ["src", "translations"]
        .iter()
        .flat_map(|dir| rust_files(dir))
        .filter(|f| f != "src/lib.rs" && !f.ends_with("/tests.rs"))
        .filter(|f| !on_map(f, &rows))
        .collect();
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md's code map does not name these files (add a row, or name the file in its folder's row):\n{}",
        missing.join("\n")
    );
}

#[test]
fn code_map_names_only_files_that_exist() {
    for (path, _) in code_map() {
        assert!(root().join(&path).exists(), "ARCHITECTURE.md's code map names {path}, which does not exist");
    }
}

/// rustfmt does not format macro bodies (`translations! { ... }`): their lines are wrapped by hand.
#[test]
fn translation_lines_fit_the_configured_width() {
    let config = std::fs::read_to_string(root().join("rustfmt.toml")).expect("rustfmt.toml");
    let width: usize = config
        .lines()
        .find_map(|l| l.strip_prefix("max_width"))
        .and_then(|v| v.trim_start_matches([' ', '=']).trim().parse().ok())
        .expect("max_width in rustfmt.toml");
    let mut long = Vec::new();
    for file in rust_files("translations") {
        let text = std::fs::read_to_string(root().join(&file)).expect("read");
        for (i, line) in text.lines().enumerate() {
            if line.chars().count() > width {
                long.push(format!("{file}:{}: {} columns", i + 1, line.chars().count()));
            }
        }
    }
    assert!(long.is_empty(), "lines wider than {width} columns:\n{}", long.join("\n"));
}

/// The `crate::` paths in `text` (not `$crate::`), each as the path that follows `crate::`.
fn crate_paths(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        let mut offset = 0;
        while let Some(at) = rest.find("crate::") {
            let before = code[..offset + at].chars().next_back();
            let path: String = rest[at + "crate::".len()..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':' || *c == '{')
                .collect();
            if !before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$') {
                out.push((i + 1, path));
            }
            offset += at + "crate::".len();
            rest = &code[offset..];
        }
    }
    out
}

/// Built-in translations are written as a user's table is: with the public DSL
/// (`translate::prelude`) and their own sibling modules (`crate::translations`, which is also the
/// `translations!` macro), nothing else of the crate.
#[test]
fn translations_use_only_the_public_dsl() {
    let mut bad = Vec::new();
    for file in rust_files("translations") {
        let text = std::fs::read_to_string(root().join(&file)).expect("read");
        for (line, path) in crate_paths(&text) {
            let allowed =
                path.starts_with("translate::prelude") || path == "translations" || path.starts_with("translations::");
            if !allowed {
                bad.push(format!("{file}:{line}: crate::{path}"));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "translations/ may use only `crate::translate::prelude` and its own modules (re-export what a \
         translation needs from the prelude, which users' tables use too):\n{}",
        bad.join("\n")
    );
}
