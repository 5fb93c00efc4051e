//! Per-call series as the charts draw them. Up to [`DECIMATE_ABOVE`] calls
//! a series keeps every value and a chart draws a point per call. Past it,
//! calls share the plot's pixel columns, and a series keeps per column only
//! its first, lowest, highest and last value, in call order: the polyline
//! through those covers the same vertical span in each column and joins the
//! columns with the same segments as the one through every point, so the
//! picture keeps its peaks exactly, in memory and bytes bounded by the
//! plot's width whatever the number of calls.

use std::fmt::Write;

use super::svg::{LEFT, RIGHT, Scale, x_of};

/// The plot's pixel columns (integer x from `LEFT` to `RIGHT`).
pub(crate) const COLUMNS: u64 = RIGHT - LEFT + 1;

/// Past this many calls, series and markers are kept per pixel column:
/// four points per column is where drawing every call stops being smaller.
pub(crate) const DECIMATE_ABOVE: u64 = 4 * COLUMNS;

/// Whether a replay of `calls` calls is drawn per pixel column.
pub(crate) fn decimated(calls: u64) -> bool {
    calls > DECIMATE_ABOVE
}

/// One column's values, in call order: the first and last, and the
/// lowest and highest with the call each was first met at.
#[derive(Debug, Clone, Copy)]
struct Column {
    x: u64,
    first: u64,
    last: u64,
    low: (u64, u32),
    high: (u64, u32),
    /// A point starts a new subpath here (a gap came before it).
    starts: bool,
}

impl Column {
    fn new(x: u64, k: u32, v: u64, starts: bool) -> Column {
        Column {
            x,
            first: v,
            last: v,
            low: (v, k),
            high: (v, k),
            starts,
        }
    }

    fn add(&mut self, k: u32, v: u64) {
        self.last = v;
        if v < self.low.0 {
            self.low = (v, k);
        }
        if v > self.high.0 {
            self.high = (v, k);
        }
    }

    /// The values to draw, in call order, without a value repeated at once
    /// (the same value at the same x is the same point).
    fn values(&self) -> impl Iterator<Item = u64> {
        let (a, b) = if self.low.1 <= self.high.1 {
            (self.low.0, self.high.0)
        } else {
            (self.high.0, self.low.0)
        };
        let mut out = [self.first, a, b, self.last].into_iter().peekable();
        let mut prev: Option<u64> = None;
        std::iter::from_fn(move || {
            for v in out.by_ref() {
                if prev != Some(v) {
                    prev = Some(v);
                    return Some(v);
                }
            }
            None
        })
    }
}

/// A value per call (`None`: a gap, which a path does not cross).
#[derive(Debug, Clone)]
pub(crate) struct Series {
    calls: u64,
    kept: Kept,
    /// The calls taken so far.
    taken: u32,
}

#[derive(Debug, Clone)]
enum Kept {
    /// Every call's value.
    Every(Vec<Option<u64>>),
    /// Per pixel column (and per subpath within it).
    Columns {
        done: Vec<Column>,
        open: Option<Column>,
    },
}

impl Series {
    /// A series of a replay of `calls` calls.
    pub(crate) fn new(calls: u64) -> Series {
        let kept = if decimated(calls) {
            Kept::Columns {
                done: Vec::new(),
                open: None,
            }
        } else {
            Kept::Every(Vec::with_capacity(calls as usize))
        };
        Series {
            calls,
            kept,
            taken: 0,
        }
    }

    /// The next call's value.
    pub(crate) fn push(&mut self, v: Option<u64>) {
        self.taken += 1;
        let k = self.taken;
        match &mut self.kept {
            Kept::Every(all) => all.push(v),
            Kept::Columns { done, open } => {
                let x = x_of(u64::from(k), self.calls);
                match (v, open.as_mut()) {
                    (None, _) => done.extend(open.take()),
                    (Some(v), Some(c)) if c.x == x => c.add(k, v),
                    (Some(v), Some(_)) => {
                        done.extend(open.take());
                        *open = Some(Column::new(x, k, v, false));
                    }
                    (Some(v), None) => {
                        // After a gap, or the first value.
                        *open = Some(Column::new(x, k, v, true));
                    }
                }
            }
        }
    }

    /// The points drawn, in call order: `(x, value, starts a subpath)`.
    fn points(&self) -> Vec<(u64, u64, bool)> {
        match &self.kept {
            Kept::Every(all) => {
                let mut out = Vec::with_capacity(all.len());
                let mut pen_down = false;
                for (i, v) in all.iter().enumerate() {
                    match v {
                        Some(v) => {
                            out.push((x_of(i as u64 + 1, self.calls), *v, !pen_down));
                            pen_down = true;
                        }
                        None => pen_down = false,
                    }
                }
                out
            }
            Kept::Columns { done, open } => {
                let mut out = Vec::new();
                for c in done.iter().chain(open) {
                    for (j, v) in c.values().enumerate() {
                        out.push((c.x, v, j == 0 && c.starts));
                    }
                }
                out
            }
        }
    }

