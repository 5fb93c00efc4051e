//! Prose rules: sentences, marker words, slug keys, and small verbatim-safe
//! text cuts. Everything here works on `char`s, never bytes, when cutting.

use std::ops::Range;

pub(super) use crate::engine::lexicon::{
    DECISION_MARKERS, REASON_MARKERS, rule_marker as ask_rule_marker,
};
use crate::engine::lexicon::{find_marker, words};

/// The rules worth keeping from text we did not get from the user directly.
const STRONG_NEGATIVE_MARKERS: &[&[&str]] = &[
    &["do", "not"],
    &["don't"],
    &["dont"],
    &["never"],
    &["must", "not"],
    &["mustn't"],
    &["should", "not"],
    &["shouldn't"],
    &["not", "allowed"],
    &["forbidden"],
    &["prohibited"],
    &["under", "no", "circumstances"],
];

/// Markers of a discovered truth; checked only when no decision marker hit.
pub(super) const FINDING_MARKERS: &[&[&str]] = &[
    &["the", "issue", "is"],
    &["the", "problem", "is"],
    &["the", "bug", "is"],
    &["root", "cause"],
    &["turns", "out"],
    &["found", "that"],
    &["because"],
    &["caused", "by"],
    &["the", "reason"],
    &["the", "culprit"],
    &["confirmed"],
    &["discovered"],
    &["this", "means"],
];

/// Words that make a finding's value go stale.
const TIME_BOUND_WORDS: [&str; 7] = [
    "latest",
    "currently",
    "current",
    "now",
    "today",
    "status",
    "newest",
];

/// Words too common to name a topic in a key.
const STOPWORDS: [&str; 34] = [
    "a", "an", "the", "i", "ill", "im", "ive", "id", "we", "well", "lets", "let", "to", "of",
    "for", "and", "or", "in", "on", "at", "it", "its", "is", "be", "this", "that", "so", "will",
    "just", "then", "me", "you", "please", "our",
];

/// Where a strong negative rule's marker starts (bytes), if any.
pub(super) fn strong_negative_marker(sentence: &str) -> Option<usize> {
    find_marker(&words(sentence), STRONG_NEGATIVE_MARKERS)
}

/// Whether the sentence carries one of `markers`.
pub(super) fn has_marker(sentence: &str, markers: &[&[&str]]) -> bool {
    find_marker(&words(sentence), markers).is_some()
}

/// The key of text with no word in it.
pub(super) const EMPTY_SLUG: &str = "note";

/// A kebab key from the first content words.
pub(super) fn slug(s: &str, max_words: usize) -> String {
    kebab(
        key_words(s)
            .filter(|w| !STOPWORDS.contains(&w.as_str()))
            .take(max_words),
    )
}

/// The words of `s` as a key spells them: apostrophes dropped, at most 20
/// characters, none empty.
fn key_words(s: &str) -> impl Iterator<Item = String> {
    words(s)
        .into_iter()
        .map(|w| {
            w.text
                .replace('\'', "")
                .chars()
                .take(20)
                .collect::<String>()
        })
        .filter(|w| !w.is_empty())
}

/// `words` joined with hyphens; [`EMPTY_SLUG`] when there are none.
fn kebab(words: impl Iterator<Item = String>) -> String {
    let parts: Vec<String> = words.collect();
    if parts.is_empty() {
        EMPTY_SLUG.to_string()
    } else {
        parts.join("-")
    }
}

/// What a statement is about: the first code span, else the first path or
/// file name, else the first identifier (`snake_case`, `camelCase`,
/// `Module.Name`, `a::b`, `call()`). `None` when it names none: such a
/// sentence is no finding.
pub(super) fn subject_of(statement: &str) -> Option<String> {
    if let Some(span) = code_span(statement) {
        return Some(span.to_string());
    }
    let tokens: Vec<&str> = statement
        .split_whitespace()
        .map(|t| t.trim_matches(|c: char| !(c.is_alphanumeric() || "_/.:-~<>".contains(c))))
        .map(|t| t.trim_end_matches(['.', ':', '-']))
        .filter(|t| !t.is_empty() && !t.contains("://"))
        .collect();
    tokens
        .iter()
        .find(|t| is_path_like(t))
        .or_else(|| tokens.iter().find(|t| is_identifier(t)))
        .map(|t| t.to_string())
}

/// Verbs that ask for a file to be made.
const CREATE_VERBS: [&str; 16] = [
    "create",
    "write",
    "add",
    "generate",
    "produce",
    "save",
    "output",
    "export",
    "draft",
    "scaffold",
    "implement",
    "build",
    "make",
    "put",
    "emit",
    "dump",
];

