//! Porter's stemmer (M. F. Porter, "An algorithm for suffix stripping",
//! 1980), as FTS5's `porter` tokenizer applies it: `migrations` and
//! `migration` are both `migrat`. Over lower-case ASCII letters only; any
//! other word is its own stem. Pure.

/// The stem of `word` (lower-case ASCII letters), written to `out`.
pub fn stem(word: &[u8], out: &mut Vec<u8>) {
    stem_with(word, out, [step2, step3, step4]);
}

/// Porter's steps over `word`, steps 2 to 4 being `middle` (the tests
/// check the dispatched steps against the rules tried in turn).
#[inline]
fn stem_with(word: &[u8], out: &mut Vec<u8>, middle: [fn(&mut Vec<u8>); 3]) {
    out.clear();
    out.extend_from_slice(word);
    if word.len() <= 2 || !word.iter().all(u8::is_ascii_lowercase) {
        return;
    }
    step1a(out);
    step1b(out);
    step1c(out);
    for step in middle {
        step(out);
    }
    step5(out);
}

/// Whether `w[i]` is a consonant.
fn consonant(w: &[u8], i: usize) -> bool {
    match w[i] {
        b'a' | b'e' | b'i' | b'o' | b'u' => false,
        b'y' => i == 0 || !consonant(w, i - 1),
        _ => true,
    }
}

/// The measure of `w`: the number of VC sequences in `[C](VC)^m[V]`.
fn measure(w: &[u8]) -> usize {
    let mut m = 0;
    let mut i = 0;
    while i < w.len() && consonant(w, i) {
        i += 1;
    }
    while i < w.len() {
        while i < w.len() && !consonant(w, i) {
            i += 1;
        }
        if i == w.len() {
            break;
        }
        while i < w.len() && consonant(w, i) {
            i += 1;
        }
        m += 1;
    }
    m
}

fn has_vowel(w: &[u8]) -> bool {
    (0..w.len()).any(|i| !consonant(w, i))
}

/// `*d`: ends in a double consonant.
fn double_consonant(w: &[u8]) -> bool {
    let n = w.len();
    n >= 2 && w[n - 1] == w[n - 2] && consonant(w, n - 1)
}

/// `*o`: ends consonant-vowel-consonant, the last not w, x or y.
fn cvc(w: &[u8]) -> bool {
    let n = w.len();
    n >= 3
        && consonant(w, n - 3)
        && !consonant(w, n - 2)
        && consonant(w, n - 1)
        && !matches!(w[n - 1], b'w' | b'x' | b'y')
}

/// When `w` ends in `suffix` and its stem before it passes `cond`, replace
/// the suffix by `with`: whether it ended in `suffix` at all.
fn replace(w: &mut Vec<u8>, suffix: &[u8], with: &[u8], cond: impl Fn(&[u8]) -> bool) -> bool {
    if !w.ends_with(suffix) {
        return false;
    }
    let stem = w.len() - suffix.len();
    if cond(&w[..stem]) {
        w.truncate(stem);
        w.extend_from_slice(with);
    }
    true
}

fn step1a(w: &mut Vec<u8>) {
    if w.ends_with(b"sses") || w.ends_with(b"ies") {
        w.truncate(w.len() - 2);
    } else if w.ends_with(b"ss") {
    } else if w.ends_with(b"s") {
        w.pop();
    }
}

fn step1b(w: &mut Vec<u8>) {
    if w.ends_with(b"eed") {
        if measure(&w[..w.len() - 3]) > 0 {
            w.pop();
        }
        return;
    }
    let cut = if w.ends_with(b"ed") && has_vowel(&w[..w.len() - 2]) {
        2
    } else if w.ends_with(b"ing") && has_vowel(&w[..w.len() - 3]) {
        3
    } else {
        return;
    };
    w.truncate(w.len() - cut);
    if w.ends_with(b"at") || w.ends_with(b"bl") || w.ends_with(b"iz") {
        w.push(b'e');
    } else if double_consonant(w) && !matches!(w[w.len() - 1], b'l' | b's' | b'z') {
        w.pop();
    } else if measure(w) == 1 && cvc(w) {
        w.push(b'e');
    }
}

