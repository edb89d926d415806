//! Reading `.pt2` archives written by `torch.export.save`.
//!
//! The archive is memory-mapped once; entries are stored (never compressed) and 64-byte aligned,
//! so every weight is a [`Bytes`] slice of the map. Nothing here copies tensor data except the rare
//! non-contiguous view that must be gathered into a dense buffer.

mod mapped;
mod memory;
pub mod schema;
mod weights;
mod zipdir;

use std::path::{Path, PathBuf};

use bytes::Bytes;

pub use mapped::{install_recovering_truncation_guard, install_truncation_guard, ArchiveFile};
pub use weights::{element_count, scalar_type, ScalarType, Weight};

/// Errors of the archive layer. Every message names the entry or tensor concerned.
#[derive(Debug, thiserror::Error)]
pub enum ArchiveError {
    #[error("cannot read {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{path} is not a regular file (a pipe, a directory or a device); hint: {NOT_A_FILE_HINT}")]
    NotAFile { path: PathBuf },
    #[error("{path} is not a zip archive ({detail}); hint: {TORCH_SAVE_HINT}")]
    NotZip { path: PathBuf, detail: String },
    #[error("{path} is a zip archive but not a .pt2 program (no `<root>/archive_format` entry saying pt2); hint: {TORCH_SAVE_HINT}")]
    NotPt2 { path: PathBuf },
    #[error(
        "{path} is a TorchScript program (written by torch.jit.save), not a .pt2 archive; hint: {TORCHSCRIPT_HINT}"
    )]
    TorchScript { path: PathBuf },
    #[error("unsupported archive_version {found:?} (this reader knows version 0, written by torch 2.9 to 2.15)")]
    ArchiveVersion { found: String },
    #[error("archive entry `{entry}` is missing; {detail}")]
    MissingEntry { entry: String, detail: String },
    #[error("archive entry `{entry}` is compressed (method {method}); .pt2 entries are stored, so the archive was re-zipped by another tool; hint: {RESAVE_HINT}")]
    Compressed { entry: String, method: String },
    #[error("archive entry `{entry}` lies outside the file (truncated archive?)")]
    Truncated { entry: String },
    #[error("malformed JSON in `{entry}`: {source}")]
    Json { entry: String, source: serde_json::Error },
    #[error("`{entry}` has schema version {major}.{minor}; this reader supports major version 8 (torch 2.5 to 2.15)")]
    SchemaVersion { entry: String, major: i64, minor: i64 },
    #[error("no program named `{name}` in the archive; it holds: {available}")]
    UnknownModel { name: String, available: String },
    #[error("unsupported pickled payload `{fqn}` ({path}): it needs Python to unpickle (a tensor subclass or custom object); hint: {PICKLED_HINT}")]
    Pickled { fqn: String, path: String },
    #[error("legacy pickled weights `{entry}`; hint: {LEGACY_HINT}")]
    LegacyWeights { entry: String },
    #[error("tensor `{fqn}`: {reason}")]
    BadTensor { fqn: String, reason: String },
    #[error("the archive {path} changed after it was read (rewritten or truncated in place), so its weights are no longer the ones exported; nothing was written; hint: export it again, from a copy that nothing else writes to")]
    Changed { path: PathBuf },
}

const NOT_A_FILE_HINT: &str = "pass the path of the .pt2 file written by torch.export.save";
const TORCH_SAVE_HINT: &str = "pass the file written by torch.export.save";
const RESAVE_HINT: &str = "re-save it with torch.export.save";
const PICKLED_HINT: &str = "save plain tensors, e.g. unwrap the subclass before torch.export";
const LEGACY_HINT: &str = "re-save the program with torch 2.9 or newer";
const TORCHSCRIPT_HINT: &str = "converting TorchScript needs Python and torch: `python -m fxonnx export MODEL.pt -o \
     model.onnx --example inputs.npz` (the fxonnx command `pip install fxonnx` installs takes it too), or \
     fxonnx.export(torch.jit.load(path), args, dynamo=False)";

