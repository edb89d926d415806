//! The markdown export report (`report = true`, `fxonnx export --report`): what ran, what failed
//! and why, the program, the model, and an analysis that names every untranslated op with a
//! ready-to-paste translation skeleton. Written whether the export succeeds or fails.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::fx::{self, InputKind};
use crate::pt2::{scalar_type, schema, Loaded};
use crate::translate::aten_schemas;
use crate::translate::dsl::{target_key, TranslationTable};
use crate::translate::lower::{find_unsupported, visit_nodes};

/// The stages of an export, in the order they run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Stage {
    /// Open the `.pt2` archive and parse its program.
    ReadArchive,
    /// Classify the program's signature: parameters, buffers, constants, user inputs, mutations.
    ResolveProgram,
    /// Translate every FX node into ONNX.
    Translate,
    /// Optimize the ONNX graph (or, with `optimize: false`, only drop unused nodes).
    Optimize,
    /// Write the model (and its external data).
    Save,
}

impl Stage {
    /// Every stage, in order.
    pub const ALL: [Stage; 5] =
        [Stage::ReadArchive, Stage::ResolveProgram, Stage::Translate, Stage::Optimize, Stage::Save];

    /// The stage's line in the report and in progress messages.
    pub fn title(self) -> &'static str {
        match self {
            Stage::ReadArchive => "Read the archive",
            Stage::ResolveProgram => "Resolve the program",
            Stage::Translate => "Translate the graph into ONNX",
            Stage::Optimize => "Optimize the ONNX graph",
            Stage::Save => "Save the model",
        }
    }

    /// The short name in report file names (`fxonnx_export_<time>_<status>.md`).
    pub fn short_name(self) -> &'static str {
        match self {
            Stage::ReadArchive => "read",
            Stage::ResolveProgram => "resolve",
            Stage::Translate => "translate",
            Stage::Optimize => "optimize",
            Stage::Save => "save",
        }
    }
}

impl std::fmt::Display for Stage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.title())
    }
}

/// What an export tells its [`Progress`] callback.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum ProgressEvent {
    /// A stage ended; with `ok: false` the export ends with an error.
    StageFinished {
        stage: Stage,
        ok: bool,
        /// Time the stage took.
        elapsed: Duration,
        /// Peak resident memory of the process after the stage, in KiB (Linux only).
        peak_rss_kib: Option<u64>,
    },
}

/// A progress callback ([`crate::ExportOptions::progress`]); `fxonnx export` prints a line per event.
pub type Progress = std::sync::Arc<dyn Fn(&ProgressEvent) + Send + Sync>;

/// Asked after every stage but the save ([`crate::ExportOptions::interrupt`]): `true` stops the
/// export there with [`crate::Error::Interrupted`], before any file is written.
pub type Interrupt = std::sync::Arc<dyn Fn() -> bool + Send + Sync>;

/// The unwinding payload that carries an interrupt from between two stages to the export's
/// boundary (`export::run`), past code that knows nothing of it; never a panic, so no message.
pub(crate) struct Interrupted(pub Stage);

#[derive(Clone, Debug, Default)]
pub(crate) struct StageRecord {
    pub ran: bool,
    pub ok: bool,
    pub elapsed: Duration,
    /// Peak resident memory of the process after the stage (VmHWM), in KiB.
    pub peak_rss_kib: Option<u64>,
}

