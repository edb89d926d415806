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

/// The argument declarations of a schema line, in order, without the `*` marker
/// (`Tensor self`, `Scalar alpha=1`): the top-level parts of the list that the first parenthesis
/// opens and its match closes.
pub fn arguments(schema: &str) -> Vec<&str> {
    let Some(open) = schema.find('(') else { return vec![] };
    let end = open + closing(&schema[open..]).unwrap_or(schema.len() - open);
    let args = &schema[open + 1..end];
    let (mut parts, mut depth, mut start) = (Vec::new(), 0usize, 0);
    for (i, c) in args.char_indices().chain(std::iter::once((args.len(), ','))) {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                let part = args[start..i].trim();
                start = i + 1;
                if part != "*" && !part.is_empty() {
                    parts.push(part);
                }
            }
            _ => {}
        }
    }
    parts
}

/// What a schema line returns (`Tensor(a)`, `(Tensor, Tensor)`): the text after the argument list.
pub fn returns(schema: &str) -> &str {
    let Some(open) = schema.find('(') else { return "" };
    let end = open + closing(&schema[open..]).unwrap_or(schema.len() - open);
    schema[end..].trim_start_matches(')').trim_start().trim_start_matches("->").trim()
}

/// The position of the bracket that closes the one `s` starts with.
fn closing(s: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in s.char_indices() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// The argument names of a schema line, in order (`self`, `other`, `alpha`).
pub fn arg_names(schema: &str) -> Vec<&str> {
    arguments(schema)
        .into_iter()
        .filter_map(|part| part.split('=').next().unwrap_or(part).trim().rsplit(' ').next())
        .collect()
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