impl ArchiveError {
    /// What the user can do about it.
    pub fn hint(&self) -> Option<&str> {
        match self {
            ArchiveError::NotAFile { .. } => Some(NOT_A_FILE_HINT),
            ArchiveError::NotZip { .. } | ArchiveError::NotPt2 { .. } => Some(TORCH_SAVE_HINT),
            ArchiveError::TorchScript { .. } => Some(TORCHSCRIPT_HINT),
            ArchiveError::Compressed { .. } => Some(RESAVE_HINT),
            ArchiveError::Pickled { .. } => Some(PICKLED_HINT),
            ArchiveError::LegacyWeights { .. } => Some(LEGACY_HINT),
            _ => None,
        }
    }
}

pub type Result<T, E = ArchiveError> = std::result::Result<T, E>;

/// The entries of an archive by position, to name the entry a slice of its bytes lies in.
#[derive(Clone, Debug, Default)]
pub struct Locator {
    base: usize,
    len: usize,
    /// (start, end, name, CRC-32) of each stored entry, by start.
    spans: Vec<(usize, usize, String, u32)>,
}

impl Locator {
    /// The entry `bytes` lie in, their offset in it and the entry's CRC-32, when they are a
    /// slice of the archive.
    pub fn find(&self, bytes: &[u8]) -> Option<(&str, usize, u32)> {
        let (p, n) = (bytes.as_ptr() as usize, bytes.len());
        if n == 0 || p < self.base || p + n > self.base + self.len {
            return None;
        }
        let at = p - self.base;
        let i = self.spans.partition_point(|s| s.0 <= at).checked_sub(1)?;
        let (start, end, name, crc32) = &self.spans[i];
        (at + n <= *end).then(|| (name.as_str(), at - start, *crc32))
    }
}

/// An opened `.pt2` archive: the memory map and the location of each entry.
pub struct Archive {
    path: PathBuf,
    data: Bytes,
    /// The file behind `data`, when it is a memory map of one.
    file: Option<ArchiveFile>,
    /// The entries under the root folder, named relative to it.
    entries: zipdir::Directory,
    root: String,
    /// Entries held in memory, each its own buffer ([`Archive::from_entries`]); looked up first.
    memory: memory::Entries,
}

/// Why a zip without `archive_format` is not read: a TorchScript program (`torch.jit.save` writes
/// `<root>/constants.pkl` and `<root>/code/`), which needs Python, or another zip.
fn not_pt2<'n>(path: &Path, mut names: impl Iterator<Item = &'n str>) -> ArchiveError {
    let torchscript = names.any(|n| n.ends_with("/constants.pkl") || n.contains("/code/__torch__"));
    match torchscript {
        true => ArchiveError::TorchScript { path: path.to_path_buf() },
        false => ArchiveError::NotPt2 { path: path.to_path_buf() },
    }
}

impl Archive {
    /// Memory-map and index `path`. Checks the `archive_format` and `archive_version` entries.
    pub fn open(path: &Path) -> Result<Archive> {
        let io = |source| ArchiveError::Io { path: path.to_path_buf(), source };
        // A pipe or a device cannot be mapped (and /dev/zero would never end, a FIFO never open):
        // say so plainly.
        let file = crate::input::open_regular(path).map_err(|e| match e {
            crate::input::OpenError::Io(source) => io(source),
            crate::input::OpenError::NotAFile => ArchiveError::NotAFile { path: path.to_path_buf() },
        })?;
        // SAFETY: the map is read-only; a file truncated underneath us faults (SIGBUS), the
        // trade-off of every mmap-based reader, which `install_truncation_guard` turns into an
        // error message for the CLI.
        let map = unsafe { memmap2::Mmap::map(&file) }.map_err(io)?;
        let (file, data) = ArchiveFile::new(map, file, path);
        Ok(Archive { file: Some(file), ..Self::from_bytes(path, data)? })
    }

    /// The file the archive was mapped from, for saving its weights (see [`ArchiveFile`]).
    pub fn file(&self) -> Option<ArchiveFile> {
        self.file.clone()
    }

