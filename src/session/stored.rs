//! The store as the engine reads it during a call: a profile's snapshot
//! entries, cached decoded, and the import-time tool forms.

use std::collections::HashSet;

use super::record::TaskRecordIndex;
use crate::engine::Minted;
use crate::engine::checkpoint::decode_coverage_key;
use crate::engine::entries::Entry;
use crate::engine::restore::{ReadError, Snapshot, ToolForms};
use crate::engine::toolrules::ToolForm;
use crate::model::digest::{Digest, DigestMap};
use crate::store::{Store, StoreError};

/// A profile's snapshot entries as the driver last read them, decoded, with
/// every summary's text and every tool entry's form left out (read again by
/// key when one is restored, see [`CachedSnapshot`]): each floor stores a
/// summary that extends the last one, so the texts together grow with the
/// square of the history (at 100K calls, GBs), while a call reads one of
/// them at most; the forms grow with the history (about 90 MB of JSON at
/// 100K calls), while a call restores those of its window at most.
pub(super) struct SnapshotCache {
    /// The store instance and its `data_version` when they were read.
    pub(super) read_at: (u64, i64),
    /// By their keys' digests: the keys' text is not kept.
    pub(super) entries: DigestMap<Held>,
    /// The coverage hashes of the `cov:` keys among them.
    pub(super) covers: HashSet<[u8; 32]>,
}

impl SnapshotCache {
    /// The profile's entries read from `store`, one row at a time.
    pub(super) fn read(
        read_at: (u64, i64),
        store: &Store,
        task: &str,
        profile: &str,
    ) -> Result<SnapshotCache, StoreError> {
        let mut cache = SnapshotCache {
            read_at,
            entries: DigestMap::default(),
            covers: HashSet::new(),
        };
        store.reader().each_entry(task, profile, |key, v| {
            if let Some(e) = Entry::from_value(&v) {
                cache.entries.insert(Digest::of(&key), Held::of(e));
                cache.covers.extend(decode_coverage_key(&key));
            }
        })?;
        Ok(cache)
    }

    /// The entry held under `key`.
    pub(super) fn held(&self, key: &str) -> Option<&Held> {
        self.entries.get(&Digest::of(key))
    }

    /// The store now holds `minted` under `key` (written by this driver).
    pub(super) fn put(&mut self, key: &str, minted: &Minted) {
        // Decoded as `SnapshotCache::read` decodes: an entry that does not
        // decode is left out (never trusted). A stored form's `shrink`
        // entry always decodes, and is held by its kind alone.
        let held = match minted {
            Minted::Value(value) => Entry::from_value(value).map(Held::of),
            Minted::StoredForm { .. } => Some(Held::Shrink),
        };
        match held {
            Some(held) => {
                self.entries.insert(Digest::of(key), held);
                self.covers.extend(decode_coverage_key(key));
            }
            None => {
                self.entries.remove(&Digest::of(key));
                if let Some(h) = decode_coverage_key(key) {
                    self.covers.remove(&h);
                }
            }
        }
    }
}

/// An entry as the cache keeps it: a summary or a tool entry by its kind
/// alone (read whole by key when it is asked for), a few bytes beside its
/// key; any other entry whole.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Held {
    Summary,
    Shrink,
    Drop,
    Whole(Box<Entry>),
}

impl Held {
    fn of(e: Entry) -> Held {
        match e {
            Entry::Summary { .. } => Held::Summary,
            Entry::Shrink { .. } => Held::Shrink,
            Entry::Drop => Held::Drop,
            e => Held::Whole(Box::new(e)),
        }
    }
}

/// The cache as the engine reads it: a summary or a tool entry is read
/// whole from the store it was cached from (the cache is current: refreshed
/// before every call, and no write happens during one).
pub(super) struct CachedSnapshot<'s> {
    cache: &'s SnapshotCache,
    store: &'s Store,
    task: &'s str,
    profile: &'s str,
}

