//! Generates, from `tests/data/onnx_op_schemas.json`, `src/onnx/ops.rs` (the typed ONNX operator
//! builder: one `Builder` method and one attribute-setter wrapper per operator) and
//! `src/onnx/operators/onnx_schemas.rs` (what the schemas say of each operator's element types, for the
//! operator table), and fails when a committed file differs from what the schemas produce.
//!
//! Regenerate after changing this generator or the schemas:
//!
//! `FXONNX_BLESS=1 cargo test --test ops_codegen`
//!
//! Selection: default domain only; for each operator the newest version with `since_version <=
//! MAX_OPSET`; operators whose selected version is deprecated, or that only exist above
//! `MAX_OPSET`, are left out.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use serde_json::Value as Json;

/// The newest default-domain opset fxonnx targets.
const MAX_OPSET: i64 = 23;
/// The oldest (`fxonnx::SUPPORTED_OPSETS`): older versions of an operator in use from there on
/// get their own type constraints (`allowed_at`).
const MIN_OPSET: i64 = 13;
const SCHEMAS: &str = "tests/data/onnx_op_schemas.json";
const OUTPUT: &str = "src/onnx/ops.rs";
const SCHEMA_OUTPUT: &str = "src/onnx/operators/onnx_schemas.rs";
const BLESS_CMD: &str = "FXONNX_BLESS=1 cargo test --test ops_codegen";

/// Rust keywords (strict, reserved and edition-2018+ ones). `self`, `Self`, `super` and `crate`
/// cannot be raw identifiers and are handled separately.
const KEYWORDS: &[&str] = &[
    "abstract", "as", "async", "await", "become", "box", "break", "const", "continue", "do", "dyn", "else", "enum",
    "extern", "false", "final", "fn", "for", "gen", "if", "impl", "in", "let", "loop", "macro", "match", "mod", "move",
    "mut", "override", "priv", "pub", "ref", "return", "static", "struct", "trait", "true", "try", "type", "typeof",
    "unsafe", "unsized", "use", "virtual", "where", "while", "yield",
];
const NON_RAW: &[&str] = &["self", "Self", "super", "crate", "_"];

/// Names the generated code uses unqualified: an operator (= wrapper struct) may not take them,
/// and a parameter that equals one of them (or an operator name: parameters cannot shadow tuple
/// structs) gets a trailing `_`.
const RESERVED_NAMES: &[&str] = &[
    "Builder",
    "Call",
    "Input",
    "Value",
    "TensorData",
    "Graph",
    "AttrValue",
    "Option",
    "Some",
    "None",
    "Vec",
    "Self",
    "String",
    "Result",
    "Ok",
    "Err",
    "Box",
];

/// Methods every wrapper has besides the attribute setters.
const WRAPPER_METHODS: &[&str] = &["attr", "out", "outs", "outs_vec"];

#[derive(Clone, Copy, PartialEq, Debug)]
enum Arity {
    Single,
    Optional,
    Variadic,
}

struct Param {
    ident: String,
    arity: Arity,
    /// A single input whose type variable another single input shares (`Add`'s `A` and `B`): it
    /// takes an `Input`, so a number can stand for a constant of the other's type.
    shared: bool,
}

struct Op<'a> {
    name: &'a str,
    since_version: i64,
    /// The oldest opset whose version of the op has the same inputs and outputs: the method is
    /// valid from there on (newer versions often only widen the types).
    valid_from: i64,
    schema: &'a Json,
}

/// What a method's validity depends on: its inputs and outputs. Attributes added by newer versions
/// (Cast's `saturate`) are optional, so the method stays valid at older opsets as long as they are
/// not set.
fn signature(s: &Json) -> String {
    let names = |key: &str| {
        list(s, key)
            .iter()
            .map(|p| format!("{}:{}", str_field(p, "name"), str_field(p, "option")))
            .collect::<Vec<_>>()
            .join(",")
    };
    format!("{}|{}", names("inputs"), names("outputs"))
}

fn str_field<'a>(v: &'a Json, key: &str) -> &'a str {
    v.get(key).and_then(Json::as_str).unwrap_or("")
}

fn list<'a>(v: &'a Json, key: &str) -> &'a [Json] {
    v.get(key).and_then(Json::as_array).map_or(&[], Vec::as_slice)
}

fn arity(v: &Json) -> Arity {
    match str_field(v, "option") {
        "Single" => Arity::Single,
        "Optional" => Arity::Optional,
        "Variadic" => Arity::Variadic,
        other => panic!("unknown formal parameter option {other:?} in {v}"),
    }
}