/// Everything the report says, collected while exporting.
#[derive(Clone, Default)]
pub struct ExportRecord {
    pub archive: PathBuf,
    /// The default-domain opset the export targets (`None` when the options were refused).
    pub opset: Option<i64>,
    pub stages: [StageRecord; 5],
    pub errors: Vec<String>,
    pub warnings: Vec<String>,
    /// `print(exported_program)`-like text.
    pub program_text: Option<String>,
    /// The ONNX model as text.
    pub model_text: Option<String>,
    pub analysis: Option<String>,
    /// What the optimizer (or, with `optimize: false`, the clean-up) did.
    pub optimize: Option<crate::optimize::OptimizeStats>,
    /// What `--functions` made (when asked).
    pub functions: Option<crate::onnx::functions::FunctionStats>,
    /// Told about every finished stage.
    pub progress: Option<Progress>,
    /// Asked after every stage but the save whether to stop.
    pub interrupt: Option<Interrupt>,
    /// The export was interrupted after this stage.
    pub(crate) interrupted: Option<Stage>,
    /// The stage running now (what a panic interrupted).
    pub(crate) running: Option<Stage>,
}

/// Peak resident set size of this process so far, in KiB (Linux; `None` elsewhere).
pub fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

impl ExportRecord {
    /// Run `stage` (or its last part), recording its time, outcome and the memory peak after it,
    /// and tell the progress callback.
    pub fn stage<T, E: std::fmt::Display>(&mut self, stage: Stage, f: impl FnOnce() -> Result<T, E>) -> Result<T, E> {
        let result = self.stage_part(stage, f);
        if result.is_ok() {
            self.tell(stage);
            // Stopped between stages, before the save: nothing was written, and all that was
            // built is dropped on the way out.
            if stage != Stage::Save && self.interrupt.as_ref().is_some_and(|i| i()) {
                self.interrupted = Some(stage);
                self.errors.push(format!("interrupted after {stage}"));
                std::panic::resume_unwind(Box::new(Interrupted(stage)));
            }
        }
        result
    }

    /// Run a part of `stage` that more parts follow; a failure ends the stage (and is reported).
    pub fn stage_part<T, E: std::fmt::Display>(
        &mut self,
        stage: Stage,
        f: impl FnOnce() -> Result<T, E>,
    ) -> Result<T, E> {
        let start = std::time::Instant::now();
        self.running = Some(stage);
        let result = f();
        self.running = None;
        let s = &mut self.stages[stage as usize];
        s.ran = true;
        s.ok = result.is_ok();
        s.elapsed += start.elapsed();
        s.peak_rss_kib = peak_rss_kib();
        if let Err(e) = &result {
            self.tell(stage);
            self.errors.push(e.to_string());
        }
        result
    }

    /// End the stage a panic interrupted as failed with `error`; returns it (`None` when the panic
    /// came between stages).
    /// The stage that failed, when one did.
    pub fn failed_stage(&self) -> Option<Stage> {
        Stage::ALL.into_iter().find(|&s| self.stages[s as usize].ran && !self.stages[s as usize].ok)
    }

    pub fn fail_running(&mut self, error: &str) -> Option<Stage> {
        let stage = self.running.take()?;
        let s = &mut self.stages[stage as usize];
        (s.ran, s.ok) = (true, false);
        self.tell(stage);
        self.errors.push(error.to_string());
        Some(stage)
    }

    fn tell(&self, stage: Stage) {
        if let Some(progress) = &self.progress {
            let s = &self.stages[stage as usize];
            progress(&ProgressEvent::StageFinished {
                stage,
                ok: s.ok,
                elapsed: s.elapsed,
                peak_rss_kib: s.peak_rss_kib,
            });
        }
    }

