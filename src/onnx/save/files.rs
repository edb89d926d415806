//! The output files of a save: written where no one sees them and put into place once complete,
//! so a failed save — or a killed process — never leaves a partial model.
//!
//! On Linux each file is created unnamed (`O_TMPFILE` in the output folder): a process killed
//! while writing leaves nothing, since the kernel frees a file without a name when it is closed.
//! Once complete it is linked to the output's name (`linkat`), or, to replace an existing file,
//! to a temporary name renamed over it: a kill in that instant leaves a `.fxonnx-<pid>-<n>.tmp`,
//! which the next save in the folder removes. Where the platform or the file system cannot do that, the file is a named temporary (`.tmpXXXXXX` in the
//! output folder) that is removed on any error or unwinding, though not after a SIGKILL.

use std::fs::File;
use std::path::{Path, PathBuf};

use tempfile::NamedTempFile;

use super::SaveError;
use crate::pt2::ArchiveFile;

/// An output file being written: unnamed where the platform allows, else named.
enum Temp {
    #[cfg(target_os = "linux")]
    Unnamed(File),
    Named(NamedTempFile),
}

impl Temp {
    fn create(dir: &Path) -> std::io::Result<Temp> {
        #[cfg(target_os = "linux")]
        if let Some(file) = unnamed_in(dir) {
            return Ok(Temp::Unnamed(file));
        }
        temp_in(dir).map(Temp::Named)
    }

    fn file(&self) -> &File {
        match self {
            #[cfg(target_os = "linux")]
            Temp::Unnamed(f) => f,
            Temp::Named(t) => t.as_file(),
        }
    }

    /// Put the complete file at `path`, replacing what is there.
    fn persist(self, path: &Path) -> Result<(), SaveError> {
        let io = |source| SaveError::Io { path: path.to_path_buf(), source };
        match self {
            #[cfg(target_os = "linux")]
            Temp::Unnamed(file) => link_into_place(&file, path).map_err(io),
            Temp::Named(t) => t.persist(path).map(drop).map_err(|e| io(e.error)),
        }
    }
}

/// The folder a file at `path` goes in (`.` for a bare file name): where its temporary is made,
/// so that linking or renaming it into place never crosses a file system.
fn folder_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Write `bytes` to `path` whole or not at all (the export report): an unnamed temporary linked
/// into place, so neither a kill nor a full disk leaves a partial file under the name.
pub fn write_whole(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let dir = folder_of(path);
    let temp = Temp::create(&dir)?;
    temp.file().write_all(bytes)?;
    temp.persist(path).map_err(|e| match e {
        SaveError::Io { source, .. } => source,
        other => std::io::Error::other(other.to_string()),
    })
}

/// The model file and, with external data, the data file, both still temporary.
pub(super) struct Outputs {
    path: PathBuf,
    model: Temp,
    data: Option<(Temp, PathBuf)>,
}

impl Outputs {
    /// Temporary files for `path` and, if `data` names one, for the data file (beside the model),
    /// once both paths are known to be fit to write ([`check_target`]).
    pub(super) fn create(path: &Path, data: Option<&str>, archive: Option<&ArchiveFile>) -> Result<Outputs, SaveError> {
        let dir = folder_of(path);
        check_target(path, archive)?;
        if let Some(location) = data {
            check_target(&dir.join(location), archive)?;
        }
        let io = |p: &Path| {
            let p = p.to_path_buf();
            move |source| SaveError::Io { path: p, source }
        };
        let model = Temp::create(&dir).map_err(io(path))?;
        let data = match data {
            None => None,
            Some(location) => {
                let data_path = dir.join(location);
                Some((Temp::create(&dir).map_err(io(&data_path))?, data_path))
            }
        };
        Ok(Outputs { path: path.to_path_buf(), model, data })
    }

    pub(super) fn model_file(&self) -> &File {
        self.model.file()
    }

