//! An archive whose entries are already in memory, each its own buffer: what the Python package
//! hands over for an `ExportedProgram` instead of writing a `.pt2` (the program's JSON, the payload
//! configs, and each tensor's storage as a [`Bytes`] that borrows the tensor's memory).
//!
//! Such an archive has no zip: entries are looked up in [`Entries`] first (see [`Archive::entry`]),
//! and nothing is copied. It has no file either, so a weight-free save keeps its weights (they
//! cannot be located in an archive to put back from).

use std::path::{Path, PathBuf};

use bytes::Bytes;

use super::{zipdir, Archive, ArchiveError, Result};
use crate::hash::FxHashMap;

/// The smallest zip: an end-of-central-directory record and nothing else.
const EMPTY_ZIP: &[u8] = b"PK\x05\x06\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0";

/// Entries by name (relative to the archive's root folder), in the order given.
#[derive(Default)]
pub(super) struct Entries {
    map: FxHashMap<String, Bytes>,
    order: Vec<String>,
}

impl Entries {
    pub(super) fn get(&self, name: &str) -> Option<&Bytes> {
        self.map.get(name)
    }

    pub(super) fn names(&self) -> impl Iterator<Item = &str> {
        self.order.iter().map(String::as_str)
    }
}

impl Archive {
    /// An archive made of `entries` (name → bytes, names as inside a `.pt2`'s root folder:
    /// `archive_format`, `models/model.json`, `data/weights/weight_0`...), each read in place.
    /// The same checks as a file's: `archive_format` must say `pt2`, the version must be 0.
    pub fn from_entries(entries: impl IntoIterator<Item = (String, Bytes)>) -> Result<Archive> {
        let path = PathBuf::from("<program in memory>");
        let mut memory = Entries::default();
        for (name, bytes) in entries {
            if memory.map.insert(name.clone(), bytes).is_none() {
                memory.order.push(name);
            }
        }
        let data = Bytes::from_static(EMPTY_ZIP);
        let dir =
            zipdir::Directory::read(&data).map_err(|detail| ArchiveError::NotZip { path: path.clone(), detail })?;
        let archive = Archive { path, data, file: None, entries: dir, root: String::new(), memory };
        check_format(&archive, Path::new("<program in memory>"))?;
        Ok(archive)
    }
}

/// `archive_format` says `pt2` and `archive_version` (torch treats none as 0) is 0.
pub(super) fn check_format(archive: &Archive, path: &Path) -> Result<()> {
    if !archive.has("archive_format") || archive.entry("archive_format")?.as_ref() != b"pt2" {
        return Err(ArchiveError::NotPt2 { path: path.to_path_buf() });
    }
    if archive.has("archive_version") {
        let v = archive.entry("archive_version")?;
        let v = String::from_utf8_lossy(&v).trim().to_string();
        if v != "0" {
            return Err(ArchiveError::ArchiveVersion { found: v });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_read_in_place_and_checked() {
        let weight = Bytes::from(vec![1u8, 2, 3, 4]);
        let ptr = weight.as_ptr();
        let archive = Archive::from_entries([
            ("archive_format".to_string(), Bytes::from_static(b"pt2")),
            ("data/weights/weight_0".to_string(), weight),
        ])
        .expect("a pt2 archive");
        let read = archive.entry("data/weights/weight_0").expect("the entry");
        assert_eq!(read.as_ptr(), ptr, "no copy");
        assert!(archive.has("archive_format") && !archive.has("models/model.json"));
        assert!(archive.model_names().is_empty());

        let not_pt2 = Archive::from_entries([("archive_format".to_string(), Bytes::from_static(b"zip"))]);
        assert!(matches!(not_pt2, Err(ArchiveError::NotPt2 { .. })));
        let newer = Archive::from_entries([
            ("archive_format".to_string(), Bytes::from_static(b"pt2")),
            ("archive_version".to_string(), Bytes::from_static(b"1")),
        ]);
        assert!(matches!(newer, Err(ArchiveError::ArchiveVersion { .. })));
    }
}