impl CachedSnapshot<'_> {
    pub(super) fn read(&self, key: &str) -> Result<Option<Entry>, StoreError> {
        Ok(match self.cache.held(key) {
            Some(Held::Summary | Held::Shrink) => self
                .store
                .reader()
                .entry(self.task, self.profile, key)?
                .as_ref()
                .and_then(Entry::from_value),
            Some(Held::Drop) => Some(Entry::Drop),
            Some(Held::Whole(e)) => Some(Entry::clone(e)),
            None => None,
        })
    }
}

impl Snapshot for CachedSnapshot<'_> {
    fn entry(&self, key: &str) -> Result<Option<Entry>, ReadError> {
        self.read(key).map_err(read_error)
    }
}

/// A store error as the engine carries it through a call.
fn read_error(e: StoreError) -> ReadError {
    ReadError(Box::new(e))
}

/// The store error a call stopped at, taken back from the engine.
pub(super) fn store_error(e: ReadError) -> StoreError {
    match e.0.downcast::<StoreError>() {
        Ok(e) => *e,
        // Only this module's readers fail, and only with a store error.
        Err(other) => StoreError::Corrupt(other.to_string()),
    }
}

/// Where a driver reads the import-time tool forms (only a step's ladder
/// reads them).
pub(super) enum FormSource {
    /// Every form, in memory: for an index of rows in memory (an in-memory
    /// store's forms, or those it lent a scratch store).
    InMemory(std::sync::Arc<crate::store::ToolFormMap>),
    /// Read one at a time by tool call id through the index's own connection
    /// to the store file (forms are minted once, at import, and a run reads
    /// them from the store it imported into, whatever store it writes to).
    /// Which ids have a form is read at the first step and kept as hashes,
    /// so that looking up a part with none reads nothing.
    ByKey(Option<HashSet<u64>>),
}

impl FormSource {
    pub(super) fn of(store: &Store, index: &TaskRecordIndex) -> Result<FormSource, StoreError> {
        Ok(match index.own_store() {
            Some(_) => FormSource::ByKey(None),
            None => FormSource::InMemory(store.tool_forms(&index.task)?),
        })
    }

    /// Read which ids have a form, if that is not known yet.
    pub(super) fn prepare(&mut self, index: &TaskRecordIndex) -> Result<(), StoreError> {
        if let (FormSource::ByKey(ids @ None), Some(own)) = (&mut *self, index.own_store()) {
            let mut set = HashSet::new();
            own.reader().each_tool_form_id(&index.task, |id| {
                set.insert(form_id_hash(id));
            })?;
            *ids = Some(set);
        }
        Ok(())
    }
}

/// A tool call id as [`FormSource::ByKey`] keeps it: a fixed hash (two ids
/// that share one only cost a read that finds nothing).
fn form_id_hash(id: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::hash::DefaultHasher::new();
    id.hash(&mut h);
    h.finish()
}

/// The tool forms as the engine reads them.
pub(super) struct FormReader<'s> {
    source: &'s FormSource,
    index: &'s TaskRecordIndex,
}

impl<'s> FormReader<'s> {
    pub(super) fn new(source: &'s FormSource, index: &'s TaskRecordIndex) -> FormReader<'s> {
        FormReader { source, index }
    }

    fn read(&self, id: &str) -> Result<Option<ToolForm>, StoreError> {
        match (self.source, self.index.own_store()) {
            (FormSource::InMemory(forms), _) => Ok(forms.get(id).cloned()),
            (FormSource::ByKey(Some(ids)), Some(own)) if ids.contains(&form_id_hash(id)) => {
                own.reader().tool_form(&self.index.task, id)
            }
            _ => Ok(None),
        }
    }
}

impl ToolForms for FormReader<'_> {
    fn form(&self, id: &str) -> Result<Option<ToolForm>, ReadError> {
        self.read(id).map_err(read_error)
    }
}

/// The snapshot cache as the engine reads it, from `store`.
pub(super) fn cached<'s>(
    snap: &'s SnapshotCache,
    store: &'s Store,
    task: &'s str,
    profile: &'s str,
) -> CachedSnapshot<'s> {
    CachedSnapshot {
        cache: snap,
        store,
        task,
        profile,
    }
}
