//! The output files of a save: written where no one sees them and put into place once complete,
//! so a failed save — or a killed process — never leaves a partial model, never replaces the
//! files it reads, and never separates a model from its data.
//!
//! On Linux each file is created unnamed (`O_TMPFILE` in the output folder): a process killed
//! while writing leaves nothing, since the kernel frees a file without a name when it is closed.
//! Once complete it is linked to the output's name (`linkat`), or, to replace an existing file,
//! to a temporary name renamed over it: a kill in that instant leaves a `.fxonnx-<pid>-<n>.tmp`,
//! which the next save in the folder removes. Where the platform or the file system cannot do
//! that, the file is a named temporary (`.tmpXXXXXX` in the output folder) that is removed on any
//! error or unwinding, though not after a SIGKILL.
//!
//! A model and its external data are one unit. The data file is `<model file>.data`
//! ([`data_location`]), the name torch.onnx, onnx and every tool that copies a model expect. Both
//! files are written complete under temporary names; then, holding the folder's lock
//! ([`FolderLock`]), the old model leaves its name (kept under a temporary second name), the data
//! file is renamed into place and the model after it. A failure on the way puts the old pair back
//! (the old data file, too, was kept under a second name until the model was in place). A kill in
//! the instants between leaves no model at the path, the old one whole under its second name:
//! never a model beside another model's data, which it would read as its weights. Concurrent
//! saves to one path take turns for the renames, so they end with one writer's pair.
//!
//! [`Outputs::create`] is the one way a save opens its outputs, and it takes the save's
//! [`Sources`]: no output replaces a file the save reads (the archive, a weight-free model).

use std::ffi::OsString;
use std::fs::File;
use std::path::{Path, PathBuf};

use tempfile::NamedTempFile;

use super::SaveError;
use crate::pt2::ArchiveFile;

/// The files a save reads, which its outputs must never replace, and whether it may replace a
/// symbolic link, FIFO or device, or the archive itself (`--force`). Every save takes one.
#[derive(Clone, Default)]
pub struct Sources {
    archive: Option<ArchiveFile>,
    /// Other files read, by device and inode, with what they are.
    others: Vec<((u64, u64), &'static str)>,
    force: bool,
}

impl Sources {
    /// A save that reads no file (an archive in memory, a model built in memory).
    pub fn none() -> Sources {
        Sources::default()
    }

    /// An export's: the archive whose weights the save reads (when it was mapped from a file).
    pub fn archive(archive: Option<&ArchiveFile>) -> Sources {
        Sources { archive: archive.cloned(), ..Sources::default() }
    }

    /// Also the file at `path`, which the save's caller read (`what` names it in the refusal). A
    /// path that names nothing protects nothing.
    pub fn and_file(mut self, path: &Path, what: &'static str) -> Sources {
        if let Some(id) = std::fs::metadata(path).ok().as_ref().and_then(file_id) {
            self.others.push((id, what));
        }
        self
    }

    /// Replace a symbolic link, FIFO, socket or device, or the archive, at an output path
    /// (`--force`); a directory is always refused.
    pub fn forced(mut self, force: bool) -> Sources {
        self.force = force;
        self
    }

    /// The archive the save reads weights from.
    pub(super) fn archive_file(&self) -> Option<&ArchiveFile> {
        self.archive.as_ref()
    }