    /// Index an archive already in memory (tests, buffers).
    pub fn from_bytes(path: &Path, data: Bytes) -> Result<Archive> {
        let not_zip = |detail: String| ArchiveError::NotZip { path: path.to_path_buf(), detail };
        let dir = zipdir::Directory::read(&data).map_err(not_zip)?;
        let root = dir
            .names(&data)
            .find_map(|n| n.strip_suffix("archive_format").filter(|r| r.is_empty() || r.ends_with('/')))
            .map(str::to_string)
            .ok_or_else(|| not_pt2(path, dir.names(&data)))?;
        let entries = dir.under(&data, &root);
        let archive = Archive { path: path.to_path_buf(), data, file: None, entries, root, memory: Default::default() };
        memory::check_format(&archive, path)?;
        Ok(archive)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The archive's top folder (`mlp_bn/`), as written by the zip writer.
    pub fn root(&self) -> &str {
        &self.root
    }

    pub fn has(&self, name: &str) -> bool {
        self.memory.get(name).is_some() || self.entries.contains(&self.data, name)
    }

    /// Entry names, relative to the root folder.
    pub fn entry_names(&self) -> impl Iterator<Item = &str> {
        self.memory.names().chain(self.entries.names(&self.data))
    }

    /// The bytes of an entry, as a slice of the memory map.
    pub fn entry(&self, name: &str) -> Result<Bytes> {
        if let Some(bytes) = self.memory.get(name) {
            return Ok(bytes.clone());
        }
        let (start, end) = self.span(name)?;
        Ok(self.data.slice(start..end))
    }

    /// The bytes of an entry, borrowed from the memory map (parsed JSON borrows its strings).
    fn entry_ref(&self, name: &str) -> Result<&[u8]> {
        if let Some(bytes) = self.memory.get(name) {
            return Ok(bytes);
        }
        let (start, end) = self.span(name)?;
        Ok(&self.data[start..end])
    }

    fn span(&self, name: &str) -> Result<(usize, usize)> {
        let l = self.located(name)?;
        Ok((l.start, l.end))
    }

    fn located(&self, name: &str) -> Result<zipdir::Located> {
        let located = self.entries.locate(&self.data, name).map_err(|e| match e {
            zipdir::LocateError::BadHeader(detail) => ArchiveError::NotZip { path: self.path.clone(), detail },
            zipdir::LocateError::Outside => ArchiveError::Truncated { entry: format!("{}{name}", self.root) },
        })?;
        let l = located.ok_or_else(|| ArchiveError::MissingEntry {
            entry: format!("{}{name}", self.root),
            detail: "the archive is incomplete; re-save it with torch.export.save".into(),
        })?;
        if l.method != 0 {
            return Err(ArchiveError::Compressed { entry: name.to_string(), method: l.method.to_string() });
        }
        Ok(l)
    }

    /// The CRC-32 the archive's writer recorded for entry `name`: what a weight-free model
    /// records of each weight's entry, so that its weights are put back from the same archive.
    pub fn entry_crc32(&self, name: &str) -> Result<u32> {
        Ok(self.located(name)?.crc32)
    }

    /// Where bytes that are a slice of this archive lie: for naming a weight by its entry.
    pub fn locator(&self) -> Locator {
        let mut spans: Vec<(usize, usize, String, u32)> = self
            .entries
            .names(&self.data)
            .filter_map(|n| self.located(n).ok().map(|l| (l.start, l.end, n.to_string(), l.crc32)))
            .collect();
        spans.sort_unstable();
        Locator { base: self.data.as_ptr() as usize, len: self.data.len(), spans }
    }

    /// The names of the programs in the archive (`models/<name>.json`), in archive order.
    pub fn model_names(&self) -> Vec<String> {
        self.entry_names()
            .filter_map(|n| n.strip_prefix("models/")?.strip_suffix(".json"))
            .map(str::to_string)
            .collect()
    }

    /// Parse `models/<name>.json` and its payload configs.
    pub fn load(&self, name: &str) -> Result<Loaded<'_>> {
        let models = self.model_names();
        if !models.iter().any(|m| m == name) {
            let available =
                if models.is_empty() { "none (no `models/<name>.json` entry)".to_string() } else { models.join(", ") };
            return Err(ArchiveError::UnknownModel { name: name.to_string(), available });
        }
        for legacy in [format!("data/weights/{name}.pt"), format!("data/constants/{name}.pt")] {
            if self.has(&legacy) {
                return Err(ArchiveError::LegacyWeights { entry: legacy });
            }
        }
        let entry = format!("models/{name}.json");
        // The payload configs are parsed on a second thread meanwhile, if large: a large program's
        // weights config is a good part of its JSON.
        let weights_entry = format!("data/weights/{name}_weights_config.json");
        let large = self.span(&weights_entry).is_ok_and(|(start, end)| end - start >= 1 << 20);
        let (program, configs) = crate::util::join_if(
            large,
            || self.json::<schema::ExportedProgram<'_>>(&entry),
            || -> Result<_> {
                let weights = self.config(&weights_entry)?;
                let constants = self.config(&format!("data/constants/{name}_constants_config.json"))?;
                Ok((weights, constants))
            },
        );
        let program = program?;
        if program.schema_version.major != 8 {
            return Err(ArchiveError::SchemaVersion {
                entry,
                major: program.schema_version.major,
                minor: program.schema_version.minor,
            });
        }
        let (weights, constants) = configs?;
        Ok(Loaded { archive: self, name: name.to_string(), program, weights, constants })
    }

