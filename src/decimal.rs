//! Exact decimals for flags such as ratios and prices: parsed into integer
//! millionths, so no float ever reaches a budget, a view or a report.

/// Why a decimal was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecimalError {
    /// Not digits with at most one point.
    NotDecimal,
    /// More than six decimals.
    TooPrecise,
    /// Too large for the integer it is held in.
    TooLarge,
}

/// `"3.75"` → 3_750_000; `".5"` → 500_000. No sign, no exponent.
pub fn parse_millionths(s: &str) -> Result<u64, DecimalError> {
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

#[cfg(test)]
mod tests {
    use super::*;

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
