//! Rates as operators write them (docs/SPEC.md §7): `N/s` or `N/min`, with a burst of one
//! second's worth (at least 1).

/// A rate: so many requests per period.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rate {
    /// Requests per period.
    pub count: u32,
    /// The period, in seconds (1 or 60).
    pub per_seconds: u32,
}

/// Largest count a rate may name: beyond this a limit limits nothing.
const MAX_COUNT: u32 = 1_000_000_000;

impl Rate {
    /// Parses `N/s` or `N/min` (N ≥ 1).
    pub fn parse(s: &str) -> Result<Self, String> {
        let bad = || format!("rate {s:?} must be N/s or N/min with N from 1 to {MAX_COUNT}");
        let (n, unit) = s.trim().split_once('/').ok_or_else(bad)?;
        let count: u32 = n.trim().parse().map_err(|_| bad())?;
        let per_seconds = match unit.trim() {
            "s" | "sec" => 1,
            "min" | "m" => 60,
            _ => return Err(bad()),
        };
        if count == 0 || count > MAX_COUNT {
            return Err(bad());
        }
        Ok(Self { count, per_seconds })
    }

    /// The burst: one second's worth, at least 1.
    pub fn burst(&self) -> u32 {
        (self.count / self.per_seconds).max(1)
    }
}

impl std::fmt::Display for Rate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let unit = if self.per_seconds == 1 { "s" } else { "min" };
        write!(f, "{}/{unit}", self.count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates() {
        assert_eq!(
            Rate::parse("10/s"),
            Ok(Rate {
                count: 10,
                per_seconds: 1
            })
        );
        assert_eq!(Rate::parse("30/min").map(|r| r.burst()), Ok(1));
        assert_eq!(Rate::parse("600/min").map(|r| r.burst()), Ok(10));
        assert_eq!(
            Rate::parse("100/s").map(|r| r.to_string()),
            Ok("100/s".into())
        );
        for bad in ["", "10", "0/s", "-1/s", "10/h", "x/s", "99999999999/s"] {
            assert!(Rate::parse(bad).is_err(), "{bad}");
        }
    }
}
