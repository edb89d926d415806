//! `fxonnx._fxonnx`: the Rust library as a Python extension module. Thin on purpose: options in,
//! an exported program or a typed exception out; the Python API (`python/fxonnx/`) does the rest.
//!
//! Every call that works releases the GIL (other threads run meanwhile), an export stops between
//! stages when Ctrl-C was pressed (`KeyboardInterrupt`, nothing written), a panic is an
//! `InternalError` (never pyo3's `PanicException`, which `except Exception` does not catch), and
//! an exported program is usable from any thread (it lives on a thread of its own). An archive changed in place after the export
//! is an error on `save` and `model_bytes`: the module installs the recovering truncation guard,
//! so that reading a truncated archive never kills the interpreter with SIGBUS.

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use pyo3::create_exception;
use pyo3::exceptions::{PyKeyboardInterrupt, PyRuntimeError};
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;
use pyo3::types::PyBytes;
use pyo3::types::PyDict;

mod entries;

// A RuntimeError, as torch.onnx's `OnnxExporterError` is: code that catches the one catches the other.
create_exception!(
    _fxonnx,
    ExportError,
    PyRuntimeError,
    "An export failed; `stage`, `node`, `target` and `hint` say where and what to do."
);
create_exception!(_fxonnx, OptionsError, ExportError, "The options of the call cannot be used with this program.");
create_exception!(
    _fxonnx,
    ArchiveError,
    ExportError,
    "The .pt2 archive cannot be read: corrupt, truncated or not written by torch.export.save."
);
create_exception!(
    _fxonnx,
    ProgramError,
    ExportError,
    "The program in the archive is inconsistent or uses what ONNX cannot express."
);
create_exception!(_fxonnx, TranslationError, ExportError, "A node of the program could not be translated into ONNX.");
create_exception!(
    _fxonnx,
    UnsupportedOpsError,
    TranslationError,
    "Operators without an ONNX translation; the message lists every one and its nodes."
);
create_exception!(_fxonnx, SaveError, ExportError, "The model could not be written.");
create_exception!(_fxonnx, InternalError, ExportError, "A bug in fxonnx; please report it with the archive.");

/// Work for the thread that owns an exported program.
type Job = Box<dyn FnOnce(&mut fxonnx::OnnxProgram) + Send>;

/// An exported model (`fxonnx.ONNXProgram` wraps it), usable from any thread. The program itself
/// lives on a thread of its own, which runs the calls one at a time: its graph shares strings and
/// metadata through `Rc`, so it never moves between threads.
#[pyclass(frozen, module = "fxonnx._fxonnx")]
struct Program {
    jobs: std::sync::mpsc::Sender<Job>,
}

impl Program {
    /// Run `f` on the program's thread, without the GIL meanwhile, a panic made an `InternalError`.
    fn call<T: Send + 'static>(
        &self,
        py: Python<'_>,
        what: &str,
        f: impl FnOnce(&mut fxonnx::OnnxProgram) -> Result<T, fxonnx::Error> + Send + 'static,
    ) -> PyResult<T> {
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        let job: Job = Box::new(move |p| {
            let _ = tx.send(no_panic(|| f(p)));
        });
        self.jobs.send(job).map_err(|_| internal(what, "the program's thread has ended"))?;
        match py.detach(move || rx.recv()) {
            Ok(Ok(result)) => result.map_err(|e| to_py(&e)),
            Ok(Err(panic)) => Err(internal(what, &panic)),
            Err(_) => Err(internal(what, "the program's thread has ended")),
        }
    }
}

#[pymethods]
impl Program {
    /// The serialized ModelProto, weights inline. Fails when the archive the weights are read
    /// from changed in place since the export.
    fn model_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = self.call(py, "model_bytes", |p| {
            p.check_archive()?;
            let bytes = p.model_bytes();
            // Changed while read: the bytes may mix two archives' weights.
            p.check_archive()?;
            Ok(bytes)
        })?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// Write the model (and with external data, `<file>.data` beside it); without initializers, a
    /// weight-free model whose weights are graph inputs (`apply_weights` puts them back). The
    /// options are this save's: set, used and restored in one call on the program's thread, so
    /// that two threads saving one program with different options each get their own.
    #[pyo3(signature = (path, include_initializers=true, external_data=false))]
    fn save(&self, py: Python<'_>, path: PathBuf, include_initializers: bool, external_data: bool) -> PyResult<()> {
        self.call(py, "save", move |p| {
            let external_before = p.external_data();
            p.set_include_initializers(include_initializers);
            p.set_external_data(external_data);
            let saved = p.save(path);
            p.set_include_initializers(true);
            p.set_external_data(external_before);
            saved
        })
    }