    /// `x,y x,y …`, in call order (or the reverse, to close a stacked area).
    pub(crate) fn polyline(&self, s: Scale, reversed: bool) -> String {
        let mut points = self.points();
        if reversed {
            points.reverse();
        }
        let mut out = String::new();
        for (x, v, _) in points {
            if !out.is_empty() {
                out.push(' ');
            }
            let _ = write!(out, "{x},{}", s.y(v));
        }
        out
    }

    /// `M x,y L x,y …`: a path that starts a new subpath after each gap.
    pub(crate) fn path(&self, s: Scale) -> String {
        let mut d = String::new();
        for (x, v, starts) in self.points() {
            let _ = write!(d, "{}{x},{}", if starts { " M" } else { " L" }, s.y(v));
        }
        d.trim_start().to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A column as drawn: x, lowest y, highest y, first y, last y.
    type Drawn = (u64, u64, u64, u64, u64);

    /// Per column: the span of y the polyline covers at that x, and the
    /// first and last point (where the segments to the next columns start).
    fn picture(points: &[(u64, u64)]) -> Vec<Drawn> {
        let mut out: Vec<Drawn> = Vec::new();
        for &(x, y) in points {
            match out.last_mut() {
                Some(c) if c.0 == x => {
                    c.1 = c.1.min(y);
                    c.2 = c.2.max(y);
                    c.4 = y;
                }
                _ => out.push((x, y, y, y, y)),
            }
        }
        out
    }

    fn parse(points: &str) -> Vec<(u64, u64)> {
        points
            .split(' ')
            .filter(|p| !p.is_empty())
            .map(|p| {
                let (x, y) = p.split_once(',').unwrap();
                (x.parse().unwrap(), y.parse().unwrap())
            })
            .collect()
    }

    fn full(values: &[u64], calls: u64, s: Scale) -> String {
        let mut every = Series {
            calls,
            kept: Kept::Every(Vec::new()),
            taken: 0,
        };
        for &v in values {
            every.push(Some(v));
        }
        every.polyline(s, false)
    }

    #[test]
    fn up_to_the_threshold_every_call_is_a_point() {
        let mut s = Series::new(3);
        for v in [5, 7, 6] {
            s.push(Some(v));
        }
        let scale = Scale {
            max: 10,
            bottom: 116,
        };
        assert_eq!(
            s.polyline(scale, false),
            format!("{LEFT},66 591,46 {RIGHT},56")
        );
        assert_eq!(
            s.polyline(scale, true),
            format!("{RIGHT},56 591,46 {LEFT},66")
        );
    }

    proptest! {
        /// Past the threshold the polyline covers the same span in every
        /// column and starts and ends each column at the same point as the
        /// one through every call; its extremes are those of the values;
        /// it has at most four points a column.
        #[test]
        fn a_decimated_polyline_draws_the_same_picture(
            calls in (DECIMATE_ABOVE + 1)..(3 * DECIMATE_ABOVE),
            seed in any::<u64>(),
            max in 100u64..1_000_000,
        ) {
            let mut x = seed | 1;
            let values: Vec<u64> = (0..calls)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x % (max + max / 5)
                })
                .collect();
            let scale = Scale { max, bottom: 392 };
            let mut s = Series::new(calls);
            for &v in &values {
                s.push(Some(v));
            }
            let few = parse(&s.polyline(scale, false));
            let all = parse(&full(&values, calls, scale));
            prop_assert_eq!(picture(&few), picture(&all));
            prop_assert!(few.len() as u64 <= 4 * COLUMNS);
            let mut back = parse(&s.polyline(scale, true));
            back.reverse();
            prop_assert_eq!(back, few);
        }

        /// With gaps, each subpath keeps its own columns: the same spans,
        /// subpath by subpath.
        #[test]
        fn a_decimated_path_keeps_its_gaps(
            calls in (DECIMATE_ABOVE + 1)..(2 * DECIMATE_ABOVE),
            gaps in prop::collection::vec(0u64..(2 * DECIMATE_ABOVE), 0..20),
        ) {
            let scale = Scale { max: 5_000, bottom: 392 };
            let values: Vec<Option<u64>> = (0..calls)
                .map(|i| (!gaps.contains(&i)).then_some((i * 7919) % 5_000))
                .collect();
            let mut s = Series::new(calls);
            let mut every = Series { calls, kept: Kept::Every(Vec::new()), taken: 0 };
            for &v in &values {
                s.push(v);
                every.push(v);
            }
            let subpaths = |d: &str| -> Vec<Vec<Drawn>> {
                d.split('M')
                    .filter(|p| !p.trim().is_empty())
                    .map(|p| picture(&parse(p.replace(" L", " ").trim())))
                    .collect()
            };
            prop_assert_eq!(subpaths(&s.path(scale)), subpaths(&every.path(scale)));
        }
    }
}
