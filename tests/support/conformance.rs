//! The operator-corpus conformance runner, shared by `examples/conformance.rs` (the full corpus, writes
//! `reports/coverage.md` and `coverage.json`) and `tests/conformance.rs` (the subset in
//! `tests/fixtures/ops/`).
//!
//! A corpus is a folder of case folders (`<op>/<k>/`, `<op>/<k>-core/`), each with `model.pt2`,
//! `inputs.npz`, `expected.npz` and `meta.json` (see `../shared/conformance/ops/README.md`). A run:
//! 1. exports every case with the library API, a few threads at once; errors and panics are recorded
//!    per case, never fatal;
//! 2. writes a JSONL manifest of the exported models and hands it to ONE Python process,
//!    `tests/check_cases.py` (onnx.checker, onnxruntime, tolerance comparison), so the corpus does
//!    not pay an interpreter start-up per case;
//! 3. joins torch.onnx's results on the same cases (`torch_onnx_results.jsonl`) when present;
//! 4. renders the Markdown and JSON reports, in an order that depends on the data only.

// Each includer uses a different part of the module.
#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::{json, Value as Json};

use fxonnx::{ErrorKind, TranslateError};

/// The batch checker run by the Python process.
pub const CHECKER: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/check_cases.py");

/// Files of a case folder.
pub const CASE_FILES: [&str; 4] = ["model.pt2", "inputs.npz", "expected.npz", "meta.json"];
/// A second input set with other dynamic sizes, where the case has one.
pub const ALT_FILES: [&str; 2] = ["inputs_alt.npz", "expected_alt.npz"];

/// Targets that say nothing about which op failed (tuple indexing of multi-output ops).
const NEUTRAL_TARGETS: &[&str] = &["_operator.getitem"];

/// How to run.
#[derive(Clone, Debug)]
pub struct Options {
    /// Python with onnx, onnxruntime and numpy; `None` exports only.
    pub python: Option<String>,
    /// Only cases whose name contains this.
    pub filter: Option<String>,
    /// Export threads and checker processes.
    pub threads: usize,
    /// Keep the exported models (and the checker's manifest and results) here instead of a
    /// temporary folder.
    pub work_dir: Option<PathBuf>,
    /// Progress lines on stderr.
    pub progress: bool,
    /// How the corpus is named in the reports (a path without this machine's prefix).
    pub label: String,
    /// The opset to export at (default: fxonnx's).
    pub opset: Option<i64>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            python: None,
            filter: None,
            threads: 2,
            work_dir: None,
            progress: false,
            label: "ops".into(),
            opset: None,
        }
    }
}

/// One case folder and what its `meta.json` says.
#[derive(Clone, Debug)]
pub struct Case {
    /// Path relative to the corpus folder, `/`-separated: `abs/0-core`.
    pub name: String,
    pub dir: PathBuf,
    /// The OpInfo name (`nn.functional.gelu`).
    pub op: String,
    /// `training` or `core`.
    pub ir: String,
    pub dtype: String,
    /// Sorted, as in `meta.json`: `aten.abs.default`, `_operator.getitem`, ...
    pub aten_targets: Vec<String>,
    /// One `{rtol, atol}` per output, passed through to the checker.
    pub tolerances: Json,
}

/// Why an export failed.
#[derive(Clone, Debug)]
pub enum ExportFailure {
    /// Targets without a translation (`aten.linalg_det.default`).
    Unsupported(Vec<String>),
    /// A translation refused its node.
    Translation { target: String, message: String },
    /// Reading the archive, its signature, or saving.
    Other(String),
    /// A panic inside the library (a bug; the message and location).
    Panic(String),
}

/// The batch checker's verdict on one exported model (a line of its results file).
#[derive(Clone, Debug, Deserialize)]
pub struct CheckResult {
    pub case: String,
    pub checker_ok: bool,
    pub ort_ok: bool,
    pub numerics_ok: bool,
    pub passed: bool,
    /// One line per failed stage: `checker: ...`, `onnxruntime: ...`, `numerics: ...`, `crash: ...`,
    /// `timeout: ...`.
    pub error: Option<String>,
    /// A number, or `"inf"` / `"nan"` (strict JSON has no such numbers).
    pub max_abs_diff: Option<Json>,
}

/// torch.onnx's result on a case, from `torch_onnx_results.jsonl`.
#[derive(Clone, Debug)]
pub struct TorchOnnx {
    pub passed: bool,
    pub reason: Option<String>,
}

/// Everything known about one case after a run.
#[derive(Clone, Debug)]
pub struct CaseResult {
    pub case: Case,
    pub export: Result<(), ExportFailure>,
    /// `None` when there was no Python or the export failed.
    pub check: Option<CheckResult>,
    pub torch_onnx: Option<TorchOnnx>,
}

/// Failure classes, in the order a case meets them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum FailureClass {
    Unsupported,
    ExportError,
    Panic,
    Checker,
    Ort,
    Numerics,
    CrashOrTimeout,
}

impl FailureClass {
    pub const ALL: [FailureClass; 7] = [
        FailureClass::Unsupported,
        FailureClass::ExportError,
        FailureClass::Panic,
        FailureClass::Checker,
        FailureClass::Ort,
        FailureClass::Numerics,
        FailureClass::CrashOrTimeout,
    ];

