//! torch 2.15's ATen and prims operator schemas (`aten_schemas.txt`, embedded), for argument
//! names, documentation and the skeletons the error messages suggest.

use std::sync::OnceLock;

use crate::hash::FxHashMap;

const SCHEMAS: &str = include_str!("aten_schemas.txt");

fn index() -> &'static FxHashMap<String, &'static str> {
    static INDEX: OnceLock<FxHashMap<String, &'static str>> = OnceLock::new();
    INDEX.get_or_init(|| {
        let mut map = FxHashMap::default();
        for line in SCHEMAS.lines().filter(|l| !l.starts_with('#') && !l.is_empty()) {
            let Some(paren) = line.find('(') else { continue };
            let name = &line[..paren];
            // Table keys name the default overload explicitly: `aten::relu.default`.
            let key = if name.split_once("::").is_some_and(|(_, op)| op.contains('.')) {
                name.to_string()
            } else {
                format!("{name}.default")
            };
            map.insert(key, line);
        }
        map
    })
}

/// The schema line of a table key (`aten::add.Tensor`), if torch 2.15 has that overload.
pub fn schema(key: &str) -> Option<&'static str> {
    index().get(key).copied()
}

/// The keys of every overload of `op` (`aten::div` → `aten::div.Tensor`, `aten::div.Scalar`, ...),
/// sorted.
pub fn overloads(op: &str) -> impl Iterator<Item = &'static str> {
    let prefix = format!("{op}.");
    let mut keys: Vec<&'static str> = index()
        .keys()
        .filter(|k| k.starts_with(&prefix) && !k[prefix.len()..].contains('.'))
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    keys.into_iter()
}

/// The argument names of a schema line, in order (`self`, `other`, `alpha`).
pub fn arg_names(schema: &str) -> Vec<&str> {
    let Some(open) = schema.find('(') else { return vec![] };
    // The argument list ends at the parenthesis that closes the first one.
    let mut depth = 0usize;
    let mut end = schema.len();
    for (i, c) in schema[open..].char_indices() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => {
                depth -= 1;
                if depth == 0 {
                    end = open + i;
                    break;
                }
            }
            _ => {}
        }
    }
    let args = &schema[open + 1..end];
    let mut names = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    let bytes: Vec<(usize, char)> = args.char_indices().collect();
    for (i, c) in bytes.iter().copied().chain(std::iter::once((args.len(), ','))) {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                let part = args[start..i].trim();
                start = i + 1;
                if part == "*" || part.is_empty() {
                    continue;
                }
                let decl = part.split('=').next().unwrap_or(part).trim();
                if let Some(name) = decl.rsplit(' ').next() {
                    names.push(name);
                }
            }
            _ => {}
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_overloads_and_arguments() {
        let s = schema("aten::add.Tensor").expect("add.Tensor");
        assert_eq!(arg_names(s), ["self", "other", "alpha"]);
        let s = schema("aten::reshape.default").expect("reshape");
        assert_eq!(arg_names(s), ["self", "shape"]);
        let s = schema("aten::layer_norm.default").expect("layer_norm");
        assert_eq!(arg_names(s), ["input", "normalized_shape", "weight", "bias", "eps", "cudnn_enable"]);
        assert!(schema("aten::no_such_op.default").is_none());
    }
}
