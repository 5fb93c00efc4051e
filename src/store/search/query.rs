//! A search query as FTS5 reads it. Pure: text in, an FTS5 expression (or
//! an error naming the fault) out.
//!
//! Two readings:
//! - **Plain words** (`git push failed no upstream branch`): each word is
//!   matched on its own and the hits ranked (BM25), so a hit need not hold
//!   every word; English stop words do not count (negations do: `never`,
//!   `not`, `no`). A word that is several words to the index is their
//!   phrase (`tenant_registry`, `raw.rs`); a mixed-case identifier is
//!   matched whole or as its words (`TranscriptRenderer`). A hit holding
//!   every word close together ranks above one holding them apart.
//! - **FTS5 syntax**, when the query uses it (a `"phrase"`, `NEAR(…)`, a
//!   `prefix*`, `AND`/`OR`/`NOT`, parentheses, `^`): passed on as FTS5
//!   reads it, a bare word holding punctuation quoted so that it means
//!   its words, not an error.
//!
//! Every word becomes the index's term for it (lower-cased and stemmed by
//! the [`Normaliser`] that made the index's), so word forms meet: a query
//! for `failing` finds `failed`.
//!
//! The cost is bounded: at most [`QUERY_CHARS`] characters, and a plain
//! query's first [`QUERY_TERMS`] distinct words (the rest is dropped and
//! said); FTS5 syntax with more than [`SYNTAX_PHRASES`] phrases, or a prefix
//! shorter than two characters, is refused.

use super::extract::{Column, Normaliser, is_stop_word, split_identifier};

/// The longest query, in characters.
pub const QUERY_CHARS: usize = 1000;
/// The most distinct words a plain query is searched for.
pub const QUERY_TERMS: usize = 24;
/// The most phrases a query in FTS5 syntax may hold.
pub const SYNTAX_PHRASES: usize = 48;

/// Why a query cannot be searched.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QueryError {
    #[error("the query is empty: give one or more words")]
    Empty,
    #[error(
        "the query is {chars} characters long; at most {QUERY_CHARS} are searched: give the few words that matter"
    )]
    TooLong { chars: usize },
    #[error(
        "the query holds {phrases} phrases; at most {SYNTAX_PHRASES} in FTS5 syntax: give the few that matter"
    )]
    TooManyPhrases { phrases: usize },
    #[error(
        "the query's quote at character {at} is never closed: a phrase is \"words\" between two quotes"
    )]
    UnclosedQuote { at: usize },
    #[error(
        "the query holds only stop words ({words}), which are not indexed: add a word that names what you look for"
    )]
    OnlyStopWords { words: String },
    #[error("the query's parenthesis at character {at} is never closed")]
    UnclosedParen { at: usize },
    #[error("the query closes a parenthesis at character {at} that was never opened")]
    StrayParen { at: usize },
    #[error(
        "the prefix {term:?} is too short: a prefix search needs at least two characters before `*`"
    )]
    ShortPrefix { term: String },
    #[error(
        "unknown column {name:?} in the query: the columns are ask, answer, tool, error and summary"
    )]
    UnknownColumn { name: String },
    #[error("the query is malformed as FTS5 syntax: {detail}")]
    Syntax { detail: String },
}

impl crate::model::Hint for QueryError {
    fn hint(&self) -> Option<&str> {
        match self {
            QueryError::Syntax { .. }
            | QueryError::UnclosedQuote { .. }
            | QueryError::UnclosedParen { .. }
            | QueryError::StrayParen { .. } => Some(
                "plain words need no syntax; with FTS5 syntax: \"a phrase\", NEAR(a b, 10), prefix*, a AND b, a OR b, a NOT b",
            ),
            _ => None,
        }
    }
}

/// A query ready to search.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Query {
    /// The FTS5 expression.
    pub expr: String,
    /// The words searched, lower-cased, not stemmed (a snippet's tokenizer
    /// stems them itself).
    pub words: Vec<String>,
    /// Whether the query was read as FTS5 syntax.
    pub syntax: bool,
    /// Distinct words left out past [`QUERY_TERMS`].
    pub dropped: usize,
    /// Stop words left out.
    pub stopped: Vec<String>,
}

impl Query {
    /// The expression restricted to one column (`--kind`).
    pub fn in_column(&self, column: Option<Column>) -> String {
        match column {
            None => self.expr.clone(),
            Some(c) => format!("{{{}}} : ({})", c.as_str(), self.expr),
        }
    }
}

