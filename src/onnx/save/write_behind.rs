//! Saving on two cores: the encoder fills buffers, a writer thread hands them to the kernel.
//!
//! A large save is two kinds of work: encoding (and computing folded weights) in this process, and
//! the kernel copying the bytes into the page cache. Done in one thread they add up. Here the encoder fills
//! fixed buffers and passes each full one to a writer thread, which writes it while the encoder
//! goes on; the buffers come back for reuse, so memory stays bounded at [`POOL`] buffers of
//! [`BUF`] bytes (or of the largest chunk [`WriteBehind::reserve`] was asked for, if larger).
//!
//! Writes reach each file in the order they were made: the bytes are those a sequential writer
//! would produce.

use std::fs::File;
use std::io::{self, Write};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::thread::{Scope, ScopedJoinHandle};

/// Bytes handed to the writer thread at a time: a folded weight's chunk is computed into one.
pub(crate) const BUF: usize = crate::onnx::ir::derived::CHUNK_BYTES;
/// Buffers in circulation: two being filled (model and data file), the rest written meanwhile, so
/// that the encoder can run ahead of the kernel's uneven copies.
const POOL: usize = 8;

/// Which output file a write goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Target {
    Model = 0,
    Data = 1,
}

/// A pooled buffer: `bytes` is initialized once, to its full length, and never cleared, so
/// [`WriteBehind::reserve`] hands out room without zeroing it (the caller overwrites it all);
/// `used` bytes of it are to be written.
#[derive(Default)]
struct Buf {
    bytes: Vec<u8>,
    used: usize,
}

/// A full buffer for one file.
struct Job(Target, Buf);

/// The first IO error and the file it happened on.
pub(crate) type Failure = (Target, io::Error);

/// The encoder's end: buffered, ordered writes to the model file and the data file.
///
/// Errors are not returned per write: after the first one the writer thread stops, later writes are
/// dropped, and [`WriteBehind::finish`] returns it.
pub(crate) struct WriteBehind<'scope> {
    jobs: Option<SyncSender<Job>>,
    free: Receiver<Buf>,
    /// The buffer being filled for each target (without bytes until first used).
    filling: [Buf; 2],
    thread: ScopedJoinHandle<'scope, Result<(), Failure>>,
    /// The writer thread has stopped (it failed): nothing more is sent.
    stopped: bool,
}

impl<'scope> WriteBehind<'scope> {
    /// Start the writer thread in `scope`, writing to `model` and, if given, `data`.
    pub fn start<'env>(
        scope: &'scope Scope<'scope, 'env>,
        model: &'env File,
        data: Option<&'env File>,
    ) -> io::Result<Self> {
        let (jobs_tx, jobs_rx) = sync_channel::<Job>(POOL);
        let (free_tx, free_rx) = sync_channel::<Buf>(POOL);
        for _ in 0..POOL {
            // Cannot fail: the channel has room for the whole pool and its receiver is alive.
            let _ = free_tx.send(Buf { bytes: vec![0; BUF], used: 0 });
        }
        let thread = std::thread::Builder::new()
            .name("fxonnx-writer".into())
            .spawn_scoped(scope, move || run([Some(model), data], jobs_rx, free_tx))?;
        Ok(WriteBehind { jobs: Some(jobs_tx), free: free_rx, filling: Default::default(), thread, stopped: false })
    }

    /// Append `bytes` to `target`.
    pub fn write(&mut self, target: Target, bytes: &[u8]) {
        self.write_with(target, bytes, |from, to| to.copy_from_slice(from));
    }

    /// Append `bytes` to `target`, each piece put into the buffers by `copy(piece, room)` (which
    /// must fill `room`, of the piece's length, with the piece's bytes).
    pub fn write_with(&mut self, target: Target, mut bytes: &[u8], mut copy: impl FnMut(&[u8], &mut [u8])) {
        while !bytes.is_empty() {
            let Some(buf) = self.filling(target) else { return };
            let n = (buf.bytes.len() - buf.used).min(bytes.len());
            copy(&bytes[..n], &mut buf.bytes[buf.used..buf.used + n]);
            buf.used += n;
            bytes = &bytes[n..];
        }
    }

    /// The next `len` bytes of `target`, for bytes computed in place rather than copied from
    /// elsewhere: the caller must overwrite all of them (they hold whatever the buffer held
    /// before: zeroing them first would touch every byte twice). `None` once the writer stopped.
    pub fn reserve(&mut self, target: Target, len: usize) -> Option<&mut [u8]> {
        let current = &self.filling[target as usize];
        if current.used > 0 && current.used + len > current.bytes.len() {
            self.send_filling(target);
        }
        let buf = self.filling(target)?;
        let at = buf.used;
        if at + len > buf.bytes.len() {
            // A chunk larger than a buffer grows this one (it goes back to the pool larger).
            buf.bytes.resize(at + len, 0);
        }
        buf.used += len;
        Some(&mut buf.bytes[at..at + len])
    }

    /// The buffer being filled for `target`, with room left (full ones are sent first).
    fn filling(&mut self, target: Target) -> Option<&mut Buf> {
        let current = &self.filling[target as usize];
        if current.used > 0 && current.used >= current.bytes.len() {
            self.send_filling(target);
        }
        if self.filling[target as usize].bytes.is_empty() {
            match self.free.recv() {
                Ok(b) => self.filling[target as usize] = b,
                Err(_) => self.stopped = true,
            }
        }
        if self.stopped {
            return None;
        }
        Some(&mut self.filling[target as usize])
    }

    /// Write what is buffered, wait for the writer thread, and return its first error.
    pub fn finish(mut self) -> Result<(), Failure> {
        self.send_filling(Target::Model);
        self.send_filling(Target::Data);
        // Closing the channel ends the writer's loop.
        self.jobs = None;
        match self.thread.join() {
            Ok(result) => result,
            // The writer thread does not panic (it only writes); if it ever did, the
            // output is incomplete and must not be renamed into place.
            Err(_) => Err((Target::Model, io::Error::other("the writer thread panicked"))),
        }
    }

    fn send_filling(&mut self, target: Target) {
        let buf = std::mem::take(&mut self.filling[target as usize]);
        if buf.used > 0 {
            self.send(Job(target, buf));
        } else {
            self.filling[target as usize] = buf;
        }
    }

    fn send(&mut self, job: Job) {
        if self.stopped {
            return;
        }
        if let Some(jobs) = &self.jobs {
            if jobs.send(job).is_err() {
                self.stopped = true;
            }
        }
    }
}

