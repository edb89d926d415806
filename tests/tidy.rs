//! Tidy checks on the source tree: ARCHITECTURE.md's code map names every module and translation
//! file, macro bodies (which rustfmt skips) keep to the configured width, translations use only the
//! public DSL, and the crate's `use` graph keeps ARCHITECTURE.md's layers (no upward arrow, no circle).

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

// ---- Layers: the crate's `use` graph points down and has no circle. ----

/// Top-level modules whose submodules must not form circles among themselves either.
const SPLIT: &[&str] = &["onnx", "optimize", "translate"];

/// The layers, lowest first, as ARCHITECTURE.md's `## Layers` section lists them (one numbered
/// line per layer naming its modules in backticks): the one place the order is written down.
fn layers() -> Vec<Vec<String>> {
    layers_of("Layers")
}

/// The layers a `## {title}` section of ARCHITECTURE.md lists, lowest first.
fn layers_of(title: &str) -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(root().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let heading = format!("\n## {title}\n");
    let start = text.find(&heading).unwrap_or_else(|| panic!("ARCHITECTURE.md has a `## {title}` section"));
    let section = &text[start + 1..];
    let end = section[3..].find("\n## ").map_or(section.len(), |i| i + 3);
    section[..end]
        .lines()
        .filter(|l| l.split_once(". ").is_some_and(|(n, _)| n.chars().all(|c| c.is_ascii_digit()) && !n.is_empty()))
        .map(|l| {
            // The modules are the backticked names before the first colon.
            let head = l.split(':').next().unwrap_or(l);
            head.split('`').skip(1).step_by(2).map(str::to_string).collect()
        })
        .collect()
}

/// The module path of a file of the library (`src/onnx/ir/mod.rs` → `onnx::ir`; translations/ is
/// mounted as `translations`).
fn module_of(file: &str) -> Vec<String> {
    let (base, rest) = match file.strip_prefix("translations/") {
        Some(rest) => (vec!["translations".to_string()], rest),
        None => (Vec::new(), file.strip_prefix("src/").expect("a file under src/")),
    };
    let mut parts = base;
    parts.extend(rest.trim_end_matches(".rs").split('/').map(str::to_string));
    if parts.last().is_some_and(|l| l == "mod" || l == "lib") {
        parts.pop();
    }
    parts
}

