//! Opening input files (the archive, a weight-free model, a file to inspect): regular files only,
//! checked without blocking. Opening a FIFO for reading waits for a writer, forever if none comes,
//! and a device such as `/dev/zero` never ends; both are refused with the path named.

use std::fs::File;
use std::path::Path;

/// Why an input cannot be read.
#[derive(Debug)]
pub(crate) enum OpenError {
    Io(std::io::Error),
    /// A FIFO, socket, device or directory.
    NotAFile,
}

/// Open `path` for reading if it is a regular file. A FIFO is opened without waiting for a writer
/// (`O_NONBLOCK`) and then refused; a device or socket is refused before it is opened at all (an
/// open can have effects, as a tape's rewind). The answer is the open file's own type, so a path
/// swapped for a FIFO between the check and the open is still refused.
pub(crate) fn open_regular(path: &Path) -> Result<File, OpenError> {
    if let Ok(meta) = std::fs::metadata(path) {
        if !meta.is_file() {
            return Err(OpenError::NotAFile);
        }
    }
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // Reads of a regular file ignore O_NONBLOCK: nothing else changes for the archive.
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path).map_err(OpenError::Io)?;
    if !file.metadata().map_err(OpenError::Io)?.is_file() {
        return Err(OpenError::NotAFile);
    }
    Ok(file)
}

/// The whole of the regular file at `path` ([`open_regular`]).
pub(crate) fn read_regular(path: &Path) -> Result<Vec<u8>, OpenError> {
    use std::io::Read;
    let mut file = open_regular(path)?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).map_err(OpenError::Io)?;
    Ok(bytes)
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn a_fifo_is_refused_without_waiting_for_a_writer() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert!(matches!(open_regular(&fifo), Err(OpenError::NotAFile)));
        assert!(matches!(read_regular(Path::new("/dev/zero")), Err(OpenError::NotAFile)));
        assert!(matches!(open_regular(dir.path()), Err(OpenError::NotAFile)));
        assert!(matches!(open_regular(&dir.path().join("missing")), Err(OpenError::Io(_))));
        std::fs::write(dir.path().join("f"), b"abc").unwrap();
        assert_eq!(read_regular(&dir.path().join("f")).unwrap(), b"abc");
    }
}
