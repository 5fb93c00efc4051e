//! Probes scored in one pass beside a replay: the record's rows are read as
//! the replay reaches them (its probes extracted then), each call's view is
//! scored as it comes, and the worst call is kept as the pass goes. What it
//! holds is the probes, the scorer's pieces of the latest view and the
//! worst call's evaluation, whatever the number of calls.
//!
//! A view is judged on the probes of the rows before it, as
//! [`super::evaluate`] judges it on those of the whole record, with one
//! look ahead: of the `state` probes only the latest one the record keeps
//! is judged, and a closing sentence is kept only when no later one comes
//! before the next ask. So while a closing sentence before the view is
//! pending, rows past the view are read until an ask keeps it or another
//! closing sentence replaces it (their own probes wait for later views).

use std::ops::Range;

use super::{Evaluation, Extractor, Probe, Scorer, Survival, Tally};
use crate::model::Message;
use crate::view::View;

/// See the module documentation.
pub(crate) struct ProbePass {
    extractor: Extractor,
    /// The record's rows, and how many were read.
    rows: usize,
    fed: usize,
    scorer: Scorer,
    /// The latest view's tally.
    tally: Tally,
    /// The worst call so far and its evaluation: fewest critical probes
    /// kept, then fewest kept, the earliest on a tie.
    worst: Option<(u32, Evaluation)>,
}

impl ProbePass {
    /// A pass over a record of `rows` rows.
    pub(crate) fn new(rows: usize) -> ProbePass {
        ProbePass {
            extractor: Extractor::default(),
            rows,
            fed: 0,
            scorer: Scorer::new(Vec::new()),
            tally: Tally::default(),
            worst: None,
        }
    }

    /// The rows to read before a view of the first `history_rows` rows can
    /// be judged, if any.
    fn wants(&self, history_rows: usize) -> Option<Range<usize>> {
        let history_rows = history_rows.min(self.rows);
        if self.fed < history_rows {
            return Some(self.fed..history_rows);
        }
        let pending = self
            .extractor
            .pending_state_row()
            .is_some_and(|row| row < history_rows);
        (pending && self.fed < self.rows).then(|| self.fed..self.fed + 1)
    }

    /// Take the record's next row.
    pub(crate) fn feed(&mut self, m: &Message) {
        self.extractor.row(self.fed, m);
        self.fed += 1;
        if self.fed == self.rows {
            self.extractor.end();
        }
        let new = self.extractor.take_probes();
        if !new.is_empty() {
            self.scorer.add_probes(new);
        }
    }

    /// Read what a view of the first `history_rows` rows needs: `read(range,
    /// f)` hands `f` the rows of `range` in order.
    pub(crate) fn read_to<E>(
        &mut self,
        history_rows: usize,
        mut read: impl FnMut(Range<usize>, &mut dyn FnMut(&Message)) -> Result<(), E>,
    ) -> Result<(), E> {
        while let Some(range) = self.wants(history_rows) {
            let to = range.end;
            read(range, &mut |m| self.feed(m))?;
            if self.fed < to {
                // A reader that handed over fewer rows: judge with what came.
                debug_assert!(false, "rows up to {to} asked for, {} read", self.fed);
                break;
            }
        }
        Ok(())
    }

    /// Read the rest of the record (every probe then known).
    pub(crate) fn read_all<E>(
        &mut self,
        read: impl FnMut(Range<usize>, &mut dyn FnMut(&Message)) -> Result<(), E>,
    ) -> Result<(), E> {
        self.read_to(self.rows, read)
    }

    /// Score call `call`'s view, whose history is the record's first
    /// `history_rows` rows, reading the rows it needs first (see
    /// [`ProbePass::read_to`]).
    pub(crate) fn score<E>(
        &mut self,
        call: u32,
        view: &View,
        history_rows: usize,
        read: impl FnMut(Range<usize>, &mut dyn FnMut(&Message)) -> Result<(), E>,
    ) -> Result<Survival, E> {
        self.read_to(history_rows, read)?;
        self.scorer.tally(view, history_rows, &mut self.tally);
        let s = self.tally.survival();
        // Strictly worse: the earliest call wins a tie.
        if self
            .worst
            .as_ref()
            .is_none_or(|(_, w)| s.key() < w.survival())
        {
            self.worst = Some((call, self.tally.evaluation(self.scorer.probes())));
        }
        Ok(s)
    }

    /// The latest scored view's evaluation, its lost probes named.
    pub(crate) fn evaluation(&self) -> Evaluation {
        self.tally.evaluation(self.scorer.probes())
    }

    /// The worst call scored and its evaluation.
    pub(crate) fn worst(&self) -> Option<(u32, &Evaluation)> {
        self.worst.as_ref().map(|(k, e)| (*k, e))
    }

    /// The worst call scored, by its evaluation.
    pub(crate) fn into_worst(self) -> Option<(u32, Evaluation)> {
        self.worst
    }

    /// The probes read so far (all of the record's after
    /// [`ProbePass::read_all`]), in record order.
    pub(crate) fn probes(&self) -> &[Probe] {
        self.scorer.probes()
    }
}
