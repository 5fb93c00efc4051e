//! The parse driver: reads a file as a stream of lines, detects the format,
//! validates UTF-8, feeds the importer and collects what it skipped.

use std::collections::BTreeMap;
use std::io::BufRead;

use serde_json::Value;

use super::{Importer, LineError, LineOutcome, TaskBuilder, TaskSet, detect, importer_for};
use crate::model::Format;

#[derive(Debug, Clone, Default)]
pub struct ParseOptions {
    /// `None` detects the format from the first lines.
    pub format: Option<Format>,
    /// Keep the valid lines of a file with invalid ones (each reported).
    pub skip_invalid: bool,
}

/// A line left out under `--skip-invalid`.
pub type SkippedLine = LineError;

/// Everything one file produced.
pub struct ParsedFile {
    pub format: Format,
    pub tasks: Vec<TaskBuilder>,
    /// Lines read (blank ones included).
    pub lines: u64,
    pub bytes: u64,
    /// blake3 of every byte read.
    pub hash: blake3::Hash,
    pub skipped: Vec<SkippedLine>,
    pub not_conversation: u64,
    pub duplicates: u64,
    pub unknown: BTreeMap<String, u64>,
    /// A last line without its newline that does not parse (a session still
    /// being written): left for the next import, and not in `lines`, `bytes`
    /// or `hash`. 0 or 1.
    pub incomplete_lines: u64,
}

/// How many non-blank lines are read ahead to detect the format.
const LOOKAHEAD_LINES: usize = 24;
const PROGRESS_EVERY: u64 = 1 << 20;

/// Parse a whole transcript from a reader. `progress` is called with the
/// number of bytes read so far, about once per MiB.
pub fn parse_reader<R: BufRead>(
    reader: R,
    opts: &ParseOptions,
    progress: &mut dyn FnMut(u64),
) -> Result<ParsedFile, LineError> {
    parse_stream(reader, opts, progress, &mut |_, _| Ok(()))
}

/// [`parse_reader`], calling `flush` after each line of a JSONL file with
/// the format and the tasks so far: it may take the messages pushed so far
/// out of a task (each is final once pushed), so that a caller stores them
/// while the rest is parsed. An error from `flush` ends the parse with it.
pub fn parse_stream<R: BufRead>(
    reader: R,
    opts: &ParseOptions,
    progress: &mut dyn FnMut(u64),
    flush: &mut dyn FnMut(Format, &mut TaskSet) -> Result<(), LineError>,
) -> Result<ParsedFile, LineError> {
    let mut src = LineSource {
        reader,
        progress,
        hasher: FileHasher::default(),
        bytes: 0,
        next_progress: PROGRESS_EVERY,
        before_tail: None,
    };
    let (ahead, eof) = src.read_ahead()?;
    if ahead.iter().all(|l| is_blank(l)) && opts.format.is_none() {
        return Err(LineError::new(
            1,
            1,
            "the file is empty (no JSON lines); expected a transcript",
        )
        .before_any_format());
    }
    let samples: Vec<Result<Value, serde_json::Error>> = ahead
        .iter()
        .filter(|l| !is_blank(l))
        .map(|l| serde_json::from_slice::<Value>(trim_eol(l)))
        .collect();
    if is_document(&samples, eof) && opts.format.is_none_or(accepts_document) {
        return parse_document(src, ahead, opts);
    }
    let format = match opts.format {
        Some(f) => f,
        None => detect_lines(&ahead, &samples)?,
    };
    parse_lines(src, ahead, format, opts, flush)
}

/// The lines of a file as they are read: every byte hashed and counted,
/// progress reported, the fault point passed after each line.
struct LineSource<'p, R> {
    reader: R,
    progress: &'p mut dyn FnMut(u64),
    hasher: FileHasher,
    bytes: u64,
    next_progress: u64,
    /// The hash and size before a last line that has no newline: what was
    /// consumed when that line is left for later.
    before_tail: Option<(FileHasher, u64)>,
}

