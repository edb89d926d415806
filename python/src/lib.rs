//! `fxonnx._fxonnx`: the Rust library as a Python extension module. Thin on purpose: options in,
//! an exported program or a typed exception out; the Python API (`python/fxonnx/`) does the rest.

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::PathBuf;

use fxonnx::internals::lower::LowerError;
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;
use pyo3::types::{PyBytes, PyDict};

mod entries;

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

    #[getter]
    fn initializer_count(&self) -> usize {
        self.inner.initializer_count()
    }

    /// Total bytes of the initializers.
    #[getter]
    fn weight_bytes(&self) -> usize {
        self.inner.weight_bytes()
    }

    /// The model in ONNX's text form (`onnx.printer`'s), weights as type and shape only.
    fn text(&self) -> String {
        let proto = fxonnx::internals::save::to_proto_outline(self.inner.ir());
        fxonnx::internals::text::model_text(&proto, false)
    }
}

/// Export `source` (the bytes of a .pt2 archive, or its path) with torch.onnx's option names;
/// with `output`, the model is saved there as part of the export (and its report covers it).
#[pyfunction]
#[pyo3(signature = (source, *, output=None, input_names=Vec::new(), output_names=Vec::new(), opset_version=None,
    dim_names=HashMap::new(), external_data=false, optimize=true, report=false, artifacts_dir=None,
    max_memory=None, functions=Vec::new(), tree_names=false, mutations_as_outputs=true))]
#[allow(clippy::too_many_arguments)]
fn export(
    source: &Bound<'_, PyAny>,
    output: Option<PathBuf>,
    input_names: Vec<String>,
    output_names: Vec<String>,
    opset_version: Option<i64>,
    dim_names: HashMap<String, String>,
    external_data: bool,
    optimize: bool,
    report: bool,
    artifacts_dir: Option<PathBuf>,
    max_memory: Option<u64>,
    functions: Vec<String>,
    tree_names: bool,
    mutations_as_outputs: bool,
) -> PyResult<Program> {
    let options = fxonnx::ExportOptions {
        input_names,
        output_names,
        opset_version,
        dim_names,
        external_data,
        optimize,
        report,
        artifacts_dir,
        max_memory,
        module_functions: match functions.as_slice() {
            [] => None,
            [auto] if auto == "auto" => Some(fxonnx::ModuleFunctions::Auto),
            classes => Some(fxonnx::ModuleFunctions::Classes(classes.to_vec())),
        },
        tree_names,
        mutations_as_outputs,
        ..Default::default()
    };
    let result = if let Ok(dict) = source.cast::<PyDict>() {
        if output.is_some() {
            return Err(OptionsError::new_err("save an export from memory with ONNXProgram.save"));
        }
        fxonnx::export_entries(entries::from_dict(dict)?, &options)
    } else if source.is_instance_of::<PyBytes>() {
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

/// The exception of an export error's stage, with `node`, `target`, `hint` and `stage` set.
fn to_py(e: &fxonnx::Error) -> PyErr {
    use fxonnx::Error as E;
    let message = e.to_string();
    let (err, stage, node, target) = match e {
        E::Options(_) => (OptionsError::new_err(message.clone()), "options", None, None),
        E::Archive(_) => (ArchiveError::new_err(message.clone()), "read", None, None),
        E::Signature(_) => (ProgramError::new_err(message.clone()), "resolve", None, None),
        E::Lower(LowerError::Unsupported(_)) => {
            (UnsupportedOpsError::new_err(message.clone()), "translate", None, None)
        }
        E::Lower(LowerError::Node { node, target, .. }) => {
            (TranslationError::new_err(message.clone()), "translate", Some(node.clone()), Some(target.clone()))
        }
        E::Lower(LowerError::Program(_)) => (ProgramError::new_err(message.clone()), "translate", None, None),
        E::Lower(LowerError::Archive(_)) => (ArchiveError::new_err(message.clone()), "translate", None, None),
        E::Save(_) => (SaveError::new_err(message.clone()), "save", None, None),
        E::Report { .. } => (SaveError::new_err(message.clone()), "report", None, None),
        E::Internal { stage, .. } => (InternalError::new_err(message.clone()), stage.as_str(), None, None),
    };
    let hint = message.split_once("hint: ").map(|(_, h)| h.lines().next().unwrap_or(h).to_string());
    Python::attach(|py| {
        let value = err.value(py);
        // Attribute errors cannot happen on a fresh exception instance; ignoring them keeps the
        // original error.
        let _ = value.setattr("stage", stage);
        let _ = value.setattr("node", node);
        let _ = value.setattr("target", target);
        let _ = value.setattr("hint", hint);
    });
    err
}

#[pymodule]
fn _fxonnx(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(export, m)?)?;
    m.add_function(wrap_pyfunction!(cli, m)?)?;
    m.add_function(wrap_pyfunction!(apply_weights, m)?)?;
    m.add_function(wrap_pyfunction!(untranslated_ops, m)?)?;
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