    fn json<'a, T: serde::Deserialize<'a>>(&'a self, entry: &str) -> Result<T> {
        let bytes = self.entry_ref(entry)?;
        serde_json::from_slice(bytes).map_err(|source| ArchiveError::Json { entry: entry.to_string(), source })
    }

    /// A payload config; a program without weights may have none.
    fn config(&self, entry: &str) -> Result<schema::PayloadConfig<'_>> {
        if self.has(entry) {
            self.json(entry)
        } else {
            Ok(schema::PayloadConfig { config: Default::default() })
        }
    }
}

/// One program of an archive, parsed, with access to its weights and constants. Its strings
/// borrow from the archive's map.
pub struct Loaded<'a> {
    archive: &'a Archive,
    pub name: String,
    pub program: schema::ExportedProgram<'a>,
    pub weights: schema::PayloadConfig<'a>,
    pub constants: schema::PayloadConfig<'a>,
}

impl Loaded<'_> {
    /// The tensor stored under `fqn`: parameters and persistent buffers from the weights config,
    /// everything else (non-persistent buffers, lifted constants) from the constants config.
    pub fn tensor(&self, fqn: &str, in_weights: bool) -> Result<Weight> {
        let (config, folder) =
            if in_weights { (&self.weights, "data/weights") } else { (&self.constants, "data/constants") };
        // Fall back to the other config: writers differ on where non-persistent buffers go.
        let (meta, folder) = match config.config.get(fqn) {
            Some(m) => (m, folder),
            None => {
                let (other, other_folder) =
                    if in_weights { (&self.constants, "data/constants") } else { (&self.weights, "data/weights") };
                let m = other.config.get(fqn).ok_or_else(|| ArchiveError::MissingEntry {
                    entry: format!("{folder}/{}_*_config.json[{fqn}]", self.name),
                    detail: format!("the payload config has no tensor `{fqn}`; the archive is incomplete"),
                })?;
                (m, other_folder)
            }
        };
        let path = format!("{folder}/{}", meta.path_name);
        if meta.use_pickle {
            return Err(ArchiveError::Pickled { fqn: fqn.to_string(), path });
        }
        let tmeta = meta.tensor_meta.as_ref().ok_or_else(|| ArchiveError::BadTensor {
            fqn: fqn.to_string(),
            reason: "payload config has no tensor_meta".into(),
        })?;
        let storage = self.archive.entry(&path)?;
        Weight::view(fqn, &path, storage, tmeta)
    }
}
