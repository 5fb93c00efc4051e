//! Porter's stemmer (M. F. Porter, "An algorithm for suffix stripping",
//! 1980), as FTS5's `porter` tokenizer applies it: `migrations` and
//! `migration` are both `migrat`. Over lower-case ASCII letters only; any
//! other word is its own stem. Pure.

/// The stem of `word` (lower-case ASCII letters), written to `out`.
pub fn stem(word: &[u8], out: &mut Vec<u8>) {
    out.clear();
    out.extend_from_slice(word);
    if word.len() <= 2 || !word.iter().all(u8::is_ascii_lowercase) {
        return;
    }
    step1a(out);
    step1b(out);
    step1c(out);
    step2(out);
    step3(out);
    step4(out);
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
    for (suffix, with) in RULES {
        if replace(w, suffix, with, |s| measure(s) > 0) {
            return;
        }
    }
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
    for (suffix, with) in RULES {
        if replace(w, suffix, with, |s| measure(s) > 0) {
            return;
        }
    }
}

fn step4(w: &mut Vec<u8>) {
    const SUFFIXES: &[&[u8]] = &[
        b"al", b"ance", b"ence", b"er", b"ic", b"able", b"ible", b"ant", b"ement", b"ment", b"ent",
        b"ion", b"ou", b"ism", b"ate", b"iti", b"ous", b"ive", b"ize",
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