/// Pick, per operator of the default domain, the newest version `<= MAX_OPSET` (sorted by name).
fn select(schemas: &[Json]) -> Vec<Op<'_>> {
    let mut newest: BTreeMap<&str, (i64, &Json)> = BTreeMap::new();
    for s in schemas {
        let domain = str_field(s, "domain");
        if !(domain.is_empty() || domain == "ai.onnx") {
            continue;
        }
        let name = str_field(s, "name");
        let since = s.get("since_version").and_then(Json::as_i64).expect("since_version");
        if since > MAX_OPSET {
            continue;
        }
        match newest.get(name) {
            Some(&(v, _)) if v >= since => {}
            _ => {
                newest.insert(name, (since, s));
            }
        }
    }
    newest
        .into_iter()
        .filter(|(_, (_, s))| !s.get("deprecated").and_then(Json::as_bool).unwrap_or(false))
        .map(|(name, (since_version, schema))| {
            // Walk back through older versions while the signature stays the same.
            let mut versions: Vec<(i64, &Json)> = schemas
                .iter()
                .filter(|s| str_field(s, "name") == name && matches!(str_field(s, "domain"), "" | "ai.onnx"))
                .filter_map(|s| Some((s.get("since_version")?.as_i64()?, s)))
                .filter(|(v, _)| *v <= since_version)
                .collect();
            versions.sort_by_key(|(v, _)| std::cmp::Reverse(*v));
            let sig = signature(schema);
            let mut valid_from = since_version;
            for (v, s) in versions {
                if signature(s) != sig {
                    break;
                }
                valid_from = v;
            }
            Op { name, since_version, valid_from, schema }
        })
        .collect()
}

/// A valid Rust identifier for an ONNX name: non-identifier characters become `_`, keywords are
/// raw (`r#type`), and the few names that cannot be raw get a trailing `_`.
fn ident(name: &str) -> String {
    let mut s: String = name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect();
    while s.len() > 1 && s.ends_with('_') && !name.ends_with('_') {
        s.pop(); // `outputs...` → `outputs`
    }
    if s.is_empty() || s.starts_with(|c: char| c.is_ascii_digit()) {
        s.insert(0, '_');
    }
    if NON_RAW.contains(&s.as_str()) {
        s.push('_');
    } else if KEYWORDS.contains(&s.as_str()) {
        s.insert_str(0, "r#");
    }
    s
}

/// Plain text safe for a one-line rustdoc comment: no markdown links, code fences or HTML.
fn plain(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        match c {
            '[' | ']' | '`' | '<' | '>' | '*' | '#' | '|' | '\\' => {}
            c if c.is_whitespace() => {
                if !out.ends_with(' ') {
                    out.push(' ');
                }
            }
            c => out.push(c),
        }
    }
    out.trim().to_string()
}

/// The first sentence of an operator's `doc`, if the schemas carry one.
fn first_sentence(doc: &str) -> String {
    let text = plain(doc);
    let end = text.find(". ").map_or(text.len(), |i| i + 1);
    text[..end].trim().to_string()
}

/// Inline code for a doc comment.
fn code(s: &str) -> String {
    if s.contains('`') {
        format!("`` {s} ``")
    } else {
        format!("`{s}`")
    }
}

#[allow(clippy::cast_possible_truncation)]
fn fmt_float(v: &Json) -> String {
    match v.as_f64() {
        // Schema floats are float32 widened to double: print the shortest float32 form (1e-5, not
        // 9.999999747378752e-06).
        Some(f) => format!("{:?}", f as f32),
        None => v.to_string(),
    }
}

fn fmt_default(ty: &str, v: &Json) -> String {
    match (ty, v) {
        ("FLOAT", _) => fmt_float(v),
        ("FLOATS", Json::Array(items)) => {
            format!("[{}]", items.iter().map(fmt_float).collect::<Vec<_>>().join(", "))
        }
        (_, Json::String(s)) => format!("{s:?}"),
        (_, Json::Array(items)) => {
            format!(
                "[{}]",
                items.iter().map(|i| fmt_default(ty.trim_end_matches('S'), i)).collect::<Vec<_>>().join(", ")
            )
        }
        _ => v.to_string(),
    }
}