    pub fn label(self) -> &'static str {
        match self {
            FailureClass::Unsupported => "unsupported op",
            FailureClass::ExportError => "export error",
            FailureClass::Panic => "export panic",
            FailureClass::Checker => "checker error",
            FailureClass::Ort => "ORT error",
            FailureClass::Numerics => "numerics",
            FailureClass::CrashOrTimeout => "checker crash/timeout",
        }
    }
}

impl CaseResult {
    pub fn exported(&self) -> bool {
        self.export.is_ok()
    }

    /// Passed every stage (false when the checks did not run).
    pub fn passed(&self) -> bool {
        self.exported() && self.check.as_ref().is_some_and(|c| c.passed)
    }

    /// The first failure's class and its first line; `None` for a passing or unchecked case.
    pub fn failure(&self) -> Option<(FailureClass, String)> {
        match &self.export {
            Err(ExportFailure::Unsupported(targets)) => {
                return Some((FailureClass::Unsupported, format!("unsupported op: {}", targets.join(", "))))
            }
            Err(ExportFailure::Translation { target, message }) => {
                return Some((FailureClass::ExportError, format!("export error: {target}: {}", first_line(message))))
            }
            Err(ExportFailure::Other(message)) => {
                return Some((FailureClass::ExportError, format!("export error: {}", first_line(message))))
            }
            Err(ExportFailure::Panic(message)) => {
                return Some((FailureClass::Panic, format!("export panic: {}", first_line(message))))
            }
            Ok(()) => {}
        }
        let check = self.check.as_ref()?;
        if check.passed {
            return None;
        }
        // The checker lists failed stages in order, one per line; the first one is the reason.
        let line = check.error.as_deref().map(first_line).unwrap_or("failed without a message");
        let (stage, message) = line.split_once(": ").unwrap_or(("", line));
        Some(match stage {
            "checker" => (FailureClass::Checker, format!("checker error: {message}")),
            "onnxruntime" => (FailureClass::Ort, format!("ORT error: {message}")),
            "numerics" => (FailureClass::Numerics, format!("numerics: {message}")),
            "crash" | "timeout" => (FailureClass::CrashOrTimeout, format!("checker {stage}: {message}")),
            _ => (FailureClass::Ort, line.to_string()),
        })
    }

    /// The targets a failure is charged to: the untranslated or refusing target when the exporter
    /// names it, else every target of the case but tuple indexing.
    pub fn blame(&self) -> Vec<String> {
        match &self.export {
            Err(ExportFailure::Unsupported(targets)) => return targets.clone(),
            Err(ExportFailure::Translation { target, .. }) => return vec![target.clone()],
            _ => {}
        }
        let targets: Vec<String> =
            self.case.aten_targets.iter().filter(|t| !NEUTRAL_TARGETS.contains(&t.as_str())).cloned().collect();
        if targets.is_empty() {
            vec![self.case.aten_targets.first().cloned().unwrap_or_else(|| "(no call_function)".into())]
        } else {
            targets
        }
    }
}

/// A finished run.
pub struct Run {
    pub label: String,
    pub filter: Option<String>,
    /// Whether the Python checks ran.
    pub checked: bool,
    pub cases: Vec<CaseResult>,
    pub export_time: Duration,
    pub check_time: Duration,
}

// ------------------------------------------------------------------------------------------ discovery

/// Every case folder under `dir` (a folder holding `meta.json`), sorted by name.
pub fn discover(dir: &Path, filter: Option<&str>) -> Result<Vec<Case>, String> {
    let mut dirs = Vec::new();
    collect_case_dirs(dir, &mut dirs)?;
    let mut cases = Vec::new();
    for case_dir in dirs {
        let rel = case_dir.strip_prefix(dir).map_err(|e| format!("{}: {e}", case_dir.display()))?;
        let name = rel.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/");
        if filter.is_some_and(|f| !name.contains(f)) {
            continue;
        }
        cases.push(read_case(name, case_dir)?);
    }
    cases.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(cases)
}

fn collect_case_dirs(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), String> {
    if dir.join("meta.json").is_file() {
        out.push(dir.to_path_buf());
        return Ok(()); // a case folder holds files only
    }
    let entries = std::fs::read_dir(dir).map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
    for entry in entries {
        let entry = entry.map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
        if entry.file_type().map_err(|e| format!("{}: {e}", entry.path().display()))?.is_dir() {
            collect_case_dirs(&entry.path(), out)?;
        }
    }
    Ok(())
}