impl<R: BufRead> LineSource<'_, R> {
    /// The next line into `buf` (its newline kept); `false` at the end.
    fn next_line(&mut self, buf: &mut Vec<u8>) -> Result<bool, LineError> {
        buf.clear();
        let n = read_until_newline(&mut self.reader, buf)
            .map_err(|e| LineError::new(0, 0, format!("read error: {e}")))?;
        if n > 0 && !buf.ends_with(b"\n") {
            self.before_tail = Some((self.hasher.snapshot(), self.bytes));
        }
        self.hasher.update(buf);
        self.bytes += n as u64;
        if self.bytes >= self.next_progress {
            (self.progress)(self.bytes);
            self.next_progress = self.bytes + PROGRESS_EVERY;
        }
        if n > 0 {
            crate::fault::after_line();
        }
        Ok(n > 0)
    }

    /// The first lines, up to [`LOOKAHEAD_LINES`] non-blank ones, kept to
    /// be fed to the importer once the format is known; and whether they
    /// are the whole file.
    fn read_ahead(&mut self) -> Result<(Vec<Vec<u8>>, bool), LineError> {
        let mut ahead = Vec::new();
        let mut non_blank = 0;
        while non_blank < LOOKAHEAD_LINES {
            let mut buf = Vec::new();
            if !self.next_line(&mut buf)? {
                return Ok((ahead, true));
            }
            if !is_blank(&buf) {
                non_blank += 1;
            }
            ahead.push(buf);
        }
        Ok((ahead, false))
    }
}

/// Whether the first lines are the start of one JSON document (a list of
/// messages or a request body) rather than one JSON object per line.
fn is_document(samples: &[Result<Value, serde_json::Error>], eof: bool) -> bool {
    match samples.first() {
        None => false,
        Some(Ok(Value::Array(_))) => true,
        Some(Ok(Value::Object(o))) => {
            samples.len() == 1
                && eof
                && (o.get("messages").is_some_and(Value::is_array)
                    || o.get("history").is_some_and(Value::is_array))
                && !o.contains_key("role")
        }
        Some(Ok(_)) => false,
        // A first line that is not JSON by itself: a pretty-printed document,
        // unless the next line is a JSON object (then it is a broken JSONL line).
        Some(Err(_)) => !matches!(samples.get(1), Some(Ok(Value::Object(_)))),
    }
}

/// The whole file as one JSON document, handed to the importer whole.
fn parse_document<R: BufRead>(
    mut src: LineSource<'_, R>,
    ahead: Vec<Vec<u8>>,
    opts: &ParseOptions,
) -> Result<ParsedFile, LineError> {
    // Until a format is known, an error says the file may be no transcript.
    let detecting = |e: LineError| match opts.format {
        None => e.before_any_format(),
        Some(_) => e,
    };
    let mut all: Vec<u8> = ahead.concat();
    let mut buf = Vec::new();
    while src.next_line(&mut buf)? {
        all.extend_from_slice(&buf);
    }
    let text = std::str::from_utf8(&all).map_err(|e| detecting(utf8_error_in_document(&all, e)))?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let value: Value = serde_json::from_str(text).map_err(|e| {
        let (line, column) = clamp_to_text(text, e.line(), e.column());
        detecting(LineError::new(
            line,
            column,
            format!(
                "{}; expected a JSON document (a list of messages or a request body) or one JSON object per line",
                describe_json_error(&e)
            ),
        ))
    })?;
    let format = match opts.format {
        Some(f) => f,
        None => detect::detect(std::slice::from_ref(&value)).ok_or_else(undetectable)?,
    };
    let mut importer = importer_for(format);
    let mut tasks = TaskSet::default();
    importer.document(value, &mut tasks)?;
    let lines = all.iter().filter(|b| **b == b'\n').count() as u64
        + u64::from(!all.is_empty() && all.last() != Some(&b'\n'));
    Ok(ParsedFile {
        format,
        tasks: tasks.finish()?,
        lines,
        bytes: src.bytes,
        hash: src.hasher.finalize(),
        skipped: Vec::new(),
        not_conversation: 0,
        duplicates: 0,
        unknown: BTreeMap::new(),
        incomplete_lines: 0,
    })
}