/// `text` split into code (comments removed, the contents of string and char literals blanked,
/// lines kept) and its string literals with their line numbers.
fn scan(text: &str) -> (String, Vec<(usize, String)>) {
    let b: Vec<char> = text.chars().collect();
    let (mut code, mut strings) = (String::with_capacity(text.len()), Vec::new());
    let (mut i, mut line) = (0, 1);
    // Copies the newlines of b[from..to] into the code, so that its lines stay the text's.
    let newlines = |code: &mut String, line: &mut usize, from: usize, to: usize| {
        for _ in b[from..to.min(b.len())].iter().filter(|&&c| c == '\n') {
            code.push('\n');
            *line += 1;
        }
    };
    while i < b.len() {
        let c = b[i];
        let after_ident = i > 0 && (b[i - 1].is_alphanumeric() || b[i - 1] == '_');
        if c == '/' && b.get(i + 1) == Some(&'/') {
            while i < b.len() && b[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && b.get(i + 1) == Some(&'*') {
            let end = (i + 2..b.len().saturating_sub(1)).find(|&j| b[j] == '*' && b[j + 1] == '/').unwrap_or(b.len());
            newlines(&mut code, &mut line, i, end);
            i = end + 2;
        } else if c == 'r' && !after_ident && matches!(b.get(i + 1), Some('#') | Some('"')) {
            // A raw string `r#"..."#`: it ends at a quote followed by as many hashes.
            let hashes = b[i + 1..].iter().take_while(|&&c| c == '#').count();
            if b.get(i + 1 + hashes) != Some(&'"') {
                code.push(c);
                i += 1;
                continue;
            }
            let start = i + 2 + hashes;
            let close: String = std::iter::once('"').chain(std::iter::repeat_n('#', hashes)).collect();
            let close: Vec<char> = close.chars().collect();
            let end = (start..b.len()).find(|&j| b[j..].starts_with(&close)).unwrap_or(b.len());
            strings.push((line, b[start..end].iter().collect()));
            newlines(&mut code, &mut line, start, end);
            code.push_str("\"\"");
            i = end + close.len();
        } else if c == '"' {
            let mut j = i + 1;
            while j < b.len() && b[j] != '"' {
                j += if b[j] == '\\' { 2 } else { 1 };
            }
            strings.push((line, b[i + 1..j.min(b.len())].iter().collect()));
            newlines(&mut code, &mut line, i, j);
            code.push_str("\"\"");
            i = j + 1;
        } else if c == '\'' && b.get(i + 1) == Some(&'\\') {
            // An escaped char literal (`'\''`, `'\u{2014}'`).
            let end = (i + 3..b.len()).find(|&j| b[j] == '\'').unwrap_or(b.len());
            code.push_str("' '");
            i = end + 1;
        } else if c == '\'' && b.get(i + 2) == Some(&'\'') {
            code.push_str("' '");
            i += 3;
        } else {
            if c == '\n' {
                line += 1;
            }
            code.push(c);
            i += 1;
        }
    }
    (code, strings)
}

/// `text` without comments, string and char literals (their contents blanked, lines kept).
fn blank_literals(text: &str) -> String {
    scan(text).0
}

/// Which lines of `blanked` (see [`blank_literals`]) are inside a `#[cfg(test)] mod name { ... }`
/// block, found by brace depth.
fn test_lines(blanked: &str) -> Vec<bool> {
    let lines: Vec<&str> = blanked.lines().collect();
    let mut test = vec![false; lines.len()];
    let mut i = 0;
    while i < lines.len() {
        let opens = lines.get(i + 1).is_some_and(|n| n.trim_start().starts_with("mod ") && n.ends_with('{'));
        if lines[i].trim() == "#[cfg(test)]" && opens {
            let mut depth = 0i32;
            test[i] = true;
            i += 1;
            while i < lines.len() {
                depth += lines[i].matches('{').count() as i32 - lines[i].matches('}').count() as i32;
                test[i] = true;
                i += 1;
                if depth <= 0 {
                    break;
                }
            }
            continue;
        }
        i += 1;
    }
    test
}

/// `text` without comments, string and char literals (their contents blanked, lines kept), and
/// without `#[cfg(test)]` modules: test code may reach any layer.
fn code_only(text: &str) -> String {
    let blanked = blank_literals(text);
    let test = test_lines(&blanked);
    let mut kept = String::with_capacity(blanked.len());
    for (line, t) in blanked.lines().zip(test) {
        if !t {
            kept.push_str(line);
        }
        kept.push('\n');
    }
    kept
}

/// Expand a use-tree `a::b::{c, d::{e}}` (starting right after `head::`) into its paths, each cut
/// at its first three segments.
fn use_paths(s: &str) -> Vec<Vec<String>> {
    fn tree(s: &str, prefix: Vec<String>, out: &mut Vec<Vec<String>>) -> usize {
        let mut path = prefix;
        let mut i = 0;
        let b = s.as_bytes();
        loop {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            if i > start {
                path.push(s[start..i].to_string());
            }
            if s[i..].starts_with("::") {
                i += 2;
                continue;
            }
            let rest = s[i..].trim_start();
            if rest.starts_with('{') {
                i = s.len() - rest.len() + 1;
                loop {
                    let r = s[i..].trim_start();
                    i = s.len() - r.len();
                    if r.starts_with('}') {
                        return i + 1;
                    }
                    if r.starts_with(',') {
                        i += 1;
                        continue;
                    }
                    let used = tree(&s[i..], path.clone(), out);
                    if used == 0 {
                        return i;
                    }
                    i += used;
                }
            }
            if !path.is_empty() {
                out.push(path.into_iter().take(3).collect());
            }
            // Skip `as name` and stop at the end of this item.
            let end = s[i..].find([',', '}', ';', '(', ')', '<', '>', '|', '!', ' ', '\n', '.', '&', '=', '[', ']']);
            let mut j = i + end.unwrap_or(s.len() - i);
            if s[j..].starts_with(" as ") {
                j += 4;
                while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_') {
                    j += 1;
                }
            }
            return j.max(1);
        }
    }
    let mut out = Vec::new();
    tree(s, Vec::new(), &mut out);
    out
}

/// One arrow of the `use` graph: the module that uses, the module used, where.
struct Arrow {
    from: Vec<String>,
    to: Vec<String>,
    at: String,
}

/// Every `crate::`, `super::` and `self::` path of the library's files (the binary's `main.rs` and
/// `allocator.rs` use only the library's public API), resolved to the module it names.
fn arrows() -> Vec<Arrow> {
    let files: Vec<String> = rust_files("src")
        .into_iter()
        .chain(rust_files("translations"))
        .filter(|f| !["src/main.rs", "src/allocator.rs"].contains(&f.as_str()))
        .filter(|f| !f.ends_with("/tests.rs") && !f.ends_with("/testing.rs"))
        .collect();
    let modules: Vec<Vec<String>> = files.iter().map(|f| module_of(f)).collect();
    // Items the crate root re-exports (`crate::Error`) and `#[macro_export]` macros (`crate::bail`).
    let mut root_items: Vec<(String, Vec<String>)> = Vec::new();
    let lib = code_only(&std::fs::read_to_string(root().join("src/lib.rs")).expect("lib.rs"));
    for stmt in lib.split(';') {
        if let Some(tree) = stmt.trim().strip_prefix("pub use ") {
            for p in use_paths(tree) {
                if let Some(name) =
                    tree.contains('{').then(|| p.last().cloned()).flatten().or_else(|| p.last().cloned())
                {
                    root_items.push((name, p));
                }
            }
        }
    }
    for (file, module) in files.iter().zip(&modules) {
        let text = std::fs::read_to_string(root().join(file)).expect("read");
        for line in text.lines() {
            if let Some(name) = line.trim().strip_prefix("macro_rules! ") {
                root_items.push((name.trim_end_matches(" {").to_string(), module.clone()));
            }
        }
    }
    let is_module = |p: &[String]| modules.iter().any(|m| m.starts_with(p));
    let mut out = Vec::new();
    for (file, file_module) in files.iter().zip(&modules) {
        let text = code_only(&std::fs::read_to_string(root().join(file)).expect("read"));
        // Inline `mod name { ... }` blocks: (name, brace depth outside it), by line.
        let mut inline: Vec<(String, i32)> = Vec::new();
        let mut depth = 0i32;
        let mut module_at_line: Vec<Vec<String>> = Vec::new();
        for line in text.lines() {
            let mut m = file_module.clone();
            m.extend(inline.iter().map(|(n, _)| n.clone()));
            module_at_line.push(m);
            let t = line.trim_start().trim_start_matches("pub(crate) ").trim_start_matches("pub ");
            if let Some(name) = t.strip_prefix("mod ").and_then(|r| r.strip_suffix(" {")) {
                inline.push((name.to_string(), depth));
            }
            depth += line.matches('{').count() as i32 - line.matches('}').count() as i32;
            while inline.last().is_some_and(|&(_, d)| depth <= d) {
                inline.pop();
            }
        }
        for head in ["crate::", "super::", "self::"] {
            for (at, _) in text.match_indices(head) {
                if text[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == '$' || c == ':') {
                    continue;
                }
                let line = text[..at].matches('\n').count() + 1;
                let module = &module_at_line[line - 1];
                let rest = &text[at + head.len()..];
                let mut base: Vec<String> = match head {
                    "crate::" => Vec::new(),
                    "self::" => module.clone(),
                    _ => module[..module.len().saturating_sub(1)].to_vec(),
                };
                for mut p in use_paths(rest) {
                    while head == "super::" && p.first().is_some_and(|s| s == "super") {
                        p.remove(0);
                        base.pop();
                    }
                    let mut to = base.clone();
                    to.extend(p);
                    if head == "crate::" && !to.is_empty() && !is_module(&to[..1]) {
                        match root_items.iter().find(|(n, _)| *n == to[0]) {
                            Some((_, p)) => to = p.clone(),
                            None => continue,
                        }
                    }
                    // Cut at the deepest module the path names.
                    while !to.is_empty() && !is_module(&to) {
                        to.pop();
                    }
                    out.push(Arrow { from: module.clone(), to, at: format!("{file}:{line}") });
                }
            }
        }
    }
    out
}

/// The unit of a module at a level: its top-level module, or for a module under one of [`SPLIT`],
/// its submodule there (`None` for the parent's own items).
fn unit(m: &[String], split: bool) -> Option<String> {
    if !split {
        return Some(m.first().cloned().unwrap_or_else(|| "lib".to_string()));
    }
    match m {
        [top, sub, ..] if SPLIT.contains(&top.as_str()) => Some(format!("{top}::{sub}")),
        _ => None,
    }
}

/// Arrows between different units that take part in a circle, each with where it is written.
fn circles(arrows: &[(String, String, String)]) -> Vec<String> {
    let reaches = |from: &str, to: &str| {
        let mut seen = vec![from.to_string()];
        let mut todo = vec![from.to_string()];
        while let Some(a) = todo.pop() {
            if a == to {
                return true;
            }
            for (f, t, _) in arrows {
                if *f == a && !seen.contains(t) {
                    seen.push(t.clone());
                    todo.push(t.clone());
                }
            }
        }
        false
    };
    // One line per pair of modules: the first place it is written, and how many there are.
    let mut found: Vec<(String, String, Vec<String>)> = Vec::new();
    for (f, t, at) in arrows.iter().filter(|(f, t, _)| reaches(t, f)) {
        match found.iter_mut().find(|(ff, tt, _)| ff == f && tt == t) {
            Some((_, _, ats)) => ats.push(at.clone()),
            None => found.push((f.clone(), t.clone(), vec![at.clone()])),
        }
    }
    let mut lines: Vec<String> =
        found.into_iter().map(|(f, t, ats)| format!("{f} → {t} ({}; {} in all)", ats[0], ats.len())).collect();
    lines.sort();
    lines
}

#[test]
fn the_use_graph_points_down_and_has_no_circle() {
    let layers = layers();
    assert!(layers.len() > 3, "ARCHITECTURE.md's `## Layers` lists too few layers: {layers:?}");
    let layer = |m: &str| layers.iter().position(|l| l.iter().any(|x| x == m));
    let arrows = arrows();
    assert!(arrows.len() > 100, "the parse found only {} arrows", arrows.len());
    let mut top = Vec::new();
    let mut subs = Vec::new();
    for a in &arrows {
        if let (Some(f), Some(t)) = (unit(&a.from, false), unit(&a.to, false)) {
            if f != t {
                top.push((f, t, a.at.clone()));
            }
        }
        if let (Some(f), Some(t)) = (unit(&a.from, true), unit(&a.to, true)) {
            if f != t && f.split("::").next() == t.split("::").next() {
                subs.push((f, t, a.at.clone()));
            }
        }
    }
    let mut problems = Vec::new();
    let mut unplaced: Vec<String> =
        top.iter().flat_map(|(f, t, _)| [f, t]).filter(|m| layer(m).is_none()).cloned().collect();
    unplaced.sort();
    unplaced.dedup();
    for m in unplaced {
        problems.push(format!("module `{m}` is in no layer of ARCHITECTURE.md's `## Layers`"));
    }
    for (f, t, at) in &top {
        if let (Some(lf), Some(lt)) = (layer(f), layer(t)) {
            if lt > lf {
                problems.push(format!("upward arrow: {f} (layer {}) uses {t} (layer {}) at {at}", lf + 1, lt + 1));
            }
        }
    }
    problems.extend(circles(&top).into_iter().map(|c| format!("circle between top-level modules: {c}")));
    problems.extend(circles(&subs).into_iter().map(|c| format!("circle between submodules: {c}")));
    assert!(
        problems.is_empty(),
        "the crate's `use` graph breaks ARCHITECTURE.md's layer rules (move the shared item down into the lowest \
         layer that uses it):\n{}",
        problems.join("\n")
    );
}

/// Modules of the library name the module that defines what they use (`crate::optimize::Target`),
/// not the crate root's re-export of it (`crate::Target`): a path through the root hides the arrow
/// the layer test checks. The CLI is exempt: a front end over the public API, it uses it as a user
/// of the crate would.
#[test]
fn library_modules_name_the_defining_module_not_the_crate_root() {
    let lib = code_only(&std::fs::read_to_string(root().join("src/lib.rs")).expect("lib.rs"));
    let mut reexported: Vec<String> = Vec::new();
    for stmt in lib.split(';') {
        // The root's own re-exports (those inside `internals` name `crate::`).
        if let Some(tree) = stmt.trim().strip_prefix("pub use ").filter(|t| !t.starts_with("crate::")) {
            reexported.extend(use_paths(tree).into_iter().filter_map(|p| p.last().cloned()));
        }
    }
    assert!(reexported.iter().any(|n| n == "Target"), "lib.rs's re-exports not read: {reexported:?}");
    let exempt = ["src/lib.rs", "src/cli.rs", "src/main.rs", "src/allocator.rs"];
    let mut found = Vec::new();
    for file in rust_files("src").into_iter().chain(rust_files("translations")) {
        if exempt.contains(&file.as_str()) || file.ends_with("/tests.rs") || file.ends_with("/testing.rs") {
            continue;
        }
        let code = code_only(&std::fs::read_to_string(root().join(&file)).expect("read"));
        for (line, path) in crate_paths(&code) {
            let first = path.split("::").next().unwrap_or("");
            if reexported.iter().any(|n| n == first) {
                found.push(format!("{file}:{line}: crate::{path}"));
            }
        }
    }
    assert!(
        found.is_empty(),
        "paths through the crate root's re-exports (name the module that defines the item):\n{}",
        found.join("\n")
    );
}

/// The parser behind the layer test finds what it must: paths in use-trees, through `super::`,
/// and not in comments, strings or test modules.
#[test]
fn the_layer_parse_reads_use_trees() {
    assert_eq!(
        use_paths("onnx::{ir::{DType, Value}, save}, fx};"),
        vec![vec!["onnx", "ir", "DType"], vec!["onnx", "ir", "Value"], vec!["onnx", "save"]]
    );
    assert_eq!(use_paths("pt2::schema::Argument::Tensor(t)) =>"), vec![vec!["pt2", "schema", "Argument"]]);
    let code = code_only(
        "use a; // crate::x\nlet s = \"crate::y\";\n#[cfg(test)]\nmod tests {\n    use crate::z;\n}\nuse b;\n",
    );
    assert!(!code.contains("crate::"), "{code}");
    assert!(code.contains("use b;") && code.lines().count() == 7, "{code}");
    let arrows = arrows();
    assert!(
        arrows.iter().any(|a| a.at.starts_with("src/onnx/ir/derived/mod.rs") && a.to == ["onnx", "ir"]),
        "`use super::{{DType, TensorData}}` in onnx/ir/derived resolves to onnx::ir"
    );
}

// ---- The Python package's imports: the same layer rules over python/fxonnx/. ----

/// `text` (Python) with comments removed and the contents of string literals blanked, lines kept.
fn python_code(text: &str) -> String {
    let b: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == '#' {
            while i < b.len() && b[i] != '\n' {
                i += 1;
            }
        } else if c == '"' || c == '\'' {
            let triple = i + 2 < b.len() && b[i + 1] == c && b[i + 2] == c;
            let quote = if triple { 3 } else { 1 };
            i += quote;
            while i < b.len() {
                if b[i] == '\\' {
                    i += 2;
                    continue;
                }
                if b[i] == c && (!triple || (i + 2 < b.len() && b[i + 1] == c && b[i + 2] == c)) {
                    i += quote;
                    break;
                }
                if b[i] == '\n' {
                    out.push('\n');
                }
                i += 1;
            }
            out.push_str("\"\"");
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// The package modules one Python file imports, with their line numbers: `from . import a, b`,
/// `from .a import x`, `from fxonnx.a import x`, `from fxonnx import a`, `import fxonnx.a`, at any
/// indentation (imports inside functions count).
fn python_imports(text: &str) -> Vec<(usize, String)> {
    let code = python_code(text);
    let lines: Vec<&str> = code.lines().collect();
    let mut out = Vec::new();
    let names = |list: &str| -> Vec<String> {
        list.split(',')
            .map(|n| n.split(" as ").next().unwrap_or("").trim().trim_matches(|c| c == '(' || c == ')').trim())
            .filter(|n| !n.is_empty())
            .map(str::to_string)
            .collect()
    };
    for (i, raw) in lines.iter().enumerate() {
        let line = raw.trim();
        let mut found = Vec::new();
        if let Some(rest) = line.strip_prefix("from ") {
            let Some((source, list)) = rest.split_once(" import ") else { continue };
            let mut list = list.to_string();
            // A parenthesized list may run over several lines.
            let mut j = i;
            while list.contains('(') && !list.contains(')') && j + 1 < lines.len() {
                j += 1;
                list.push_str(lines[j]);
            }
            let source = source.trim();
            if source == "." || source == "fxonnx" {
                found = names(&list);
            } else if let Some(m) = source.strip_prefix('.').or_else(|| source.strip_prefix("fxonnx.")) {
                found.push(m.split('.').next().unwrap_or(m).to_string());
            }
        } else if let Some(rest) = line.strip_prefix("import ") {
            for n in names(rest) {
                if let Some(m) = n.strip_prefix("fxonnx.") {
                    found.push(m.split('.').next().unwrap_or(m).to_string());
                }
            }
        }
        out.extend(found.into_iter().map(|m| (i + 1, m)));
    }
    out
}

#[test]
fn the_python_import_graph_points_down_and_has_no_circle() {
    let layers = layers_of("Python layers");
    let layer = |m: &str| layers.iter().position(|l| l.iter().any(|x| x == m));
    let dir = root().join("python/fxonnx");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("python/fxonnx")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "py"))
        .collect();
    files.sort();
    let mut arrows = Vec::new();
    let mut problems = Vec::new();
    for path in &files {
        let from = path.file_stem().and_then(|s| s.to_str()).expect("a UTF-8 name").to_string();
        if layer(&from).is_none() {
            problems.push(format!("module `{from}` is in no layer of ARCHITECTURE.md's `## Python layers`"));
        }
        let text = std::fs::read_to_string(path).expect("a Python file");
        for (line, to) in python_imports(&text) {
            if to != from {
                arrows.push((from.clone(), to, format!("python/fxonnx/{from}.py:{line}")));
            }
        }
    }
    assert!(
        arrows.iter().any(|(f, t, _)| f == "_api" && t == "_torch"),
        "the parse missed `from . import _torch` inside a function of _api.py: {arrows:?}"
    );
    for (f, t, at) in &arrows {
        match (layer(f), layer(t)) {
            (Some(lf), Some(lt)) if lt > lf => {
                problems.push(format!("upward import: {f} (layer {}) imports {t} (layer {}) at {at}", lf + 1, lt + 1))
            }
            (_, None) => problems.push(format!("`{t}`, imported at {at}, is in no layer of `## Python layers`")),
            _ => {}
        }
    }
    problems.extend(circles(&arrows).into_iter().map(|c| format!("circle: {c}")));
    assert!(
        problems.is_empty(),
        "python/fxonnx's imports break ARCHITECTURE.md's `## Python layers`:\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_python_import_parse_reads_every_form() {
    let text = "\"\"\"Doc.\n\n    import fxonnx.doc\n\"\"\"\nfrom . import _a, _b as b\nfrom ._c import x  # from . import _z\n\
                def f():\n    from fxonnx._d import (\n        y,\n    )\n    import fxonnx._e\n    s = 'from . import _q'\n\
                from . import (\n    _f,\n    _g,\n)\n";
    let found: Vec<String> = python_imports(text).into_iter().map(|(_, m)| m).collect();
    assert_eq!(found, ["_a", "_b", "_c", "_d", "_e", "_f", "_g"]);
}

// ---- ONNX operator names: one table, no hand-written lists elsewhere. ----

/// The string literals of `text` outside comments, with their line numbers.
fn string_literals(text: &str) -> Vec<(usize, String)> {
    scan(text).1
}

/// Every default-domain ONNX operator name, from the generated table (`OPERATORS`).
fn onnx_operator_names() -> Vec<String> {
    let schema = std::fs::read_to_string(root().join("src/onnx/operators/onnx_schemas.rs")).expect("onnx_schemas.rs");
    let line = schema.lines().find(|l| l.contains("OPERATORS: &[&str]")).expect("onnx_schemas.rs lists OPERATORS");
    let list = &line[line.find("= &[").expect("a list")..];
    string_literals(list).into_iter().map(|(_, s)| s).collect()
}

/// Where a string literal may be an ONNX operator's name: the operator table, the generated
/// builder, the translations that emit operators, and the few places listed with their reason.
/// `None` allows every name; otherwise only the names given.
const OPERATOR_NAMES_ALLOWED: &[(&str, Option<&[&str]>, &str)] = &[
    ("src/onnx/operators/", None, "the operator table"),
    ("src/onnx/ops.rs", None, "the builder's typed methods, generated from the schemas"),
    ("translations/", None, "translations emit operators"),
    ("src/optimize/egraph/rules/", None, "each e-graph rule names the operators it matches and builds"),
    (
        "src/optimize/random.rs",
        None,
        "the property test's generator: random graphs of the operators translations emit, each named as it is built",
    ),
    ("src/onnx/functions.rs", Some(&["Constant"]), "a function body's constants become Constant nodes"),
    ("src/onnx/ir/mod.rs", Some(&["Identity"]), "`Node::identity`, which splices and outputs use"),
    ("src/optimize/gemm.rs", Some(&["Gemm", "Transpose"]), "the pass's own pattern: a Transpose feeding a Gemm"),
    (
        "src/optimize/heads.rs",
        Some(&["Attention", "Reshape", "RotaryEmbedding", "Transpose"]),
        "the pass's own pattern: Transposes to heads-first and back around an Attention and its rotations",
    ),
    (
        "src/optimize/quantize.rs",
        Some(&["MatMul", "Gemm", "Split", "Transpose"]),
        "the pass's own patterns, a MatMul or Gemm by a constant weight (or a Transpose of one), and the Split of \
         products packed into one",
    ),
    (
        "src/sym.rs",
        Some(&["Add", "And", "Identity", "Max", "Min", "Mod", "Mul", "Not", "Or", "Pow", "Where"]),
        "sympy's function names in `srepr` text, spelt like some ONNX operators",
    ),
];

/// No hand-written list of ONNX operator names outside the operator table (`src/onnx/operators/`):
/// a string literal that is an operator's name appears only where `OPERATOR_NAMES_ALLOWED` says.
/// Test code is exempt.
#[test]
fn onnx_operator_names_are_written_only_in_the_operator_table() {
    let names = onnx_operator_names();
    assert!(names.len() > 150 && names.iter().any(|n| n == "Reshape"), "OPERATORS not read: {names:?}");
    let mut found = Vec::new();
    let files = rust_files("src").into_iter().chain(rust_files("translations"));
    for file in files.filter(|f| !f.ends_with("/tests.rs") && !f.ends_with("/testing.rs")) {
        let text = std::fs::read_to_string(root().join(&file)).expect("read");
        let test = test_lines(&blank_literals(&text));
        for (line, s) in string_literals(&text) {
            if !names.contains(&s) || test.get(line - 1).copied().unwrap_or(false) {
                continue;
            }
            let allowed = OPERATOR_NAMES_ALLOWED
                .iter()
                .any(|(path, only, _)| file.starts_with(path) && only.is_none_or(|o| o.contains(&s.as_str())));
            if !allowed {
                found.push(format!("{file}:{line}: \"{s}\""));
            }
        }
    }
    assert!(
        found.is_empty(),
        "ONNX operator names written outside the operator table (read the fact from `onnx::operators`, or add \
         the place to OPERATOR_NAMES_ALLOWED with its reason):\n{}",
        found.join("\n")
    );
}

/// The scan finds an operator name in code, not in comments or test modules.
#[test]
fn the_operator_name_scan_reads_literals() {
    let text = "let a = \"Reshape\"; // \"Gemm\"\nlet c = '\"';\nlet b = \"x\\\"y\";\nlet r = r#\"a\"b\"#; /* \"Mul\" */ \"Add\"";
    let lits: Vec<(usize, String)> = string_literals(text);
    let want = [(1, "Reshape"), (3, "x\\\"y"), (4, "a\"b"), (4, "Add")];
    assert_eq!(lits, want.map(|(l, s)| (l, s.to_string())));
    assert_eq!(blank_literals(text).lines().count(), 4);
    let t = test_lines(&blank_literals("fn f() {}\n#[cfg(test)]\nmod tests {\n    \"Reshape\";\n}\nfn g() {}\n"));
    assert_eq!(t, [false, true, true, true, true, false]);
}

/// The Python binding is a front end like the CLI: it reaches the library through its public API
/// only, never `fxonnx::internals` (the hidden bucket for fxonnx's own tests and benches).
#[test]
fn the_python_binding_uses_only_the_public_api() {
    let dir = root().join("python/src");
    let mut uses = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("python/src") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&path).expect("a Rust file");
            let code = code_only(&text);
            for (i, line) in code.lines().enumerate() {
                if line.contains("internals") {
                    uses.push(format!("{}:{}: {}", path.display(), i + 1, line.trim()));
                }
            }
        }
    }
    assert!(uses.is_empty(), "the Python binding uses fxonnx::internals:\n{}", uses.join("\n"));
}