    /// Write genai_config.json beside the model saved at `model_path` for ONNX Runtime GenAI (with
    /// `model_dir`, a transformers checkpoint folder, its values and tokenizer files); returns the
    /// files written and the warnings.
    #[pyo3(signature = (model_path, model_dir=None))]
    fn write_genai_config(
        &self,
        py: Python<'_>,
        model_path: PathBuf,
        model_dir: Option<PathBuf>,
    ) -> PyResult<(Vec<PathBuf>, Vec<String>)> {
        use fxonnx::genai::GenaiError as G;
        let files = self.call(py, "write_genai_config", move |p| {
            Ok(fxonnx::genai::write_config(&p.model(), &model_path, model_dir.as_deref()))
        })?;
        files.map(|f| (f.written, f.warnings)).map_err(|e| match e {
            G::Io { .. } => SaveError::new_err(e.to_string()),
            _ => OptionsError::new_err(e.to_string()),
        })
    }

    /// Optimize a program exported with `optimize=False`; returns the node counts before and after.
    fn optimize(&self, py: Python<'_>) -> PyResult<(usize, usize)> {
        self.call(py, "optimize", |p| {
            let stats = p.optimize();
            Ok((stats.nodes_before, stats.nodes_after))
        })
    }

    #[getter]
    fn warnings(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        self.call(py, "warnings", |p| Ok(p.warnings().to_vec()))
    }

    #[getter]
    fn report_path(&self, py: Python<'_>) -> PyResult<Option<PathBuf>> {
        self.call(py, "report_path", |p| Ok(p.report_path().map(PathBuf::from)))
    }

    /// The default-domain opset the model imports.
    #[getter]
    fn opset(&self, py: Python<'_>) -> PyResult<i64> {
        self.call(py, "opset", |p| Ok(p.opset()))
    }

    #[getter]
    fn node_count(&self, py: Python<'_>) -> PyResult<usize> {
        self.call(py, "node_count", |p| Ok(p.node_count()))
    }

    #[getter]
    fn initializer_count(&self, py: Python<'_>) -> PyResult<usize> {
        self.call(py, "initializer_count", |p| Ok(p.initializer_count()))
    }

    /// Total bytes of the initializers.
    #[getter]
    fn weight_bytes(&self, py: Python<'_>) -> PyResult<usize> {
        self.call(py, "weight_bytes", |p| Ok(p.weight_bytes()))
    }

    /// The model in ONNX's text form (`onnx.printer`'s), weights as type and shape only.
    fn text(&self, py: Python<'_>) -> PyResult<String> {
        self.call(py, "text", |p| Ok(p.text()))
    }
}

/// `f`'s result, or the message of its panic.
fn no_panic<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).map_err(|panic| {
        let text = panic.downcast_ref::<&str>().map(|s| s.to_string());
        text.or_else(|| panic.downcast_ref::<String>().cloned()).unwrap_or_else(|| "a panic without a message".into())
    })
}

/// The `InternalError` of a panic in `what`.
fn internal(what: &str, message: &str) -> PyErr {
    InternalError::new_err(format!(
        "internal error in {what}: {message}; this is a bug in fxonnx, please report it with the archive"
    ))
}

/// Wait for `rx`'s value without the GIL, asking Python every millisecond whether a signal came
/// (Ctrl-C: Python runs its handlers only on the main thread, and only when asked). Small models
/// export in a few milliseconds: a coarser poll would only see the signal after the save. The first
/// exception a handler raises sets `stop` (which the export reads between stages) and is
/// returned with the value, to be raised.
fn wait_interruptibly<T: Send>(
    py: Python<'_>,
    mut rx: std::sync::mpsc::Receiver<T>,
    stop: &AtomicBool,
) -> (Option<T>, Option<PyErr>) {
    use std::sync::mpsc::RecvTimeoutError;
    let mut raised = None;
    loop {
        let (back, got) = py.detach(move || {
            let got = rx.recv_timeout(std::time::Duration::from_millis(1));
            (rx, got)
        });
        rx = back;
        match got {
            Ok(value) => return (Some(value), raised),
            Err(RecvTimeoutError::Disconnected) => return (None, raised),
            Err(RecvTimeoutError::Timeout) if raised.is_none() => {
                if let Err(e) = py.check_signals() {
                    stop.store(true, Ordering::Relaxed);
                    raised = Some(e);
                }
            }
            Err(RecvTimeoutError::Timeout) => {}
        }
    }
}