/// The writer thread: write each buffer to its file in order; stop at the first error.
fn run(files: [Option<&File>; 2], jobs: Receiver<Job>, free: SyncSender<Buf>) -> Result<(), Failure> {
    for Job(target, mut buf) in jobs {
        let bytes = &buf.bytes[..buf.used];
        file(&files, target)?.write_all(bytes).map_err(|e| (target, e))?;
        buf.used = 0;
        // The encoder may have finished and stopped taking buffers back.
        let _ = free.send(buf);
    }
    Ok(())
}

fn file<'f>(files: &[Option<&'f File>; 2], target: Target) -> Result<&'f File, Failure> {
    files[target as usize].ok_or_else(|| (target, io::Error::other("no external data file was opened")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Seek};

    fn read(f: &File) -> Vec<u8> {
        let mut f = f;
        let mut v = Vec::new();
        f.seek(io::SeekFrom::Start(0)).unwrap();
        f.read_to_end(&mut v).unwrap();
        v
    }

    #[test]
    fn interleaved_writes_and_computed_chunks_arrive_in_order() {
        let model = tempfile::tempfile().unwrap();
        let data = tempfile::tempfile().unwrap();
        // More than the pool holds, in pieces that straddle buffer ends.
        let big: Vec<u8> = (0..(POOL * BUF + 12_345) as u32).map(|i| (i % 253) as u8).collect();
        let (mut want_model, mut want_data) = (Vec::new(), Vec::new());
        std::thread::scope(|s| {
            let mut w = WriteBehind::start(s, &model, Some(&data)).unwrap();
            for (i, piece) in big.chunks(BUF / 3 + 17).enumerate() {
                let (target, want) =
                    if i % 2 == 0 { (Target::Model, &mut want_model) } else { (Target::Data, &mut want_data) };
                w.write(target, piece);
                want.extend_from_slice(piece);
                if i % 3 == 0 {
                    // Computed in place, in reused buffers that hold earlier bytes: smaller and
                    // larger than a buffer.
                    for len in [1000, BUF + 5000] {
                        let room = w.reserve(target, len).unwrap();
                        assert_eq!(room.len(), len);
                        room.iter_mut().enumerate().for_each(|(k, b)| *b = (k * 31 + i) as u8);
                        want.extend((0..len).map(|k| (k * 31 + i) as u8));
                    }
                }
            }
            w.finish().unwrap();
        });
        assert_eq!(read(&model), want_model);
        assert_eq!(read(&data), want_data);
    }

    #[test]
    fn a_failed_write_is_reported_and_stops_the_writer() {
        let model = tempfile::tempfile().unwrap();
        std::thread::scope(|s| {
            let mut w = WriteBehind::start(s, &model, None).unwrap();
            w.write(Target::Model, b"header");
            // No data file was opened: the writer stops there, and later writes are dropped.
            w.write(Target::Data, &vec![1u8; BUF + 1]);
            w.write(Target::Model, &vec![2u8; 3 * BUF]);
            let (target, e) = w.finish().unwrap_err();
            assert_eq!(target, Target::Data);
            assert!(e.to_string().contains("no external data file"), "{e}");
        });
    }
}
