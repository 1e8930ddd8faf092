//! A node's place in the store's change feed (ADR 0006).
//!
//! `search_outbox` is a log: every write that changes a dataset's index document appends the
//! dataset's id under a growing sequence number, in the writing transaction. A backend whose
//! index is local to the node (the embedded tantivy index) follows the log: each node reads
//! the rows after the highest number it applied and applies them to its own index, so every
//! node sees every write, whichever node made it. Rows are removed only by retention
//! ([`collect_garbage`]), never by a reader.
//!
//! On PostgreSQL sequence numbers are taken at insert time and become visible at commit, so a
//! lower number can appear after a higher one (a transaction still running), or never (one
//! rolled back). A number skipped while reading is remembered as a *gap* and looked up again on
//! every pass until it appears or is older than [`GAP_TIMEOUT`]. The *watermark* — every number
//! at or below it is applied or given up — is what read-your-writes waits on.
//!
//! The position (`high` and the open gaps) is kept in `<data dir>/search/feed-position.json`,
//! written after each applied batch; a restarted node goes on from there (at-least-once:
//! re-applying a dataset is harmless).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

/// How long a skipped sequence number is looked for before it counts as rolled back. Write
/// transactions are short; one holding its outbox row longer than this would be missed by
/// other nodes until their next rebuild.
pub(crate) const GAP_TIMEOUT: Duration = Duration::from_secs(120);

/// The most gaps remembered; a jump beyond it (a sequence cache, rows removed by retention)
/// is not a set of missing rows.
const MAX_GAPS: i64 = 10_000;

/// Where a node stands in the feed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Position {
    /// The highest sequence number applied.
    pub high: i64,
    /// Numbers below `high` not seen yet, with when they were first missed (Unix seconds).
    pub gaps: BTreeMap<i64, u64>,
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

impl Position {
    /// Every number at or below this is applied or given up.
    pub(crate) fn watermark(&self) -> i64 {
        match self.gaps.keys().next() {
            Some(first) => first - 1,
            None => self.high,
        }
    }

    /// Records that the row `seq` was read (and is being applied): a gap closes, or `high`
    /// moves up and the numbers skipped on the way become gaps. From a fresh position (high 0:
    /// an empty feed) too: the first writes of a new PostgreSQL database can commit out of
    /// order like any others.
    pub(crate) fn saw(&mut self, seq: i64) {
        if seq <= self.high {
            self.gaps.remove(&seq);
            return;
        }
        let skipped = seq - self.high - 1;
        if skipped > 0 && skipped <= MAX_GAPS {
            let now = now_secs();
            for missing in self.high + 1..seq {
                self.gaps.insert(missing, now);
            }
        }
        self.high = seq;
    }

    /// Gives up the gaps older than `timeout`. Returns how many.
    pub(crate) fn expire(&mut self, timeout: Duration) -> usize {
        let cutoff = now_secs().saturating_sub(timeout.as_secs());
        let before = self.gaps.len();
        self.gaps.retain(|_, first_seen| *first_seen > cutoff);
        before - self.gaps.len()
    }

    /// The position file of a data directory.
    pub(crate) fn file(data_dir: &Path) -> PathBuf {
        data_dir.join("search").join("feed-position.json")
    }

    /// The saved position, `None` when there is none (a new node, an older version).
    pub(crate) fn load(file: &Path) -> Option<Position> {
        let text = std::fs::read_to_string(file).ok()?;
        match serde_json::from_str(&text) {
            Ok(p) => Some(p),
            Err(e) => {
                tracing::warn!(file = %file.display(), error = %e, "unreadable search feed position: starting afresh");
                None
            }
        }
    }

    /// Saves the position (a temporary file renamed over the old one).
    pub(crate) fn save(&self, file: &Path) -> std::io::Result<()> {
        if let Some(dir) = file.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let tmp = file.with_extension("json.tmp");
        std::fs::write(&tmp, serde_json::to_vec(self).unwrap_or_default())?;
        std::fs::rename(tmp, file)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skipped_numbers_are_gaps_until_seen() {
        let mut p = Position {
            high: 10,
            gaps: BTreeMap::new(),
        };
        p.saw(11);
        p.saw(14);
        assert_eq!(p.high, 14);
        assert_eq!(p.gaps.keys().copied().collect::<Vec<_>>(), vec![12, 13]);
        assert_eq!(p.watermark(), 11);
        p.saw(13);
        assert_eq!(p.watermark(), 11);
        p.saw(12);
        assert_eq!(p.watermark(), 14);
        assert!(p.gaps.is_empty());
    }

    #[test]
    fn old_gaps_are_given_up_and_huge_jumps_are_not_gaps() {
        let mut p = Position {
            high: 5,
            gaps: BTreeMap::from([(3, 0), (4, now_secs())]),
        };
        assert_eq!(p.expire(Duration::from_secs(60)), 1);
        assert_eq!(p.watermark(), 3);
        p.saw(5 + MAX_GAPS + 10);
        assert_eq!(p.gaps.len(), 1, "a jump past MAX_GAPS adds no gaps");
        // A fresh position (high 0, an empty feed): the first numbers can commit out of order.
        let mut fresh = Position::default();
        fresh.saw(3);
        assert_eq!(fresh.gaps.keys().copied().collect::<Vec<_>>(), vec![1, 2]);
        assert_eq!(fresh.watermark(), 0);
    }

    #[test]
    fn the_position_survives_a_restart() {
        let dir = std::env::temp_dir().join(format!("feedpos-{}", std::process::id()));
        let file = Position::file(&dir);
        assert_eq!(Position::load(&file), None);
        let p = Position {
            high: 42,
            gaps: BTreeMap::from([(40, 7)]),
        };
        p.save(&file).unwrap();
        assert_eq!(Position::load(&file), Some(p));
        std::fs::remove_dir_all(dir).ok();
    }
}