/// Export `source` (the bytes of a .pt2 archive, or its path) with `options`, named as
/// `fxonnx::ExportOptions`'s fields (the library maps them: defaults and checks are its own); with
/// `output`, the model is saved there as part of the export (and its report covers it).
#[pyfunction]
#[pyo3(signature = (source, *, output=None, **options))]
fn export(
    py: Python<'_>,
    source: &Bound<'_, PyAny>,
    output: Option<PathBuf>,
    options: Option<&Bound<'_, PyDict>>,
) -> PyResult<Program> {
    let json = match options {
        Some(o) => py.import("json")?.call_method1("dumps", (o,))?.extract::<String>()?,
        None => "{}".to_string(),
    };
    let options = fxonnx::ExportOptions::from_json(&json).map_err(|e| to_py(&e))?;
    // Asked between stages: set when Ctrl-C was pressed meanwhile.
    let stop = Arc::new(AtomicBool::new(false));
    let stop_asked = stop.clone();
    let interrupt: fxonnx::Interrupt = Arc::new(move || stop_asked.load(Ordering::Relaxed));
    let options = fxonnx::ExportOptions { interrupt: Some(interrupt), ..options };
    enum Input {
        Entries(Vec<(String, bytes::Bytes)>),
        Bytes(bytes::Bytes),
        Path(PathBuf),
    }
    let input = if let Ok(dict) = source.cast::<PyDict>() {
        if output.is_some() {
            return Err(OptionsError::new_err("save an export from memory with ONNXProgram.save"));
        }
        Input::Entries(entries::from_dict(dict)?)
    } else if source.is_instance_of::<PyBytes>() {
        let data: PyBackedBytes = source.extract()?;
        if output.is_some() {
            return Err(OptionsError::new_err("save an export from bytes with ONNXProgram.save"));
        }
        Input::Bytes(bytes::Bytes::from_owner(data))
    } else {
        Input::Path(source.extract()?)
    };
    // The export runs on the thread that then keeps the program ([`Program`]), while this one
    // waits without the GIL: other Python threads run meanwhile.
    let (ready_tx, ready_rx) = std::sync::mpsc::sync_channel(1);
    let (jobs, jobs_rx) = std::sync::mpsc::channel::<Job>();
    let owner = move || {
        let exported = no_panic(|| match input {
            Input::Entries(entries) => fxonnx::export_entries(entries, &options),
            Input::Bytes(data) => fxonnx::export_bytes(data, &options),
            Input::Path(path) => match output {
                Some(out) => fxonnx::export_to_file(path, out, &options),
                None => fxonnx::export(path, &options),
            },
        });
        let mut program = match exported {
            Ok(Ok(program)) => program,
            Ok(Err(e)) => {
                let _ = ready_tx.send(Ok(Err(e)));
                return;
            }
            Err(panic) => {
                let _ = ready_tx.send(Err(panic));
                return;
            }
        };
        let _ = ready_tx.send(Ok(Ok(())));
        // Until the Python object goes (its sender with it).
        for job in jobs_rx {
            job(&mut program);
        }
    };
    std::thread::Builder::new()
        .name("fxonnx-program".into())
        .spawn(owner)
        .map_err(|e| InternalError::new_err(format!("cannot start the export's thread: {e}")))?;
    let (outcome, raised) = wait_interruptibly(py, ready_rx, &stop);
    if let Some(e) = raised {
        // Ctrl-C: raised whatever came of the export (after the save, the model stays written).
        return Err(e);
    }
    match outcome {
        Some(Ok(Ok(()))) => Ok(Program { jobs }),
        Some(Ok(Err(e))) => Err(to_py(&e)),
        Some(Err(panic)) => Err(internal("export", &panic)),
        None => Err(internal("export", "the export's thread ended without an answer")),
    }
}

/// The targets of a program (its archive entries, bytes or path) that no translation serves:
/// `(target, table key, nodes, reason it is refused)` each.
#[pyfunction]
fn untranslated_ops(source: &Bound<'_, PyAny>) -> PyResult<Vec<entries::Untranslated>> {
    entries::untranslated_ops(source).map_err(|e| to_py(&e))
}

