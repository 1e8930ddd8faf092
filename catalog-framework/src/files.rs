//! Where uploaded resource files live, so that every plugin that reads them (the core's
//! download, the DataStore loader) finds the same place: the [`FileStore`], over the
//! [`FileBackend`] `catalog.storage.backend` names (`local`, the default, a directory of this
//! node; `s3`, an S3-compatible bucket every node shares: both in catalog-io; another one a
//! plugin registers with `register_file_backend!`), docs/FILE-STORE.md.
//!
//! Files go in and out as streams: an upload is handed over as its spooled temporary file, a
//! download is sent as the backend hands it over, so no whole file is ever in memory.

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use futures::stream::BoxStream;
use futures::StreamExt;

use crate::config::Config;

/// Bytes of one part of an upload to an object store (S3's smallest part is 5 MiB).
pub const PART_BYTES: usize = 8 * 1024 * 1024;
/// Parts of one upload in flight at once.
pub const PARTS_IN_FLIGHT: usize = 2;

/// The file of an uploaded resource in a local store:
/// `<dir>/resources/<id[0..3]>/<id[3..6]>/<id[6..]>`, like CKAN's local storage. Only the id's
/// ASCII letters, digits and `-` are used, so no id leads out of the directory.
pub fn resource_file_path(dir: &Path, resource_id: &str) -> PathBuf {
    let [a, b, c] = key_parts(resource_id);
    dir.join("resources").join(a).join(b).join(c)
}

/// The three parts of a resource's key (`0b7`, `c1f`, the rest), from the id's ASCII letters,
/// digits and `-` only.
pub fn key_parts(resource_id: &str) -> [String; 3] {
    let id: String = resource_id
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
        .collect();
    let (a, rest) = id.split_at(id.len().min(3));
    let (b, c) = rest.split_at(rest.len().min(3));
    [a.to_string(), b.to_string(), c.to_string()]
}

/// Why a file could not be stored or read.
#[derive(Debug, thiserror::Error)]
pub enum FileStoreError {
    #[error("the file store could not be reached or refused the request: {0}")]
    Store(Box<dyn std::error::Error + Send + Sync>),
    #[error("reading the upload: {0}")]
    Io(#[from] std::io::Error),
}

/// An open file, or the part of it a `Range` asked for.
pub struct FileRead {
    /// The whole file's size.
    pub total: u64,
    /// The bytes being sent.
    pub range: Range<u64>,
    pub stream: BoxStream<'static, Result<Bytes, FileStoreError>>,
}

/// Where a deployment's resource files are kept, by resource id.
#[async_trait]
pub trait FileBackend: Send + Sync + 'static {
    /// For logs, errors and the node table: `local:<dir>`, `s3://<bucket>/<prefix>`.
    fn describe(&self) -> String;

    /// Whether the files stay on this node (a deployment of several nodes needs a shared
    /// store; a node warns when another one's store is local).
    fn is_local(&self) -> bool {
        false
    }

    /// The path of a resource's file on this node's disk, for readers that can use it in
    /// place (the DataStore loader); `None` where files are elsewhere.
    fn local_path(&self, _resource_id: &str) -> Option<PathBuf> {
        None
    }

    /// Stores the file at `src` as the resource's file, replacing any earlier one, so that a
    /// reader never sees half a file; answers its size.
    async fn put_file(&self, resource_id: &str, src: &Path) -> Result<u64, FileStoreError>;

    /// The size of a resource's file; `None` when there is none.
    async fn size(&self, resource_id: &str) -> Result<Option<u64>, FileStoreError>;

    /// A resource's file as a stream, or the bytes `range` names (within the file);
    /// `None` when there is no such file.
    async fn read(
        &self,
        resource_id: &str,
        range: Option<Range<u64>>,
    ) -> Result<Option<FileRead>, FileStoreError>;

    /// Removes a resource's file (none: nothing to do).
    async fn delete(&self, resource_id: &str) -> Result<(), FileStoreError>;
}

/// What a [`FileBackendFactory`] opens its backend from.
pub struct FileBackendInit<'a> {
    /// The whole configuration (`catalog.storage.*`, `catalog.storage_path`, a plugin's own
    /// section).
    pub config: &'a Config,
    /// The node's data directory.
    pub data_dir: &'a Path,
}

/// Opens a [`FileBackend`] at start-up.
pub trait FileBackendFactory: Send + Sync + 'static {
    fn open(&self, init: &FileBackendInit<'_>) -> anyhow::Result<Arc<dyn FileBackend>>;
}

crate::extension_point!(
    /// A [`FileBackendFactory`], submitted with
    /// [`register_file_backend!`](crate::register_file_backend) under the name
    /// `catalog.storage.backend` gives.
    pub FileBackendRegistration, Box<dyn FileBackendFactory>,
    collected("file_store_backends", "file store backend", listed = false)
);

/// Registers a file-store backend: `register_file_backend!("cas", ContentAddressed);`, chosen
/// with `catalog.storage.backend = "cas"`.
#[macro_export]
macro_rules! register_file_backend {
    ($name:expr, $value:expr) => {
        $crate::register_at!($crate::files::FileBackendRegistration, $name, $value, 0);
    };
}

/// The store of uploaded files: the chosen backend, with the range and copy rules every
/// backend shares.
#[derive(Clone)]
pub struct FileStore {
    backend: Arc<dyn FileBackend>,
    /// For logs and errors: `local:<dir>` or `s3://<bucket>/<prefix>`.
    pub describe: String,
}

impl std::fmt::Debug for FileStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileStore")
            .field("describe", &self.describe)
            .finish_non_exhaustive()
    }
}

