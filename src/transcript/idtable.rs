//! [`IdTable`]: an exact map from id digests to small fixed-size values
//! whose memory does not grow with the number of ids (but for a filter of
//! two bytes an id spilled, capped).
//!
//! An importer remembers every id of a file (uuids seen, generation ids,
//! tool calls), and an id may come back at any distance, so none can be
//! forgotten. The latest ids are kept in a hash table; once it holds
//! `budget` of them they are sorted and written to a temporary file as a
//! run, and every four runs of a like size are merged into one, so that
//! there are at most 3·log₄(ids / budget) + 1 of them. A lookup missing
//! the table asks a Bloom filter over every spilled id (no false
//! negatives), and only when it says "maybe" reads one block of each run,
//! newest first. A newer value of a key
//! (an insert over a spilled one) shadows the older: the table is read
//! before the runs and a newer run before an older, and a merge keeps the
//! newer. So every answer is the one a plain map would give.

use std::cmp::Ordering;
use std::collections::hash_map::Entry;
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Seek, SeekFrom, Write};

use super::{Digest, DigestMap, LineError};

/// A value of fixed size, written to a run as bytes.
pub(crate) trait Packed: Copy {
    const SIZE: usize;
    fn pack(&self, out: &mut [u8]);
    fn unpack(bytes: &[u8]) -> Self;
}

impl Packed for () {
    const SIZE: usize = 0;
    fn pack(&self, _: &mut [u8]) {}
    fn unpack(_: &[u8]) {}
}

/// Little-endian integers.
macro_rules! packed_int {
    ($($t:ty),*) => {$(
        impl Packed for $t {
            const SIZE: usize = size_of::<$t>();
            fn pack(&self, out: &mut [u8]) {
                out.copy_from_slice(&self.to_le_bytes());
            }
            fn unpack(bytes: &[u8]) -> $t {
                <$t>::from_le_bytes(bytes.try_into().expect("the value's bytes"))
            }
        }
    )*};
}

packed_int!(u32, u64);

/// Ids held in the hash table before they are spilled: 7/8 of 2¹⁴, so the
/// table never grows past 2¹⁴ buckets (300 to 700 KB).
pub(crate) const BUDGET: usize = 14_336;

/// Runs merged at once.
const FAN_IN: usize = 4;

/// Entries of a run per block, the unit a lookup reads.
const BLOCK: usize = 128;

/// The filter's bits per spilled id, and its largest size: past it, the
/// filter stops growing and says "maybe" more often (slower, never wrong).
const FILTER_BITS_PER_ID: usize = 16;
const FILTER_MAX_BYTES: usize = 8 << 20;

const KEY: usize = 16;

pub(crate) struct IdTable<V: Packed> {
    recent: DigestMap<V>,
    budget: usize,
    /// Oldest first.
    runs: Vec<SortedRun>,
    filter: Filter,
    /// Ids written to runs, counting an id once per run holding it.
    spilled: usize,
    buf: Vec<u8>,
}

impl<V: Packed> Default for IdTable<V> {
    fn default() -> IdTable<V> {
        IdTable::with_budget(BUDGET)
    }
}

impl<V: Packed> IdTable<V> {
    /// A table spilling once it holds `budget` ids (at least 1).
    pub(crate) fn with_budget(budget: usize) -> IdTable<V> {
        IdTable {
            recent: DigestMap::default(),
            budget: budget.max(1),
            runs: Vec::new(),
            filter: Filter::default(),
            spilled: 0,
            buf: Vec::new(),
        }
    }

    pub(crate) fn get(&mut self, key: &Digest) -> io::Result<Option<V>> {
        if let Some(v) = self.recent.get(key) {
            return Ok(Some(*v));
        }
        spilled_value(&mut self.runs, &self.filter, &mut self.buf, key)
    }

    /// Set `key`'s value, over any it had.
    pub(crate) fn insert(&mut self, key: Digest, value: V) -> io::Result<()> {
        self.recent.insert(key, value);
        if self.recent.len() >= self.budget {
            self.spill()?;
        }
        Ok(())
    }

    /// `key`'s value, set to `make()` first if it had none; and whether it
    /// was set.
    pub(crate) fn get_or_insert_with(
        &mut self,
        key: Digest,
        make: impl FnOnce() -> V,
    ) -> io::Result<(V, bool)> {
        // One probe of the table for a new id, the common case.
        let v = match self.recent.entry(key) {
            Entry::Occupied(e) => return Ok((*e.get(), false)),
            Entry::Vacant(e) => {
                if let Some(v) = spilled_value(&mut self.runs, &self.filter, &mut self.buf, &key)? {
                    return Ok((v, false));
                }
                *e.insert(make())
            }
        };
        if self.recent.len() >= self.budget {
            self.spill()?;
        }
        Ok((v, true))
    }