/// Put the weights of `archive` back into the weight-free model at `model` and write `output`;
/// returns how many weights were put back.
#[pyfunction]
#[pyo3(signature = (model, archive, output, *, external_data=false))]
fn apply_weights(
    py: Python<'_>,
    model: PathBuf,
    archive: PathBuf,
    output: PathBuf,
    external_data: bool,
) -> PyResult<usize> {
    use fxonnx::WeightsError as W;
    let result = py.detach(|| no_panic(|| fxonnx::apply_weights(model, archive, output, external_data)));
    result.map_err(|panic| internal("apply_weights", &panic))?.map_err(|e| {
        let message = e.to_string();
        match e {
            W::Archive(_) => ArchiveError::new_err(message),
            W::Save(_) | W::Io { .. } | W::NotAFile { .. } => SaveError::new_err(message),
            _ => ExportError::new_err(message),
        }
    })
}

/// Run the `fxonnx` command line on `args` (program name first); returns its exit status.
#[pyfunction]
fn cli(py: Python<'_>, args: Vec<OsString>) -> PyResult<i32> {
    py.detach(|| no_panic(|| fxonnx::cli::run(args))).map_err(|panic| internal("the command line", &panic))
}

/// The exception of an export error's kind, with `stage`, `node`, `target`, `hint` and
/// `report_path` set from the error.
fn to_py(e: &fxonnx::Error) -> PyErr {
    use fxonnx::{ErrorKind as K, TranslateError as T};
    let message = e.to_string();
    let err = match e.kind() {
        K::Options(_) => OptionsError::new_err(message),
        K::Archive(_) | K::Translate(T::Archive(_)) => ArchiveError::new_err(message),
        K::Program(_) | K::Translate(T::Program { .. }) => ProgramError::new_err(message),
        K::Translate(T::Unsupported(_)) => UnsupportedOpsError::new_err(message),
        K::Translate(_) => TranslationError::new_err(message),
        K::Save(_) | K::Report { .. } => SaveError::new_err(message),
        K::Interrupted { .. } => PyKeyboardInterrupt::new_err(message),
        _ => InternalError::new_err(message),
    };
    let stage = match e.kind() {
        K::Options(_) => Some("options"),
        K::Report { .. } => Some("report"),
        K::Interrupted { .. } => Some("interrupt"),
        _ => e.stage().map(fxonnx::Stage::short_name),
    };
    Python::attach(|py| {
        let value = err.value(py);
        // Attribute errors cannot happen on a fresh exception instance; ignoring them keeps the
        // original error.
        let _ = value.setattr("stage", stage);
        let _ = value.setattr("node", e.node());
        let _ = value.setattr("target", e.target());
        let _ = value.setattr("hint", e.hint());
        let _ = value.setattr("report_path", e.report_path().map(PathBuf::from));
    });
    err
}

#[pymodule]
fn _fxonnx(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // An archive truncated while mapped: zeros and an error, not SIGBUS (see the module docs).
    fxonnx::install_recovering_truncation_guard();
    m.add_function(wrap_pyfunction!(export, m)?)?;
    m.add_function(wrap_pyfunction!(cli, m)?)?;
    m.add_function(wrap_pyfunction!(apply_weights, m)?)?;
    m.add_function(wrap_pyfunction!(untranslated_ops, m)?)?;
    m.add_class::<Program>()?;
    // Defaults come from the library, so that the package does not keep copies that can drift.
    m.add("DEFAULT_OPSET", fxonnx::DEFAULT_OPSET)?;
    m.add("DEFAULT_QUANTIZE_BLOCK", fxonnx::WeightQuantization::DEFAULT_BLOCK)?;
    let py = m.py();
    m.add("ExportError", py.get_type::<ExportError>())?;
    m.add("OptionsError", py.get_type::<OptionsError>())?;
    m.add("ArchiveError", py.get_type::<ArchiveError>())?;
    m.add("ProgramError", py.get_type::<ProgramError>())?;
    m.add("TranslationError", py.get_type::<TranslationError>())?;
    m.add("UnsupportedOpsError", py.get_type::<UnsupportedOpsError>())?;
    m.add("SaveError", py.get_type::<SaveError>())?;
    m.add("InternalError", py.get_type::<InternalError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