    /// What `meta` (an existing output path's) is among the sources, if it is one.
    fn holds(&self, meta: &std::fs::Metadata) -> Option<(&'static str, &'static str)> {
        let id = file_id(meta);
        if let Some((_, what)) = self.others.iter().find(|(i, _)| Some(*i) == id) {
            return Some((what, "choose another output path"));
        }
        self.archive.as_ref().is_some_and(|a| a.is(meta)).then_some((
            "the archive being exported",
            "choose another output path, or replace the archive with --force",
        ))
    }
}

/// A file's device and inode (unix; elsewhere none, and no file is recognised as a source).
fn file_id(meta: &std::fs::Metadata) -> Option<(u64, u64)> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        Some((meta.dev(), meta.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        None
    }
}

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
        self.stage(path)?.commit(path)
    }

    /// Ready the complete file to take `path` with one system call ([`Staged::commit`]), so
    /// that a save putting two files in place leaves no more than that call between them.
    fn stage(self, path: &Path) -> Result<Staged, SaveError> {
        let io = |source| SaveError::Io { path: path.to_path_buf(), source };
        match self {
            #[cfg(target_os = "linux")]
            Temp::Unnamed(file) => match std::fs::symlink_metadata(path) {
                Err(_) => Ok(Staged::Link(file)),
                Ok(_) => name_beside(&file, path).map(Staged::Rename).map_err(io),
            },
            Temp::Named(t) => Ok(Staged::Named(t)),
        }
    }

    /// Put the complete file at `path` if nothing is there; else hand it back.
    fn persist_new(self, path: &Path) -> Result<(), (Temp, std::io::Error)> {
        match self {
            #[cfg(target_os = "linux")]
            Temp::Unnamed(file) => link(&file, path).map_err(|e| (Temp::Unnamed(file), e)),
            Temp::Named(t) => t.persist_noclobber(path).map(drop).map_err(|e| (Temp::Named(e.file), e.error)),
        }
    }
}

/// A complete file one system call away from its place ([`Temp::stage`]).
enum Staged {
    /// Under a temporary name beside the place: renamed over what is there.
    Rename(PathBuf),
    /// Unnamed, nothing at the place: linked there.
    #[cfg(target_os = "linux")]
    Link(File),
    Named(NamedTempFile),
}

