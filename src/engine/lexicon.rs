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

/// Markers of a reason given (`because`, `so that`, `instead of`): a
/// decision that carries one keeps its why. Read the same way by the
/// extractive summarizer and by `probe`'s `reason` probes.
pub(crate) const REASON_MARKERS: &[&[&str]] = &[
    &["because"],
    &["so", "that"],
    &["in", "order", "to"],
    &["to", "avoid"],
    &["to", "prevent"],
    &["instead", "of"],
    &["rather", "than"],
    &["due", "to"],
    &["since"],
    &["which", "means"],
    &["otherwise"],
    &["root", "cause"],
    &["caused", "by"],
];

/// Words that open a sentence without saying anything (`Now`, `OK, so`).
const DISCOURSE_WORDS: [&str; 14] = [
    "now", "ok", "okay", "so", "good", "great", "perfect", "alright", "first", "then", "also",
    "and", "but", "finally",
];

/// Openings of a sentence that narrates what the agent is about to do.
const INTENT_OPENINGS: &[&[&str]] = &[
    &["let", "me"],
    &["let's"],
    &["lets"],
    &["i'll"],
    &["i", "will"],
    &["i'm", "going", "to"],
    &["i", "am", "going", "to"],
    &["i", "need", "to"],
    &["i", "should"],
    &["i", "want", "to"],
    &["we", "need", "to"],
    &["we'll"],
    &["we", "will"],
    &["next"],
    &["time", "to"],
];

/// Verbs that, right after `Now`, make the sentence an instruction to
/// oneself (`Now file the bead`), not a fact (`Now the tests pass`).
const IMPERATIVE_VERBS: [&str; 40] = [
    "add",
    "apply",
    "build",
    "change",
    "check",
    "clean",
    "close",
    "commit",
    "continue",
    "create",
    "debug",
    "delete",
    "do",
    "edit",
    "examine",
    "file",
    "find",
    "fix",
    "go",
    "implement",
    "install",
    "investigate",
    "look",
    "make",
    "mark",
    "move",
    "open",
    "push",
    "read",
    "remove",
    "rename",
    "replace",
    "review",
    "run",
    "search",
    "see",
    "test",
    "try",
    "update",
    "verify",
];

/// Whether a sentence narrates intent ("Now let me…", "Let me…", "I'll…",
/// "Next…", "Now file the bead…") rather than stating a fact.
pub(crate) fn narrates_intent(sentence: &str) -> bool {
    let ws = words(sentence);
    let opened_by_now = ws.first().is_some_and(|w| w.text == "now");
    let skip = ws
        .iter()
        .take_while(|w| DISCOURSE_WORDS.contains(&w.text.as_str()))
        .count();
    let rest = &ws[skip..];
    let opens = INTENT_OPENINGS
        .iter()
        .any(|m| m.len() <= rest.len() && m.iter().zip(rest).all(|(a, w)| *a == w.text));
    let instruction = opened_by_now
        && rest
            .first()
            .is_some_and(|w| IMPERATIVE_VERBS.contains(&w.text.as_str()));
    opens || instruction
}

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

#[cfg(test)]
mod tests {
    use super::narrates_intent;

    #[test]
    fn narration_is_told_from_a_fact() {
        for narration in [
            "Now let me also file a bead for the discovered bug.",
            "Let me check.",
            "I'll run the tests because they failed.",
            "OK, so I need to fix the import.",
            "Next, the CLI flag.",
            "Now file the refinement bead for the bug I discovered, then close it.",
        ] {
            assert!(narrates_intent(narration), "{narration}");
        }
        for fact in [
            "The issue is clear: the sandbox is not shared.",
            "Now the tests pass because the config is set.",
            "`load_session_messages` drops `agent_id` because the map omits it.",
            "Letters are escaped.",
        ] {
            assert!(!narrates_intent(fact), "{fact}");
        }
    }
}
