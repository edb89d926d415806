//! `fxonnx._fxonnx`: the Rust library as a Python extension module. Thin on purpose: options in,
//! an exported program or a typed exception out; the Python API (`python/fxonnx/`) does the rest.

use std::ffi::OsString;
use std::path::PathBuf;

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;
use pyo3::types::PyBytes;
use pyo3::types::PyDict;

create_exception!(
    _fxonnx,
    ExportError,
    PyException,
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

/// An exported model (`fxonnx.ONNXProgram` wraps it).
#[pyclass(unsendable, module = "fxonnx._fxonnx")]
struct Program {
    inner: fxonnx::OnnxProgram,
}

#[pymethods]
impl Program {
    /// The serialized ModelProto, weights inline.
    fn model_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.inner.model_bytes())
    }

    /// Write the model (and with external data, `<file>.data` beside it); without initializers,
    /// a weight-free model whose weights are graph inputs (`apply_weights` puts them back).
    #[pyo3(signature = (path, include_initializers=true))]
    fn save(&mut self, path: PathBuf, include_initializers: bool) -> PyResult<()> {
        self.inner.set_include_initializers(include_initializers);
        let saved = self.inner.save(path);
        self.inner.set_include_initializers(true);
        saved.map_err(|e| to_py(&e))
    }

    /// Write genai_config.json beside the model saved at `model_path` for ONNX Runtime GenAI (with
    /// `model_dir`, a transformers checkpoint folder, its values and tokenizer files); returns the
    /// files written and the warnings.
    #[pyo3(signature = (model_path, model_dir=None))]
    fn write_genai_config(
        &self,
        model_path: PathBuf,
        model_dir: Option<PathBuf>,
    ) -> PyResult<(Vec<PathBuf>, Vec<String>)> {
        use fxonnx::genai::GenaiError as G;
        let files = fxonnx::genai::write_config(&self.inner.model(), &model_path, model_dir.as_deref());
        files.map(|f| (f.written, f.warnings)).map_err(|e| match e {
            G::Io { .. } => SaveError::new_err(e.to_string()),
            _ => OptionsError::new_err(e.to_string()),
        })
    }

    /// Save weights beside the model (`<file>.data`) from now on, or inline.
    fn set_external_data(&mut self, external: bool) {
        self.inner.set_external_data(external);
    }

    /// Optimize a program exported with `optimize=False`; returns the node counts before and after.
    fn optimize(&mut self) -> (usize, usize) {
        let stats = self.inner.optimize();
        (stats.nodes_before, stats.nodes_after)
    }

    #[getter]
    fn warnings(&self) -> Vec<String> {
        self.inner.warnings().to_vec()
    }

    #[getter]
    fn report_path(&self) -> Option<PathBuf> {
        self.inner.report_path().map(PathBuf::from)
    }

    #[getter]
    fn node_count(&self) -> usize {
        self.inner.node_count()
    }
}

/// Export `source` (the bytes of a .pt2 archive, or its path) with `options`, named as
/// `fxonnx::ExportOptions`'s fields (the library maps them: defaults and checks are its own); with
/// `output`, the model is saved there as part of the export (and its report covers it).
#[pyfunction]
#[pyo3(signature = (source, *, output=None, **options))]
fn export(
    source: &Bound<'_, PyAny>,
    output: Option<PathBuf>,
    options: Option<&Bound<'_, PyDict>>,
) -> PyResult<Program> {
    let py = source.py();
    let json = match options {
        Some(o) => py.import("json")?.call_method1("dumps", (o,))?.extract::<String>()?,
        None => "{}".to_string(),
    };
    let options = fxonnx::ExportOptions::from_json(&json).map_err(|e| to_py(&e))?;
    let result = if source.is_instance_of::<PyBytes>() {
        let data: PyBackedBytes = source.extract()?;
        if output.is_some() {
            return Err(OptionsError::new_err("save an export from bytes with ONNXProgram.save"));
        }
        fxonnx::export_bytes(bytes::Bytes::from_owner(data), &options)
    } else {
        let path: PathBuf = source.extract()?;
        match output {
            Some(out) => fxonnx::export_to_file(path, out, &options),
            None => fxonnx::export(path, &options),
        }
    };
    result.map(|inner| Program { inner }).map_err(|e| to_py(&e))
}

/// Put the weights of `archive` back into the weight-free model at `model` and write `output`;
/// returns how many weights were put back.
#[pyfunction]
#[pyo3(signature = (model, archive, output, *, external_data=false))]
fn apply_weights(model: PathBuf, archive: PathBuf, output: PathBuf, external_data: bool) -> PyResult<usize> {
    use fxonnx::WeightsError as W;
    fxonnx::apply_weights(model, archive, output, external_data).map_err(|e| {
        let message = e.to_string();
        match e {
            W::Archive(_) => ArchiveError::new_err(message),
            W::Save(_) | W::Io { .. } => SaveError::new_err(message),
            _ => ExportError::new_err(message),
        }
    })
}

/// Run the `fxonnx` command line on `args` (program name first); returns its exit status.
#[pyfunction]
fn cli(args: Vec<OsString>) -> i32 {
    fxonnx::install_truncation_guard();
    fxonnx::cli::run(args)
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
        _ => InternalError::new_err(message),
    };
    let stage = match e.kind() {
        K::Options(_) => Some("options"),
        K::Report { .. } => Some("report"),
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
    m.add_function(wrap_pyfunction!(export, m)?)?;
    m.add_function(wrap_pyfunction!(cli, m)?)?;
    m.add_function(wrap_pyfunction!(apply_weights, m)?)?;
    m.add_class::<Program>()?;
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