    /// The table written as a new run, merged with the runs less than
    /// twice its size; the filter grown (read back from the runs) or told
    /// the new ids. After an error the table may answer wrongly: the
    /// import that gets the error fails.
    fn spill(&mut self) -> io::Result<()> {
        let mut entries: Vec<(Digest, V)> = self.recent.iter().map(|(k, v)| (*k, *v)).collect();
        entries.sort_unstable_by_key(|e| e.0);
        let run = SortedRun::write(entries.iter().copied())?;
        self.recent.clear();
        self.runs.push(run);
        self.spilled += entries.len();
        if self.filter.wants_to_grow(self.spilled) {
            self.filter = Filter::sized_for(self.spilled);
            for run in &mut self.runs {
                for e in run.entries::<V>()? {
                    self.filter.add(&e?.0);
                }
            }
        } else {
            for (k, _) in &entries {
                self.filter.add(k);
            }
        }
        drop(entries);
        // FAN_IN runs of one tier make one of the next: a key is written
        // about 1 + log₄(ids / budget) times, and there are at most
        // FAN_IN - 1 runs a tier.
        while self.runs.len() >= FAN_IN {
            let last = self.runs.len() - FAN_IN;
            let tier = self.runs[last].tier;
            if self.runs[last..].iter().any(|r| r.tier != tier) {
                break;
            }
            let merged = SortedRun::merge::<V>(&mut self.runs[last..], tier + 1)?;
            for r in self.runs.drain(last..) {
                self.spilled -= r.len;
            }
            self.spilled += merged.len;
            self.runs.push(merged);
        }
        Ok(())
    }

    /// Every key and its value, by key (for tests).
    #[cfg(test)]
    pub(crate) fn entries(&mut self) -> io::Result<Vec<(Digest, V)>> {
        let mut all: std::collections::BTreeMap<Digest, V> = std::collections::BTreeMap::new();
        for run in &mut self.runs {
            for e in run.entries::<V>()? {
                let (k, v) = e?;
                all.insert(k, v);
            }
        }
        all.extend(self.recent.iter().map(|(k, v)| (*k, *v)));
        Ok(all.into_iter().collect())
    }

    #[cfg(test)]
    pub(crate) fn runs(&self) -> usize {
        self.runs.len()
    }
}

/// `key`'s value in the runs, newest first, when the filter lets it be there.
fn spilled_value<V: Packed>(
    runs: &mut [SortedRun],
    filter: &Filter,
    buf: &mut Vec<u8>,
    key: &Digest,
) -> io::Result<Option<V>> {
    if runs.is_empty() || !filter.may_hold(key) {
        return Ok(None);
    }
    for run in runs.iter_mut().rev() {
        if let Some(v) = run.find(key, buf)? {
            return Ok(Some(v));
        }
    }
    Ok(None)
}

/// The error of an import whose id table failed at `line` (its temporary
/// file could not be written or read back).
pub(crate) fn failure(line: u64, e: &io::Error) -> LineError {
    LineError::new(
        line,
        1,
        format!("the import's temporary file of ids failed: {e}"),
    )
}

fn key_of(bytes: &[u8]) -> Digest {
    let word = |i: usize| u64::from_le_bytes(bytes[i..i + 8].try_into().expect("8 bytes"));
    Digest([word(0), word(8)])
}

fn put_key(k: &Digest, out: &mut [u8]) {
    out[..8].copy_from_slice(&k.0[0].to_le_bytes());
    out[8..KEY].copy_from_slice(&k.0[1].to_le_bytes());
}

/// Sorted unique keys and their values in a temporary file (deleted when
/// closed), with the first key of each block in memory.
struct SortedRun {
    file: File,
    len: usize,
    fences: Vec<Digest>,
    /// 0 for a run spilled from the table, t + 1 for one merged from runs
    /// of tier t.
    tier: u32,
}

impl SortedRun {
    fn write<V: Packed>(entries: impl Iterator<Item = (Digest, V)>) -> io::Result<SortedRun> {
        let mut w = RunWriter::new()?;
        for (k, v) in entries {
            w.push(&k, &v)?;
        }
        w.finish(0)
    }

    fn rewind(&mut self) -> io::Result<()> {
        self.file.seek(SeekFrom::Start(0)).map(|_| ())
    }

    /// `key`'s value in this run: a search of the fences, then of one block.
    fn find<V: Packed>(&mut self, key: &Digest, buf: &mut Vec<u8>) -> io::Result<Option<V>> {
        let b = self.fences.partition_point(|f| f <= key);
        if b == 0 {
            return Ok(None);
        }
        let size = KEY + V::SIZE;
        let first = (b - 1) * BLOCK;
        let n = BLOCK.min(self.len - first);
        buf.resize(n * size, 0);
        self.file.seek(SeekFrom::Start((first * size) as u64))?;
        self.file.read_exact(buf)?;
        let (mut lo, mut hi) = (0, n);
        while lo < hi {
            let mid = (lo + hi) / 2;
            let e = &buf[mid * size..(mid + 1) * size];
            match key_of(e).cmp(key) {
                Ordering::Less => lo = mid + 1,
                Ordering::Greater => hi = mid,
                Ordering::Equal => return Ok(Some(V::unpack(&e[KEY..]))),
            }
        }
        Ok(None)
    }