/// Read a query (see the module's doc).
pub fn parse(text: &str) -> Result<Query, QueryError> {
    let chars = text.chars().count();
    if chars > QUERY_CHARS {
        return Err(QueryError::TooLong { chars });
    }
    if text.trim().is_empty() {
        return Err(QueryError::Empty);
    }
    if uses_syntax(text) {
        syntax(text)
    } else {
        plain(text)
    }
}

/// The runs of letters and digits of `s` (what the index's tokenizer keeps
/// as words), lower-cased.
fn runs(s: &str) -> Vec<String> {
    s.split(|c: char| !c.is_alphanumeric())
        .filter(|r| !r.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Whether the query uses FTS5's syntax: a quote, a column list, an
/// operator or a prefix. Parentheses, `^` and `column:` alone do not count:
/// pasted text is full of them (`error: no such file (os error 2)`).
fn uses_syntax(text: &str) -> bool {
    if text.contains(['"', '{']) {
        return true;
    }
    text.split_whitespace().any(|w| {
        matches!(w, "AND" | "OR" | "NOT")
            || w.starts_with("NEAR(")
            || (w.len() > 1 && w.ends_with('*'))
    })
}

/// One thing a plain query looks for.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Unit {
    /// A word.
    Word(String),
    /// Several words in order (`tenant_registry`, `raw.rs`).
    Phrase(Vec<String>),
    /// A mixed-case identifier: whole, or its words in order.
    Identifier(String, String),
}

impl Unit {
    fn render(&self) -> String {
        match self {
            Unit::Word(w) => quoted(w),
            Unit::Phrase(ws) => quoted(&ws.join(" ")),
            Unit::Identifier(whole, words) => format!("({} OR {})", quoted(whole), quoted(words)),
        }
    }

    /// The one phrase standing for it inside `NEAR(…)`.
    fn near(&self) -> String {
        match self {
            Unit::Word(w) => quoted(w),
            Unit::Phrase(ws) => quoted(&ws.join(" ")),
            Unit::Identifier(whole, _) => quoted(whole),
        }
    }
}

/// An FTS5 string: between double quotes, a quote doubled.
fn quoted(s: &str) -> String {
    format!("\"{}\"", s.replace('"', "\"\""))
}

/// The index's terms of `s`'s words, space-separated (a phrase's words).
fn terms_of(norm: &mut Normaliser, s: &str) -> String {
    let mut out = String::new();
    for run in s
        .split(|c: char| !c.is_alphanumeric())
        .filter(|r| !r.is_empty())
    {
        let t = norm.term(run);
        if !t.is_empty() {
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(&t);
        }
    }
    out
}

/// A phrase of FTS5 syntax as the index holds it: its words' terms,
/// quoted; an error when it holds only stop words (they are not indexed:
/// an empty phrase would match nothing, silently).
fn phrase_of(norm: &mut Normaliser, s: &str) -> Result<String, QueryError> {
    let terms = terms_of(norm, s);
    if terms.is_empty() {
        return Err(QueryError::OnlyStopWords {
            words: runs(s).join(" "),
        });
    }
    Ok(quoted(&terms))
}

fn plain(text: &str) -> Result<Query, QueryError> {
    let mut norm = Normaliser::new();
    let mut units: Vec<Unit> = Vec::new();
    let mut words: Vec<String> = Vec::new();
    let mut stopped: Vec<String> = Vec::new();
    let mut distinct = 0usize;
    for word in text.split_whitespace() {
        let originals: Vec<&str> = word
            .split(|c: char| !c.is_alphanumeric())
            .filter(|r| !r.is_empty())
            .collect();
        let lower: Vec<String> = originals.iter().map(|r| r.to_lowercase()).collect();
        if let [word] = lower.as_slice()
            && is_stop_word(word.as_bytes())
        {
            if !stopped.contains(word) {
                stopped.push(word.clone());
            }
            continue;
        }
        let terms: Vec<String> = originals
            .iter()
            .map(|r| norm.term(r))
            .filter(|t| !t.is_empty())
            .collect();
        let unit = match (originals.as_slice(), terms.as_slice()) {
            (_, []) => continue,
            ([original], [term]) => {
                if original.is_ascii() && super::extract::is_mixed_case(original) {
                    let mut split = String::new();
                    split_identifier(original, &mut split);
                    Unit::Identifier(term.clone(), terms_of(&mut norm, &split))
                } else {
                    Unit::Word(term.clone())
                }
            }
            (_, many) => Unit::Phrase(many.to_vec()),
        };
        if units.contains(&unit) {
            continue;
        }
        distinct += 1;
        if units.len() < QUERY_TERMS {
            units.push(unit);
            for w in lower {
                if !words.contains(&w) {
                    words.push(w);
                }
            }
        }
    }
    if units.is_empty() {
        return Err(if stopped.is_empty() {
            QueryError::Empty
        } else {
            QueryError::OnlyStopWords {
                words: stopped.join(" "),
            }
        });
    }
    let mut expr = units
        .iter()
        .map(Unit::render)
        .collect::<Vec<_>>()
        .join(" OR ");
    if units.len() > 1 {
        let near: Vec<String> = units.iter().map(Unit::near).collect();
        expr.push_str(&format!(
            " OR NEAR({}, {})",
            near.join(" "),
            (2 * units.len()).max(10)
        ));
    }
    Ok(Query {
        expr,
        words,
        syntax: false,
        dropped: distinct - units.len().min(distinct),
        stopped,
    })
}

/// Whether `chars[i]` ends a bare word in FTS5 syntax (a colon does, but
/// not the one of a URL's `://`).
fn ends_bareword(chars: &[char], i: usize) -> bool {
    match chars[i] {
        ':' => chars.get(i + 1) != Some(&'/'),
        c => c.is_whitespace() || matches!(c, '"' | '(' | ')' | '^' | ',' | '+' | '{' | '}'),
    }
}

/// The next character of `chars` from `i` on that is not white space.
fn next_visible(chars: &[char], i: usize) -> Option<char> {
    chars[i.min(chars.len())..]
        .iter()
        .copied()
        .find(|c| !c.is_whitespace())
}

fn syntax(text: &str) -> Result<Query, QueryError> {
    let chars: Vec<char> = text.chars().collect();
    let mut out: Vec<String> = Vec::new();
    let mut words: Vec<String> = Vec::new();
    let mut phrases = 0usize;
    let mut open: Vec<usize> = Vec::new();
    // Inside `NEAR(`: its distance after the comma is a number, not a word.
    let mut near_depth: Option<usize> = None;
    let mut i = 0;
    let mut norm = Normaliser::new();
    let add_words = |words: &mut Vec<String>, ws: Vec<String>| {
        for w in ws {
            if !words.contains(&w) {
                words.push(w);
            }
        }
    };
    while i < chars.len() {
        let c = chars[i];
        match c {
            c if c.is_whitespace() => i += 1,
            '"' => {
                let start = i;
                let mut s = String::new();
                i += 1;
                loop {
                    match chars.get(i) {
                        None => return Err(QueryError::UnclosedQuote { at: start + 1 }),
                        Some('"') if chars.get(i + 1) == Some(&'"') => {
                            s.push('"');
                            i += 2;
                        }
                        Some('"') => {
                            i += 1;
                            break;
                        }
                        Some(&c) => {
                            s.push(c);
                            i += 1;
                        }
                    }
                }
                let prefix = chars.get(i) == Some(&'*');
                let mut token = if prefix {
                    // A prefix is of the words as typed, not of their stems.
                    let last = runs(&s).pop().unwrap_or_default();
                    if last.chars().count() < 2 {
                        return Err(QueryError::ShortPrefix {
                            term: format!("{s}*"),
                        });
                    }
                    i += 1;
                    quoted(&runs(&s).join(" "))
                } else {
                    phrase_of(&mut norm, &s)?
                };
                if prefix {
                    token.push('*');
                }
                add_words(&mut words, runs(&s));
                phrases += 1;
                out.push(token);
            }
            '(' => {
                open.push(i);
                out.push("(".into());
                i += 1;
            }
            ')' => {
                if open.pop().is_none() {
                    return Err(QueryError::StrayParen { at: i + 1 });
                }
                if near_depth == Some(open.len()) {
                    near_depth = None;
                }
                out.push(")".into());
                i += 1;
            }
            '{' => {
                let start = i;
                let Some(len) = chars[i..].iter().position(|&c| c == '}') else {
                    return Err(QueryError::Syntax {
                        detail: format!(
                            "the column list at character {} is never closed with }}",
                            start + 1
                        ),
                    });
                };
                let list: String = chars[i + 1..i + len].iter().collect();
                for name in list.split_whitespace() {
                    if Column::parse(name).is_none() {
                        return Err(QueryError::UnknownColumn { name: name.into() });
                    }
                }
                out.push(format!("{{{list}}}"));
                i += len + 1;
            }
            '^' | ',' | '+' | ':' => {
                out.push(c.to_string());
                i += 1;
            }
            '}' => {
                return Err(QueryError::Syntax {
                    detail: format!("a }} at character {} closes no column list", i + 1),
                });
            }
            _ => {
                let start = i;
                while i < chars.len() && !ends_bareword(&chars, i) {
                    i += 1;
                }
                let word: String = chars[start..i].iter().collect();
                match word.as_str() {
                    "AND" | "OR" | "NOT" => out.push(word),
                    "NEAR" if chars.get(i) == Some(&'(') => {
                        near_depth = Some(open.len());
                        out.push(word);
                    }
                    w if near_depth.is_some()
                        && out.last().is_some_and(|l| l == ",")
                        && w.chars().all(|c| c.is_ascii_digit()) =>
                    {
                        out.push(word);
                    }
                    w if next_visible(&chars, i) == Some(':') && Column::parse(w).is_some() => {
                        out.push(word);
                    }
                    w if chars.get(i) == Some(&':') && runs(w).len() == 1 && !w.ends_with('*') => {
                        // `foo:` names no column: the colon is punctuation.
                        return Err(QueryError::UnknownColumn { name: w.into() });
                    }
                    w => {
                        let prefix = w.ends_with('*');
                        let body = w.trim_end_matches('*');
                        let rs = runs(body);
                        if rs.is_empty() {
                            if prefix {
                                return Err(QueryError::ShortPrefix { term: w.into() });
                            }
                            continue;
                        }
                        if prefix && rs.last().is_some_and(|l| l.chars().count() < 2) {
                            return Err(QueryError::ShortPrefix { term: w.into() });
                        }
                        let mut token = if prefix {
                            quoted(&rs.join(" "))
                        } else {
                            phrase_of(&mut norm, body)?
                        };
                        if prefix {
                            token.push('*');
                        }
                        add_words(&mut words, rs);
                        phrases += 1;
                        out.push(token);
                    }
                }
            }
        }
    }
    if let Some(&at) = open.last() {
        return Err(QueryError::UnclosedParen { at: at + 1 });
    }
    if phrases > SYNTAX_PHRASES {
        return Err(QueryError::TooManyPhrases { phrases });
    }
    if phrases == 0 {
        return Err(QueryError::Empty);
    }
    let mut expr = String::new();
    for t in &out {
        // Glue what FTS5 reads as one piece: `NEAR(`, `^"a"`, `col:`.
        let glue = matches!(expr.chars().last(), Some('(' | '^' | ':' | '{'))
            || matches!(t.as_str(), ")" | "," | ":")
            || (t == "(" && expr.ends_with("NEAR"));
        if !expr.is_empty() && !glue {
            expr.push(' ');
        }
        expr.push_str(t);
    }
    Ok(Query {
        expr,
        words,
        syntax: true,
        dropped: 0,
        stopped: Vec::new(),
    })
}

/// What FTS5 said of a query it could not read, as a [`QueryError`]; `None`
/// when the message is no query error.
pub fn fts5_error(message: &str) -> Option<QueryError> {
    let m = message.trim();
    if let Some(name) = m.strip_prefix("no such column: ") {
        return Some(QueryError::UnknownColumn { name: name.into() });
    }
    let detail = m.strip_prefix("fts5: ").unwrap_or(m);
    let is_query = m.starts_with("fts5: ")
        || m.starts_with("fts5 ")
        || m.contains("syntax error")
        || m.contains("unterminated string");
    is_query.then(|| QueryError::Syntax {
        detail: detail.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_words_are_matched_by_any_of_them_and_near_each_other() {
        let q = parse("git push failed: no upstream branch").unwrap();
        assert!(!q.syntax);
        assert_eq!(
            q.expr,
            r#""git" OR "push" OR "fail" OR "no" OR "upstream" OR "branch" OR NEAR("git" "push" "fail" "no" "upstream" "branch", 12)"#
        );
        let q = parse("How did we fix the LiveView sandbox error?").unwrap();
        assert_eq!(q.stopped, ["how", "did", "we", "the"]);
        assert!(
            q.expr
                .starts_with(r#""fix" OR ("liveview" OR "live view") OR "sandbox" OR "error""#),
            "{}",
            q.expr
        );
        assert_eq!(q.words, ["fix", "liveview", "sandbox", "error"]);
        // Word forms: the index's stems.
        assert_eq!(parse("migrations").unwrap().expr, r#""migrat""#);
        // A word holding punctuation is the phrase of its words.
        let q = parse("tenant_registry src/store/raw.rs").unwrap();
        assert!(
            q.expr
                .starts_with(r#""tenant registri" OR "src store raw rs""#),
            "{}",
            q.expr
        );
        // Only stop words: they are not indexed, and the query says so.
        assert_eq!(
            parse("the Of"),
            Err(QueryError::OnlyStopWords {
                words: "the of".into()
            })
        );
        assert_eq!(parse(" ?! "), Err(QueryError::Empty));
        assert_eq!(parse(""), Err(QueryError::Empty));
    }

    #[test]
    fn a_query_is_bounded() {
        let long = "word ".repeat(300);
        assert!(matches!(
            parse(&long),
            Err(QueryError::TooLong { chars: 1500 })
        ));
        let many: String = (0..40).map(|i| format!("w{i} ")).collect();
        let q = parse(&many).unwrap();
        assert_eq!(q.dropped, 40 - QUERY_TERMS);
        assert_eq!(q.expr.matches(" OR ").count(), QUERY_TERMS);
        // Repeated words count once.
        let q = parse("a b a b c c").unwrap();
        assert_eq!(q.dropped, 0);
    }

    #[test]
    fn fts5_syntax_is_passed_on_with_bare_punctuation_quoted() {
        let q = parse(r#""no upstream branches" NEAR(git push, 5) Migrati*"#).unwrap();
        assert!(q.syntax);
        assert_eq!(
            q.expr,
            r#""no upstream branch" NEAR("git" "push", 5) "migrati"*"#
        );
        let q = parse("raw.rs AND (tool : cargo OR error:panic)").unwrap();
        assert_eq!(q.expr, r#""raw rs" AND (tool:"cargo" OR error:"panic")"#);
        assert_eq!(q.words, ["raw", "rs", "cargo", "panic"]);
        let q = parse("{ask answer} : tenant NOT ^\"loader\" http://x.org/b").unwrap();
        assert_eq!(
            q.expr,
            r#"{ask answer}:"tenant" NOT ^"loader" "http x org b""#
        );
        // A phrase is matched without its stop words, as they were indexed.
        let q = parse(r#""out of the memory" AND x"#).unwrap();
        assert_eq!(q.expr, r#""memori" AND "x""#);
        // Parentheses alone are punctuation of plain words.
        assert!(!parse("error: no such file (os error 2)").unwrap().syntax);
    }

    #[test]
    fn a_malformed_query_names_its_fault() {
        assert_eq!(
            parse(r#""no upstream"#),
            Err(QueryError::UnclosedQuote { at: 1 })
        );
        assert_eq!(parse("(x OR y"), Err(QueryError::UnclosedParen { at: 1 }));
        assert_eq!(parse("x OR y)"), Err(QueryError::StrayParen { at: 7 }));
        // A phrase of stop words only would match nothing: it is refused.
        assert_eq!(
            parse(r#""of the" OR x"#),
            Err(QueryError::OnlyStopWords {
                words: "of the".into()
            })
        );
        assert!(matches!(parse("a*"), Err(QueryError::ShortPrefix { .. })));
        assert!(matches!(
            parse("x* OR y"),
            Err(QueryError::ShortPrefix { .. })
        ));
        assert_eq!(
            parse("nosuch:word AND x"),
            Err(QueryError::UnknownColumn {
                name: "nosuch".into()
            })
        );
        assert_eq!(
            parse("{ask bogus}: x"),
            Err(QueryError::UnknownColumn {
                name: "bogus".into()
            })
        );
        let many: String = (0..60).map(|i| format!("\"w{i}\" ")).collect();
        assert!(matches!(
            parse(&many),
            Err(QueryError::TooManyPhrases { phrases: 60 })
        ));
        assert_eq!(
            fts5_error("fts5: syntax error near \"AND\""),
            Some(QueryError::Syntax {
                detail: "syntax error near \"AND\"".into()
            })
        );
        assert_eq!(fts5_error("database is locked"), None);
    }
}