    /// `success`, or the short name of the first stage that failed, or `interrupted`.
    pub fn status(&self) -> &'static str {
        if self.interrupted.is_some() {
            return "interrupted";
        }
        match Stage::ALL.iter().zip(&self.stages).find(|(_, s)| s.ran && !s.ok) {
            Some((stage, _)) => stage.short_name(),
            None => "success",
        }
    }

    /// The report as markdown.
    pub fn markdown(&self) -> String {
        let mut s = String::from("# fxonnx Export Report\n\n");
        let _ = writeln!(s, "Archive: `{}`\n", self.archive.display());
        if let Some(opset) = self.opset {
            let _ = writeln!(s, "Opset: {opset}\n");
        }
        s.push_str("```\n");
        for (name, st) in Stage::ALL.iter().map(|s| s.title()).zip(&self.stages) {
            let mark = if !st.ran {
                "⚪"
            } else if st.ok {
                "✅"
            } else {
                "❌"
            };
            let _ = writeln!(s, "{mark} {name}");
        }
        s.push_str("```\n\n## Error messages\n\n```text\n");
        if self.errors.is_empty() {
            s.push_str("No errors\n");
        }
        for e in &self.errors {
            let _ = writeln!(s, "{e}");
        }
        s.push_str("```\n");
        if !self.warnings.is_empty() {
            s.push_str("\n## Warnings\n\n");
            for w in &self.warnings {
                let _ = writeln!(s, "- {w}");
            }
        }
        if let Some(p) = &self.program_text {
            let _ = write!(s, "\n## Exported program\n\n```python\n{p}```\n");
        }
        if let Some(m) = &self.model_text {
            let _ = write!(s, "\n## ONNX model\n\n```text\n{m}```\n");
        }
        if let Some(a) = &self.analysis {
            s.push_str("\n## Analysis\n\n");
            s.push_str(a);
        }
        s.push_str("\n## Optimizer statistics\n\n");
        match &self.optimize {
            Some(stats) => optimizer_section(&mut s, stats),
            None => s.push_str("Not run (the export stopped before).\n"),
        }
        if let Some(f) = &self.functions {
            s.push_str("\n## Module functions\n\n| function | calls |\n|---|---:|\n");
            for (name, calls) in &f.functions {
                let _ = writeln!(s, "| `{name}` | {calls} |");
            }
            for (scope, why) in &f.inline {
                let _ = writeln!(s, "\n- `{scope}` stays inline: {why}");
            }
        }
        s.push_str("\n## Time and memory per stage\n\n| stage | status | time (ms) | peak RSS after (MiB) |\n|---|---|---:|---:|\n");
        for (name, st) in Stage::ALL.iter().map(|s| s.title()).zip(&self.stages) {
            let status = if !st.ran {
                "not run"
            } else if st.ok {
                "ok"
            } else {
                "failed"
            };
            let rss = st.peak_rss_kib.map(|k| format!("{:.1}", k as f64 / 1024.0)).unwrap_or_else(|| "-".into());
            let ms = if st.ran { format!("{:.2}", st.elapsed.as_secs_f64() * 1e3) } else { "-".into() };
            let _ = writeln!(s, "| {name} | {status} | {ms} | {rss} |");
        }
        s
    }

    /// Write the report into `dir` as `fxonnx_export_<UTC time>_<status>.md`; returns its path.
    pub fn write(&self, dir: &Path, html: bool) -> std::io::Result<PathBuf> {
        std::fs::create_dir_all(dir)?;
        let md = self.markdown();
        let stem = format!("fxonnx_export_{}_{}", utc_timestamp(), self.status());
        let html = html.then(|| to_html(&md));
        let mut parts = vec![(".md", md.as_bytes())];
        parts.extend(html.as_ref().map(|h| (".html", h.as_bytes())));
        // Whole or not at all (a kill or a full disk never leaves a partial report), and never
        // over another export's report of the same microsecond.
        crate::onnx::save::write_new(dir, &stem, &parts)
    }
}