    fn entries<V: Packed>(&mut self) -> io::Result<RunEntries<'_, V>> {
        self.rewind()?;
        Ok(RunEntries::new(&self.file, self.len))
    }

    /// One run of `runs` (oldest first), the newest value kept for a key
    /// in more than one.
    fn merge<V: Packed>(runs: &mut [SortedRun], tier: u32) -> io::Result<SortedRun> {
        let mut w = RunWriter::new()?;
        let mut sources = Vec::with_capacity(runs.len());
        for run in runs.iter_mut() {
            sources.push(run.entries::<V>()?);
        }
        let mut heads = Vec::with_capacity(sources.len());
        for s in &mut sources {
            heads.push(s.next().transpose()?);
        }
        // The least key, its value from the newest run holding it; every
        // run holding it moves on.
        while let Some((key, value)) =
            heads
                .iter()
                .flatten()
                .fold(None, |least, &(k, v)| match least {
                    Some((lk, _)) if lk < k => least,
                    _ => Some((k, v)),
                })
        {
            w.push(&key, &value)?;
            for (head, source) in heads.iter_mut().zip(&mut sources) {
                if matches!(head, Some((k, _)) if *k == key) {
                    *head = source.next().transpose()?;
                }
            }
        }
        w.finish(tier)
    }
}

/// A run being written, in key order.
struct RunWriter {
    out: BufWriter<File>,
    len: usize,
    fences: Vec<Digest>,
    entry: Vec<u8>,
}

impl RunWriter {
    fn new() -> io::Result<RunWriter> {
        Ok(RunWriter {
            out: BufWriter::with_capacity(1 << 16, tempfile::tempfile()?),
            len: 0,
            fences: Vec::new(),
            entry: Vec::new(),
        })
    }

    fn push<V: Packed>(&mut self, k: &Digest, v: &V) -> io::Result<()> {
        if self.len.is_multiple_of(BLOCK) {
            self.fences.push(*k);
        }
        self.entry.resize(KEY + V::SIZE, 0);
        put_key(k, &mut self.entry);
        v.pack(&mut self.entry[KEY..]);
        self.out.write_all(&self.entry)?;
        self.len += 1;
        Ok(())
    }

    fn finish(self, tier: u32) -> io::Result<SortedRun> {
        let file = self
            .out
            .into_inner()
            .map_err(io::IntoInnerError::into_error)?;
        Ok(SortedRun {
            file,
            len: self.len,
            fences: self.fences,
            tier,
        })
    }
}

/// A run's entries read in order.
struct RunEntries<'f, V> {
    reader: BufReader<&'f File>,
    left: usize,
    entry: Vec<u8>,
    _value: std::marker::PhantomData<V>,
}

impl<'f, V: Packed> RunEntries<'f, V> {
    fn new(file: &'f File, len: usize) -> RunEntries<'f, V> {
        RunEntries {
            reader: BufReader::with_capacity(1 << 16, file),
            left: len,
            entry: vec![0u8; KEY + V::SIZE],
            _value: std::marker::PhantomData,
        }
    }
}

impl<V: Packed> Iterator for RunEntries<'_, V> {
    type Item = io::Result<(Digest, V)>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        Some(
            self.reader
                .read_exact(&mut self.entry)
                .map(|()| (key_of(&self.entry), V::unpack(&self.entry[KEY..]))),
        )
    }
}

/// A split-block Bloom filter over the spilled keys: a key sets one bit in
/// each of the 8 words of one 64-byte block. A digest is already uniform,
/// so its second word picks the block and its first the bits.
#[derive(Default)]
struct Filter {
    blocks: Vec<[u64; 8]>,
}

impl Filter {
    fn sized_for(ids: usize) -> Filter {
        let want = (ids * FILTER_BITS_PER_ID).div_ceil(512).next_power_of_two();
        let most = FILTER_MAX_BYTES / 64;
        Filter {
            blocks: vec![[0; 8]; want.min(most)],
        }
    }

    /// Whether `ids` spilled are more than the filter is sized for, and it
    /// may still grow.
    fn wants_to_grow(&self, ids: usize) -> bool {
        let bytes = self.blocks.len() * 64;
        bytes < FILTER_MAX_BYTES && ids * FILTER_BITS_PER_ID > bytes * 8
    }

    fn bits(key: &Digest) -> impl Iterator<Item = (usize, u64)> {
        let w = key.0[0];
        (0..8).map(move |i| (i, 1u64 << ((w >> (i * 6)) & 63)))
    }

    fn block(&self, key: &Digest) -> usize {
        // A power of two blocks.
        (key.0[1] as usize) & (self.blocks.len() - 1)
    }

    fn add(&mut self, key: &Digest) {
        let b = self.block(key);
        for (i, bit) in Filter::bits(key) {
            self.blocks[b][i] |= bit;
        }
    }

    fn may_hold(&self, key: &Digest) -> bool {
        let block = &self.blocks[self.block(key)];
        Filter::bits(key).all(|(i, bit)| block[i] & bit != 0)
    }
}

#[cfg(test)]
mod tests;
