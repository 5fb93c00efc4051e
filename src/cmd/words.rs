//! Counts in words: `1 call`, `2 calls`, `3 misses`.

/// `1 part`, `2 parts`, `3 misses`, `0 entries`.
pub fn plural(n: impl Count, noun: &str) -> String {
    let n = n.count();
    format!("{n} {}", noun_for(n, noun))
}

/// A count of things, whatever integer type holds it.
pub trait Count: Copy {
    fn count(self) -> u64;
}

macro_rules! count_of {
    ($($t:ty),*) => {$(
        impl Count for $t {
            fn count(self) -> u64 {
                self as u64
            }
        }
    )*};
}
count_of!(u8, u16, u32, u64, usize);

/// `noun` as it goes after the count `n`: `call`, `calls`, `misses`,
/// `summaries` (the last word of a phrase is the one inflected).
pub fn noun_for(n: impl Count, noun: &str) -> String {
    if n.count() == 1 {
        return noun.to_string();
    }
    let consonant_y = noun.len() >= 2
        && noun.ends_with('y')
        && !noun[..noun.len() - 1].ends_with(['a', 'e', 'i', 'o', 'u']);
    if consonant_y {
        format!("{}ies", &noun[..noun.len() - 1])
    } else if noun.ends_with(['s', 'x']) || noun.ends_with("ch") || noun.ends_with("sh") {
        format!("{noun}es")
    } else {
        format!("{noun}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_take_the_singular_only_at_one() {
        assert_eq!(plural(1u64, "line"), "1 line");
        assert_eq!(plural(0u64, "line"), "0 lines");
        assert_eq!(plural(2u64, "turn"), "2 turns");
        assert_eq!(plural(3u64, "miss"), "3 misses");
        assert_eq!(plural(2u64, "entry"), "2 entries");
        assert_eq!(plural(1u64, "summary"), "1 summary");
        assert_eq!(plural(2u64, "day"), "2 days");
        assert_eq!(plural(2u64, "model call"), "2 model calls");
        assert_eq!(noun_for(1u32, "call"), "call");
        assert_eq!(noun_for(7u32, "call"), "calls");
    }
}