fn read_case(name: String, dir: PathBuf) -> Result<Case, String> {
    let path = dir.join("meta.json");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let meta: Json = serde_json::from_str(&text).map_err(|e| format!("{}: invalid JSON: {e}", path.display()))?;
    let field = |key: &str| -> Result<String, String> {
        meta.get(key)
            .and_then(Json::as_str)
            .map(str::to_string)
            .ok_or_else(|| format!("{}: no string field `{key}`", path.display()))
    };
    let aten_targets = meta
        .get("aten_targets")
        .and_then(Json::as_array)
        .ok_or_else(|| format!("{}: no list field `aten_targets`", path.display()))?
        .iter()
        .map(|t| t.as_str().map(str::to_string).ok_or_else(|| format!("{}: non-string aten target", path.display())))
        .collect::<Result<Vec<_>, _>>()?;
    let tolerances = meta.get("tolerances").cloned().unwrap_or(Json::Array(vec![]));
    Ok(Case { op: field("op")?, ir: field("ir")?, dtype: field("dtype")?, aten_targets, tolerances, name, dir })
}

/// torch.onnx's results by case, when the corpus has them.
pub fn read_torch_onnx(dir: &Path) -> Result<HashMap<String, TorchOnnx>, String> {
    let path = dir.join("torch_onnx_results.jsonl");
    if !path.exists() {
        return Ok(HashMap::new());
    }
    let text = std::fs::read_to_string(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut results = HashMap::new();
    let complete = text.ends_with('\n');
    let lines: Vec<&str> = text.lines().collect();
    for (i, line) in lines.iter().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let r: Json = match parse_result_line(line) {
            Some(r) => r,
            // A results file still being appended to ends in a partial line.
            None if !complete && i + 1 == lines.len() => break,
            None => return Err(format!("{}:{}: not a JSON object", path.display(), i + 1)),
        };
        let case = r["case"].as_str().ok_or_else(|| format!("{}:{}: no `case`", path.display(), i + 1))?;
        let passed = r["passed"].as_bool().ok_or_else(|| format!("{}:{}: no `passed`", path.display(), i + 1))?;
        results.insert(case.to_string(), TorchOnnx { passed, reason: (!passed).then(|| torch_onnx_reason(&r)) });
    }
    Ok(results)
}

/// A line of a results file; Python's json writes the non-JSON tokens NaN and Infinity (in
/// `max_abs_err`), read here as null.
fn parse_result_line(line: &str) -> Option<Json> {
    let line = line.replace("-Infinity", "null").replace("Infinity", "null").replace("NaN", "null");
    serde_json::from_str(&line).ok()
}

fn torch_onnx_reason(r: &Json) -> String {
    let text = |k: &str| r[k].as_str().map(first_line).unwrap_or("").to_string();
    if r["exported"].as_bool() == Some(false) {
        format!("export error: {}: {}", text("export_error_class"), text("export_error"))
    } else if r["ort_error"].is_string() {
        format!("ORT error: {}", text("ort_error"))
    } else {
        format!("numerics: max abs err {}", r["max_abs_err"])
    }
}

// ------------------------------------------------------------------------------------------ export

thread_local! {
    /// Set on export threads: their panics are recorded, not printed.
    static CAPTURE_PANICS: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    static LAST_PANIC: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

/// A panic hook that records panics of export threads (message and location, for the report) and
/// leaves every other thread to the previous hook. Installed once per process.
fn install_panic_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !CAPTURE_PANICS.with(|c| c.get()) {
                return previous(info);
            }
            let payload = info.payload();
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "(non-string payload)".into());
            let at = info.location().map(|l| format!(" (at {}:{})", l.file(), l.line())).unwrap_or_default();
            LAST_PANIC.with(|p| *p.borrow_mut() = Some(format!("{}{at}", first_line(&message))));
        }));
    });
}

/// Export one case to `out`.
pub fn export_case(case: &Case, out: &Path) -> Result<(), ExportFailure> {
    export_case_with(case, out, &fxonnx::ExportOptions::default())
}

/// Export one case to `out` with the given options (the optimizer's differential test exports with
/// and without optimization).
pub fn export_case_with(case: &Case, out: &Path, options: &fxonnx::ExportOptions) -> Result<(), ExportFailure> {
    let attempt = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| -> Result<(), ExportFailure> {
        let program = fxonnx::export(case.dir.join("model.pt2"), options).map_err(classify_export_error)?;
        program.save(out).map_err(|e| ExportFailure::Other(format!("save: {e}")))
    }));
    attempt.unwrap_or_else(|_| {
        let message = LAST_PANIC.with(|p| p.borrow_mut().take()).unwrap_or_else(|| "panicked".into());
        Err(ExportFailure::Panic(message))
    })
}

/// FX targets as `meta.json` spells them: `torch.ops.aten.abs.default` → `aten.abs.default`.
fn meta_target(fx_target: &str) -> String {
    fx_target.strip_prefix("torch.ops.").unwrap_or(fx_target).to_string()
}

fn classify_export_error(e: fxonnx::Error) -> ExportFailure {
    match e.kind() {
        ErrorKind::Translate(TranslateError::Unsupported(ops)) => {
            let targets: BTreeSet<String> = ops.iter().map(|op| meta_target(&op.target)).collect();
            ExportFailure::Unsupported(targets.into_iter().collect())
        }
        ErrorKind::Translate(TranslateError::Node { target, message, hint, .. }) => {
            // As the error says it, hint included.
            let message = hint.as_ref().map_or_else(|| message.clone(), |h| format!("{message}; hint: {h}"));
            ExportFailure::Translation { target: meta_target(target), message }
        }
        _ => ExportFailure::Other(e.to_string()),
    }
}