/// The files an ask asks to be made: the paths after a verb of making in
/// the same sentence (`Write the report to out/report.md`), in order, once each.
pub(super) fn owed_paths(ask: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for sentence in sentences(ask) {
        let mut asked = false;
        for token in sentence.split_whitespace() {
            let word = token
                .trim_matches(|c: char| !c.is_alphanumeric())
                .to_lowercase();
            if CREATE_VERBS.contains(&word.as_str()) {
                asked = true;
                continue;
            }
            let t = path_token(token);
            if asked && !t.contains("://") && is_path_like(t) && !out.iter().any(|p| p == t) {
                out.push(t.to_string());
            }
        }
    }
    out
}

/// A token with the punctuation around it taken off (a path's own kept).
fn path_token(token: &str) -> &str {
    token
        .trim_matches(|c: char| !(c.is_alphanumeric() || "_/.~-".contains(c)))
        .trim_end_matches(['.', '-'])
}

/// The first `code span` of a text, if short and on one line.
fn code_span(text: &str) -> Option<&str> {
    let (_, rest) = text.split_once('`')?;
    let (span, _) = rest.split_once('`')?;
    let span = span.trim();
    let ok = span.chars().any(char::is_alphanumeric)
        && span.chars().count() <= 80
        && !span.contains('\n');
    ok.then_some(span)
}

/// `src/a.rs`, `config/test.exs`, `mix.exs`: a directory or a file name.
fn is_path_like(t: &str) -> bool {
    let dir = t.contains('/') && t.split('/').filter(|p| !p.is_empty()).count() >= 2;
    let file = t.rsplit_once('.').is_some_and(|(stem, ext)| {
        stem.chars().any(char::is_alphabetic)
            && (1..=5).contains(&ext.len())
            && ext.chars().all(|c| c.is_ascii_alphabetic())
            && !["e.g", "i.e", "etc", "vs"].contains(&t.to_lowercase().as_str())
    });
    dir || file
}

/// `agent_id`, `initialTeam`, `LiveView`, `Spotter.Sessions`, `a::b`, `spotter-fum.5`.
fn is_identifier(t: &str) -> bool {
    let alnum_around = |sep: &str| {
        t.split(sep).count() >= 2
            && t.split(sep)
                .all(|p| p.chars().next().is_some_and(char::is_alphanumeric))
    };
    let camel = t
        .chars()
        .zip(t.chars().skip(1))
        .any(|(a, b)| a.is_lowercase() && b.is_uppercase());
    let has_letter = t.chars().any(char::is_alphabetic);
    has_letter && (alnum_around("_") || alnum_around("::") || alnum_around(".") || camel)
}

/// A subject's key: a path's file name without its extension, an
/// identifier's words (`agent_id` → `agent-id`, `LiveView` → `live-view`).
pub(super) fn subject_key(subject: &str) -> String {
    // `render/2`: a function by its arity, not a path.
    let arity = subject
        .rsplit_once('/')
        .is_some_and(|(_, n)| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()));
    let name = if arity {
        subject
    } else if subject.contains('/') && !subject.contains(' ') {
        let last = subject
            .trim_end_matches('/')
            .rsplit('/')
            .next()
            .unwrap_or(subject);
        last.rsplit_once('.').map_or(last, |(stem, _)| stem)
    } else if is_path_like(subject) && !subject.contains(' ') && !is_identifier_dotted(subject) {
        subject.rsplit_once('.').map_or(subject, |(stem, _)| stem)
    } else {
        subject
    };
    let mut spaced = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if c.is_uppercase() && prev_lower {
            spaced.push(' ');
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        spaced.push(if c == '_' { ' ' } else { c });
    }
    // Every word of a name counts (`agent_id` is not `agent`).
    kebab(key_words(&spaced).take(KEY_WORDS_OF_SUBJECT))
}

/// `Module.Name`: dots between capitalised words, no file extension.
fn is_identifier_dotted(t: &str) -> bool {
    t.split('.')
        .all(|p| p.chars().next().is_some_and(char::is_uppercase))
}

/// Words in a subject's key.
const KEY_WORDS_OF_SUBJECT: usize = 4;

/// Prose sentences, verbatim and trimmed. Fenced code is skipped; a blank
/// line, list item or heading starts a new block (a single line break inside
/// a paragraph does not end a sentence); a block splits after `.`, `!` or
/// `?` followed by whitespace, and after CJK full stops.
pub(super) fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut block: Option<Range<usize>> = None;
    let mut in_fence = false;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let range = offset..offset + line.len();
        offset = range.end;
        let body = line.trim();
        let is_fence = body.starts_with("```") || body.starts_with("~~~");
        let breaks_block = is_fence || in_fence || body.is_empty() || starts_block(body);
        if breaks_block && let Some(b) = block.take() {
            split_block(text, b, &mut out);
        }
        if is_fence {
            in_fence = !in_fence;
            continue;
        }
        if in_fence || body.is_empty() {
            continue;
        }
        block = Some(block.map_or(range.clone(), |b| b.start..range.end));
    }
    if let Some(b) = block {
        split_block(text, b, &mut out);
    }
    out
}