/// (Rust parameter type, `Call` method) for an attribute type with a typed setter.
fn setter_kind(ty: &str) -> Option<(&'static str, &'static str)> {
    Some(match ty {
        "INT" => ("i64", "attr_int"),
        "FLOAT" => ("f32", "attr_float"),
        "STRING" => ("&str", "attr_str"),
        "INTS" => ("&[i64]", "attr_ints"),
        "FLOATS" => ("&[f32]", "attr_floats"),
        "STRINGS" => ("&[&str]", "attr_strs"),
        "TENSOR" => ("TensorData", "attr_tensor"),
        "GRAPH" => ("Graph", "attr_graph"),
        _ => return None,
    })
}

fn formal_list(formals: &[Json]) -> String {
    if formals.is_empty() {
        return "none".to_string();
    }
    formals
        .iter()
        .map(|f| {
            let name = code(str_field(f, "name"));
            match arity(f) {
                Arity::Single => name,
                Arity::Optional => format!("{name} (optional)"),
                Arity::Variadic => format!("{name} (variadic)"),
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn params(op: &Op, op_names: &[&str]) -> Vec<Param> {
    let inputs = list(op.schema, "inputs");
    let mut out: Vec<Param> = Vec::new();
    for (i, f) in inputs.iter().enumerate() {
        let a = arity(f);
        assert!(
            a != Arity::Variadic || i + 1 == inputs.len(),
            "{}: variadic input {:?} is not the last one",
            op.name,
            str_field(f, "name")
        );
        let mut id = ident(str_field(f, "name"));
        while RESERVED_NAMES.contains(&id.as_str())
            || op_names.contains(&id.as_str())
            || out.iter().any(|p| p.ident == id)
        {
            id.push('_');
        }
        let ty = str_field(f, "type");
        let shared = a == Arity::Single
            && inputs.iter().filter(|g| arity(g) == Arity::Single && str_field(g, "type") == ty).count() >= 2;
        out.push(Param { ident: id, arity: a, shared });
    }
    out
}

/// An operator without attributes and with one output has nothing to set: its method returns the
/// output itself.
fn returns_value(op: &Op) -> bool {
    let outputs = list(op.schema, "outputs");
    list(op.schema, "attributes").is_empty()
        && outputs.len() == 1
        && outputs.iter().all(|o| o.get("option").and_then(Json::as_str).is_none_or(|k| k == "Single"))
}

fn gen_method(out: &mut String, op: &Op, params: &[Param]) {
    let name = op.name;
    let since = op.since_version;
    let valid_from = op.valid_from;
    let sentence = op.schema.get("doc").and_then(Json::as_str).map(first_sentence).unwrap_or_default();
    if sentence.is_empty() {
        writeln!(out, "    /// `{name}` (version {since}), valid from opset {valid_from}.").unwrap();
    } else {
        writeln!(out, "    /// `{name}` (version {since}), valid from opset {valid_from}: {sentence}").unwrap();
    }
    writeln!(out, "    ///").unwrap();
    writeln!(
        out,
        "    /// Inputs: {}. Outputs: {}.",
        formal_list(list(op.schema, "inputs")),
        formal_list(list(op.schema, "outputs"))
    )
    .unwrap();
    writeln!(out, "    #[allow(non_snake_case)]").unwrap();
    let args: Vec<String> = params
        .iter()
        .map(|p| {
            let ty = match p.arity {
                Arity::Single if p.shared => "impl Into<Input>",
                Arity::Single => "Value",
                Arity::Optional => "Option<Value>",
                Arity::Variadic => "&[Value]",
            };
            format!(", {}: {ty}", p.ident)
        })
        .collect();
    if returns_value(op) {
        writeln!(out, "    pub fn {name}(&mut self{}) -> Value {{", args.concat()).unwrap();
    } else {
        writeln!(out, "    pub fn {name}(&mut self{}) -> {name}<'_> {{", args.concat()).unwrap();
    }
    let fixed: Vec<String> = params
        .iter()
        .filter_map(|p| match p.arity {
            Arity::Single => Some(format!("Some({})", p.ident)),
            Arity::Optional => Some(p.ident.clone()),
            Arity::Variadic => None,
        })
        .collect();
    let variadic = params.iter().find(|p| p.arity == Arity::Variadic);
    let inputs = match (fixed.is_empty(), variadic) {
        (_, None) => format!("vec![{}]", fixed.join(", ")),
        (true, Some(v)) => format!("{}.iter().copied().map(Some).collect()", v.ident),
        (false, Some(v)) => {
            format!("[{}].into_iter().chain({}.iter().copied().map(Some)).collect()", fixed.join(", "), v.ident)
        }
    };
    let shared: Vec<&str> = params.iter().filter(|p| p.shared).map(|p| p.ident.as_str()).collect();
    if !shared.is_empty() {
        let into: Vec<String> = shared.iter().map(|p| format!("{p}.into()")).collect();
        writeln!(out, "        let [{}] = self.same_type({name:?}, [{}]);", shared.join(", "), into.join(", "))
            .unwrap();
    }
    if returns_value(op) {
        writeln!(out, "        self.call({name:?}, {valid_from}, {inputs}).out()").unwrap();
    } else {
        writeln!(out, "        {name}(self.call({name:?}, {valid_from}, {inputs}))").unwrap();
    }
    writeln!(out, "    }}").unwrap();
}

fn gen_wrapper(out: &mut String, op: &Op) {
    if returns_value(op) {
        return;
    }
    let name = op.name;
    let attrs = list(op.schema, "attributes");
    let untyped: Vec<String> = attrs
        .iter()
        .filter(|a| setter_kind(str_field(a, "type")).is_none())
        .map(|a| format!("{} ({})", code(str_field(a, "name")), code(str_field(a, "type"))))
        .collect();
    writeln!(out, "/// A `{name}` node being built (from [`Builder::{name}`]): set attributes, then take its outputs.")
        .unwrap();
    if !untyped.is_empty() {
        writeln!(out, "///").unwrap();
        writeln!(out, "/// Attributes without a typed setter (use `attr`): {}.", untyped.join(", ")).unwrap();
    }
    writeln!(out, "#[must_use = \"take the node's outputs with .out() or .outs()\"]").unwrap();
    writeln!(out, "pub struct {name}<'b>(Call<'b>);").unwrap();
    writeln!(out).unwrap();
    writeln!(out, "#[allow(non_snake_case)]").unwrap();
    writeln!(out, "impl {name}<'_> {{").unwrap();
    let mut setters: Vec<String> = Vec::new();
    for a in attrs {
        let attr = str_field(a, "name");
        let ty = str_field(a, "type");
        let Some((rust_ty, method)) = setter_kind(ty) else { continue };
        let mut id = ident(attr);
        while WRAPPER_METHODS.contains(&id.as_str()) || setters.contains(&id) {
            id.push('_');
        }
        setters.push(id.clone());
        let required = a.get("required").and_then(Json::as_bool).unwrap_or(false);
        let what = match a.get("default") {
            _ if required => "required".to_string(),
            Some(d) if !d.is_null() => format!("default {}", code(&fmt_default(ty, d))),
            _ => "optional, no default".to_string(),
        };
        writeln!(out, "    /// `{attr}`: `{ty}`, {what}.").unwrap();
        writeln!(out, "    pub fn {id}(self, v: {rust_ty}) -> Self {{").unwrap();
        writeln!(out, "        Self(self.0.{method}({attr:?}, v))").unwrap();
        writeln!(out, "    }}").unwrap();
    }
    out.push_str(
        "    /// Set any attribute by name (including kinds without a typed setter).
    pub fn attr(self, name: &str, v: AttrValue) -> Self {
        Self(self.0.attr(name, v))
    }
    /// The node's only (or first) output.
    pub fn out(self) -> Value {
        self.0.out()
    }
    /// The node's first `N` outputs.
    pub fn outs<const N: usize>(self) -> [Value; N] {
        self.0.outs::<N>()
    }
    /// The node's first `n` outputs.
    pub fn outs_vec(self, n: usize) -> Vec<Value> {
        self.0.outs_vec(n)
    }
}
",
    );
}

/// The whole text of `src/onnx/ops.rs`.
fn generate(schemas_json: &str) -> String {
    let root: Json = serde_json::from_str(schemas_json).expect("onnx_op_schemas.json is not JSON");
    let schemas = root.get("schemas").and_then(Json::as_array).expect("a `schemas` array");
    let onnx_version = str_field(&root, "onnx_version");
    let ops = select(schemas);
    let op_names: Vec<&str> = ops.iter().map(|o| o.name).collect();
    for op in &ops {
        assert!(
            op.name.starts_with(|c: char| c.is_ascii_uppercase())
                && op.name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
            "operator name {:?} is not usable as a Rust type name",
            op.name
        );
        assert!(!RESERVED_NAMES.contains(&op.name), "operator {} clashes with a name ops.rs uses", op.name);
    }

    let mut out = String::new();
    writeln!(out, "// @generated by tests/ops_codegen.rs from tests/data/onnx_op_schemas.json (ONNX {onnx_version}). Do not edit.").unwrap();
    writeln!(out, "// Regenerate with: {BLESS_CMD}").unwrap();
    write!(
        out,
        "
//! Typed ONNX operators: one [`Builder`] method per default-domain operator (the newest version at
//! or below opset {MAX_OPSET}), like onnxscript's `op.` namespace, each returning a wrapper with one
//! setter per attribute.
//!
//! Required inputs are `Value`, optional ones `Option<Value>` (trailing `None`s are dropped), a
//! variadic input is a `&[Value]`. Attribute setters are named exactly like the ONNX attribute.
//! An operator without attributes and with one output returns that output (`b.Add(x, y)`); the
//! others return the node being built: set attributes, then finish it with `.out()`,
//! `.outs::<N>()` or `.outs_vec(n)`: `b.Gemm(a, w, None).transB(1).out()`.

#![cfg_attr(rustfmt, rustfmt::skip)]
#![allow(non_snake_case, non_camel_case_types, clippy::upper_case_acronyms, clippy::too_many_arguments, clippy::wrong_self_convention, clippy::must_use_candidate)]

use super::builder::{{Builder, Call, Input}};
use super::ir::{{AttrValue, Graph, TensorData, Value}};
"
    )
    .unwrap();
    out.push_str("\nimpl Builder {\n");
    for (i, op) in ops.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        gen_method(&mut out, op, &params(op, &op_names));
    }
    out.push_str("}\n");
    for op in &ops {
        out.push('\n');
        gen_wrapper(&mut out, op);
    }
    out
}

/// The whole text of `src/onnx/operators/onnx_schemas.rs`.
fn generate_schema(schemas_json: &str) -> String {
    let root: Json = serde_json::from_str(schemas_json).expect("onnx_op_schemas.json is not JSON");
    let schemas = root.get("schemas").and_then(Json::as_array).expect("a `schemas` array");
    let onnx_version = str_field(&root, "onnx_version");
    let ops = select(schemas);
    let mut out = String::new();
    writeln!(out, "// @generated by tests/ops_codegen.rs from tests/data/onnx_op_schemas.json (ONNX {onnx_version}). Do not edit.").unwrap();
    writeln!(out, "// Regenerate with: {BLESS_CMD}").unwrap();
    write!(
        out,
        "
//! What the ONNX schemas say of each default-domain operator's element types (the newest version at
//! or below opset {MAX_OPSET}, and the older versions in use from opset {MIN_OPSET} on): the type
//! constraints the builder casts around, and the element type of each output where a type variable
//! bound to an input, or a single allowed type, decides it.

#![cfg_attr(rustfmt, rustfmt::skip)]

use crate::onnx::ir::{{Container, DType}};
"
    )
    .unwrap();
    let names: Vec<String> = ops.iter().map(|o| format!("\"{}\"", o.name)).collect();
    write!(
        out,
        "
/// Every default-domain operator (for the operator table's tests).
#[cfg(test)]
pub(crate) const OPERATORS: &[&str] = &[{}];
",
        names.join(", ")
    )
    .unwrap();
    gen_type_constraints(&mut out, &ops);
    gen_allowed_at(&mut out, &ops, schemas);
    gen_output_types(&mut out, &ops);
    gen_output_containers(&mut out, &ops);
    out
}

/// The ONNX element type codes (`TensorProto.DataType`) of `tensor(...)` names.
fn type_code(name: &str) -> Option<u32> {
    Some(match name.strip_prefix("tensor(")?.strip_suffix(')')? {
        "float" => 1,
        "uint8" => 2,
        "int8" => 3,
        "uint16" => 4,
        "int16" => 5,
        "int32" => 6,
        "int64" => 7,
        "string" => 8,
        "bool" => 9,
        "float16" => 10,
        "double" => 11,
        "uint32" => 12,
        "uint64" => 13,
        "complex64" => 14,
        "complex128" => 15,
        "bfloat16" => 16,
        "float8e4m3fn" => 17,
        "float8e4m3fnuz" => 18,
        "float8e5m2" => 19,
        "float8e5m2fnuz" => 20,
        "uint4" => 21,
        "int4" => 22,
        "float4e2m1" => 23,
        "float8e8m0" => 24,
        _ => return None,
    })
}

/// `type_constraints(op_type)`: per type variable that inputs use, the input and output positions
/// bound to it and the element types allowed, so the builder can cast around a type the operator
/// does not accept.
fn gen_type_constraints(out: &mut String, ops: &[Op]) {
    out.push_str(
        "
/// A type variable of an operator: the inputs and outputs it binds (a variadic last input binds
/// every position from `variadic_from`), whether the values it binds share one element type (a
/// heterogeneous variadic input, `Loop`'s states, need not), and the element types allowed, as a
/// bitset of `TensorProto.DataType` codes.
pub(crate) struct TypeConstraint {
    pub inputs: &'static [usize],
    pub variadic_from: Option<usize>,
    pub outputs: &'static [usize],
    pub homogeneous: bool,
    pub allowed: u32,
}

/// The type constraints of a default-domain operator (those that bind an input).
pub(crate) fn type_constraints(op_type: &str) -> &'static [TypeConstraint] {
    match op_type {
",
    );
    for op in ops {
        let inputs = list(op.schema, "inputs");
        let outputs = list(op.schema, "outputs");
        let mut entries = Vec::new();
        for c in list(op.schema, "type_constraints") {
            let param = str_field(c, "param");
            let ins: Vec<usize> = (0..inputs.len()).filter(|&i| str_field(&inputs[i], "type") == param).collect();
            if ins.is_empty() {
                continue;
            }
            let variadic = ins.iter().copied().find(|&i| arity(&inputs[i]) == Arity::Variadic);
            let homogeneous =
                variadic.is_none_or(|i| inputs[i].get("homogeneous").and_then(Json::as_bool) != Some(false));
            let outs: Vec<usize> = (0..outputs.len()).filter(|&i| str_field(&outputs[i], "type") == param).collect();
            let allowed = allowed_mask(c);
            let fmt = |v: &[usize]| v.iter().map(|i| i.to_string()).collect::<Vec<_>>().join(", ");
            entries.push(format!(
                "TypeConstraint {{ inputs: &[{}], variadic_from: {variadic:?}, outputs: &[{}], homogeneous: {homogeneous}, allowed: {allowed:#x} }}",
                fmt(&ins),
                fmt(&outs)
            ));
        }
        if !entries.is_empty() {
            writeln!(out, "        \"{}\" => &[{}],", op.name, entries.join(", ")).unwrap();
        }
    }
    out.push_str("        _ => &[],\n    }\n}\n");
}

/// The element types a type constraint allows, as a bitset of `TensorProto.DataType` codes.
fn allowed_mask(c: &Json) -> u32 {
    list(c, "allowed").iter().filter_map(|a| a.as_str().and_then(type_code)).fold(0u32, |m, code| m | 1 << code)
}

/// The constraints of `schema` that `type_constraints` lists: (first input bound, allowed).
fn input_constraints(schema: &Json) -> Vec<(usize, u32)> {
    let inputs = list(schema, "inputs");
    list(schema, "type_constraints")
        .iter()
        .filter_map(|c| {
            let param = str_field(c, "param");
            let first = (0..inputs.len()).find(|&i| str_field(&inputs[i], "type") == param)?;
            Some((first, allowed_mask(c)))
        })
        .collect()
}

/// `allowed_at(op_type, index, opset)`: where a version of the operator in use at an opset from
/// `MIN_OPSET` on allowed other element types than the newest, the types constraint `index` of
/// `type_constraints` allowed there (the constraint of the same first input in the older
/// version): `Add` of int8 needs opset 14, `ReduceMax` of bool opset 20.
fn gen_allowed_at(out: &mut String, ops: &[Op], schemas: &[Json]) {
    out.push_str(
        "
/// The element types constraint `index` of [`type_constraints`] allows at `opset`, where the
/// operator's version in use there differs from the newest (`None`: the newest's).
pub(crate) fn allowed_at(op_type: &str, index: usize, opset: i64) -> Option<u32> {
    match (op_type, index) {
",
    );
    for op in ops {
        let newest = input_constraints(op.schema);
        let mut versions: Vec<(i64, &Json)> = schemas
            .iter()
            .filter(|s| str_field(s, "name") == op.name && matches!(str_field(s, "domain"), "" | "ai.onnx"))
            .filter_map(|s| Some((s.get("since_version")?.as_i64()?, s)))
            .filter(|(v, _)| *v < op.since_version)
            .collect();
        versions.sort_by_key(|(v, _)| *v);
        // Version k is in use from its since_version up to the next one's.
        let until: Vec<i64> =
            versions.iter().skip(1).map(|(v, _)| *v).chain(std::iter::once(op.since_version)).collect();
        for ((_, schema), until) in versions.iter().zip(until) {
            if until <= MIN_OPSET {
                continue;
            }
            let older = input_constraints(schema);
            for (index, &(first, allowed)) in newest.iter().enumerate() {
                let Some(&(_, old)) = older.iter().find(|(f, _)| *f == first) else { continue };
                if old != allowed {
                    writeln!(out, "        (\"{}\", {index}) if opset < {until} => Some({old:#x}),", op.name).unwrap();
                }
            }
        }
    }
    out.push_str("        _ => None,\n    }\n}\n");
}

/// The `DType` variant of an element type code (`None` for the types fxonnx's IR does not have).
fn dtype_variant(code: u32) -> Option<&'static str> {
    Some(match code {
        1 => "Float",
        2 => "Uint8",
        3 => "Int8",
        4 => "Uint16",
        5 => "Int16",
        6 => "Int32",
        7 => "Int64",
        8 => "String",
        9 => "Bool",
        10 => "Float16",
        11 => "Double",
        12 => "Uint32",
        13 => "Uint64",
        14 => "Complex64",
        15 => "Complex128",
        16 => "BFloat16",
        17 => "Float8E4M3FN",
        18 => "Float8E4M3FNUZ",
        19 => "Float8E5M2",
        20 => "Float8E5M2FNUZ",
        24 => "Float8E8M0",
        _ => return None,
    })
}

/// The rule for one output: a single allowed type, else the type of the first input its type
/// variable binds, else unknown (a heterogeneous variadic output, or a type an attribute picks).
fn output_rule(schema: &Json, output: &Json) -> String {
    let ty = str_field(output, "type");
    let fixed = |code: Option<u32>| match code.and_then(dtype_variant) {
        Some(v) => format!("OutType::Fixed(DType::{v})"),
        None => "OutType::Unknown".into(),
    };
    let Some(c) = list(schema, "type_constraints").iter().find(|c| str_field(c, "param") == ty) else {
        return fixed(type_code(ty));
    };
    if arity(output) == Arity::Variadic && output.get("homogeneous").and_then(Json::as_bool) == Some(false) {
        return "OutType::Unknown".into();
    }
    let allowed = list(c, "allowed");
    if let [only] = allowed {
        return fixed(only.as_str().and_then(type_code));
    }
    let inputs = list(schema, "inputs");
    match (0..inputs.len()).find(|&i| str_field(&inputs[i], "type") == ty) {
        Some(i) => format!("OutType::Input({i})"),
        None => "OutType::Unknown".into(),
    }
}

/// `output_type(op_type, i)`: the rule for output `i` (a variadic last output repeats its rule).
fn gen_output_types(out: &mut String, ops: &[Op]) {
    out.push_str(
        "
/// How the element type of an output follows from the node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum OutType {
    /// The type of input `k`.
    Input(usize),
    Fixed(DType),
    /// An attribute or the node's subgraphs decide it.
    Unknown,
}

/// The rule for output `i` of a default-domain operator.
pub(crate) fn output_type(op_type: &str, i: usize) -> OutType {
    let (rules, variadic): (&[OutType], bool) = match op_type {
",
    );
    for op in ops {
        let outputs = list(op.schema, "outputs");
        let rules: Vec<String> = outputs.iter().map(|o| output_rule(op.schema, o)).collect();
        if rules.iter().all(|r| r == "OutType::Unknown") {
            continue;
        }
        let variadic = outputs.last().is_some_and(|o| arity(o) == Arity::Variadic);
        writeln!(out, "        \"{}\" => (&[{}], {variadic}),", op.name, rules.join(", ")).unwrap();
    }
    out.push_str(
        "        _ => return OutType::Unknown,
    };
    match rules.get(i) {
        Some(&rule) => rule,
        None if variadic => rules.last().copied().unwrap_or(OutType::Unknown),
        None => OutType::Unknown,
    }
}
",
    );
}

/// The rule for what one output holds: a sequence or an optional where its type variable allows
/// only those, what the first input of the same variable holds where it allows several kinds
/// (`Identity`), else `None` (a tensor, or what a heterogeneous variadic output's subgraph says).
fn container_rule(schema: &Json, output: &Json) -> Option<String> {
    let ty = str_field(output, "type");
    let c = list(schema, "type_constraints").iter().find(|c| str_field(c, "param") == ty)?;
    let allowed: Vec<&str> = list(c, "allowed").iter().filter_map(Json::as_str).collect();
    let all = |prefix: &str| !allowed.is_empty() && allowed.iter().all(|a| a.starts_with(prefix));
    if all("tensor(") {
        return None;
    }
    if all("seq(") {
        return Some("OutContainer::Fixed(Container::Sequence)".into());
    }
    if all("optional(") {
        return Some("OutContainer::Fixed(Container::Optional)".into());
    }
    if arity(output) == Arity::Variadic && output.get("homogeneous").and_then(Json::as_bool) == Some(false) {
        return None;
    }
    let inputs = list(schema, "inputs");
    (0..inputs.len()).find(|&i| str_field(&inputs[i], "type") == ty).map(|i| format!("OutContainer::Input({i})"))
}

/// `output_container(op_type, i)`: the rule for output `i`, for the operators whose outputs may be
/// other than tensors.
fn gen_output_containers(out: &mut String, ops: &[Op]) {
    out.push_str(
        "
/// What an output holds, where the schema's type constraint says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum OutContainer {
    /// What input `k` holds.
    Input(usize),
    Fixed(Container),
    /// A tensor, or what the node's subgraph returns (`If`, `Loop`).
    Unknown,
}

/// The rule for output `i` of a default-domain operator.
pub(crate) fn output_container(op_type: &str, i: usize) -> OutContainer {
    let rules: &[OutContainer] = match op_type {
",
    );
    for op in ops {
        let rules: Vec<Option<String>> =
            list(op.schema, "outputs").iter().map(|o| container_rule(op.schema, o)).collect();
        if rules.iter().all(Option::is_none) {
            continue;
        }
        let rules: Vec<String> =
            rules.into_iter().map(|r| r.unwrap_or_else(|| "OutContainer::Unknown".into())).collect();
        writeln!(out, "        \"{}\" => &[{}],", op.name, rules.join(", ")).unwrap();
    }
    out.push_str(
        "        _ => return OutContainer::Unknown,
    };
    rules.get(i).copied().unwrap_or(OutContainer::Unknown)
}
",
    );
}

fn manifest_path(rel: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

fn read_schemas() -> String {
    let path = manifest_path(SCHEMAS);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

#[test]
fn ops_rs_matches_schemas() {
    let schemas = read_schemas();
    check_generated(OUTPUT, &generate(&schemas));
    check_generated(SCHEMA_OUTPUT, &generate_schema(&schemas));
}

/// The committed file at `rel` is `generated` (or becomes it, with FXONNX_BLESS).
fn check_generated(rel: &str, generated: &str) {
    let path = manifest_path(rel);
    if std::env::var("FXONNX_BLESS").is_ok_and(|v| !v.is_empty() && v != "0") {
        std::fs::write(&path, generated).unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default().replace("\r\n", "\n");
    if committed == generated {
        return;
    }
    let (old, new): (Vec<&str>, Vec<&str>) = (committed.split('\n').collect(), generated.split('\n').collect());
    let line = (0..old.len().max(new.len())).find(|&i| old.get(i) != new.get(i)).unwrap_or(0);
    let show = |v: &[&str]| v.get(line).map_or_else(|| "<end of file>".to_string(), |l| format!("{l:?}"));
    let (ours, theirs) = (show(&old), show(&new));
    let line = line + 1;
    panic!(
        "{rel} is out of date with {SCHEMAS} / tests/ops_codegen.rs (first difference at line {line}):\n  \
         committed: {ours}\n  generated: {theirs}\nRegenerate with: {BLESS_CMD}"
    );
}

#[test]
fn selection_rules() {
    let text = read_schemas();
    let root: Json = serde_json::from_str(&text).unwrap();
    let ops = select(root["schemas"].as_array().unwrap());
    let find = |n: &str| ops.iter().find(|o| o.name == n).map(|o| o.since_version);
    assert!(ops.windows(2).all(|w| w[0].name < w[1].name));
    assert!(ops.iter().all(|o| o.since_version <= MAX_OPSET));
    // Newest version at or below MAX_OPSET, even when newer ones exist.
    assert_eq!(find("Reshape"), Some(23));
    assert_eq!(find("TopK"), Some(11));
    // Deprecated at its newest version: left out. Deprecated once, then redefined: kept.
    assert_eq!(find("Upsample"), None);
    assert_eq!(find("Scatter"), None);
    assert_eq!(find("GroupNormalization"), Some(21));
    // Only exists above MAX_OPSET: left out.
    assert_eq!(find("Swish"), None);
    // Generation is deterministic.
    assert_eq!(generate(&text), generate(&text));
    assert_eq!(generate_schema(&text), generate_schema(&text));
}

#[test]
fn identifiers_and_docs() {
    assert_eq!(ident("type"), "r#type");
    assert_eq!(ident("self"), "self_");
    assert_eq!(ident("outputs..."), "outputs");
    assert_eq!(ident("X"), "X");
    assert_eq!(first_sentence("Computes `Y = [A] * B`.\n\n    code block\nMore."), "Computes Y = A B.");
    assert_eq!(fmt_float(&serde_json::json!(f64::from(1e-5_f32))), "1e-5");
}
