//! Words and marker phrases: what makes a user's sentence a rule and an
//! assistant's a decision. Shared by the extractive summarizer and `probe`,
//! so both read a rule the same way.

/// Markers of a user rule. Matched as whole-word sequences.
pub(crate) const RULE_MARKERS: &[&[&str]] = &[
    &["do", "not"],
    &["don't"],
    &["dont"],
    &["never"],
    &["must"],
    &["mustn't"],
    &["should", "not"],
    &["shouldn't"],
    &["cannot"],
    &["can't"],
    &["avoid"],
    &["without"],
    &["only"],
    &["always"],
    &["make", "sure"],
    &["ensure"],
    &["careful"],
    &["not", "allowed"],
    &["forbidden"],
    &["prohibited"],
    &["under", "no", "circumstances"],
    &["refrain"],
    &["secret"],
    &["secrets"],
    &["password"],
    &["passwords"],
    &["credential"],
    &["credentials"],
    &["api", "key"],
    &["api", "keys"],
    &["private"],
    &["confidential"],
    &["pii"],
    // Rules phrased without a prohibition word.
    &["keep"],
    &["leave"],
    &["alone"],
    &["untouched"],
    &["unchanged"],
    &["off", "limits"],
    &["hands", "off"],
    &["stick", "to"],
    &["out", "of", "scope"],
    &["instead"],
    &["stop"],
    &["prefer"],
    &["skip"],
];

/// Markers of a choice made; a sentence with one is a decision.
pub(crate) const DECISION_MARKERS: &[&[&str]] = &[
    &["i'll", "use"],
    &["i", "will", "use"],
    &["i'm", "going", "to", "use"],
    &["let's", "use"],
    &["let's", "go", "with"],
    &["i'll", "go", "with"],
    &["going", "with"],
    &["decided"],
    &["decide", "to"],
    &["chose"],
    &["opted"],
    &["instead", "of"],
    &["rather", "than"],
    &["switching", "to"],
    &["switch", "to"],
    &["the", "approach"],
    &["we'll"],
    &["we", "will"],
];

/// A lowercase word and where it starts in the source (bytes).
pub(crate) struct Word {
    pub start: usize,
    pub text: String,
}

/// Words: runs of letters and digits, with inner apostrophes (’ read as ').
pub(crate) fn words(s: &str) -> Vec<Word> {
    let mut out = Vec::new();
    let mut current: Option<Word> = None;
    for (i, c) in s.char_indices() {
        let c = if c == '\u{2019}' { '\'' } else { c };
        if c.is_alphanumeric() || (c == '\'' && current.is_some()) {
            current
                .get_or_insert_with(|| Word {
                    start: i,
                    text: String::new(),
                })
                .text
                .extend(c.to_lowercase());
        } else if let Some(w) = current.take() {
            out.push(w);
        }
    }
    out.extend(current);
    for w in &mut out {
        // A trailing apostrophe is a closing quote, not part of the word.
        while w.text.ends_with('\'') {
            w.text.pop();
        }
    }
    out
}

/// Where a user rule's marker starts (bytes), if the sentence carries one.
/// A sentence opening with "No" (`No DDL against X`) is a rule too.
pub(crate) fn rule_marker(sentence: &str) -> Option<usize> {
    let ws = words(sentence);
    match ws.first() {
        Some(w) if w.text == "no" => Some(w.start),
        _ => find_marker(&ws, RULE_MARKERS),
    }
}

/// Where the first marker starts (bytes).
pub(crate) fn find_marker(ws: &[Word], markers: &[&[&str]]) -> Option<usize> {
    (0..ws.len()).find_map(|i| {
        let hit = markers
            .iter()
            .any(|m| m.len() <= ws.len() - i && m.iter().zip(&ws[i..]).all(|(a, w)| *a == w.text));
        hit.then_some(ws[i].start)
    })
}