/// Node counts per pass, then the rules that fired.
fn optimizer_section(s: &mut String, stats: &crate::optimize::OptimizeStats) {
    let ms = stats.elapsed.as_secs_f64() * 1e3;
    let _ = writeln!(
        s,
        "Nodes: {} before, {} after, in {ms:.2} ms ({} rounds of the linear passes).\n",
        stats.nodes_before, stats.nodes_after, stats.rounds
    );
    s.push_str("| pass | nodes before | nodes after | rewrites | runs | time (ms) |\n|---|---:|---:|---:|---:|---:|\n");
    for p in &stats.passes {
        let ms = p.elapsed.as_secs_f64() * 1e3;
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {ms:.2} |",
            p.name, p.nodes_before, p.nodes_after, p.changes, p.runs
        );
    }
    if !stats.rules_fired.is_empty() {
        s.push_str("\n| rule | times fired |\n|---|---:|\n");
        for (rule, n) in &stats.rules_fired {
            let _ = writeln!(s, "| `{rule}` | {n} |");
        }
    }
    if stats.egraph_windows > 0 {
        let _ = writeln!(
            s,
            "\nE-graph windows: {}, stopped by a limit: {}, candidate matches left out by the window size limit: {}.",
            stats.egraph_windows, stats.egraph_windows_stopped, stats.egraph_candidates_dropped
        );
    }
    if !stats.rules_rejected.is_empty() {
        s.push_str("\n| rule: why it did not apply | times |\n|---|---:|\n");
        for (why, n) in &stats.rules_rejected {
            let _ = writeln!(s, "| {why} | {n} |");
        }
    }
}

/// Render markdown to a standalone HTML page.
pub fn to_html(markdown: &str) -> String {
    let parser = pulldown_cmark::Parser::new_ext(markdown, pulldown_cmark::Options::ENABLE_TABLES);
    let mut body = String::new();
    pulldown_cmark::html::push_html(&mut body, parser);
    format!(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>fxonnx export report</title>\n\
         <style>body{{font-family:sans-serif;max-width:1100px;margin:auto}}pre{{background:#f4f4f4;overflow-x:auto;padding:8px}}\
         table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;padding:2px 8px}}</style></head>\n<body>\n{body}</body></html>\n"
    )
}

/// `YYYY-MM-DD_HH-MM-SS-ffffff` in UTC, like torch.onnx's report names.
fn utc_timestamp() -> String {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let secs = now.as_secs() as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}_{:02}-{:02}-{:02}-{:06}", rem / 3600, (rem / 60) % 60, rem % 60, now.subsec_micros())
}

fn tensor_type(meta: &schema::ValueMeta) -> String {
    let dims: Vec<String> = meta
        .sizes
        .iter()
        .map(|s| match s {
            schema::SymInt::AsInt(n) => n.to_string(),
            schema::SymInt::AsExpr(e) => {
                crate::sym::parse(&e.expr_str).map(|x| x.to_string()).unwrap_or_else(|_| e.expr_str.to_string())
            }
        })
        .collect();
    let dtype = scalar_type(meta.dtype).map(|t| t.name()).unwrap_or("unknown");
    format!("{dtype}[{}]", dims.join(", "))
}