/// The format the first lines are in; else the first of them that does not
/// parse, or that no format was recognised.
fn detect_lines(
    ahead: &[Vec<u8>],
    samples: &[Result<Value, serde_json::Error>],
) -> Result<Format, LineError> {
    let values: Vec<Value> = samples
        .iter()
        .filter_map(|s| s.as_ref().ok())
        .cloned()
        .collect();
    if let Some(f) = detect::detect(&values) {
        return Ok(f);
    }
    // Report the first unparsable line if that is why detection failed.
    for (i, l) in ahead.iter().enumerate() {
        if is_blank(l) {
            continue;
        }
        parse_check(i as u64 + 1, l).map_err(LineError::before_any_format)?;
    }
    Err(undetectable())
}

/// One JSON object per line: the lines read ahead, then the rest as they are
/// read, each fed to the importer and `flush` called after it; a last line
/// still being written is left for the next import.
fn parse_lines<R: BufRead>(
    mut src: LineSource<'_, R>,
    ahead: Vec<Vec<u8>>,
    format: Format,
    opts: &ParseOptions,
    flush: &mut dyn FnMut(Format, &mut TaskSet) -> Result<(), LineError>,
) -> Result<ParsedFile, LineError> {
    let mut importer = importer_for(format);
    let mut tasks = TaskSet::default();
    let mut state = LineCounts::default();
    let mut line_no = 0u64;
    let mut incomplete = false;
    let mut ahead = ahead.into_iter();
    let mut buf = Vec::new();
    loop {
        match ahead.next() {
            Some(line) => buf = line,
            None if src.next_line(&mut buf)? => {}
            None => break,
        }
        line_no += 1;
        if is_incomplete_tail(&buf) {
            incomplete = true;
            continue;
        }
        feed(
            importer.as_mut(),
            line_no,
            &buf,
            &mut tasks,
            opts,
            &mut state,
        )?;
        flush(format, &mut tasks)?;
    }
    refuse_foreign(&state, format)?;
    let (hash, bytes, lines) = match src.before_tail {
        Some((before, consumed)) if incomplete => (before.finalize(), consumed, line_no - 1),
        _ => (src.hasher.finalize(), src.bytes, line_no),
    };
    Ok(ParsedFile {
        format,
        tasks: tasks.finish()?,
        lines,
        bytes,
        hash,
        skipped: state.skipped,
        not_conversation: state.not_conversation,
        duplicates: state.duplicates,
        unknown: state.unknown,
        incomplete_lines: u64::from(incomplete),
    })
}

/// Every line of a type this format does not know: the file is in another
/// format (an explicit --format that does not match). Importing nothing with
/// success would also mark the file as imported and hide it from a later,
/// correct import.
fn refuse_foreign(state: &LineCounts, format: Format) -> Result<(), LineError> {
    let Some(first) = state.first_unknown.filter(|_| state.recognised == 0) else {
        return Ok(());
    };
    let total: u64 = state.unknown.values().sum();
    let types: Vec<&str> = state.unknown.keys().map(String::as_str).take(4).collect();
    Err(LineError::new(
        first,
        1,
        format!(
            "{}, all of types a {f} transcript does not have ({}); expected a {f} transcript: is --format right?",
            if total == 1 {
                "1 line".to_string()
            } else {
                format!("{total} lines")
            },
            types.join(", "),
            f = format.as_str()
        ),
    ))
}

