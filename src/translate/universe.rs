//! The operator universe the built-in table answers for, by source: torch.onnx's registry
//! (`torch_onnx_targets.txt`, torch 2.15 + onnxscript 0.7.2), the Core ATen IR
//! (`core_aten_ops.txt`, the ops tagged `core`) and every overload of an ATen alias
//! (`aliases::ALIASES`). Each target is translated, refused with a reason
//! (`src/translate/refused.rs`) or missing; `fxonnx ops --missing` and `reports/coverage.md` show
//! the counts, and a test keeps "missing" empty.

use super::dsl::TranslationTable;

const REGISTRY: &str = include_str!("torch_onnx_targets.txt");
const CORE_ATEN: &str = include_str!("core_aten_ops.txt");

/// Where a target of the universe comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Source {
    /// torch.onnx's translation registry.
    Registry,
    /// The Core ATen IR.
    CoreAten,
    /// ATen's aliases (`divide`, `clip`, `swapaxes`, ...), every overload.
    Aliases,
}

impl Source {
    pub const ALL: [Source; 3] = [Source::Registry, Source::CoreAten, Source::Aliases];

    pub fn label(self) -> &'static str {
        match self {
            Source::Registry => "torch.onnx registry",
            Source::CoreAten => "Core ATen",
            Source::Aliases => "ATen aliases",
        }
    }
}

/// What the table does with a target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Status {
    /// Served by the translation registered under this key (the target's own key, its functional
    /// form, its default overload or the op an alias names).
    Translated(String),
    /// Declined on purpose, for this reason.
    Refused(&'static str),
    Missing,
}

/// One target of the universe.
#[derive(Clone, Debug)]
pub struct Target {
    pub source: Source,
    /// The table key (`aten::add.Tensor`, `_operator.mul`, `higher_order::cond`).
    pub key: String,
    pub status: Status,
}

/// Every target of every source, in the order of its source file, with what `table` does with it.
pub fn universe(table: &TranslationTable) -> Vec<Target> {
    let status = |key: &str| match super::lower::serving_key(table, key) {
        Some(used) => Status::Translated(used),
        None => crate::translate::refused::reason(key).map_or(Status::Missing, Status::Refused),
    };
    let mut out = Vec::new();
    for (source, keys) in [
        (Source::Registry, listed(REGISTRY)),
        (Source::CoreAten, listed(CORE_ATEN)),
        (Source::Aliases, alias_overloads()),
    ] {
        out.extend(keys.into_iter().map(|key| Target { source, status: status(&key), key }));
    }
    out
}

/// The table keys of a list file, one target a line, `#` lines are comments.
fn listed(text: &str) -> Vec<String> {
    let mut keys: Vec<String> =
        text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')).map(key_of).collect();
    // torch.onnx registers some callables twice (`sym_float` under two addresses).
    let mut seen = std::collections::HashSet::new();
    keys.retain(|k| seen.insert(k.clone()));
    keys
}

/// The table key of a registry entry: `<built-in function mul>` → `_operator.mul`,
/// `<built-in function floor>` → `math.floor`, `<function sym_max at 0x...>` → `torch.sym_max`, `cond` → `higher_order::cond`,
/// `aten::abs` → `aten::abs.default`.
fn key_of(entry: &str) -> String {
    if let Some(name) = entry.strip_prefix("<built-in function ").and_then(|r| r.strip_suffix('>')) {
        // The module a builtin lives in is not in its repr: `abs` is builtins', `floor` math's.
        return match name {
            "abs" => "builtins.abs".to_string(),
            "ceil" | "floor" | "trunc" => format!("math.{name}"),
            _ => format!("_operator.{name}"),
        };
    }
    if let Some(rest) = entry.strip_prefix("<function ") {
        let name = rest.split_whitespace().next().unwrap_or(rest);
        return format!("torch.{name}");
    }
    match entry.split_once("::") {
        Some((_, op)) if op.contains('.') => entry.to_string(),
        Some(_) => format!("{entry}.default"),
        None => format!("higher_order::{entry}"),
    }
}

/// Every functional overload of every alias in the alias table (`aten::divide.Tensor`,
/// `aten::divide.Scalar_mode`, ...); in-place forms follow their functional ones.
fn alias_overloads() -> Vec<String> {
    let mut keys: Vec<String> = super::aliases::ALIASES
        .iter()
        .flat_map(|(alias, _)| super::aten_schemas::overloads(&format!("aten::{alias}")))
        .map(str::to_string)
        .collect();
    keys.sort();
    keys.dedup();
    keys
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_entries_become_table_keys() {
        assert_eq!(key_of("<built-in function truediv>"), "_operator.truediv");
        assert_eq!(key_of("<built-in function floor>"), "math.floor");
        assert_eq!(key_of("<function sym_max at 0x7f02d7d56480>"), "torch.sym_max");
        assert_eq!(key_of("cond"), "higher_order::cond");
        assert_eq!(key_of("aten::abs"), "aten::abs.default");
        assert_eq!(key_of("aten::add.Tensor"), "aten::add.Tensor");
        assert_eq!(key_of("prims::sin"), "prims::sin.default");
    }
}