/// A list item, quote, heading or table row starts its own paragraph.
fn starts_block(line: &str) -> bool {
    let list = ["- ", "* ", "+ ", "• ", "> ", "#", "|"]
        .iter()
        .any(|p| line.starts_with(p));
    list || numbered_marker_len(line).is_some()
}

/// `12. ` or `3) ` at the start of a line: the marker's byte length.
fn numbered_marker_len(line: &str) -> Option<usize> {
    let digits = line.chars().take_while(char::is_ascii_digit).count();
    let rest = &line[digits..];
    (digits > 0 && (rest.starts_with(". ") || rest.starts_with(") "))).then_some(digits + 2)
}

/// Splits one paragraph into its sentences.
fn split_block<'t>(text: &'t str, block: Range<usize>, out: &mut Vec<&'t str>) {
    let s = &text[block];
    let mut start = 0;
    for (i, c) in s.char_indices() {
        let after = i + c.len_utf8();
        let ends = match c {
            '。' | '！' | '？' => true,
            '.' | '!' | '?' => s[after..].chars().next().is_none_or(char::is_whitespace),
            _ => false,
        };
        if ends && !(c == '.' && ends_with_abbreviation(&s[start..i])) {
            push_sentence(&s[start..after], out);
            start = after;
        }
    }
    push_sentence(&s[start..], out);
}

/// `e.g.` and friends do not end a sentence.
fn ends_with_abbreviation(before_dot: &str) -> bool {
    let last = before_dot
        .rsplit(char::is_whitespace)
        .next()
        .unwrap_or_default();
    ["e.g", "i.e", "vs", "cf", "approx", "incl"]
        .iter()
        .any(|a| last.eq_ignore_ascii_case(a))
}

/// Keeps a sentence that has a word in it, minus any list marker.
fn push_sentence<'t>(s: &'t str, out: &mut Vec<&'t str>) {
    let s = strip_list_marker(s.trim()).trim();
    if s.chars().any(char::is_alphanumeric) {
        out.push(s);
    }
}

fn strip_list_marker(s: &str) -> &str {
    for p in ["- ", "* ", "+ ", "• ", "> "] {
        if let Some(rest) = s.strip_prefix(p) {
            return rest;
        }
    }
    if s.starts_with('#') {
        return s.trim_start_matches('#');
    }
    match numbered_marker_len(s) {
        Some(n) => &s[n..],
        None => s,
    }
}

/// Byte offset of `inner` within `outer`; `inner` must be a slice of `outer`.
pub(super) fn offset_in(outer: &str, inner: &str) -> usize {
    inner.as_ptr() as usize - outer.as_ptr() as usize
}

/// Whitespace runs (line breaks included) become one space.
pub(super) fn flatten(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// At most `max` characters, with `…` when cut.
pub(super) fn clip(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &s[..cut]),
        None => s.to_string(),
    }
}

/// A verbatim window of `max` characters around the marker at byte `at`,
/// with `…` on each cut side. Short sentences come back whole.
pub(super) fn clip_around(s: &str, at: usize, max: usize) -> String {
    let total = s.chars().count();
    if total <= max {
        return s.to_string();
    }
    let marker_char = s[..at].chars().count();
    let from = marker_char.saturating_sub(max / 3).min(total - max);
    let window: String = s.chars().skip(from).take(max).collect();
    let before = if from > 0 { "…" } else { "" };
    let after = if from + max < total { "…" } else { "" };
    format!("{before}{window}{after}")
}

/// A time-bound finding gets `(as of <date>)` when its text carries a date
/// and the sentence itself does not (no clock is ever consulted).
pub(super) fn anchor_date(statement: String, sentence: &str, date: Option<&str>) -> String {
    let time_bound = words(sentence)
        .iter()
        .any(|w| TIME_BOUND_WORDS.contains(&w.text.as_str()));
    match date {
        Some(d) if time_bound && find_iso_date(sentence).is_none() => {
            format!("{statement} (as of {d})")
        }
        _ => statement,
    }
}

/// The first `YYYY-MM-DD` not embedded in a longer run of digits.
pub(super) fn find_iso_date(text: &str) -> Option<&str> {
    let b = text.as_bytes();
    let digit = |i: usize| b.get(i).is_some_and(u8::is_ascii_digit);
    (0..b.len().saturating_sub(9)).find_map(|i| {
        let shape = (0..10).all(|k| {
            if k == 4 || k == 7 {
                b[i + k] == b'-'
            } else {
                digit(i + k)
            }
        });
        let bounded = (i == 0 || !digit(i - 1)) && !digit(i + 10);
        if !shape || !bounded {
            return None;
        }
        let date = &text[i..i + 10];
        let month: u32 = date[5..7].parse().ok()?;
        let day: u32 = date[8..10].parse().ok()?;
        ((1..=12).contains(&month) && (1..=31).contains(&day)).then_some(date)
    })
}