/// Where the model of a case is written: flat in the work folder (`abs~0-core.onnx`), because making
/// and removing a folder per case costs more than the whole export on some file systems.
fn onnx_path(work: &Path, case: &Case) -> PathBuf {
    work.join(format!("{}.onnx", case.name.replace('/', "~")))
}

/// Export every case, `threads` at a time; results in `cases` order.
pub fn export_all(cases: &[Case], work: &Path, options: &Options) -> Vec<Result<(), ExportFailure>> {
    let (threads, progress) = (options.threads, options.progress);
    let export_options = fxonnx::ExportOptions { opset_version: options.opset, ..Default::default() };
    install_panic_hook();
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Result<(), ExportFailure>>>> = Mutex::new(vec![None; cases.len()]);
    std::thread::scope(|s| {
        for _ in 0..threads.max(1) {
            s.spawn(|| {
                CAPTURE_PANICS.with(|c| c.set(true));
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(case) = cases.get(i) else { break };
                    let result = export_case_with(case, &onnx_path(work, case), &export_options);
                    // A poisoned lock would mean a panic outside catch_unwind: nothing to recover.
                    results.lock().expect("results lock")[i] = Some(result);
                    let n = done.fetch_add(1, Ordering::Relaxed) + 1;
                    if progress && (n.is_multiple_of(200) || n == cases.len()) {
                        eprintln!("conformance: exported {n}/{}", cases.len());
                    }
                }
            });
        }
    });
    results
        .into_inner()
        .expect("results lock")
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err(ExportFailure::Other("not attempted".into()))))
        .collect()
}

// ------------------------------------------------------------------------------------------ checking

/// One line of the checker's manifest.
pub struct ManifestEntry {
    pub case: String,
    pub onnx: PathBuf,
    pub inputs: PathBuf,
    pub expected: PathBuf,
    pub tolerances: Json,
}

impl ManifestEntry {
    pub fn for_case(case: &Case, onnx: PathBuf) -> Self {
        ManifestEntry {
            case: case.name.clone(),
            onnx,
            inputs: case.dir.join("inputs.npz"),
            expected: case.dir.join("expected.npz"),
            tolerances: case.tolerances.clone(),
        }
    }
}

/// The manifest name of a case's check on its second input set (`inputs_alt.npz`).
const ALT_SUFFIX: &str = "@alt";

impl ManifestEntry {
    /// The check on the case's second input set, with other dynamic sizes, when it has one.
    pub fn for_alternative_sizes(case: &Case, onnx: PathBuf) -> Option<Self> {
        let (inputs, expected) = (case.dir.join("inputs_alt.npz"), case.dir.join("expected_alt.npz"));
        (inputs.is_file() && expected.is_file()).then(|| ManifestEntry {
            case: format!("{}{ALT_SUFFIX}", case.name),
            onnx,
            inputs,
            expected,
            tolerances: case.tolerances.clone(),
        })
    }
}

impl CheckResult {
    /// Fold in the result on the second input set: both must pass; its errors are marked as such.
    fn join_alternative(&mut self, alt: CheckResult) {
        self.checker_ok &= alt.checker_ok;
        self.ort_ok &= alt.ort_ok;
        self.numerics_ok &= alt.numerics_ok;
        self.passed &= alt.passed;
        if let Some(e) = alt.error {
            let marked: Vec<String> = e.lines().map(|l| format!("{l} (alternative sizes)")).collect();
            let joined = [self.error.take(), Some(marked.join("\n"))].into_iter().flatten().collect::<Vec<_>>();
            self.error = Some(joined.join("\n"));
        }
    }
}

