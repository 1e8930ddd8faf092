//! Where uploaded resource files live, so that every plugin that reads them (the core's
//! download, the DataStore loader) finds the same place: a directory of this node (the
//! default), or an S3-compatible object store that every node of a deployment shares
//! (`catalog.storage.*`, docs/FILE-STORE.md).
//!
//! Files go in and out as streams: an upload is copied from its spooled temporary file (into
//! an object store in parts of [`PART_BYTES`], at most [`PARTS_IN_FLIGHT`] parts held at
//! once), a download is sent as the store hands it over, so no whole file is ever in memory.

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use catalog_store::config::StorageConfig;
use futures::stream::BoxStream;
use futures::StreamExt;
use object_store::aws::AmazonS3Builder;
use object_store::local::LocalFileSystem;
use object_store::path::Path as Key;
use object_store::{
    ClientOptions, GetOptions, GetRange, ObjectStore, ObjectStoreExt, PutPayload, RetryConfig,
    WriteMultipart,
};
use tokio::io::AsyncReadExt;

/// Bytes of one part of an upload (S3's smallest part is 5 MiB).
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

fn key_parts(resource_id: &str) -> [String; 3] {
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
    Store(#[from] object_store::Error),
    #[error("reading the upload: {0}")]
    Io(#[from] std::io::Error),
}

/// The store of uploaded files.
#[derive(Debug, Clone)]
pub struct FileStore {
    store: Arc<dyn ObjectStore>,
    /// Key prefix inside the store (`resources`, or `<prefix>/resources` in a bucket).
    prefix: String,
    /// The directory of a local store.
    local_dir: Option<PathBuf>,
    /// For logs and errors: `local:<dir>` or `s3://<bucket>/<prefix>`.
    pub describe: String,
}

/// An open file, or the part of it a `Range` asked for.
pub struct FileRead {
    /// The whole file's size.
    pub total: u64,
    /// The bytes being sent.
    pub range: Range<u64>,
    pub stream: BoxStream<'static, Result<Bytes, FileStoreError>>,
}

impl FileStore {
    /// The store `catalog.storage.*` names. A local store's directory is
    /// `catalog.storage_path` (CKAN's `ckan.storage_path`), else the data directory; it is
    /// created if missing.
    pub fn from_config(
        cfg: &StorageConfig,
        storage_path: Option<&Path>,
        data_dir: &Path,
    ) -> anyhow::Result<FileStore> {
        match cfg.backend.as_str() {
            "" | "local" => FileStore::local(storage_path.unwrap_or(data_dir)),
            "s3" => FileStore::s3(cfg),
            other => anyhow::bail!("catalog.storage.backend {other:?}: expected local or s3"),
        }
    }

    /// A store in a local directory.
    pub fn local(dir: &Path) -> anyhow::Result<FileStore> {
        std::fs::create_dir_all(dir)?;
        let fs = LocalFileSystem::new_with_prefix(dir)?;
        Ok(FileStore {
            store: Arc::new(fs),
            prefix: "resources".into(),
            local_dir: Some(dir.to_path_buf()),
            describe: format!("local:{}", dir.display()),
        })
    }

    /// A store in an S3-compatible bucket.
    pub fn s3(cfg: &StorageConfig) -> anyhow::Result<FileStore> {
        if cfg.bucket.is_empty() {
            anyhow::bail!("catalog.storage.backend is s3 but catalog.storage.bucket is not set");
        }
        let timeout = Duration::from_secs(cfg.timeout_secs.max(1));
        let mut b = AmazonS3Builder::new()
            .with_bucket_name(&cfg.bucket)
            .with_region(&cfg.region)
            // The client options carry allow_http too: set it there (a later
            // `with_client_options` would replace the builder's own setting).
            .with_client_options(
                ClientOptions::new()
                    .with_allow_http(cfg.allow_http)
                    .with_timeout(timeout)
                    .with_connect_timeout(Duration::from_secs(10).min(timeout)),
            )
            .with_retry(RetryConfig {
                max_retries: cfg.max_retries,
                retry_timeout: timeout,
                ..RetryConfig::default()
            });
        if let Some(e) = &cfg.endpoint {
            b = b.with_endpoint(e);
        }
        if let Some(k) = &cfg.access_key_id {
            b = b.with_access_key_id(k);
        }
        if let Some(s) = &cfg.secret_access_key {
            b = b.with_secret_access_key(s);
        }
        let prefix = cfg.prefix.trim_matches('/');
        Ok(FileStore {
            store: Arc::new(b.build()?),
            prefix: if prefix.is_empty() {
                "resources".into()
            } else {
                format!("{prefix}/resources")
            },
            local_dir: None,
            describe: format!("s3://{}/{prefix}", cfg.bucket),
        })
    }

    /// Whether files stay on this node (a deployment of several nodes needs a shared store).
    pub fn is_local(&self) -> bool {
        self.local_dir.is_some()
    }

    /// The path of a resource's file in a local store.
    pub fn local_path(&self, resource_id: &str) -> Option<PathBuf> {
        self.local_dir
            .as_deref()
            .map(|d| resource_file_path(d, resource_id))
    }

    fn key(&self, resource_id: &str) -> Key {
        let [a, b, c] = key_parts(resource_id);
        Key::from(format!("{}/{a}/{b}/{c}", self.prefix))
    }

    /// Stores the file at `src` as the resource's file, replacing any earlier one; answers
    /// its size. A local store copies it (the kernel's copy) and renames it into place; an
    /// object store is sent it in parts, so a file of any size holds at most
    /// `PART_BYTES * (PARTS_IN_FLIGHT + 1)` in memory. A failed upload leaves no object.
    pub async fn put_file(&self, resource_id: &str, src: &Path) -> Result<u64, FileStoreError> {
        if let Some(dest) = self.local_path(resource_id) {
            // A local store: the kernel copies (no buffer of ours), into a sibling file that
            // is then renamed over the old one, so a reader never sees half a file.
            let dir = dest.parent().unwrap_or(Path::new("."));
            tokio::fs::create_dir_all(dir).await?;
            let staging = tempfile::Builder::new()
                .prefix(".upload-")
                .tempfile_in(dir)?
                .into_temp_path();
            let size = tokio::fs::copy(src, &staging).await?;
            staging.persist(&dest).map_err(|e| e.error)?;
            return Ok(size);
        }
        let key = self.key(resource_id);
        let mut file = tokio::fs::File::open(src).await?;
        let size = file.metadata().await?.len();
        if size <= PART_BYTES as u64 {
            let mut buf = Vec::with_capacity(size as usize);
            file.read_to_end(&mut buf).await?;
            self.store.put(&key, PutPayload::from(buf)).await?;
            return Ok(size);
        }
        let upload = self.store.put_multipart(&key).await?;
        let mut writer = WriteMultipart::new_with_chunk_size(upload, PART_BYTES);
        let mut buf = vec![0u8; 1024 * 1024];
        let result: Result<(), FileStoreError> = async {
            loop {
                let n = file.read(&mut buf).await?;
                if n == 0 {
                    return Ok(());
                }
                writer.wait_for_capacity(PARTS_IN_FLIGHT).await?;
                writer.write(&buf[..n]);
            }
        }
        .await;
        match result {
            Ok(()) => {
                writer.finish().await?;
                Ok(size)
            }
            Err(e) => {
                // Best effort: the store may be what failed.
                let _ = writer.abort().await;
                Err(e)
            }
        }
    }

    /// Opens a resource's file, or the part `range` names (an HTTP `Range` header's value);
    /// `Ok(None)` when there is no such file. A range that cannot be satisfied is
    /// [`OpenError::Unsatisfiable`] (HTTP 416).
    pub async fn open(
        &self,
        resource_id: &str,
        range: Option<&str>,
    ) -> Result<Option<FileRead>, OpenError> {
        let key = self.key(resource_id);
        let wanted = match range {
            None => None,
            Some(r) => {
                let meta = match self.store.head(&key).await {
                    Ok(m) => m,
                    Err(object_store::Error::NotFound { .. }) => return Ok(None),
                    Err(e) => return Err(OpenError::Store(e.into())),
                };
                match parse_range(r, meta.size) {
                    RangeSpec::Part(r) => Some(r),
                    RangeSpec::Whole => None,
                    RangeSpec::Unsatisfiable => {
                        return Err(OpenError::Unsatisfiable { total: meta.size })
                    }
                }
            }
        };
        let opts = GetOptions {
            range: wanted.clone().map(GetRange::Bounded),
            ..GetOptions::default()
        };
        let got = match self.store.get_opts(&key, opts).await {
            Ok(g) => g,
            Err(object_store::Error::NotFound { .. }) => return Ok(None),
            Err(e) => return Err(OpenError::Store(e.into())),
        };
        let total = got.meta.size;
        let range = got.range.clone();
        let stream = got
            .into_stream()
            .map(|r| r.map_err(FileStoreError::from))
            .boxed();
        Ok(Some(FileRead {
            total,
            range,
            stream,
        }))
    }

    /// Copies a resource's file to `dest` (for readers that need a file, such as the
    /// DataStore loader); answers its size, or `None` when there is no such file.
    pub async fn copy_to(
        &self,
        resource_id: &str,
        dest: &Path,
    ) -> Result<Option<u64>, FileStoreError> {
        use tokio::io::AsyncWriteExt;
        let Some(mut read) = self.open(resource_id, None).await.map_err(|e| match e {
            OpenError::Store(e) => e,
            OpenError::Unsatisfiable { .. } => unreachable!("no range was asked for"),
        })?
        else {
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
        match self.store.delete(&self.key(resource_id)).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(e.into()),
        }
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

    #[tokio::test]
    async fn a_local_store_keeps_ckans_layout_and_streams_ranges() {
        let dir = tempfile::tempdir().unwrap();
        let store = FileStore::local(dir.path()).unwrap();
        let src = dir.path().join("upload.bin");
        // Larger than one part, so the upload goes in parts.
        let data: Vec<u8> = (0..(PART_BYTES + 12_345))
            .map(|i| (i % 251) as u8)
            .collect();
        std::fs::write(&src, &data).unwrap();
        let id = "0b7c1f3e-aaaa-bbbb-cccc-123456789abc";
        assert_eq!(store.put_file(id, &src).await.unwrap(), data.len() as u64);
        let path = store.local_path(id).unwrap();
        assert_eq!(
            path,
            dir.path()
                .join("resources/0b7/c1f/3e-aaaa-bbbb-cccc-123456789abc")
        );
        assert_eq!(std::fs::read(&path).unwrap(), data);

        let read_all = |r: FileRead| async move {
            let chunks: Vec<Bytes> = r.stream.map(|c| c.unwrap()).collect().await;
            chunks.concat()
        };
        let whole = store.open(id, None).await.unwrap().unwrap();
        assert_eq!(
            (whole.total, whole.range.clone()),
            (data.len() as u64, 0..data.len() as u64)
        );
        assert_eq!(read_all(whole).await, data);
        let part = store.open(id, Some("bytes=-100")).await.unwrap().unwrap();
        assert_eq!(part.range.end - part.range.start, 100);
        assert_eq!(read_all(part).await, data[data.len() - 100..]);
        assert!(matches!(
            store.open(id, Some("bytes=999999999-")).await,
            Err(OpenError::Unsatisfiable { .. })
        ));
        assert!(store.open("no-such-id", None).await.unwrap().is_none());

        let copy = dir.path().join("copy.bin");
        assert_eq!(
            store.copy_to(id, &copy).await.unwrap(),
            Some(data.len() as u64)
        );
        assert_eq!(std::fs::read(&copy).unwrap(), data);
        store.delete(id).await.unwrap();
        store.delete(id).await.unwrap();
        assert!(store.open(id, None).await.unwrap().is_none());
    }
}
