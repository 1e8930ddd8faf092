//! The file-store backends on `object_store`: `local`, a directory of this node (the default:
//! `catalog.storage_path`, CKAN's `ckan.storage_path`, else the data directory), and `s3`, an
//! S3-compatible bucket every node of a deployment shares (`catalog.storage.*`,
//! docs/FILE-STORE.md). Uploads go in parts of [`PART_BYTES`], at most [`PARTS_IN_FLIGHT`]
//! held at once; reads are the store's stream.

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use catalog_framework::files::{
    key_parts, resource_file_path, FileBackend, FileBackendFactory, FileBackendInit, FileRead,
    FileStoreError, PARTS_IN_FLIGHT, PART_BYTES,
};
use catalog_framework::register_file_backend;
use catalog_framework::store::config::StorageConfig;
use futures::StreamExt;
use object_store::aws::AmazonS3Builder;
use object_store::local::LocalFileSystem;
use object_store::path::Path as Key;
use object_store::{
    ClientOptions, GetOptions, GetRange, ObjectStore, ObjectStoreExt, PutPayload, RetryConfig,
    WriteMultipart,
};
use tokio::io::AsyncReadExt;

/// Resource files in an object store (a local directory or an S3 bucket).
#[derive(Debug)]
pub struct ObjectFiles {
    store: Arc<dyn ObjectStore>,
    /// Key prefix inside the store (`resources`, or `<prefix>/resources` in a bucket).
    prefix: String,
    /// The directory of a local store.
    local_dir: Option<PathBuf>,
    /// `local:<dir>` or `s3://<bucket>/<prefix>`.
    describe: String,
}

fn store_error(e: object_store::Error) -> FileStoreError {
    FileStoreError::Store(Box::new(e))
}

impl ObjectFiles {
    /// A store in a local directory (created if missing), in CKAN's layout.
    pub fn local(dir: &Path) -> anyhow::Result<ObjectFiles> {
        std::fs::create_dir_all(dir)?;
        let fs = LocalFileSystem::new_with_prefix(dir)?;
        Ok(ObjectFiles {
            store: Arc::new(fs),
            prefix: "resources".into(),
            local_dir: Some(dir.to_path_buf()),
            describe: format!("local:{}", dir.display()),
        })
    }

    /// A store in an S3-compatible bucket.
    pub fn s3(cfg: &StorageConfig) -> anyhow::Result<ObjectFiles> {
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
        Ok(ObjectFiles {
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

    fn key(&self, resource_id: &str) -> Key {
        let [a, b, c] = key_parts(resource_id);
        Key::from(format!("{}/{a}/{b}/{c}", self.prefix))
    }

    /// An object store is sent the file in parts, so a file of any size holds at most
    /// `PART_BYTES * (PARTS_IN_FLIGHT + 1)` in memory. A failed upload leaves no object.
    async fn upload(&self, key: &Key, src: &Path) -> Result<u64, FileStoreError> {
        let mut file = tokio::fs::File::open(src).await?;
        let size = file.metadata().await?.len();
        if size <= PART_BYTES as u64 {
            let mut buf = Vec::with_capacity(size as usize);
            file.read_to_end(&mut buf).await?;
            self.store
                .put(key, PutPayload::from(buf))
                .await
                .map_err(store_error)?;
            return Ok(size);
        }
        let upload = self.store.put_multipart(key).await.map_err(store_error)?;
        let mut writer = WriteMultipart::new_with_chunk_size(upload, PART_BYTES);
        let mut buf = vec![0u8; 1024 * 1024];
        let result: Result<(), FileStoreError> = async {
            loop {
                let n = file.read(&mut buf).await?;
                if n == 0 {
                    return Ok(());
                }
                writer
                    .wait_for_capacity(PARTS_IN_FLIGHT)
                    .await
                    .map_err(store_error)?;
                writer.write(&buf[..n]);
            }
        }
        .await;
        match result {
            Ok(()) => {
                writer.finish().await.map_err(store_error)?;
                Ok(size)
            }
            Err(e) => {
                // Best effort: the store may be what failed.
                let _ = writer.abort().await;
                Err(e)
            }
        }
    }
}

#[async_trait]
impl FileBackend for ObjectFiles {
    fn describe(&self) -> String {
        self.describe.clone()
    }

    fn is_local(&self) -> bool {
        self.local_dir.is_some()
    }

    fn local_path(&self, resource_id: &str) -> Option<PathBuf> {
        self.local_dir
            .as_deref()
            .map(|d| resource_file_path(d, resource_id))
    }

    async fn put_file(&self, resource_id: &str, src: &Path) -> Result<u64, FileStoreError> {
        let Some(dest) = self.local_path(resource_id) else {
            return self.upload(&self.key(resource_id), src).await;
        };
        // A local store: the kernel copies (no buffer of ours), into a sibling file that is
        // then renamed over the old one, so a reader never sees half a file.
        let dir = dest.parent().unwrap_or(Path::new("."));
        tokio::fs::create_dir_all(dir).await?;
        let staging = tempfile::Builder::new()
            .prefix(".upload-")
            .tempfile_in(dir)?
            .into_temp_path();
        let size = tokio::fs::copy(src, &staging).await?;
        staging.persist(&dest).map_err(|e| e.error)?;
        Ok(size)
    }

    async fn size(&self, resource_id: &str) -> Result<Option<u64>, FileStoreError> {
        match self.store.head(&self.key(resource_id)).await {
            Ok(m) => Ok(Some(m.size)),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(store_error(e)),
        }
    }

    async fn read(
        &self,
        resource_id: &str,
        range: Option<Range<u64>>,
    ) -> Result<Option<FileRead>, FileStoreError> {
        let opts = GetOptions {
            range: range.map(GetRange::Bounded),
            ..GetOptions::default()
        };
        let got = match self.store.get_opts(&self.key(resource_id), opts).await {
            Ok(g) => g,
            Err(object_store::Error::NotFound { .. }) => return Ok(None),
            Err(e) => return Err(store_error(e)),
        };
        let total = got.meta.size;
        let range = got.range.clone();
        let stream = got.into_stream().map(|r| r.map_err(store_error)).boxed();
        Ok(Some(FileRead {
            total,
            range,
            stream,
        }))
    }

    async fn delete(&self, resource_id: &str) -> Result<(), FileStoreError> {
        match self.store.delete(&self.key(resource_id)).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(store_error(e)),
        }
    }
}

/// `catalog.storage.backend = "local"` (the default).
struct Local;

impl FileBackendFactory for Local {
    fn open(&self, init: &FileBackendInit<'_>) -> anyhow::Result<Arc<dyn FileBackend>> {
        let dir = init
            .config
            .catalog
            .storage_path
            .as_deref()
            .unwrap_or(init.data_dir);
        Ok(Arc::new(ObjectFiles::local(dir)?))
    }
}
register_file_backend!("local", Local);

/// `catalog.storage.backend = "s3"`.
struct S3;

impl FileBackendFactory for S3 {
    fn open(&self, init: &FileBackendInit<'_>) -> anyhow::Result<Arc<dyn FileBackend>> {
        Ok(Arc::new(ObjectFiles::s3(&init.config.catalog.storage)?))
    }
}
register_file_backend!("s3", S3);

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use catalog_framework::files::{FileStore, OpenError};

    #[tokio::test]
    async fn a_local_store_keeps_ckans_layout_and_streams_ranges() {
        let dir = tempfile::tempdir().unwrap();
        let store = FileStore::new(Arc::new(ObjectFiles::local(dir.path()).unwrap()));
        let src = dir.path().join("upload.bin");
        // Larger than one part, so an object store would take it in parts.
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