fn step1c(w: &mut [u8]) {
    let n = w.len();
    if w.ends_with(b"y") && has_vowel(&w[..n - 1]) {
        w[n - 1] = b'i';
    }
}

/// Step 2: the rules whose suffix ends in the word's second-last letter
/// (no two rules' suffixes end alike otherwise), in Porter's order; the
/// first suffix the word ends in decides.
fn step2(w: &mut Vec<u8>) {
    type Rules = &'static [(&'static [u8], &'static [u8])];
    let Some(&c) = w.len().checked_sub(2).and_then(|i| w.get(i)) else {
        return;
    };
    let rules: Rules = match c {
        b'a' => &[(b"ational", b"ate"), (b"tional", b"tion")],
        b'c' => &[(b"enci", b"ence"), (b"anci", b"ance")],
        b'e' => &[(b"izer", b"ize")],
        b'l' => &[
            (b"abli", b"able"),
            (b"alli", b"al"),
            (b"entli", b"ent"),
            (b"eli", b"e"),
            (b"ousli", b"ous"),
        ],
        b'o' => &[(b"ization", b"ize"), (b"ation", b"ate"), (b"ator", b"ate")],
        b's' => &[
            (b"alism", b"al"),
            (b"iveness", b"ive"),
            (b"fulness", b"ful"),
            (b"ousness", b"ous"),
        ],
        b't' => &[(b"aliti", b"al"), (b"iviti", b"ive"), (b"biliti", b"ble")],
        _ => return,
    };
    for (suffix, with) in rules {
        if replace(w, suffix, with, |s| measure(s) > 0) {
            return;
        }
    }
}

/// Step 3: the rules whose suffix ends in the word's last letter, in
/// Porter's order.
fn step3(w: &mut Vec<u8>) {
    type Rules = &'static [(&'static [u8], &'static [u8])];
    let Some(&c) = w.last() else {
        return;
    };
    let rules: Rules = match c {
        b'e' => &[(b"icate", b"ic"), (b"ative", b""), (b"alize", b"al")],
        b'i' => &[(b"iciti", b"ic")],
        b'l' => &[(b"ical", b"ic"), (b"ful", b"")],
        b's' => &[(b"ness", b"")],
        _ => return,
    };
    for (suffix, with) in rules {
        if replace(w, suffix, with, |s| measure(s) > 0) {
            return;
        }
    }
}

/// Step 4: of the suffixes whose second-last letter is the word's, the
/// longest the word ends in decides (`ement` before `ment` before `ent`):
/// each list is longest first.
fn step4(w: &mut Vec<u8>) {
    let Some(&c) = w.len().checked_sub(2).and_then(|i| w.get(i)) else {
        return;
    };
    let suffixes: &[&[u8]] = match c {
        b'a' => &[b"al"],
        b'c' => &[b"ance", b"ence"],
        b'e' => &[b"er"],
        b'i' => &[b"ic"],
        b'l' => &[b"able", b"ible"],
        b'n' => &[b"ement", b"ment", b"ant", b"ent"],
        b'o' => &[b"ion", b"ou"],
        b's' => &[b"ism"],
        b't' => &[b"ate", b"iti"],
        b'u' => &[b"ous"],
        b'v' => &[b"ive"],
        b'z' => &[b"ize"],
        _ => return,
    };
    let Some(suffix) = suffixes.iter().find(|s| w.ends_with(s)) else {
        return;
    };
    let stem = &w[..w.len() - suffix.len()];
    let ok = measure(stem) > 1
        && (*suffix != b"ion" || stem.last().is_some_and(|c| matches!(c, b's' | b't')));
    if ok {
        w.truncate(w.len() - suffix.len());
    }
}

