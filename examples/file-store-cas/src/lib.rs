#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use catalog_framework::files::{
    key_parts, FileBackend, FileBackendFactory, FileBackendInit, FileRead, FileStoreError,
};
use catalog_framework::prelude::*;
use catalog_framework::register_file_backend;
use futures::StreamExt;
use sha2::{Digest, Sha256};
use tokio::io::{AsyncReadExt, AsyncSeekExt};

register_plugin!("example_file_store_cas");

/// Bytes read at a time, hashing and sending.
const CHUNK: usize = 64 * 1024;

/// Resource files kept once per content in a local directory: `blobs/` by SHA-256, `refs/`
/// by resource id.
#[derive(Debug)]
pub struct ContentAddressed {
    root: PathBuf,
    /// Held while references and blobs change, so that a blob is never removed between
    /// another upload's finding it and that upload's reference naming it.
    changing: tokio::sync::Mutex<()>,
}

impl ContentAddressed {
    /// A store in `root` (created if missing).
    pub fn new(root: &Path) -> std::io::Result<ContentAddressed> {
        std::fs::create_dir_all(root.join("blobs"))?;
        std::fs::create_dir_all(root.join("refs"))?;
        Ok(ContentAddressed {
            root: root.to_path_buf(),
            changing: tokio::sync::Mutex::new(()),
        })
    }

    fn ref_path(&self, resource_id: &str) -> PathBuf {
        let [a, b, c] = key_parts(resource_id);
        self.root.join("refs").join(a).join(b).join(c)
    }

    /// The blob of a hash (64 hex digits, as this store writes them).
    pub fn blob_path(&self, hash: &str) -> PathBuf {
        self.root.join("blobs").join(&hash[..2]).join(hash)
    }

    /// The hash a resource's reference names, if it has one.
    fn hash_of(&self, resource_id: &str) -> Option<String> {
        let text = std::fs::read_to_string(self.ref_path(resource_id)).ok()?;
        let hash = text.trim();
        (hash.len() == 64 && hash.bytes().all(|b| b.is_ascii_hexdigit())).then(|| hash.to_string())
    }

    /// Removes the blob of `hash` when no reference names it any more (a walk of `refs/`:
    /// this is an example, not a store for millions of files).
    fn release(&self, hash: &str) -> std::io::Result<()> {
        fn names(dir: &Path, hash: &str) -> std::io::Result<bool> {
            for entry in std::fs::read_dir(dir)? {
                let path = entry?.path();
                if path.is_dir() {
                    if names(&path, hash)? {
                        return Ok(true);
                    }
                } else if std::fs::read_to_string(&path).is_ok_and(|t| t.trim() == hash) {
                    return Ok(true);
                }
            }
            Ok(false)
        }
        if !names(&self.root.join("refs"), hash)? {
            match std::fs::remove_file(self.blob_path(hash)) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
                _ => {}
            }
        }
        Ok(())
    }
}

/// The SHA-256 (hex) and size of a file, read in chunks.
async fn hash_file(path: &Path) -> std::io::Result<(String, u64)> {
    let mut file = tokio::fs::File::open(path).await?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; CHUNK];
    let mut size = 0u64;
    loop {
        let n = file.read(&mut buf).await?;
        if n == 0 {
            return Ok((hex::encode(hasher.finalize()), size));
        }
        hasher.update(&buf[..n]);
        size += n as u64;
    }
}

/// Puts `dest` in place from a temporary sibling that `fill` writes: a reader sees the old
/// file or the new one, never half of one.
async fn replace(
    dest: &Path,
    fill: impl AsyncFnOnce(&Path) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let dir = dest.parent().unwrap_or(Path::new("."));
    tokio::fs::create_dir_all(dir).await?;
    let staging = tempfile::Builder::new()
        .prefix(".part-")
        .tempfile_in(dir)?
        .into_temp_path();
    fill(&staging).await?;
    staging.persist(dest).map_err(|e| e.error)?;
    Ok(())
}

#[async_trait]
impl FileBackend for ContentAddressed {
    fn describe(&self) -> String {
        format!("cas:{}", self.root.display())
    }

    fn is_local(&self) -> bool {
        true
    }

    fn local_path(&self, resource_id: &str) -> Option<PathBuf> {
        self.hash_of(resource_id).map(|h| self.blob_path(&h))
    }

    async fn put_file(&self, resource_id: &str, src: &Path) -> Result<u64, FileStoreError> {
        let (hash, size) = hash_file(src).await?;
        let blob = self.blob_path(&hash);
        let _changing = self.changing.lock().await;
        if !tokio::fs::try_exists(&blob).await? {
            replace(&blob, async |tmp: &Path| {
                tokio::fs::copy(src, tmp).await.map(|_| ())
            })
            .await?;
        }
        let before = self.hash_of(resource_id);
        replace(&self.ref_path(resource_id), async |tmp: &Path| {
            tokio::fs::write(tmp, format!("{hash}\n")).await
        })
        .await?;
        if let Some(old) = before.filter(|old| *old != hash) {
            self.release(&old)?;
        }
        Ok(size)
    }

    async fn size(&self, resource_id: &str) -> Result<Option<u64>, FileStoreError> {
        let Some(blob) = self.local_path(resource_id) else {
            return Ok(None);
        };
        match tokio::fs::metadata(&blob).await {
            Ok(m) => Ok(Some(m.len())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    async fn read(
        &self,
        resource_id: &str,
        range: Option<Range<u64>>,
    ) -> Result<Option<FileRead>, FileStoreError> {
        let Some(blob) = self.local_path(resource_id) else {
            return Ok(None);
        };
        let mut file = match tokio::fs::File::open(&blob).await {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        let total = file.metadata().await?.len();
        let range = range.unwrap_or(0..total);
        file.seek(std::io::SeekFrom::Start(range.start)).await?;
        let left = range.end.saturating_sub(range.start);
        let stream = futures::stream::try_unfold((file, left), |(mut file, left)| async move {
            if left == 0 {
                return Ok(None);
            }
            let mut buf = vec![0u8; CHUNK.min(left as usize)];
            let n = file.read(&mut buf).await?;
            if n == 0 {
                return Ok(None);
            }
            buf.truncate(n);
            Ok(Some((Bytes::from(buf), (file, left - n as u64))))
        })
        .boxed();
        Ok(Some(FileRead {
            total,
            range,
            stream,
        }))
    }

    async fn delete(&self, resource_id: &str) -> Result<(), FileStoreError> {
        let _changing = self.changing.lock().await;
        let Some(hash) = self.hash_of(resource_id) else {
            return Ok(());
        };
        match tokio::fs::remove_file(self.ref_path(resource_id)).await {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e.into()),
            _ => {}
        }
        self.release(&hash)?;
        Ok(())
    }
}

/// `catalog.storage.backend = "cas"`: the directory is `catalogext.file_store_cas.dir`, else
/// `<data dir>/cas`.
struct Cas;

impl FileBackendFactory for Cas {
    fn open(&self, init: &FileBackendInit<'_>) -> anyhow::Result<Arc<dyn FileBackend>> {
        let dir = init
            .config
            .catalogext
            .values
            .get("file_store_cas")
            .and_then(|s| s.get("dir"))
            .and_then(Value::as_str)
            .map(PathBuf::from)
            .unwrap_or_else(|| init.data_dir.join("cas"));
        Ok(Arc::new(ContentAddressed::new(&dir)?))
    }
}
register_file_backend!("cas", Cas);
