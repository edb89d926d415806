//! The output files of a save: written under temporary names in the model's folder and renamed
//! into place once complete, so a failed save never leaves a partial model.

use std::fs::File;
use std::path::{Path, PathBuf};

use tempfile::NamedTempFile;

use super::SaveError;
use crate::pt2::ArchiveFile;

/// The model file and, with external data, the data file, both still temporary.
pub(super) struct Outputs {
    path: PathBuf,
    model: NamedTempFile,
    data: Option<(NamedTempFile, PathBuf)>,
}

impl Outputs {
    /// Temporary files for `path` and, if `data` names one, for the data file (beside the model),
    /// once both paths are known to be fit to write ([`check_target`]).
    pub(super) fn create(path: &Path, data: Option<&str>, archive: Option<&ArchiveFile>) -> Result<Outputs, SaveError> {
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        check_target(path, archive)?;
        if let Some(location) = data {
            check_target(&dir.join(location), archive)?;
        }
        let io = |p: &Path| {
            let p = p.to_path_buf();
            move |source| SaveError::Io { path: p, source }
        };
        let model = temp_in(&dir).map_err(io(path))?;
        let data = match data {
            None => None,
            Some(location) => {
                let data_path = dir.join(location);
                Some((temp_in(&dir).map_err(io(&data_path))?, data_path))
            }
        };
        Ok(Outputs { path: path.to_path_buf(), model, data })
    }

    pub(super) fn model_file(&self) -> &File {
        self.model.as_file()
    }

    /// The data file (the model file when the placement is inline: nothing is written there then).
    pub(super) fn data_file(&self) -> &File {
        self.data.as_ref().map_or(self.model.as_file(), |(t, _)| t.as_file())
    }

    pub(super) fn has_data(&self) -> bool {
        self.data.is_some()
    }

    pub(super) fn model_path(&self) -> &Path {
        &self.path
    }

    pub(super) fn data_path(&self) -> &Path {
        self.data.as_ref().map_or(&self.path, |(_, p)| p)
    }

    /// Rename the complete files into place, the data file first (a model never refers to a data
    /// file that is not there yet).
    pub(super) fn persist(self) -> Result<(), SaveError> {
        if let Some((tmp, data_path)) = self.data {
            tmp.persist(&data_path).map_err(|e| SaveError::Io { path: data_path.clone(), source: e.error })?;
        }
        self.model.persist(&self.path).map_err(|e| SaveError::Io { path: self.path.clone(), source: e.error })?;
        Ok(())
    }
}

/// Refuse an output path that a save would wrongly replace: a directory, anything but a regular
/// file (a symbolic link, a FIFO, a device: renaming over them replaces them with a regular file),
/// or the archive the weights are read from.
fn check_target(path: &Path, archive: Option<&ArchiveFile>) -> Result<(), SaveError> {
    let refuse = |what, hint| Err(SaveError::Target { path: path.to_path_buf(), what, hint });
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return Ok(());
    };
    if meta.is_dir() {
        return refuse("a directory", "name a file inside it");
    }
    if meta.file_type().is_symlink() {
        return refuse("a symbolic link", "name the file it points to, or remove the link");
    }
    if !meta.is_file() {
        return refuse("not a regular file (a FIFO, socket or device)", "name a regular file");
    }
    if archive.is_some_and(|a| a.is_at(path)) {
        return refuse("the archive being exported", "choose another output path");
    }
    Ok(())
}

/// A temporary file in `dir` created with the mode any new file gets (0666 less the umask):
/// tempfile's default, 0600, would make saved models readable by their owner only.
fn temp_in(dir: &Path) -> std::io::Result<NamedTempFile> {
    let mut builder = tempfile::Builder::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    builder.tempfile_in(dir)
}

/// Reserve `len` bytes of disk for `file` before it is written, its size kept (`fallocate` with
/// `FALLOC_FL_KEEP_SIZE`): ext4 otherwise allocates blocks as each buffered write comes. Best
/// effort: a file system that cannot preallocate is written as before, and the file's size is
/// what was written, whatever was reserved.
#[cfg(all(target_os = "linux", target_pointer_width = "64"))]
pub(super) fn preallocate(file: &File, len: usize) {
    use std::os::fd::AsRawFd;
    use std::os::raw::c_int;
    extern "C" {
        // 64-bit targets only: there glibc's `fallocate` takes a 64-bit `off_t`.
        fn fallocate(fd: c_int, mode: c_int, offset: i64, len: i64) -> c_int;
    }
    const FALLOC_FL_KEEP_SIZE: c_int = 1;
    if let Ok(len) = i64::try_from(len) {
        if len > 0 {
            // SAFETY: a plain system call on an open file descriptor of ours.
            unsafe { fallocate(file.as_raw_fd(), FALLOC_FL_KEEP_SIZE, 0, len) };
        }
    }
}

/// Elsewhere files are written without reserving their blocks first.
#[cfg(not(all(target_os = "linux", target_pointer_width = "64")))]
pub(super) fn preallocate(_file: &File, _len: usize) {}
