//! Exact decimals for flags such as ratios and prices: parsed into integer
//! millionths, so no float ever reaches a budget, a view or a report.
//! [`Ratio`] and [`Micros`] are the two newtypes; both parse through
//! `parse_millionths` and serialise as their decimal text.

use std::fmt;
use std::str::FromStr;

use serde::{Serialize, Serializer};

/// Why a decimal was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DecimalError {
    /// Not digits with at most one point.
    NotDecimal,
    /// More than six decimals.
    TooPrecise,
    /// Too large for the integer it is held in.
    TooLarge,
}

/// `"3.75"` → 3_750_000; `".5"` → 500_000. No sign, no exponent.
pub(crate) fn parse_millionths(s: &str) -> Result<u64, DecimalError> {
    let (int, frac) = s.split_once('.').unwrap_or((s, ""));
    if (int.is_empty() && frac.is_empty())
        || !int.chars().all(|c| c.is_ascii_digit())
        || !frac.chars().all(|c| c.is_ascii_digit())
    {
        return Err(DecimalError::NotDecimal);
    }
    if frac.len() > 6 {
        return Err(DecimalError::TooPrecise);
    }
    let int: u64 = if int.is_empty() {
        0
    } else {
        int.parse().map_err(|_| DecimalError::TooLarge)?
    };
    let frac: u64 = format!("{frac:0<6}")
        .parse()
        .map_err(|_| DecimalError::NotDecimal)?;
    int.checked_mul(1_000_000)
        .and_then(|v| v.checked_add(frac))
        .ok_or(DecimalError::TooLarge)
}

/// Parse `s` into millionths, naming what was expected when it is refused.
fn parse_decimal(s: &str, digits: &str, what: &str) -> Result<u64, String> {
    parse_millionths(digits).map_err(|e| match e {
        DecimalError::TooPrecise => format!("{s:?} has more than six decimals"),
        _ => format!("{s:?} is not a {what}"),
    })
}

const MILLION: u64 = 1_000_000;

/// A ratio in (0, 1] with up to six decimals, held as parts per million.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Ratio(u32);

impl Ratio {
    pub const fn from_ppm(ppm: u32) -> Ratio {
        Ratio(ppm)
    }

    pub fn ppm(self) -> u32 {
        self.0
    }

    /// `floor(n × ratio)`.
    pub fn of(self, n: u64) -> u64 {
        (u128::from(n) * u128::from(self.0) / u128::from(MILLION)) as u64
    }
}

impl FromStr for Ratio {
    type Err = String;

    fn from_str(s: &str) -> Result<Ratio, String> {
        let what = "ratio; expected a decimal in (0, 1] such as 0.65";
        let ppm = parse_decimal(s, s.trim(), what)?;
        if ppm == 0 || ppm > MILLION {
            return Err(format!("{s:?} is outside (0, 1]"));
        }
        Ok(Ratio(ppm as u32))
    }
}

impl fmt::Display for Ratio {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let int = self.0 / MILLION as u32;
        let frac = self.0 % MILLION as u32;
        if frac == 0 {
            return write!(f, "{int}");
        }
        let digits = format!("{frac:06}");
        write!(f, "{int}.{}", digits.trim_end_matches('0'))
    }
}

/// A price or amount in micro-dollars, parsed from a decimal such as `3.75`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Micros(pub u64);

impl FromStr for Micros {
    type Err = String;

    fn from_str(s: &str) -> Result<Micros, String> {
        let what = "price; expected a decimal such as 3.75";
        parse_decimal(s, s.trim().trim_start_matches('$'), what).map(Micros)
    }
}

impl Micros {
    /// An amount for people: dollars to the cent from $1 up (half a cent
    /// rounds up), else four significant digits (`0.3239`, `0.001234`;
    /// fewer when a micro-dollar is the last one: `0.000012`). No `$`.
    /// Exact: integer arithmetic only.
    pub fn dollars(self) -> String {
        let m = self.0;
        if m < MILLION {
            let digits = |n: u64| n.checked_ilog10().map_or(1, |d| d + 1);
            let scale = 10u64.pow(digits(m).saturating_sub(4));
            let rounded = (m + scale / 2) / scale * scale;
            if rounded < MILLION {
                if rounded == 0 {
                    return "0.00".to_string();
                }
                // Decimals down to the fourth significant digit.
                let decimals = 6 - digits(rounded).saturating_sub(4) as usize;
                let frac = format!("{rounded:06}");
                return format!("0.{}", &frac[..decimals]);
            }
        }
        let cents = m / 10_000 + u64::from(m % 10_000 >= 5_000);
        format!("{}.{:02}", cents / 100, cents % 100)
    }