impl FileStore {
    /// A store over `backend`.
    pub fn new(backend: Arc<dyn FileBackend>) -> FileStore {
        FileStore {
            describe: backend.describe(),
            backend,
        }
    }

    /// Whether files stay on this node (a deployment of several nodes needs a shared store).
    pub fn is_local(&self) -> bool {
        self.backend.is_local()
    }

    /// The path of a resource's file on this node's disk, when the backend keeps one.
    pub fn local_path(&self, resource_id: &str) -> Option<PathBuf> {
        self.backend.local_path(resource_id)
    }

    /// Stores the file at `src` as the resource's file, replacing any earlier one; answers
    /// its size.
    pub async fn put_file(&self, resource_id: &str, src: &Path) -> Result<u64, FileStoreError> {
        self.backend.put_file(resource_id, src).await
    }

    /// Opens a resource's file, or the part `range` names (an HTTP `Range` header's value);
    /// `Ok(None)` when there is no such file. A range that cannot be satisfied is
    /// [`OpenError::Unsatisfiable`] (HTTP 416).
    pub async fn open(
        &self,
        resource_id: &str,
        range: Option<&str>,
    ) -> Result<Option<FileRead>, OpenError> {
        let wanted = match range {
            None => None,
            Some(r) => {
                let Some(size) = self
                    .backend
                    .size(resource_id)
                    .await
                    .map_err(OpenError::Store)?
                else {
                    return Ok(None);
                };
                match parse_range(r, size) {
                    RangeSpec::Part(r) => Some(r),
                    RangeSpec::Whole => None,
                    RangeSpec::Unsatisfiable => {
                        return Err(OpenError::Unsatisfiable { total: size })
                    }
                }
            }
        };
        self.backend
            .read(resource_id, wanted)
            .await
            .map_err(OpenError::Store)
    }

    /// Copies a resource's file to `dest` (for readers that need a file, such as the
    /// DataStore loader); answers its size, or `None` when there is no such file.
    pub async fn copy_to(
        &self,
        resource_id: &str,
        dest: &Path,
    ) -> Result<Option<u64>, FileStoreError> {
        use tokio::io::AsyncWriteExt;
        let Some(mut read) = self.backend.read(resource_id, None).await? else {
            return Ok(None);
        };
        let mut out = tokio::fs::File::create(dest).await?;
        let mut n = 0u64;
        while let Some(chunk) = read.stream.next().await {
            let chunk = chunk?;
            n += chunk.len() as u64;
            out.write_all(&chunk).await?;
        }
        out.flush().await?;
        Ok(Some(n))
    }

    /// Removes a resource's file (none: nothing to do).
    pub async fn delete(&self, resource_id: &str) -> Result<(), FileStoreError> {
        self.backend.delete(resource_id).await
    }
}

/// Why [`FileStore::open`] failed.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error(transparent)]
    Store(FileStoreError),
    #[error("the range cannot be satisfied (the file has {total} bytes)")]
    Unsatisfiable { total: u64 },
}

/// What a `Range` header asks of a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RangeSpec {
    /// Not one byte range (several ranges, another unit): the whole file is sent, as RFC 9110
    /// allows.
    Whole,
    /// These bytes (a half-open range within the file).
    Part(Range<u64>),
    /// A range that starts past the end: HTTP 416.
    Unsatisfiable,
}

/// One `bytes=` range of a file of `total` bytes.
pub fn parse_range(header: &str, total: u64) -> RangeSpec {
    let Some(spec) = header.trim().strip_prefix("bytes=") else {
        return RangeSpec::Whole;
    };
    if spec.contains(',') {
        return RangeSpec::Whole;
    }
    let Some((a, b)) = spec.trim().split_once('-') else {
        return RangeSpec::Whole;
    };
    let (a, b) = (a.trim(), b.trim());
    let num = |s: &str| s.parse::<u64>().ok();
    let range = match (a.is_empty(), b.is_empty()) {
        // bytes=-N: the last N bytes.
        (true, false) => {
            let Some(n) = num(b) else {
                return RangeSpec::Whole;
            };
            if n == 0 || total == 0 {
                return RangeSpec::Unsatisfiable;
            }
            total.saturating_sub(n)..total
        }
        // bytes=N-: from N to the end.
        (false, true) => {
            let Some(s) = num(a) else {
                return RangeSpec::Whole;
            };
            s..total
        }
        (false, false) => {
            let (Some(s), Some(e)) = (num(a), num(b)) else {
                return RangeSpec::Whole;
            };
            if e < s {
                return RangeSpec::Whole;
            }
            s..(e.saturating_add(1)).min(total)
        }
        (true, true) => return RangeSpec::Whole,
    };
    if range.start >= total {
        return RangeSpec::Unsatisfiable;
    }
    RangeSpec::Part(range)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_read_as_rfc_9110_says() {
        use RangeSpec::*;
        assert_eq!(parse_range("bytes=0-9", 100), Part(0..10));
        assert_eq!(parse_range("bytes=90-", 100), Part(90..100));
        assert_eq!(parse_range("bytes=-10", 100), Part(90..100));
        assert_eq!(parse_range("bytes=-500", 100), Part(0..100));
        assert_eq!(parse_range("bytes=95-500", 100), Part(95..100));
        assert_eq!(parse_range("bytes=100-", 100), Unsatisfiable);
        assert_eq!(parse_range("bytes=-0", 100), Unsatisfiable);
        assert_eq!(parse_range("bytes=0-1,5-6", 100), Whole);
        assert_eq!(parse_range("items=0-1", 100), Whole);
        assert_eq!(parse_range("bytes=5-1", 100), Whole);
        assert_eq!(parse_range("bytes=x-", 100), Whole);
    }
}
