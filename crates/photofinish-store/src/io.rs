//! All file I/O of the store goes through [`Storage`], so that tests can inject faults.
//!
//! [`RealStorage`] is `std::fs` plus the fsync discipline durable files need (data, then the
//! directory after a rename or create). [`FaultyStorage`] wraps it with a switch that makes
//! writes and syncs fail with `ENOSPC` or `EIO` until cleared — the way tests prove that a
//! full disk answers 503, changes nothing, and heals without a restart.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;

/// A log file open for appending.
pub trait LogFile: Send {
    /// Appends all of `buf`.
    fn append(&mut self, buf: &[u8]) -> io::Result<()>;
    /// Makes everything appended so far durable (fdatasync).
    fn sync(&mut self) -> io::Result<()>;
    /// Cuts the file to `len` bytes (undoing a failed append).
    fn truncate(&mut self, len: u64) -> io::Result<()>;
}

/// Files at least this large are read by mapping them (their bytes stay the kernel's page
/// cache) instead of copying them into fresh memory: a 450 MB snapshot at 10M members read
/// in 0.26 s through `read`, most of it faulting in and zeroing the new pages before the
/// copy (docs/bench-history.md §13, session 19), and its copy doubled the peak memory of a start.
const MAP_MIN_BYTES: u64 = 4 << 20;

/// The bytes of a whole file: read into memory, or mapped.
pub enum FileBytes {
    /// Copied into a buffer (small files).
    Owned(Vec<u8>),
    /// Mapped read-only.
    Mapped(memmap2::Mmap),
}

impl std::ops::Deref for FileBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            FileBytes::Owned(v) => v,
            FileBytes::Mapped(m) => m,
        }
    }
}

/// The file operations the store needs.
pub trait Storage: Send + Sync + 'static {
    /// Creates `dir` and its parents.
    fn create_dir_all(&self, dir: &Path) -> io::Result<()>;
    /// Names of the files in `dir`.
    fn list(&self, dir: &Path) -> io::Result<Vec<String>>;
    /// The whole content of `path`.
    fn read(&self, path: &Path) -> io::Result<FileBytes>;
    /// Opens `path` for appending at `len` (creating it; bytes past `len` are cut), and makes
    /// a new file's directory entry durable.
    fn open_log(&self, path: &Path, len: u64) -> io::Result<Box<dyn LogFile>>;
    /// Writes `path` atomically: a temp file filled by `fill`, fsync, rename, directory fsync.
    fn write_atomic(
        &self,
        path: &Path,
        fill: &mut dyn FnMut(&mut dyn Write) -> io::Result<()>,
    ) -> io::Result<()>;
    /// Removes `path`.
    fn remove(&self, path: &Path) -> io::Result<()>;
}

/// The real file system.
#[derive(Debug, Default, Clone, Copy)]
pub struct RealStorage;

struct RealLog {
    file: File,
}

impl LogFile for RealLog {
    fn append(&mut self, buf: &[u8]) -> io::Result<()> {
        self.file.write_all(buf)
    }
    fn sync(&mut self) -> io::Result<()> {
        self.file.sync_data()
    }
    fn truncate(&mut self, len: u64) -> io::Result<()> {
        self.file.set_len(len)?;
        self.file.sync_data()
    }
}

fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

fn parent(path: &Path) -> &Path {
    path.parent().unwrap_or(Path::new("."))
}

