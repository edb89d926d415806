//! A program's archive entries handed over from Python without a copy: `bytes` as they are, and
//! tensor storages as the memory they already occupy (`fxonnx._serialize.Storage`: an address, a
//! size, and the storage object that keeps that memory alive while Rust holds it).

use std::path::PathBuf;

use bytes::Bytes;
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;
use pyo3::types::{PyBytes, PyDict};

/// Memory Python owns, read in place: valid while `_owner` (a torch storage) lives, which this
/// value keeps alive. Tensors exported are not written to during the export (the GIL-holding
/// caller is the export itself), the contract torch.onnx's in-memory export relies on too.
struct Borrowed {
    address: usize,
    len: usize,
    _owner: Py<PyAny>,
}

impl AsRef<[u8]> for Borrowed {
    fn as_ref(&self) -> &[u8] {
        if self.len == 0 || self.address == 0 {
            return &[];
        }
        // SAFETY: `address..address + len` is the storage `_owner` holds, alive as long as this
        // value; the Python side gave its own data_ptr() and nbytes().
        unsafe { std::slice::from_raw_parts(self.address as *const u8, self.len) }
    }
}

/// The entries of a dict `{name: bytes | Storage}`.
pub fn from_dict(dict: &Bound<'_, PyDict>) -> PyResult<Vec<(String, Bytes)>> {
    let mut out = Vec::with_capacity(dict.len());
    for (key, value) in dict.iter() {
        let name: String = key.extract()?;
        let bytes = if value.is_instance_of::<PyBytes>() {
            let data: PyBackedBytes = value.extract()?;
            Bytes::from_owner(data)
        } else {
            let address: usize = value.getattr("address")?.extract()?;
            let len: usize = value.getattr("nbytes")?.extract()?;
            let owner = value.getattr("owner")?.unbind();
            Bytes::from_owner(Borrowed { address, len, _owner: owner })
        };
        out.push((name, bytes));
    }
    Ok(out)
}

/// An untranslated target: `(target, table key, nodes, reason it is refused)`.
pub type Untranslated = (String, String, Vec<String>, Option<String>);

/// What `fxonnx.export` reports for a program whose ops lack a translation, before lowering.
pub fn untranslated_ops(source: &Bound<'_, PyAny>) -> Result<Vec<Untranslated>, fxonnx::Error> {
    use fxonnx::inspect::{untranslated_ops, untranslated_ops_in_bytes, untranslated_ops_in_entries};
    let table = fxonnx::TranslationTable::builtin();
    let options = |e: String| fxonnx::Error::from(fxonnx::ErrorKind::Options(e));
    let found = if let Ok(dict) = source.cast::<PyDict>() {
        let entries = from_dict(dict).map_err(|e| options(e.to_string()))?;
        untranslated_ops_in_entries(entries, "model", &table)?
    } else if source.is_instance_of::<PyBytes>() {
        let data: PyBackedBytes = source.extract().map_err(|e| options(PyErr::from(e).to_string()))?;
        untranslated_ops_in_bytes(Bytes::from_owner(data), "model", &table)?
    } else {
        let path: PathBuf = source.extract().map_err(|e: PyErr| options(e.to_string()))?;
        untranslated_ops(&path, "model", &table)?
    };
    Ok(found.into_iter().map(|u| (u.target, u.key, u.nodes, u.reason.map(str::to_string))).collect())
}