impl Staged {
    fn commit(self, path: &Path) -> Result<(), SaveError> {
        let io = |source| SaveError::Io { path: path.to_path_buf(), source };
        match self {
            Staged::Rename(name) => std::fs::rename(&name, path).map_err(|e| {
                let _ = std::fs::remove_file(&name);
                io(e)
            }),
            #[cfg(target_os = "linux")]
            Staged::Link(file) => match link(&file, path) {
                // Something came at the place since it was staged: replace it as a rename would.
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    Temp::Unnamed(file).stage(path)?.commit(path)
                }
                done => done.map_err(io),
            },
            Staged::Named(t) => t.persist(path).map(drop).map_err(|e| io(e.error)),
        }
    }

    /// Give up the staged file (its temporary name, if it has one, is removed).
    fn discard(self) {
        if let Staged::Rename(name) = self {
            let _ = std::fs::remove_file(name);
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

/// Write `bytes` to `path` whole or not at all (genai_config.json, a tokenizer file copied
/// beside the model): an unnamed temporary linked into place, so neither a kill nor a full disk
/// leaves a partial file under the name.
pub fn write_whole(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let temp = Temp::create(&folder_of(path))?;
    temp.file().write_all(bytes)?;
    temp.persist(path).map_err(|e| match e {
        SaveError::Io { source, .. } => source,
        other => std::io::Error::other(other.to_string()),
    })
}

/// Write the files `<stem><ext>` in `dir`, one per part (the export report and its HTML), each
/// whole or not at all and never over an existing file: when the first name is taken (another
/// export's report of the same microsecond), `<stem>-2<ext>`, `<stem>-3<ext>`, ... The first
/// part's name decides: the other parts follow it. Returns the first part's path.
pub fn write_new(dir: &Path, stem: &str, parts: &[(&str, &[u8])]) -> std::io::Result<PathBuf> {
    use std::io::Write;
    let mut temps = Vec::with_capacity(parts.len());
    for (_, bytes) in parts {
        let temp = Temp::create(dir)?;
        temp.file().write_all(bytes)?;
        temps.push(temp);
    }
    let mut temps = temps.into_iter();
    let Some(mut first) = temps.next() else { return Ok(dir.join(stem)) };
    for attempt in 1..=1000u32 {
        let stem = if attempt == 1 { stem.to_string() } else { format!("{stem}-{attempt}") };
        let path = dir.join(format!("{stem}{}", parts[0].0));
        match first.persist_new(&path) {
            Ok(()) => {
                for (temp, (ext, _)) in temps.zip(&parts[1..]) {
                    temp.persist_new(&dir.join(format!("{stem}{ext}"))).map_err(|(_, e)| e)?;
                }
                return Ok(path);
            }
            Err((temp, e)) if e.kind() == std::io::ErrorKind::AlreadyExists => first = temp,
            Err((_, e)) => return Err(e),
        }
    }
    Err(std::io::Error::new(std::io::ErrorKind::AlreadyExists, "a thousand reports of that name are there already"))
}

/// Make sure files can be created in the folder `dir` (made if missing): the export report's,
/// checked before the export so that a report that cannot be written fails it before any model
/// is written, with the folder's own problem named (a file in the way, no permission).
pub fn check_folder(dir: &Path) -> std::io::Result<()> {
    if std::fs::metadata(dir).is_ok_and(|m| !m.is_dir()) {
        return Err(std::io::Error::new(std::io::ErrorKind::NotADirectory, "it is a file, not a folder"));
    }
    std::fs::create_dir_all(dir)?;
    // A file that is never named: nothing is left, whatever happens.
    Temp::create(dir).map(drop)
}

/// The start of the names of the data files of the model at `path`: its file name, with `%` and
/// bytes that are not UTF-8 escaped as `%XX`. Distinct file names give distinct stems (names
/// that are not UTF-8 included: two such names never share a data file), and a UTF-8 name
/// without `%` is its own stem.
pub fn data_stem(path: &Path) -> String {
    let Some(name) = path.file_name() else { return "model.onnx".into() };
    #[cfg(unix)]
    let bytes = std::os::unix::ffi::OsStrExt::as_bytes(name);
    #[cfg(not(unix))]
    let lossy = name.to_string_lossy();
    #[cfg(not(unix))]
    let bytes = lossy.as_bytes();
    let mut stem = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '%' => stem.push_str("%25"),
                c => stem.push(c),
            }
        }
        for b in chunk.invalid() {
            stem.push_str(&format!("%{b:02X}"));
        }
    }
    stem
}

/// The data file of a model whose data file stem is `stem` ([`data_stem`]): `<stem>.data`,
/// relative to the model (torch.onnx's name).
pub fn data_location(stem: &str) -> String {
    format!("{stem}.data")
}

/// The data files beside the model at `path` ([`data_location`]): after a save, the one its model
/// uses, if any; for tests and tools that look for it.
pub fn data_files_of(path: &Path) -> Vec<PathBuf> {
    let data = folder_of(path).join(data_location(&data_stem(path)));
    let mut found: Vec<PathBuf> = std::fs::symlink_metadata(&data).is_ok().then_some(data).into_iter().collect();
    let stem = data_stem(path);
    if let Ok(entries) = std::fs::read_dir(folder_of(path)) {
        found.extend(entries.flatten().filter(|e| is_hashed_data_of(&e.file_name(), &stem)).map(|e| e.path()));
    }
    found.sort();
    found
}

/// Whether `name` is a data file name that fxonnx 0.1's saves gave `stem`'s model,
/// `<stem>.<16 hex digits>.data`: a save removes them, since the model no longer reads them.
fn is_hashed_data_of(name: &std::ffi::OsStr, stem: &str) -> bool {
    let digits = name.to_str().and_then(|n| n.strip_prefix(stem)?.strip_prefix('.')?.strip_suffix(".data"));
    digits.is_some_and(|d| d.len() == 16 && d.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)))
}

/// The model file and, with external data, the data file, both still temporary.
pub(super) struct Outputs<'s> {
    path: PathBuf,
    dir: PathBuf,
    stem: String,
    model: Temp,
    data: Option<Temp>,
    sources: &'s Sources,
}