impl Storage for RealStorage {
    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        fs::create_dir_all(dir)
    }

    fn list(&self, dir: &Path) -> io::Result<Vec<String>> {
        let mut names = Vec::new();
        for entry in fs::read_dir(dir)? {
            if let Some(name) = entry?.file_name().to_str() {
                names.push(name.to_owned());
            }
        }
        names.sort();
        Ok(names)
    }

    fn read(&self, path: &Path) -> io::Result<FileBytes> {
        let file = File::open(path)?;
        if file.metadata()?.len() < MAP_MIN_BYTES {
            let mut bytes = Vec::new();
            io::Read::read_to_end(&mut &file, &mut bytes)?;
            return Ok(FileBytes::Owned(bytes));
        }
        // SAFETY: a mapping is undefined behaviour if the file changes under it. The files
        // read here are the data directory's, which one server owns (the store takes its
        // LOCK file first, writer/mod.rs `lock_dir`): snapshots and import files are written
        // whole under a temporary name and renamed, never changed after; a log segment is
        // read only by recovery, before anything appends to it or cuts its torn tail, and
        // the mapping is dropped when its bytes have been decoded.
        #[allow(unsafe_code)]
        let map = unsafe { memmap2::MmapOptions::new().populate().map(&file)? };
        Ok(FileBytes::Mapped(map))
    }

    fn open_log(&self, path: &Path, len: u64) -> io::Result<Box<dyn LogFile>> {
        let existed = path.exists();
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        if file.metadata()?.len() != len {
            file.set_len(len)?;
            file.sync_data()?;
        }
        if !existed {
            sync_dir(parent(path))?;
        }
        Ok(Box::new(RealLog { file }))
    }

    fn write_atomic(
        &self,
        path: &Path,
        fill: &mut dyn FnMut(&mut dyn Write) -> io::Result<()>,
    ) -> io::Result<()> {
        let mut tmp = PathBuf::from(path);
        tmp.set_extension("tmp");
        let result = (|| {
            let file = File::create(&tmp)?;
            let mut w = io::BufWriter::with_capacity(1 << 20, file);
            fill(&mut w)?;
            let file = w.into_inner().map_err(|e| e.into_error())?;
            file.sync_all()?;
            fs::rename(&tmp, path)?;
            sync_dir(parent(path))
        })();
        if result.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        result
    }

    fn remove(&self, path: &Path) -> io::Result<()> {
        fs::remove_file(path)
    }
}

/// Which failure [`FaultyStorage`] injects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Everything works.
    None = 0,
    /// Writes and syncs fail with ENOSPC ("no space left on device").
    DiskFull = 1,
    /// Writes and syncs fail with EIO.
    IoError = 2,
}

/// The switch shared between a test and the [`FaultyStorage`] it controls.
#[derive(Debug, Clone, Default)]
pub struct FaultSwitch(Arc<AtomicU8>);

impl FaultSwitch {
    /// Injects `fault` into every later write and sync (`Fault::None` heals).
    pub fn set(&self, fault: Fault) {
        self.0.store(fault as u8, Ordering::SeqCst);
    }

    fn check(&self) -> io::Result<()> {
        match self.0.load(Ordering::SeqCst) {
            1 => Err(io::Error::from_raw_os_error(28)), // ENOSPC
            2 => Err(io::Error::from_raw_os_error(5)),  // EIO
            _ => Ok(()),
        }
    }
}

/// [`RealStorage`] with failures injected through a [`FaultSwitch`]. Reads never fail.
#[derive(Debug, Clone, Default)]
pub struct FaultyStorage {
    /// The switch.
    pub faults: FaultSwitch,
}

struct FaultyLog {
    inner: Box<dyn LogFile>,
    faults: FaultSwitch,
}

impl LogFile for FaultyLog {
    fn append(&mut self, buf: &[u8]) -> io::Result<()> {
        self.faults.check()?;
        self.inner.append(buf)
    }
    fn sync(&mut self) -> io::Result<()> {
        self.faults.check()?;
        self.inner.sync()
    }
    fn truncate(&mut self, len: u64) -> io::Result<()> {
        self.faults.check()?;
        self.inner.truncate(len)
    }
}

impl Storage for FaultyStorage {
    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        RealStorage.create_dir_all(dir)
    }
    fn list(&self, dir: &Path) -> io::Result<Vec<String>> {
        RealStorage.list(dir)
    }
    fn read(&self, path: &Path) -> io::Result<FileBytes> {
        RealStorage.read(path)
    }
    fn open_log(&self, path: &Path, len: u64) -> io::Result<Box<dyn LogFile>> {
        self.faults.check()?;
        let inner = RealStorage.open_log(path, len)?;
        Ok(Box::new(FaultyLog {
            inner,
            faults: self.faults.clone(),
        }))
    }
    fn write_atomic(
        &self,
        path: &Path,
        fill: &mut dyn FnMut(&mut dyn Write) -> io::Result<()>,
    ) -> io::Result<()> {
        self.faults.check()?;
        RealStorage.write_atomic(path, fill)
    }
    fn remove(&self, path: &Path) -> io::Result<()> {
        RealStorage.remove(path)
    }
}