/// The analysis section: weights per dtype, inputs and outputs, FX node counts, and every
/// untranslated target with its nodes and a translation skeleton.
pub fn analysis(
    loaded: &Loaded<'_>,
    table: &TranslationTable,
    dim_names: &std::collections::HashMap<String, String>,
) -> String {
    let mut s = String::new();
    let gm = &loaded.program.graph_module;
    let graph = &gm.graph;

    s.push_str("### Parameters and buffers\n\n| kind | dtype | tensors | elements |\n|---|---|---:|---:|\n");
    let mut per: BTreeMap<(&str, String), (usize, i64)> = BTreeMap::new();
    if let Ok(program) = fx::Program::new(loaded) {
        for input in program.inputs() {
            let kind = match input.kind {
                InputKind::Parameter { .. } => "parameter",
                InputKind::Buffer { .. } => "buffer",
                InputKind::Constant { .. } => "constant",
                _ => continue,
            };
            if let Some(meta) = graph.tensor_values.get(input.name.as_str()) {
                let numel: i64 =
                    meta.sizes.iter().map(|d| if let schema::SymInt::AsInt(n) = d { *n } else { 1 }).product();
                let dtype = scalar_type(meta.dtype).map(|t| t.name()).unwrap_or("unknown").to_string();
                let e = per.entry((kind, dtype)).or_default();
                e.0 += 1;
                e.1 += numel;
            }
        }
    }
    for ((kind, dtype), (n, numel)) in &per {
        let _ = writeln!(s, "| {kind} | {dtype} | {n} | {numel} |");
    }

    s.push_str("\n### Inputs and outputs\n\n| name | kind | type |\n|---|---|---|\n");
    for spec in &gm.signature.input_specs {
        if let schema::InputSpec::UserInput { arg } = spec {
            let mut name = String::new();
            fx::for_each_value_name(arg, &mut |n| name = n.to_string());
            let ty = graph.tensor_values.get(name.as_str()).map(tensor_type).unwrap_or_else(|| "SymInt".into());
            let _ = writeln!(s, "| {name} | input | {ty} |");
        }
    }
    for spec in &gm.signature.output_specs {
        if let schema::OutputSpec::UserOutput { arg } = spec {
            let mut name = String::new();
            fx::for_each_value_name(arg, &mut |n| name = n.to_string());
            let ty = graph.tensor_values.get(name.as_str()).map(tensor_type).unwrap_or_else(|| "scalar".into());
            let _ = writeln!(s, "| {name} | output | {ty} |");
        }
    }

    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    let mut total = 0;
    visit_nodes(graph, &mut |n, _| {
        *counts.entry(n.target.as_str()).or_default() += 1;
        total += 1;
    });
    let _ = writeln!(
        s,
        "\n### FX nodes\n\nThe FX graph has {total} nodes (subgraphs included).\n\n| target | count |\n|---|---:|"
    );
    let mut sorted: Vec<(&str, usize)> = counts.into_iter().collect();
    sorted.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    for (t, n) in sorted {
        let _ = writeln!(s, "| `{t}` | {n} |");
    }

    s.push_str("\n### Operators without a translation\n\n");
    let missing = find_unsupported(graph, table);
    if missing.is_empty() {
        s.push_str("All operators in the program have translations.\n");
    }
    for op in &missing {
        let mut example = None;
        visit_nodes(graph, &mut |n, _| {
            if example.is_none() && n.target == op.target {
                example = Some(n);
            }
        });
        let _ = writeln!(s, "#### `{}`\n", op.target);
        if let Some(n) = example {
            let _ = writeln!(s, "Example node:\n\n```text\n{}\n```\n", fx::format_node(n, 1));
        }
        let _ = writeln!(
            s,
            "All nodes ({}): {}\n",
            op.nodes.len(),
            op.nodes.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")
        );
        let _ = writeln!(
            s,
            "Add a translation and pass it as `ExportOptions::custom_translation_table`:\n\n```rust\n{}```\n",
            skeleton(&op.key, example)
        );
    }

    s.push_str("\n### Range constraints and dimension names\n\n");
    let _ = writeln!(s, "`{}`\n", fx::format_range_constraints(&loaded.program.range_constraints));
    if dim_names.is_empty() {
        s.push_str("No dimension renamed (pass `--dim s77=batch` to name one).\n");
    } else {
        let mut names: Vec<_> = dim_names.iter().collect();
        names.sort();
        for (sym, name) in names {
            let _ = writeln!(s, "- `{sym}` → `{name}`");
        }
    }
    s
}

/// The DSL type for a schema argument type.
fn dsl_type(schema_type: &str) -> &'static str {
    let t = schema_type.split('(').next().unwrap_or(schema_type).trim();
    match t {
        "Tensor" => "Tensor",
        "Tensor?" => "Option<Tensor>",
        "Tensor[]" => "Vec<Tensor>",
        "Tensor?[]" => "Vec<Option<Tensor>>",
        "int" | "SymInt" => "i64",
        "int?" | "SymInt?" => "Option<i64>",
        "float" => "f64",
        "float?" => "Option<f64>",
        "bool" => "bool",
        "str" => "&str",
        "str?" => "Option<&str>",
        "Scalar" => "Scalar",
        "ScalarType?" => "Option<ScalarType>",
        _ if t.starts_with("int[") || t.starts_with("SymInt[") => {
            if t.ends_with('?') {
                "Option<Vec<SymInt>>"
            } else {
                "Vec<SymInt>"
            }
        }
        _ if t.starts_with("float[") => "Vec<f64>",
        _ => "Ignored",
    }
}