fn step5(w: &mut Vec<u8>) {
    if w.ends_with(b"e") {
        let stem = &w[..w.len() - 1];
        let m = measure(stem);
        if m > 1 || (m == 1 && !cvc(stem)) {
            w.pop();
        }
    }
    if w.ends_with(b"ll") && measure(w) > 1 {
        w.pop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(w: &str) -> String {
        let mut out = Vec::new();
        stem(w.as_bytes(), &mut out);
        String::from_utf8(out).unwrap()
    }

    /// Steps 2 to 4 as they were first written, each rule tried in turn:
    /// the reference the steps' dispatch on a letter is checked against.
    mod plain {
        use super::super::{measure, replace};

        /// The first rule whose suffix the word ends with and whose stem
        /// has a measure above 0 applies.
        fn first_rule(w: &mut Vec<u8>, rules: &[(&[u8], &[u8])]) {
            for (suffix, with) in rules {
                if replace(w, suffix, with, |s| measure(s) > 0) {
                    return;
                }
            }
        }

        fn step2(w: &mut Vec<u8>) {
            const RULES: &[(&[u8], &[u8])] = &[
                (b"ational", b"ate"),
                (b"tional", b"tion"),
                (b"enci", b"ence"),
                (b"anci", b"ance"),
                (b"izer", b"ize"),
                (b"abli", b"able"),
                (b"alli", b"al"),
                (b"entli", b"ent"),
                (b"eli", b"e"),
                (b"ousli", b"ous"),
                (b"ization", b"ize"),
                (b"ation", b"ate"),
                (b"ator", b"ate"),
                (b"alism", b"al"),
                (b"iveness", b"ive"),
                (b"fulness", b"ful"),
                (b"ousness", b"ous"),
                (b"aliti", b"al"),
                (b"iviti", b"ive"),
                (b"biliti", b"ble"),
            ];
            first_rule(w, RULES);
        }

        fn step3(w: &mut Vec<u8>) {
            const RULES: &[(&[u8], &[u8])] = &[
                (b"icate", b"ic"),
                (b"ative", b""),
                (b"alize", b"al"),
                (b"iciti", b"ic"),
                (b"ical", b"ic"),
                (b"ful", b""),
                (b"ness", b""),
            ];
            first_rule(w, RULES);
        }

        fn step4(w: &mut Vec<u8>) {
            const SUFFIXES: &[&[u8]] = &[
                b"al", b"ance", b"ence", b"er", b"ic", b"able", b"ible", b"ant", b"ement", b"ment",
                b"ent", b"ion", b"ou", b"ism", b"ate", b"iti", b"ous", b"ive", b"ize",
            ];
            // The longest suffix that matches decides (`ement` before `ment`
            // before `ent`).
            let Some(suffix) = SUFFIXES
                .iter()
                .filter(|s| w.ends_with(s))
                .max_by_key(|s| s.len())
            else {
                return;
            };
            let stem = &w[..w.len() - suffix.len()];
            let ok = measure(stem) > 1
                && (*suffix != b"ion" || stem.last().is_some_and(|c| matches!(c, b's' | b't')));
            if ok {
                w.truncate(w.len() - suffix.len());
            }
        }

        /// [`super::super::stem`] with these steps.
        pub fn stem(word: &[u8], out: &mut Vec<u8>) {
            super::super::stem_with(word, out, [step2, step3, step4]);
        }
    }

    const SUFFIXES: &[&str] = &[
        "ational", "tional", "enci", "anci", "izer", "abli", "alli", "entli", "eli", "ousli",
        "ization", "ation", "ator", "alism", "iveness", "fulness", "ousness", "aliti", "iviti",
        "biliti", "icate", "ative", "alize", "iciti", "ical", "ful", "ness", "al", "ance", "ence",
        "er", "ic", "able", "ible", "ant", "ement", "ment", "ent", "ion", "sion", "tion", "ou",
        "ism", "ate", "iti", "ous", "ive", "ize", "sses", "ies", "ss", "s", "eed", "ed", "ing",
        "y", "e", "ll", "at", "bl", "iz", "",
    ];

    fn both(w: &str) -> (String, String) {
        let mut fast = Vec::new();
        stem(w.as_bytes(), &mut fast);
        let mut slow = Vec::new();
        plain::stem(w.as_bytes(), &mut slow);
        (
            String::from_utf8(fast).unwrap(),
            String::from_utf8(slow).unwrap(),
        )
    }

    /// Every word of up to four letters, and every short stem before every
    /// suffix of the rules, stemmed as the rules tried in turn stem it.
    #[test]
    fn the_steps_dispatched_on_a_letter_stem_as_the_rules_tried_in_turn() {
        let letters = b'a'..=b'z';
        let mut words: Vec<String> = Vec::new();
        for a in letters.clone() {
            for b in letters.clone() {
                for c in letters.clone() {
                    words.push(String::from_utf8(vec![a, b, c]).unwrap());
                    for d in letters.clone() {
                        words.push(String::from_utf8(vec![a, b, c, d]).unwrap());
                    }
                }
            }
        }
        for stem in [
            "", "r", "ab", "tr", "conv", "hop", "sens", "oper", "valen", "formal",
        ] {
            for s1 in SUFFIXES {
                for s2 in SUFFIXES {
                    words.push(format!("{stem}{s1}{s2}"));
                }
            }
        }
        for w in &words {
            let (fast, slow) = both(w);
            assert_eq!(fast, slow, "{w}");
        }
    }

    proptest::proptest! {
        #[test]
        fn any_word_is_stemmed_as_the_rules_tried_in_turn_stem_it(
            head in "[a-z]{0,9}",
            s1 in proptest::sample::select(SUFFIXES),
            s2 in proptest::sample::select(SUFFIXES),
        ) {
            let w = format!("{head}{s1}{s2}");
            let (fast, slow) = both(&w);
            proptest::prop_assert_eq!(fast, slow);
        }
    }

    /// Porter's own examples, and the word forms a search must join.
    #[test]
    fn words_are_stemmed_as_porter_says() {
        for (w, want) in [
            ("caresses", "caress"),
            ("ponies", "poni"),
            ("cats", "cat"),
            ("feed", "feed"),
            ("agreed", "agre"),
            ("plastered", "plaster"),
            ("motoring", "motor"),
            ("sing", "sing"),
            ("conflated", "conflat"),
            ("troubled", "troubl"),
            ("sized", "size"),
            ("hopping", "hop"),
            ("falling", "fall"),
            ("filing", "file"),
            ("happy", "happi"),
            ("relational", "relat"),
            ("conditional", "condit"),
            ("valenci", "valenc"),
            ("digitizer", "digit"),
            ("vietnamization", "vietnam"),
            ("predication", "predic"),
            ("operator", "oper"),
            ("hopefulness", "hope"),
            ("formaliti", "formal"),
            ("sensibiliti", "sensibl"),
            ("triplicate", "triplic"),
            ("formative", "form"),
            ("electrical", "electr"),
            ("goodness", "good"),
            ("revival", "reviv"),
            ("allowance", "allow"),
            ("inference", "infer"),
            ("airliner", "airlin"),
            ("adjustable", "adjust"),
            ("replacement", "replac"),
            ("adjustment", "adjust"),
            ("dependent", "depend"),
            ("adoption", "adopt"),
            ("communism", "commun"),
            ("activate", "activ"),
            ("effective", "effect"),
            ("probate", "probat"),
            ("rate", "rate"),
            ("controll", "control"),
            ("roll", "roll"),
            ("migrations", "migrat"),
            ("migration", "migrat"),
            ("registry", "registri"),
            ("tenant", "tenant"),
            ("renderer", "render"),
            ("failed", "fail"),
            ("failing", "fail"),
        ] {
            assert_eq!(s(w), want, "{w}");
        }
        // Not lower-case ASCII letters: kept as they are.
        assert_eq!(s("utf8"), "utf8");
        assert_eq!(s("café"), "café");
        assert_eq!(s("is"), "is");
    }
}