/// Run `tests/check_cases.py` once over `entries` (files in `work`); one result per entry, in order.
pub fn check(
    python: &str,
    entries: &[ManifestEntry],
    work: &Path,
    jobs: usize,
    progress: bool,
) -> Result<Vec<CheckResult>, String> {
    let manifest = work.join("manifest.jsonl");
    let results_path = work.join("results.jsonl");
    let mut text = String::new();
    for e in entries {
        let line = json!({
            "case": e.case,
            "onnx": e.onnx.to_string_lossy(),
            "inputs": e.inputs.to_string_lossy(),
            "expected": e.expected.to_string_lossy(),
            "tolerances": e.tolerances,
        });
        text.push_str(&line.to_string());
        text.push('\n');
    }
    std::fs::write(&manifest, text).map_err(|e| format!("cannot write {}: {e}", manifest.display()))?;

    let mut cmd = Command::new(python);
    cmd.arg(CHECKER).arg(&manifest).arg(&results_path).arg("--jobs").arg(jobs.max(1).to_string());
    if !progress {
        cmd.arg("--quiet");
    }
    // With progress, the checker's lines go straight to the terminal; otherwise they are kept for the
    // error message.
    cmd.stdout(Stdio::null()).stderr(if progress { Stdio::inherit() } else { Stdio::piped() });
    let out = cmd.output().map_err(|e| format!("cannot run {python} {CHECKER}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{python} {CHECKER} failed ({}):\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }

    let text =
        std::fs::read_to_string(&results_path).map_err(|e| format!("cannot read {}: {e}", results_path.display()))?;
    let results = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .enumerate()
        .map(|(i, l)| {
            serde_json::from_str::<CheckResult>(l).map_err(|e| format!("{}:{}: {e}", results_path.display(), i + 1))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let expected: Vec<&str> = entries.iter().map(|e| e.case.as_str()).collect();
    let got: Vec<&str> = results.iter().map(|r| r.case.as_str()).collect();
    if expected != got {
        return Err(format!("{}: results do not line up with the manifest", results_path.display()));
    }
    Ok(results)
}

// ------------------------------------------------------------------------------------------ the run

/// Export, check and join torch.onnx's results for every case of the corpus folder `dir`.
pub fn run(dir: &Path, options: &Options) -> Result<Run, String> {
    // Absolute paths: the checker may run in another working directory.
    let dir = dir.canonicalize().map_err(|e| format!("corpus folder {}: {e}", dir.display()))?;
    let cases = discover(&dir, options.filter.as_deref())?;
    let torch = read_torch_onnx(&dir)?;

    let temp;
    let work = match &options.work_dir {
        Some(w) => {
            std::fs::create_dir_all(w).map_err(|e| format!("cannot create {}: {e}", w.display()))?;
            w.canonicalize().map_err(|e| format!("{}: {e}", w.display()))?
        }
        None => {
            temp = tempfile::tempdir().map_err(|e| format!("cannot create a temporary folder: {e}"))?;
            temp.path().to_path_buf()
        }
    };

    let start = Instant::now();
    let exports = export_all(&cases, &work, options);
    let export_time = start.elapsed();

    let start = Instant::now();
    let mut checks: HashMap<String, CheckResult> = HashMap::new();
    if let Some(python) = &options.python {
        let mut entries: Vec<ManifestEntry> = Vec::new();
        for (c, _) in cases.iter().zip(&exports).filter(|(_, e)| e.is_ok()) {
            entries.push(ManifestEntry::for_case(c, onnx_path(&work, c)));
            entries.extend(ManifestEntry::for_alternative_sizes(c, onnx_path(&work, c)));
        }
        if !entries.is_empty() {
            let mut alternatives = Vec::new();
            for r in check(python, &entries, &work, options.threads, options.progress)? {
                match r.case.strip_suffix(ALT_SUFFIX) {
                    Some(_) => alternatives.push(r),
                    None => _ = checks.insert(r.case.clone(), r),
                }
            }
            // A case with a second input set (other dynamic sizes) passes only if both pass.
            for alt in alternatives {
                let name = alt.case.trim_end_matches(ALT_SUFFIX).to_string();
                if let Some(first) = checks.get_mut(&name) {
                    first.join_alternative(alt);
                }
            }
        }
    }
    let check_time = start.elapsed();

    let cases = cases
        .into_iter()
        .zip(exports)
        .map(|(case, export)| {
            let check = checks.remove(&case.name);
            let torch_onnx = torch.get(&case.name).cloned();
            CaseResult { case, export, check, torch_onnx }
        })
        .collect();
    Ok(Run {
        label: options.label.clone(),
        filter: options.filter.clone(),
        checked: options.python.is_some(),
        cases,
        export_time,
        check_time,
    })
}

// ------------------------------------------------------------------------------------------ reports

/// Passed / total counts.
#[derive(Clone, Copy, Default)]
struct Tally {
    passed: usize,
    total: usize,
}

impl Tally {
    fn add(&mut self, passed: bool) {
        self.total += 1;
        self.passed += passed as usize;
    }

    fn percent(self) -> String {
        if self.total == 0 {
            "–".into()
        } else {
            format!("{:.1} %", 100.0 * self.passed as f64 / self.total as f64)
        }
    }

    fn cell(self) -> String {
        if self.total == 0 {
            "–".into()
        } else {
            format!("{}/{}", self.passed, self.total)
        }
    }
}

impl Run {
    fn fxonnx_tally(&self) -> Tally {
        let mut t = Tally::default();
        self.cases.iter().for_each(|c| t.add(c.passed()));
        t
    }

    fn torch_tally(&self) -> Tally {
        let mut t = Tally::default();
        self.cases.iter().filter_map(|c| c.torch_onnx.as_ref()).for_each(|r| t.add(r.passed));
        t
    }

    /// Cases torch.onnx passes and fxonnx fails.
    pub fn regressions(&self) -> Vec<&CaseResult> {
        self.cases.iter().filter(|c| c.torch_onnx.as_ref().is_some_and(|t| t.passed) && !c.passed()).collect()
    }

    /// Per target: the failing cases charged to it (a case with several charged targets counts for
    /// each), most first.
    fn failures_by_target(&self) -> Vec<(String, Vec<&CaseResult>)> {
        let mut groups: BTreeMap<String, Vec<&CaseResult>> = BTreeMap::new();
        for c in self.cases.iter().filter(|c| c.failure().is_some()) {
            for target in c.blame() {
                groups.entry(target).or_default().push(c);
            }
        }
        let mut groups: Vec<_> = groups.into_iter().collect();
        groups.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then_with(|| a.0.cmp(&b.0)));
        groups
    }
}

/// The Markdown report.
pub fn render_markdown(run: &Run) -> String {
    let mut md = String::new();
    let fx = run.fxonnx_tally();
    let torch = run.torch_tally();
    let w = &mut md;
    let _ = writeln!(w, "# Operator conformance: fxonnx vs torch.onnx\n");
    let filter = run.filter.as_deref().map(|f| format!(", cases matching `{f}`")).unwrap_or_default();
    let _ = writeln!(
        w,
        "Corpus `{}`{filter}: {} cases. Generated by `cargo run --release --example conformance`; do not edit.\n\
         A case passes when the export succeeds, `onnx.checker` (full check) accepts the model, and onnxruntime (CPU) \
         reproduces every output's shape, dtype and values within the case's tolerances (`tests/check_cases.py`).\n",
        run.label,
        run.cases.len()
    );
    if !run.checked {
        let _ = writeln!(w, "**The numeric checks did not run (no Python), so no fxonnx case counts as passed; exported cases say so below.**\n");
    }
    let _ = writeln!(w, "| exporter | passed | total | % |\n|---|---:|---:|---:|");
    let _ = writeln!(w, "| fxonnx | {} | {} | {} |", fx.passed, fx.total, fx.percent());
    let _ = writeln!(w, "| torch.onnx | {} | {} | {} |\n", torch.passed, torch.total, torch.percent());

    let with_torch: Vec<_> =
        run.cases.iter().filter_map(|c| c.torch_onnx.as_ref().map(|t| (c.passed(), t.passed))).collect();
    let count = |f: fn(&(bool, bool)) -> bool| with_torch.iter().filter(|p| f(p)).count();
    let _ = writeln!(
        w,
        "On the {} cases torch.onnx was run on: both pass {}, only fxonnx {}, only torch.onnx {}, neither {}.\n",
        with_torch.len(),
        count(|&(f, t)| f && t),
        count(|&(f, t)| f && !t),
        count(|&(f, t)| !f && t),
        count(|&(f, t)| !f && !t),
    );

    let mut classes: BTreeMap<FailureClass, usize> = BTreeMap::new();
    run.cases.iter().filter_map(|c| c.failure()).for_each(|(k, _)| *classes.entry(k).or_default() += 1);
    let _ = writeln!(w, "fxonnx failures by first failing stage:\n\n| stage | cases |\n|---|---:|");
    for k in FailureClass::ALL {
        let _ = writeln!(w, "| {} | {} |", k.label(), classes.get(&k).copied().unwrap_or(0));
    }

    let regressions = run.regressions();
    let _ = writeln!(w, "\n## Cases torch.onnx passes and fxonnx fails ({})\n", regressions.len());
    if !regressions.is_empty() {
        let _ = writeln!(w, "| case | ATen targets | fxonnx |\n|---|---|---|");
        for c in regressions {
            let _ = writeln!(w, "| `{}` | {} | {} |", c.case.name, targets_cell(&c.case), cell(&reason_or_status(c)));
        }
    }

    let groups = run.failures_by_target();
    let _ = writeln!(
        w,
        "\n## fxonnx failures by target ({} targets)\n\nA failing case is charged to the targets the exporter names \
         (untranslated, or the node whose translation refused); failures after the export are charged to every \
         target of the case but `_operator.getitem`. *alone*: cases where it is the only target charged.\n",
        groups.len()
    );
    let _ = writeln!(w, "| target | failing | alone | by stage | example |\n|---|---:|---:|---|---|");
    for (target, group) in &groups {
        let alone = group.iter().filter(|c| c.blame().len() == 1).count();
        let mut by_class: BTreeMap<FailureClass, usize> = BTreeMap::new();
        group.iter().filter_map(|c| c.failure()).for_each(|(k, _)| *by_class.entry(k).or_default() += 1);
        let stages: Vec<String> = by_class.iter().map(|(k, n)| format!("{} {n}", k.label())).collect();
        let example = group[0];
        let reason = example.failure().map(|(_, r)| r).unwrap_or_default();
        let _ = writeln!(
            w,
            "| `{target}` | {} | {alone} | {} | `{}`: {} |",
            group.len(),
            stages.join(", "),
            example.case.name,
            cell(&reason)
        );
    }

    let mut per_target: BTreeMap<&str, (Tally, Tally)> = BTreeMap::new();
    for c in &run.cases {
        let targets: Vec<&str> = if c.case.aten_targets.is_empty() {
            vec!["(no call_function)"]
        } else {
            c.case.aten_targets.iter().map(String::as_str).collect()
        };
        for t in targets {
            let entry = per_target.entry(t).or_default();
            entry.0.add(c.passed());
            if let Some(torch) = &c.torch_onnx {
                entry.1.add(torch.passed);
            }
        }
    }
    let _ = writeln!(
        w,
        "\n## By ATen target ({})\n\nA case counts for every target in its graph; ⚠ marks targets where fxonnx passes fewer cases than torch.onnx.\n\n\
         | target | fxonnx | torch.onnx |\n|---|---:|---:|",
        per_target.len()
    );
    for (t, (f, tt)) in &per_target {
        let mark = if f.passed < tt.passed { " ⚠" } else { "" };
        let _ = writeln!(w, "| `{t}` | {}{mark} | {} |", f.cell(), tt.cell());
    }

    let failing: Vec<&CaseResult> = run.cases.iter().filter(|c| !c.passed()).collect();
    let _ = writeln!(w, "\n## Failing cases ({})\n\n| case | reason | torch.onnx |\n|---|---|---|", failing.len());
    for c in failing {
        let torch = match &c.torch_onnx {
            Some(t) if t.passed => "passes".to_string(),
            Some(_) => "fails".to_string(),
            None => "–".to_string(),
        };
        let _ = writeln!(w, "| `{}` | {} | {torch} |", c.case.name, cell(&reason_or_status(c)));
    }
    md
}

/// Per-case results for tooling.
pub fn render_json(run: &Run) -> String {
    let fx = run.fxonnx_tally();
    let torch = run.torch_tally();
    let cases: Vec<Json> = run
        .cases
        .iter()
        .map(|c| {
            let (class, reason) = match c.failure() {
                Some((k, r)) => (Some(k.label()), Some(r)),
                None => (None, None),
            };
            let check = c.check.as_ref();
            json!({
                "case": c.case.name,
                "op": c.case.op,
                "ir": c.case.ir,
                "dtype": c.case.dtype,
                "aten_targets": c.case.aten_targets,
                "exported": c.exported(),
                "checker_ok": check.map(|r| r.checker_ok),
                "ort_ok": check.map(|r| r.ort_ok),
                "numerics_ok": check.map(|r| r.numerics_ok),
                "max_abs_diff": check.and_then(|r| r.max_abs_diff.clone()),
                "passed": c.passed(),
                "failure_class": class,
                "reason": reason,
                "blame": c.failure().map(|_| c.blame()),
                "error": full_error(c),
                "torch_onnx_passed": c.torch_onnx.as_ref().map(|t| t.passed),
                "torch_onnx_reason": c.torch_onnx.as_ref().and_then(|t| t.reason.clone()),
            })
        })
        .collect();
    let head = json!({
        "corpus": run.label,
        "filter": run.filter,
        "checked": run.checked,
        "fxonnx": {"passed": fx.passed, "total": fx.total},
        "torch_onnx": {"passed": torch.passed, "total": torch.total},
    });
    // One case per line: a rerun's diff shows exactly the cases that changed.
    let mut text = head.to_string();
    text.pop(); // the closing brace; the case list goes inside
    text.push_str(",\"cases\":[\n");
    text.push_str(&cases.iter().map(Json::to_string).collect::<Vec<_>>().join(",\n"));
    text.push_str("\n]}\n");
    text
}

/// The whole error text of a failing case (every line; the reason is the first one).
fn full_error(c: &CaseResult) -> Option<String> {
    match &c.export {
        Err(ExportFailure::Translation { target, message }) => Some(format!("{target}: {message}")),
        Err(ExportFailure::Unsupported(t)) => Some(format!("unsupported: {}", t.join(", "))),
        Err(ExportFailure::Other(m) | ExportFailure::Panic(m)) => Some(m.clone()),
        Ok(()) => c.check.as_ref().and_then(|r| r.error.clone()),
    }
}

fn reason_or_status(c: &CaseResult) -> String {
    c.failure().map(|(_, r)| r).unwrap_or_else(|| {
        if c.exported() {
            "exported, not checked".into()
        } else {
            String::new()
        }
    })
}

fn targets_cell(case: &Case) -> String {
    case.aten_targets.iter().map(|t| format!("`{t}`")).collect::<Vec<_>>().join(", ")
}

/// Text made safe for one Markdown table cell, shortened: the JSON report has the full text.
fn cell(text: &str) -> String {
    const MAX: usize = 240;
    let mut s: String = text.replace('|', "\\|").replace('\n', " ");
    if s.chars().count() > MAX {
        s = s.chars().take(MAX).collect::<String>() + "…";
    }
    s
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or("").trim_end()
}

// ------------------------------------------------------------------------------------------ fixture subset

/// The translation files (`translations/*.rs`), each an op family.
fn families() -> Vec<(&'static str, fxonnx::TranslationTable)> {
    fxonnx::internals::FAMILIES
        .iter()
        .map(|(name, register)| {
            let mut t = fxonnx::TranslationTable::new();
            register(&mut t);
            (*name, t)
        })
        .collect()
}

/// The table key of a `meta.json` target (`aten.abs.default` → `aten::abs.default`; Python callables
/// such as `_operator.getitem` are keyed as they are).
fn table_key(target: &str) -> String {
    if target.starts_with("_operator.") {
        target.to_string()
    } else {
        fxonnx::internals::target_key(&format!("torch.ops.{target}"))
    }
}

/// Copy up to `per_family` passing cases per translation family into `dest` (replacing the case
/// folders already there), with the matching lines of `index.jsonl` and `torch_onnx_results.jsonl`.
/// Picks small cases first (at most 64 KiB), each of another OpInfo op and with a target not yet
/// covered, alternating training-IR and core-ATen cases.
/// Returns the copied case names.
pub fn copy_subset(run: &Run, source: &Path, per_family: usize, dest: &Path) -> Result<Vec<String>, String> {
    const MAX_CASE_BYTES: u64 = 64 * 1024;
    if !run.checked {
        return Err("--copy-subset needs the numeric checks (set FXONNX_PYTHON) to know which cases pass".into());
    }
    let families = families();
    let family_of = |target: &str| -> Vec<&'static str> {
        let key = table_key(target);
        families.iter().filter(|(_, t)| !t.candidates(&key).is_empty()).map(|(n, _)| *n).collect()
    };
    let mut candidates: Vec<(u64, &Case, BTreeSet<&'static str>)> = Vec::new();
    for c in run.cases.iter().filter(|c| c.passed()) {
        let mut size = 0;
        for f in CASE_FILES {
            let path = c.case.dir.join(f);
            size += std::fs::metadata(&path).map_err(|e| format!("{}: {e}", path.display()))?.len();
        }
        size +=
            ALT_FILES.iter().filter_map(|f| std::fs::metadata(c.case.dir.join(f)).ok()).map(|m| m.len()).sum::<u64>();
        if size <= MAX_CASE_BYTES {
            let fams = c.case.aten_targets.iter().flat_map(|t| family_of(t)).collect();
            candidates.push((size, &c.case, fams));
        }
    }
    candidates.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.name.cmp(&b.1.name)));

    let mut picked: Vec<&Case> = Vec::new();
    let mut ops: BTreeSet<&str> = BTreeSet::new();
    let mut targets: BTreeSet<&str> = BTreeSet::new();
    for (family, _) in &families {
        let of_family: Vec<&Case> =
            candidates.iter().filter(|(_, _, f)| f.contains(family)).map(|(_, c, _)| *c).collect();
        let mut training = of_family.iter().filter(|c| c.ir != "core").peekable();
        let mut core = of_family.iter().filter(|c| c.ir == "core").peekable();
        let mut n = 0;
        let mut want_core = false;
        while n < per_family && (training.peek().is_some() || core.peek().is_some()) {
            let next = if want_core {
                core.next().or_else(|| training.next())
            } else {
                training.next().or_else(|| core.next())
            };
            let Some(case) = next else { break };
            // Something new each time: another OpInfo op, and a target no picked case has yet.
            let new_target = case.aten_targets.iter().any(|t| !targets.contains(t.as_str()));
            if new_target && !ops.contains(case.op.as_str()) {
                ops.insert(case.op.as_str());
                targets.extend(case.aten_targets.iter().map(String::as_str));
                picked.push(case);
                n += 1;
                want_core = !want_core;
            }
        }
    }
    picked.sort_by(|a, b| a.name.cmp(&b.name));

    clear_cases(dest)?;
    for case in &picked {
        let to = dest.join(&case.name);
        std::fs::create_dir_all(&to).map_err(|e| format!("cannot create {}: {e}", to.display()))?;
        let alt = ALT_FILES.iter().filter(|f| case.dir.join(f).is_file());
        for f in CASE_FILES.iter().chain(alt) {
            // read + write rather than fs::copy: the corpus files are read-only, the copies should not be.
            let bytes = std::fs::read(case.dir.join(f)).map_err(|e| format!("{}: {e}", case.dir.join(f).display()))?;
            std::fs::write(to.join(f), bytes).map_err(|e| format!("{}: {e}", to.join(f).display()))?;
        }
    }
    let names: BTreeSet<&str> = picked.iter().map(|c| c.name.as_str()).collect();
    for list in ["index.jsonl", "torch_onnx_results.jsonl"] {
        let from = source.join(list);
        if !from.exists() {
            continue;
        }
        let text = std::fs::read_to_string(&from).map_err(|e| format!("cannot read {}: {e}", from.display()))?;
        let mut kept = String::new();
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let Some(v) = parse_result_line(line) else { continue };
            if v["case"].as_str().is_some_and(|c| names.contains(c)) {
                kept.push_str(line);
                kept.push('\n');
            }
        }
        std::fs::write(dest.join(list), kept)
            .map_err(|e| format!("cannot write {}: {e}", dest.join(list).display()))?;
    }
    Ok(picked.iter().map(|c| c.name.clone()).collect())
}

/// Remove the case folders under `dest` (and op folders left empty); other files stay.
fn clear_cases(dest: &Path) -> Result<(), String> {
    if !dest.exists() {
        return std::fs::create_dir_all(dest).map_err(|e| format!("cannot create {}: {e}", dest.display()));
    }
    let mut dirs = Vec::new();
    collect_case_dirs(dest, &mut dirs)?;
    for dir in dirs {
        // Only the files a case consists of: a wrong DEST loses nothing else.
        for f in CASE_FILES {
            let path = dir.join(f);
            if path.exists() {
                std::fs::remove_file(&path).map_err(|e| format!("cannot remove {}: {e}", path.display()))?;
            }
        }
        let _ = std::fs::remove_dir(&dir); // fails, harmlessly, if something else is inside
        if let Some(parent) = dir.parent().filter(|p| *p != dest) {
            let _ = std::fs::remove_dir(parent); // the op folder, once empty
        }
    }
    Ok(())
}