const RUST_KEYWORDS: &[&str] = &[
    "as", "break", "const", "continue", "crate", "else", "enum", "extern", "false", "fn", "for", "if", "impl", "in",
    "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return", "static", "struct", "super", "trait", "true",
    "type", "unsafe", "use", "where", "while", "async", "await", "dyn", "abstract", "become", "box", "do", "final",
    "macro", "override", "priv", "typeof", "unsized", "virtual", "yield", "try",
];

/// A `translations!` block to start from: the schema line, the target, typed parameters.
pub fn skeleton(key: &str, example: Option<&schema::Node>) -> String {
    let fn_name: String = key
        .rsplit("::")
        .next()
        .unwrap_or(key)
        .split('.')
        .next()
        .unwrap_or("op")
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    let mut params = Vec::new();
    let doc = match aten_schemas::schema(key) {
        Some(line) => {
            let open = line.find('(').unwrap_or(0);
            let close = line.rfind(") ->").unwrap_or(line.len());
            for decl in line[open + 1..close].split(", ") {
                if decl == "*" || decl.trim().is_empty() {
                    continue;
                }
                let decl = decl.split('=').next().unwrap_or(decl);
                let mut parts = decl.rsplitn(2, ' ');
                let (Some(name), Some(ty)) = (parts.next(), parts.next()) else { continue };
                let name = match name {
                    "self" => "self_".to_string(),
                    n if RUST_KEYWORDS.contains(&n) => format!("r#{n}"),
                    n => n.to_string(),
                };
                params.push(format!("{name}: {}", dsl_type(ty)));
            }
            line.to_string()
        }
        None => {
            // A custom op: take the argument names the archive recorded.
            if let Some(n) = example {
                for a in &n.inputs {
                    let ty = match &a.arg {
                        schema::Argument::Tensor(_) => "Tensor",
                        schema::Argument::Tensors(_) => "Vec<Tensor>",
                        schema::Argument::OptionalTensors(_) => "Vec<Option<Tensor>>",
                        schema::Argument::Int(_) => "i64",
                        schema::Argument::Ints(_) => "Vec<i64>",
                        schema::Argument::Float(_) => "f64",
                        schema::Argument::Floats(_) => "Vec<f64>",
                        schema::Argument::Bool(_) => "bool",
                        schema::Argument::Bools(_) => "Vec<bool>",
                        schema::Argument::String(_) => "&str",
                        schema::Argument::Strings(_) => "Vec<&str>",
                        schema::Argument::SymInt(_) => "SymInt",
                        schema::Argument::SymInts(_) => "Vec<SymInt>",
                        schema::Argument::None => "Option<Tensor>",
                        _ => "Ignored",
                    };
                    let name = match a.name.as_str() {
                        "" => format!("arg{}", params.len()),
                        "self" => "self_".to_string(),
                        n if RUST_KEYWORDS.contains(&n) => format!("r#{n}"),
                        n => n.to_string(),
                    };
                    params.push(format!("{name}: {ty}"));
                }
            }
            format!("{} (custom operator; no ATen schema)", target_key(key))
        }
    };
    let params = if params.is_empty() { String::new() } else { format!(", {}", params.join(", ")) };
    format!(
        "use fxonnx::translate::prelude::*;\n\nfxonnx::translations! {{\n    /// {doc}\n    #[target(\"{key}\")]\n    fn {fn_name}(op{params}) -> OpResult<Value> {{\n        bail!(\"write the ONNX for {key} here\")\n    }}\n}}\n"
    )
}