impl<'s> Outputs<'s> {
    /// Temporary files for the model at `path` and, with `data`, for its data file (beside the
    /// model), once `path` is known to be fit to write ([`check_target`]). The one way a save
    /// opens its outputs.
    pub(super) fn create(path: &Path, data: bool, sources: &'s Sources) -> Result<Outputs<'s>, SaveError> {
        let dir = folder_of(path);
        check_target(path, sources)?;
        let stem = data_stem(path);
        let io = |p: PathBuf| move |source| SaveError::Io { path: p, source };
        let model = Temp::create(&dir).map_err(io(path.to_path_buf()))?;
        let data = match data {
            false => None,
            true => Some(Temp::create(&dir).map_err(io(dir.join(format!("{stem}.data"))))?),
        };
        Ok(Outputs { path: path.to_path_buf(), dir, stem, model, data, sources })
    }

    pub(super) fn model_file(&self) -> &File {
        self.model.file()
    }

    /// The data file (the model file when the placement is inline: nothing is written there then).
    pub(super) fn data_file(&self) -> &File {
        self.data.as_ref().map_or(self.model.file(), |t| t.file())
    }

    pub(super) fn has_data(&self) -> bool {
        self.data.is_some()
    }

    pub(super) fn model_path(&self) -> &Path {
        &self.path
    }

    /// The data file's stem ([`data_stem`]).
    pub(super) fn stem(&self) -> &str {
        &self.stem
    }

    /// The data file's path ([`data_location`]).
    pub(super) fn data_path(&self) -> PathBuf {
        self.dir.join(data_location(&self.stem))
    }

    /// Put the complete files into place, holding the folder's lock: the data file under its
    /// name, then the model over the old one. The old data file is kept under a temporary name
    /// until the model is in place, and put back if the model's rename fails: the old pair stays
    /// as it was. A model saved without external data removes the data file the old model used.
    pub(super) fn persist(self) -> Result<(), SaveError> {
        // The archive must still be what was read: a change in place (or a fault on its map)
        // means the weights written may be someone else's, or zeros.
        if let Some(archive) = self.sources.archive_file() {
            archive.check_unchanged()?;
        }
        let _lock = FolderLock::take(&self.dir)?;
        check_target(&self.path, self.sources)?;
        let data_path = self.data_path();
        let has_data = self.data.is_some();
        let model = self.model.stage(&self.path)?;
        let mut kept = None;
        let mut old_model = None;
        if let Some(temp) = self.data {
            if let Err(e) = check_target(&data_path, self.sources) {
                model.discard();
                return Err(e);
            }
            kept = keep_aside(&data_path);
            // The old model leaves its name before the data file is replaced: until the new model
            // is in place there is no model at the path (the old one kept under a second name),
            // never a model beside another model's data, which it would read as its weights.
            old_model = keep_aside(&self.path);
            if old_model.is_some() {
                let _ = std::fs::remove_file(&self.path);
            }
            if let Err(e) = temp.persist(&data_path) {
                restore(kept, &data_path);
                put_back(old_model, &self.path);
                model.discard();
                return Err(e);
            }
        }
        if let Err(e) = model.commit(&self.path) {
            match kept {
                Some(_) => restore(kept, &data_path),
                None if has_data => {
                    let _ = std::fs::remove_file(&data_path);
                }
                None => {}
            }
            put_back(old_model, &self.path);
            return Err(e);
        }
        for old in [kept, old_model].into_iter().flatten() {
            let _ = std::fs::remove_file(old);
        }
        let keep = has_data.then(|| OsString::from(data_location(&self.stem)));
        remove_stale_data(&self.dir, &self.stem, keep.as_deref(), self.sources);
        Ok(())
    }
}

/// A second name for the existing regular file at `path` (`.fxonnx-<pid>-keep-<n>.tmp` beside
/// it), so that it survives being replaced until the save is done. `None` when there is none,
/// or it cannot be linked (then a failed model rename cannot give it back, as before).
fn keep_aside(path: &Path) -> Option<PathBuf> {
    if !std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file()) {
        return None;
    }
    let dir = folder_of(path);
    (0..16u32)
        .map(|n| dir.join(format!(".fxonnx-{}-keep-{n}.tmp", std::process::id())))
        .find(|aside| std::fs::hard_link(path, aside).is_ok())
}