/// `BufRead::read_until(b'\n', buf)`, with the newline found by the
/// `memchr` crate (SIMD) rather than the standard library's portable search,
/// which was 3% of an import's time.
fn read_until_newline(r: &mut impl BufRead, buf: &mut Vec<u8>) -> std::io::Result<usize> {
    let mut read = 0;
    loop {
        let available = match r.fill_buf() {
            Ok(a) => a,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let (done, used) = match memchr::memchr(b'\n', available) {
            Some(i) => (true, i + 1),
            None => (false, available.len()),
        };
        buf.extend_from_slice(&available[..used]);
        r.consume(used);
        read += used;
        if done || used == 0 {
            return Ok(read);
        }
    }
}

/// blake3 of a file read line by line, fed in blocks of [`FileHasher::BLOCK`]
/// bytes: lines of a few KB would each be hashed a chunk at a time, blocks
/// let blake3 hash many chunks at once (SIMD). The hash does not depend on
/// how the bytes are split.
#[derive(Default, Clone)]
struct FileHasher {
    hasher: blake3::Hasher,
    pending: Vec<u8>,
}

impl FileHasher {
    const BLOCK: usize = 64 << 10;

    fn update(&mut self, bytes: &[u8]) {
        if self.pending.len() + bytes.len() > Self::BLOCK {
            self.hasher.update(&self.pending);
            self.pending.clear();
        }
        if bytes.len() >= Self::BLOCK {
            self.hasher.update(bytes);
        } else {
            self.pending.extend_from_slice(bytes);
        }
    }

    /// The state so far, to finish later (a copy without the block buffer).
    fn snapshot(&self) -> FileHasher {
        let mut hasher = self.hasher.clone();
        hasher.update(&self.pending);
        FileHasher {
            hasher,
            pending: Vec::new(),
        }
    }

    fn finalize(mut self) -> blake3::Hash {
        self.hasher.update(&self.pending);
        self.pending.clear();
        self.hasher.finalize()
    }
}

/// Parse an in-memory transcript (tests, fuzzing, small inputs).
pub fn parse_bytes(bytes: &[u8], opts: &ParseOptions) -> Result<ParsedFile, LineError> {
    parse_reader(bytes, opts, &mut |_| {})
}

fn accepts_document(f: Format) -> bool {
    matches!(f, Format::OpenaiChat | Format::Anthropic)
}

fn undetectable() -> LineError {
    LineError {
        hint: Some("pass --format to say which"),
        ..LineError::new(
            1,
            1,
            "could not tell the format: expected Claude Code or Codex JSONL, OpenAI chat messages or Anthropic Messages JSON",
        )
        .before_any_format()
    }
}

#[derive(Default)]
struct LineCounts {
    skipped: Vec<SkippedLine>,
    not_conversation: u64,
    duplicates: u64,
    unknown: BTreeMap<String, u64>,
    /// Lines of a type the importer knows (imported, not conversation or duplicates).
    recognised: u64,
    first_unknown: Option<u64>,
}

fn feed(
    importer: &mut dyn Importer,
    line: u64,
    raw: &[u8],
    tasks: &mut TaskSet,
    opts: &ParseOptions,
    counts: &mut LineCounts,
) -> Result<(), LineError> {
    if is_blank(raw) {
        return Ok(());
    }
    let result = std::str::from_utf8(trim_eol(raw))
        .map_err(|e| utf8_error(line, raw, e))
        .and_then(|text| {
            let text = if line == 1 {
                text.strip_prefix('\u{feff}').unwrap_or(text)
            } else {
                text
            };
            importer.line(line, text, tasks)
        });
    match result {
        Ok(LineOutcome::Imported) => counts.recognised += 1,
        Ok(LineOutcome::NotConversation) => {
            counts.recognised += 1;
            counts.not_conversation += 1
        }
        Ok(LineOutcome::Duplicate) => {
            counts.recognised += 1;
            counts.duplicates += 1
        }
        Ok(LineOutcome::Unknown(t)) => {
            counts.first_unknown.get_or_insert(line);
            *counts.unknown.entry(t).or_insert(0) += 1
        }
        Err(e) if opts.skip_invalid => counts.skipped.push(e),
        Err(e) => return Err(e.or_hint(SKIP_INVALID_HINT)),
    }
    Ok(())
}

/// What to do about one bad line of a transcript whose format is known.
pub(crate) const SKIP_INVALID_HINT: &str =
    "`compactor import --skip-invalid FILE` imports the other lines and lists each skipped one";

/// A last line still being written: no newline yet, and not a whole JSON
/// value. Only the last line of a file can lack its newline.
pub(crate) fn is_incomplete_tail(raw: &[u8]) -> bool {
    !raw.ends_with(b"\n")
        && !is_blank(raw)
        && std::str::from_utf8(raw)
            .ok()
            .and_then(|t| serde_json::from_str::<serde::de::IgnoredAny>(t).ok())
            .is_none()
}

fn parse_check(line: u64, raw: &[u8]) -> Result<(), LineError> {
    let text = std::str::from_utf8(trim_eol(raw)).map_err(|e| utf8_error(line, raw, e))?;
    serde_json::from_str::<serde::de::IgnoredAny>(text)
        .map(|_| ())
        .map_err(|e| LineError::from_json(line, &e, "one JSON object per line"))
}

fn utf8_error(line: u64, raw: &[u8], e: std::str::Utf8Error) -> LineError {
    let at = e.valid_up_to();
    if line == 1 && (raw.starts_with(&[0xff, 0xfe]) || raw.starts_with(&[0xfe, 0xff])) {
        return LineError::new(
            1,
            1,
            "the file is UTF-16 (it starts with a UTF-16 byte-order mark); expected UTF-8 text (convert it, e.g. iconv -f UTF-16 -t UTF-8)",
        );
    }
    LineError::new(
        line,
        at as u64 + 1,
        format!(
            "invalid UTF-8 (byte 0x{:02x}); expected UTF-8 text",
            raw.get(at).copied().unwrap_or(0)
        ),
    )
}

fn utf8_error_in_document(all: &[u8], e: std::str::Utf8Error) -> LineError {
    if all.starts_with(&[0xff, 0xfe]) || all.starts_with(&[0xfe, 0xff]) {
        return utf8_error(1, all, e);
    }
    let at = e.valid_up_to();
    let line = all[..at].iter().filter(|b| **b == b'\n').count() as u64 + 1;
    let col = at
        - all[..at]
            .iter()
            .rposition(|b| *b == b'\n')
            .map_or(0, |p| p + 1);
    LineError::new(
        line,
        col as u64 + 1,
        format!(
            "invalid UTF-8 (byte 0x{:02x}); expected UTF-8 text",
            all.get(at).copied().unwrap_or(0)
        ),
    )
}

/// serde_json reports the end of a document that ends with a newline as
/// column 0 of the line after it; point at the last line's last byte instead
/// (as a truncated JSONL line is reported), so the location names a line that exists.
fn clamp_to_text(text: &str, line: usize, column: usize) -> (u64, u64) {
    let lines: Vec<&str> = text.lines().collect();
    match lines.last() {
        Some(last) if line > lines.len() => (lines.len() as u64, last.len().max(1) as u64),
        _ => (line.max(1) as u64, column.max(1) as u64),
    }
}

fn describe_json_error(e: &serde_json::Error) -> String {
    let s = e.to_string();
    let s = match s.rfind(" at line ") {
        Some(i) => s[..i].to_string(),
        None => s,
    };
    if e.is_eof() {
        "truncated JSON (the file ends before the value does)".to_string()
    } else {
        format!("invalid JSON: {s}")
    }
}

fn trim_eol(l: &[u8]) -> &[u8] {
    let l = l.strip_suffix(b"\n").unwrap_or(l);
    l.strip_suffix(b"\r").unwrap_or(l)
}

fn is_blank(l: &[u8]) -> bool {
    l.iter().all(|b| b.is_ascii_whitespace())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts() -> ParseOptions {
        ParseOptions::default()
    }

    #[test]
    fn truncated_line_is_located() {
        let data =
            b"{\"role\":\"user\",\"content\":\"hi\"}\n{\"role\":\"assistant\",\"content\":\"he\n";
        let err = parse_bytes(data, &opts()).err().expect("must fail");
        assert_eq!(err.line, 2);
        assert!(err.message.contains("truncated JSON"), "{}", err.message);
    }

    #[test]
    fn skip_invalid_keeps_the_rest() {
        let data = b"{\"role\":\"user\",\"content\":\"hi\"}\n{oops\n{\"role\":\"assistant\",\"content\":\"yo\"}\n";
        let o = ParseOptions {
            skip_invalid: true,
            ..opts()
        };
        let p = parse_bytes(data, &o).unwrap();
        assert_eq!(p.skipped.len(), 1);
        assert_eq!(p.skipped[0].line, 2);
        assert_eq!(p.tasks[0].messages.len(), 2);
    }

    #[test]
    fn bad_utf8_names_line_and_column() {
        let mut data =
            b"{\"role\":\"user\",\"content\":\"hi\"}\n{\"role\":\"user\",\"content\":\"".to_vec();
        data.push(0xff);
        data.extend_from_slice(b"\"}\n");
        let err = parse_bytes(&data, &opts()).err().unwrap();
        assert_eq!((err.line, err.column), (2, 27));
        assert!(err.message.contains("UTF-8"));
    }

    #[test]
    fn pretty_printed_request_body_is_a_document() {
        let data = b"{\n  \"model\": \"m\",\n  \"system\": \"be terse\",\n  \"messages\": [\n    {\"role\": \"user\", \"content\": \"hi\"},\n    {\"role\": \"assistant\", \"content\": \"hello\"}\n  ]\n}\n";
        let p = parse_bytes(data, &opts()).unwrap();
        assert_eq!(p.format, Format::Anthropic);
        assert_eq!(p.tasks[0].messages.len(), 3);
    }

    #[test]
    fn a_truncated_document_error_names_its_last_line() {
        let data = b"[\n  {\"role\": \"user\", \"content\": \"hi\"},\n";
        let err = parse_bytes(data, &opts()).err().unwrap();
        assert_eq!((err.line, err.column), (2, 36), "{err}");
        assert!(err.message.contains("truncated JSON"), "{err}");
    }

    #[test]
    fn document_errors_point_into_the_document() {
        let data = b"[\n  {\"role\": \"system\", \"content\": \"x\"},\n  {\"role\": \"user\", \"content\": }\n]\n";
        let err = parse_bytes(data, &opts()).err().unwrap();
        assert_eq!(err.line, 3);
    }

    #[test]
    fn lines_are_read_as_read_until_reads_them() {
        let data: &[u8] = b"one\n\ntwo words\r\n{\"a\":1}\nno newline at the end";
        // A small buffer splits lines across refills.
        for cap in [1, 3, 64] {
            let mut ours = std::io::BufReader::with_capacity(cap, data);
            let mut std = std::io::BufReader::with_capacity(cap, data);
            loop {
                let (mut a, mut b) = (Vec::new(), Vec::new());
                let n = read_until_newline(&mut ours, &mut a).unwrap();
                assert_eq!(n, std.read_until(b'\n', &mut b).unwrap());
                assert_eq!(a, b, "buffer of {cap}");
                if n == 0 {
                    break;
                }
            }
        }
    }

    #[test]
    fn the_file_hash_does_not_depend_on_how_lines_split_it() {
        let data: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
        let whole = blake3::hash(&data);
        for sizes in [&[1usize, 7, 4096][..], &[65_535, 65_537, 3], &[200_000, 1]] {
            let mut h = FileHasher::default();
            let (mut at, mut k) = (0, 0);
            let mut half = None;
            while at < data.len() {
                let n = sizes[k % sizes.len()].min(data.len() - at);
                h.update(&data[at..at + n]);
                at += n;
                k += 1;
                if half.is_none() && at >= data.len() / 2 {
                    half = Some((h.snapshot(), at));
                }
            }
            assert_eq!(h.finalize(), whole, "{sizes:?}");
            let (snap, upto) = half.unwrap();
            assert_eq!(snap.finalize(), blake3::hash(&data[..upto]), "{sizes:?}");
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic() {
        // A few nasty inputs; the proptest in tests covers random ones.
        for data in [
            &b""[..],
            b"\n\n",
            b"\xff\xfe",
            b"[",
            b"{\"type\":\"user\"}",
            b"{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":\"tool_use\"}]},\"uuid\":\"u\"}",
            b"null\nnull",
        ] {
            let _ = parse_bytes(data, &opts());
        }
        let empty = parse_bytes(b"\n", &opts())
            .err()
            .expect("an empty file is refused");
        assert!(empty.message.contains("empty"), "{}", empty.message);
    }
}