    /// A rate for people: the decimal with its trailing zeros dropped, at
    /// least to the cent (`3.00`, `0.125`, `6.25`).
    pub fn rate(self) -> String {
        let s = self.to_string();
        let trimmed = s.trim_end_matches('0');
        let dot = trimmed.find('.').expect("Display writes a point");
        if trimmed.len() - dot < 3 {
            s[..dot + 3].to_string()
        } else {
            trimmed.to_string()
        }
    }
}

impl fmt::Display for Micros {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{:06}", self.0 / MILLION, self.0 % MILLION)
    }
}

/// Both newtypes serialise as their decimal text.
macro_rules! serialize_as_text {
    ($($t:ty),*) => {$(
        impl Serialize for $t {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(&self.to_string())
            }
        }
    )*};
}
serialize_as_text!(Ratio, Micros);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_print_to_the_cent_or_four_significant_digits() {
        let d = |m: u64| Micros(m).dollars();
        assert_eq!(d(0), "0.00");
        assert_eq!(d(1), "0.000001");
        assert_eq!(d(12), "0.000012");
        assert_eq!(d(1_234), "0.001234");
        assert_eq!(d(12_345), "0.01235");
        assert_eq!(d(323_869), "0.3239");
        assert_eq!(d(100_000), "0.1000");
        assert_eq!(d(99_995), "0.1000");
        assert_eq!(d(999_949), "0.9999");
        // Rounds up to a dollar: printed as dollars.
        assert_eq!(d(999_950), "1.00");
        assert_eq!(d(1_000_000), "1.00");
        assert_eq!(d(1_004_999), "1.00");
        assert_eq!(d(1_005_000), "1.01");
        assert_eq!(d(1_990_089), "1.99");
        assert_eq!(d(1_234_567_890), "1234.57");
        assert_eq!(d(u64::MAX), "18446744073709.55");
    }

    proptest::proptest! {
        /// An amount printed for people is the nearest value of its shape:
        /// within half a unit of its last digit.
        #[test]
        fn amounts_print_as_the_nearest_cent_or_four_digits(m in 0u64..100_000_000_000) {
            let s = Micros(m).dollars();
            let (int, frac) = s.split_once('.').expect("a point");
            if int == "0" {
                let significant = frac.trim_start_matches('0').len();
                proptest::prop_assert!(significant == 4 || frac.len() == 6 || m == 0, "{s}");
            } else {
                proptest::prop_assert_eq!(frac.len(), 2, "{}", s);
            }
            let back = s.parse::<Micros>().expect("it parses back").0;
            let unit = 10u64.pow(6 - frac.len() as u32);
            proptest::prop_assert!(back.abs_diff(m) <= unit / 2, "{m} printed {s}");
        }
    }

    #[test]
    fn rates_print_exactly() {
        assert_eq!(Micros(3_000_000).rate(), "3.00");
        assert_eq!(Micros(125_000).rate(), "0.125");
        assert_eq!(Micros(6_250_000).rate(), "6.25");
        assert_eq!(Micros(75_000).rate(), "0.075");
        assert_eq!(Micros(1).rate(), "0.000001");
        assert_eq!(Micros(0).rate(), "0.00");
    }

    #[test]
    fn decimals_parse_exactly() {
        assert_eq!(parse_millionths("3.75"), Ok(3_750_000));
        assert_eq!(parse_millionths(".5"), Ok(500_000));
        assert_eq!(parse_millionths("2"), Ok(2_000_000));
        assert_eq!(parse_millionths("0.000001"), Ok(1));
        assert_eq!(parse_millionths("1.1234567"), Err(DecimalError::TooPrecise));
        for bad in ["", ".", "-1", "1e3", "1.2.3", " 1"] {
            assert_eq!(
                parse_millionths(bad),
                Err(DecimalError::NotDecimal),
                "{bad:?}"
            );
        }
        assert_eq!(
            parse_millionths("99999999999999999999"),
            Err(DecimalError::TooLarge)
        );
    }
}