/// Put the file kept aside back at `path` (or, when nothing was there before, remove what is).
fn restore(kept: Option<PathBuf>, path: &Path) {
    match kept {
        Some(aside) => {
            let _ = std::fs::rename(aside, path);
        }
        None => {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// Put the model kept aside back at `path`, if one was.
fn put_back(kept: Option<PathBuf>, path: &Path) {
    if let Some(aside) = kept {
        let _ = std::fs::rename(aside, path);
    }
}

/// Remove the data files in `dir` that the model of `stem` no longer uses, after it was put in
/// place: `<stem>.data` unless it is `keep` (its own), and the hashed names fxonnx 0.1 gave data
/// files. Best effort: a file that cannot be removed stays. Never a source of the save, nor
/// anything but a regular file.
fn remove_stale_data(dir: &Path, stem: &str, keep: Option<&std::ffi::OsStr>, sources: &Sources) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let own = OsString::from(data_location(stem));
    for entry in entries.flatten() {
        let name = entry.file_name();
        if Some(name.as_os_str()) == keep || !(is_hashed_data_of(&name, stem) || name == own) {
            continue;
        }
        match std::fs::symlink_metadata(entry.path()) {
            Ok(meta) if meta.is_file() && sources.holds(&meta).is_none() => {
                let _ = std::fs::remove_file(entry.path());
            }
            _ => {}
        }
    }
}

/// An exclusive lock on an output folder (`flock` on the folder itself: nothing is created, and
/// the kernel drops it when the process dies), held while a save renames its files into place
/// and removes the ones the old model used: concurrent saves to one path take turns, so each
/// model lands with its own data. Waits at most [`FolderLock::WAIT`]; where the file system has
/// no such locks, the save goes on without.
struct FolderLock {
    #[cfg(target_os = "linux")]
    _folder: Option<File>,
}

impl FolderLock {
    /// A lock is held for two renames and a listing: a holder past this is stopped or stuck.
    const WAIT: std::time::Duration = std::time::Duration::from_secs(30);

    fn take(dir: &Path) -> Result<FolderLock, SaveError> {
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::AsRawFd;
            let Ok(folder) = File::open(dir) else { return Ok(FolderLock { _folder: None }) };
            let deadline = std::time::Instant::now() + Self::WAIT;
            let mut pause = std::time::Duration::from_micros(200);
            loop {
                // SAFETY: a plain system call on an open descriptor of ours.
                if unsafe { libc::flock(folder.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
                    return Ok(FolderLock { _folder: Some(folder) });
                }
                let e = std::io::Error::last_os_error();
                if e.kind() != std::io::ErrorKind::WouldBlock {
                    // No flock on this file system (some network ones): no turns to take.
                    return Ok(FolderLock { _folder: None });
                }
                if std::time::Instant::now() >= deadline {
                    return Err(SaveError::Locked { dir: dir.to_path_buf(), seconds: Self::WAIT.as_secs() });
                }
                std::thread::sleep(pause);
                pause = (pause * 2).min(std::time::Duration::from_millis(20));
            }
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = dir;
            Ok(FolderLock {})
        }
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

/// A temporary name beside `path` for the unnamed `file` (`linkat` cannot replace a file; the
/// name is then renamed over `path`). A process killed between the link and the rename leaves
/// that `.fxonnx-<pid>-<n>.tmp`; the next save in the folder removes those of processes that no
/// longer run.
#[cfg(target_os = "linux")]
fn name_beside(file: &File, path: &Path) -> std::io::Result<PathBuf> {
    let dir = folder_of(path);
    remove_stale_temporaries(&dir);
    for attempt in 0..16u32 {
        let name = dir.join(format!(".fxonnx-{}-{attempt}.tmp", std::process::id()));
        match link(file, &name) {
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
            Ok(()) => return Ok(name),
        }
    }
    Err(std::io::Error::new(std::io::ErrorKind::AlreadyExists, "no free temporary name in the output folder"))
}

/// `linkat` of `/proc/self/fd/N`: gives the (unnamed) `file` the name `to`.
#[cfg(target_os = "linux")]
fn link(file: &File, to: &Path) -> std::io::Result<()> {
    use std::ffi::CString;
    use std::os::fd::AsRawFd;
    use std::os::unix::ffi::OsStrExt;
    let proc_path = format!("/proc/self/fd/{}", file.as_raw_fd());
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

/// Refuse an output path that a save would wrongly replace: a directory; unless forced, anything
/// but a regular file (a symbolic link, a FIFO, a device: renaming over them replaces them with a
/// regular file), and a file the save reads ([`Sources`]).
fn check_target(path: &Path, sources: &Sources) -> Result<(), SaveError> {
    let refuse = |what, hint| Err(SaveError::Target { path: path.to_path_buf(), what, hint });
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return Ok(());
    };
    if meta.is_dir() {
        return refuse("a directory", "name a file inside it");
    }
    if sources.force {
        return Ok(());
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
    if let Some((what, hint)) = sources.holds(&meta) {
        return refuse(what, hint);
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsStr;

    /// Two reports of the same microsecond (concurrent exports): each its own name, whole, the
    /// HTML beside its markdown.
    #[test]
    fn reports_of_one_moment_get_their_own_names() {
        let dir = tempfile::tempdir().unwrap();
        let first = write_new(dir.path(), "r", &[(".md", b"one"), (".html", b"<p>one</p>")]).unwrap();
        let second = write_new(dir.path(), "r", &[(".md", b"two"), (".html", b"<p>two</p>")]).unwrap();
        assert_eq!((first, second.clone()), (dir.path().join("r.md"), dir.path().join("r-2.md")));
        assert_eq!(std::fs::read(&second).unwrap(), b"two");
        assert_eq!(std::fs::read(dir.path().join("r-2.html")).unwrap(), b"<p>two</p>");
        assert_eq!(std::fs::read(dir.path().join("r.md")).unwrap(), b"one");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 4);
    }

    /// Distinct file names never share a data file: `%` and bytes that are not UTF-8 are
    /// escaped, so no two names give one stem; a plain name is its own.
    #[cfg(unix)]
    #[test]
    fn distinct_file_names_give_distinct_data_stems() {
        use std::os::unix::ffi::OsStrExt;
        let stem = |b: &[u8]| data_stem(Path::new(OsStr::from_bytes(b)));
        let names: [&[u8]; 6] =
            [b"m.onnx", b"m\xff.onnx", b"m\xfe.onnx", b"m%FF.onnx", b"m%25FF.onnx", "m\u{fffd}.onnx".as_bytes()];
        let stems: Vec<String> = names.iter().map(|n| stem(n)).collect();
        assert_eq!(stems, ["m.onnx", "m%FF.onnx", "m%FE.onnx", "m%25FF.onnx", "m%2525FF.onnx", "m\u{fffd}.onnx"]);
        assert_eq!(data_location("m.onnx"), "m.onnx.data");
        assert!(is_hashed_data_of(OsStr::new("m.onnx.00000000000000ab.data"), "m.onnx"));
        assert!(!is_hashed_data_of(OsStr::new("m.onnx.data"), "m.onnx"));
        assert!(!is_hashed_data_of(OsStr::new("xm.onnx.00000000000000ab.data"), "m.onnx"));
        assert!(!is_hashed_data_of(OsStr::new("m.onnx.00000000000000AB.data"), "m.onnx"));
    }
}