    /// The data file (the model file when the placement is inline: nothing is written there then).
    pub(super) fn data_file(&self) -> &File {
        self.data.as_ref().map_or(self.model.file(), |(t, _)| t.file())
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

    /// Put the complete files into place, the data file first (a model never refers to a data
    /// file that is not there yet); if the model then fails, the data file goes again.
    pub(super) fn persist(self) -> Result<(), SaveError> {
        let data_path = match self.data {
            Some((tmp, data_path)) => {
                tmp.persist(&data_path)?;
                Some(data_path)
            }
            None => None,
        };
        self.model.persist(&self.path).inspect_err(|_| {
            if let Some(p) = data_path {
                let _ = std::fs::remove_file(p);
            }
        })
    }
}

/// An unnamed file in `dir` (`O_TMPFILE`), when the kernel, the file system and `/proc` (which
/// `linkat` names it through) allow it.
#[cfg(target_os = "linux")]
fn unnamed_in(dir: &Path) -> Option<File> {
    use std::os::unix::fs::OpenOptionsExt;
    if !Path::new("/proc/self/fd").is_dir() {
        return None;
    }
    std::fs::OpenOptions::new().read(true).write(true).mode(0o666).custom_flags(libc::O_TMPFILE).open(dir).ok()
}

/// Give the unnamed `file` the name `path`: directly when `path` does not exist, else under a
/// temporary name beside it (`linkat` cannot replace a file), renamed over `path`. A process
/// killed between the link and the rename leaves that `.fxonnx-<pid>-<n>.tmp`; the next save in
/// the folder removes those of processes that no longer run.
#[cfg(target_os = "linux")]
fn link_into_place(file: &File, path: &Path) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let proc_path = format!("/proc/self/fd/{}", file.as_raw_fd());
    match link(&proc_path, path) {
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        done => return done,
    }
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    remove_stale_temporaries(dir);
    for attempt in 0..16u32 {
        let name = dir.join(format!(".fxonnx-{}-{attempt}.tmp", std::process::id()));
        match link(&proc_path, &name) {
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
            Ok(()) => {}
        }
        return std::fs::rename(&name, path).inspect_err(|_| {
            let _ = std::fs::remove_file(&name);
        });
    }
    Err(std::io::Error::new(std::io::ErrorKind::AlreadyExists, "no free temporary name in the output folder"))
}

/// `linkat(proc_path, to)`: names the file `/proc/self/fd/N` stands for.
#[cfg(target_os = "linux")]
fn link(proc_path: &str, to: &Path) -> std::io::Result<()> {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    let (from, to) = (CString::new(proc_path)?, CString::new(to.as_os_str().as_bytes())?);
    // SAFETY: two NUL-terminated paths; no memory is handed to the kernel beyond the call.
    let rc =
        unsafe { libc::linkat(libc::AT_FDCWD, from.as_ptr(), libc::AT_FDCWD, to.as_ptr(), libc::AT_SYMLINK_FOLLOW) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Remove the `.fxonnx-<pid>-<n>.tmp` files in `dir` whose process is gone (killed between its
/// link and its rename). Best effort: a file that cannot be removed stays.
#[cfg(target_os = "linux")]
fn remove_stale_temporaries(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(".fxonnx-"))
            .and_then(|n| n.strip_suffix(".tmp"))
            .and_then(|n| n.split_once('-'))
            .and_then(|(pid, _)| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_file(entry.path());
        }
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
        return refuse("a symbolic link", "name the file it points to, or replace the link with --force");
    }
    if !meta.is_file() {
        return refuse(
            "not a regular file (a FIFO, socket or device)",
            "name a regular file, or replace it with --force",
        );
    }
    if archive.is_some_and(|a| a.is_at(path)) {
        return refuse("the archive being exported", "choose another output path, or replace the archive with --force");
    }
    Ok(())
}

/// With `--force`: remove a symbolic link, special file or the archive itself at the model's path
/// or the data file's (`location`, beside it), so the save writes a new file there. Regular files
/// are left for the save to replace; a directory stays and is refused.
pub fn clear_target(path: &Path, location: &str, archive: Option<&ArchiveFile>) -> Result<(), SaveError> {
    let dir = folder_of(path);
    for p in [path.to_path_buf(), dir.join(location)] {
        let Ok(meta) = std::fs::symlink_metadata(&p) else { continue };
        let special = meta.file_type().is_symlink() || !(meta.is_file() || meta.is_dir());
        if special || archive.is_some_and(|a| a.is_at(&p)) {
            std::fs::remove_file(&p).map_err(|source| SaveError::Io { path: p.clone(), source })?;
        }
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
