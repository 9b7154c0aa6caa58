//! Decoders for the ways the seed articles pack a score and a time into one ZSET score
//! (docs/migrate.md names each and its parameters; `photofinish import-redis` uses them).
//!
//! Every packing reverses time — it stores `C − t` for a constant `C` — so that among equal
//! scores the earlier one sorts higher in a descending ZSET. A decoder gets the score back
//! as an exact integer and, where the packing holds it, the time; a value that does not
//! decode exactly (a fraction where an integer belongs, a packed number past 2^53 whose
//! low digits the double lost, a time part out of its field) is an error naming why, never
//! a guess. The divisor trick keeps no recoverable time: its decoder returns the score
//! alone and the import keeps the ZSET's order.

/// 2^53: doubles hold every integer up to here exactly, and not all beyond.
const EXACT: f64 = 9_007_199_254_740_992.0;

/// The unit of a packed time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Seconds since the epoch.
    Seconds,
    /// Milliseconds since the epoch.
    Millis,
}

impl Unit {
    /// `s` or `ms`.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "s" => Some(Unit::Seconds),
            "ms" => Some(Unit::Millis),
            _ => None,
        }
    }
    fn micros(self, t: i64) -> Option<i64> {
        t.checked_mul(match self {
            Unit::Seconds => 1_000_000,
            Unit::Millis => 1_000,
        })
    }
}

/// A packing with its constants.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Encoding {
    /// The ZSET score is the score, an integer; no time.
    Plain,
    /// `score · 10^digits + (epoch − t)`: the time in the low decimal digits.
    Decimal {
        /// Decimal digits the time part takes.
        digits: u32,
        /// The constant the time is subtracted from.
        epoch: i64,
        /// The time's unit.
        unit: Unit,
    },
    /// `score + (epoch − t) / scale`: the time in the fraction (seed 000: scale 10^13;
    /// 001: `T_MAX + 1`; 003's `1 − t/10^13`: epoch = scale = 10^13).
    Fraction {
        /// The denominator (greater than `epoch − t` for every `t`).
        scale: i64,
        /// The constant the time is subtracted from.
        epoch: i64,
        /// The time's unit.
        unit: Unit,
    },
    /// `score << bits | (epoch − t)`: the time in the low bits.
    Bits {
        /// Bits the time part takes.
        bits: u32,
        /// The constant the time is subtracted from.
        epoch: i64,
        /// The time's unit.
        unit: Unit,
    },
    /// `score + something < 1` that orders by time but cannot be inverted exactly (the
    /// divisor trick): the integer part is the score; the time is not recovered.
    Divisor,
}

/// A decoded ZSET score.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decoded {
    /// The score.
    pub score: i64,
    /// When it was reached, µs, if the packing keeps it.
    pub at_us: Option<i64>,
}

/// The exact integer a double holds, if it holds one within ±2^53.
fn exact_integer(x: f64, what: &str) -> Result<i64, String> {
    if !x.is_finite() || x.fract() != 0.0 {
        return Err(format!("{what} {x} is not a whole number"));
    }
    if x.abs() > EXACT {
        return Err(format!(
            "{what} {x} is past 2^53, where a double no longer holds every integer"
        ));
    }
    Ok(x as i64)
}

impl Encoding {
    /// The name `--encoding` takes.
    pub fn name(&self) -> &'static str {
        match self {
            Encoding::Plain => "plain",
            Encoding::Decimal { .. } => "decimal",
            Encoding::Fraction { .. } => "fraction",
            Encoding::Bits { .. } => "bits",
            Encoding::Divisor => "divisor",
        }
    }

    /// Whether the packing keeps the time.
    pub fn keeps_time(&self) -> bool {
        !matches!(self, Encoding::Plain | Encoding::Divisor)
    }

    /// The time `epoch − packed_time` in µs, checked.
    fn time(epoch: i64, part: i64, unit: Unit) -> Result<i64, String> {
        epoch
            .checked_sub(part)
            .and_then(|t| unit.micros(t))
            .filter(|us| *us >= 0)
            .ok_or_else(|| format!("the time part {part} gives no time after 1970"))
    }

    /// Decodes one ZSET score.
    pub fn decode(&self, z: f64) -> Result<Decoded, String> {
        match *self {
            Encoding::Plain => {
                if !z.is_finite()
                    || z.fract() != 0.0
                    || !(-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&z)
                {
                    return Err("not an integer in the 64-bit range".into());
                }
                Ok(Decoded {
                    score: z as i64,
                    at_us: None,
                })
            }
            Encoding::Decimal {
                digits,
                epoch,
                unit,
            } => {
                let p = exact_integer(z, "the packed value")?;
                let m = 10_i64
                    .checked_pow(digits)
                    .ok_or("--digits is too large for 64 bits")?;
                let (score, part) = (p.div_euclid(m), p.rem_euclid(m));
                Ok(Decoded {
                    score,
                    at_us: Some(Self::time(epoch, part, unit)?),
                })
            }
            Encoding::Fraction { scale, epoch, unit } => {
                Self::decode_fraction(z, scale, epoch, unit)
            }
            Encoding::Bits { bits, epoch, unit } => {
                let p = exact_integer(z, "the packed value")?;
                if bits >= 63 {
                    return Err("--bits must be below 63".into());
                }
                let part = p & ((1_i64 << bits) - 1);
                Ok(Decoded {
                    score: p >> bits,
                    at_us: Some(Self::time(epoch, part, unit)?),
                })
            }
            Encoding::Divisor => {
                if !z.is_finite() || z.abs() > EXACT {
                    return Err("not a finite number within ±2^53".into());
                }
                Ok(Decoded {
                    score: z.floor() as i64,
                    at_us: None,
                })
            }
        }
    }

    /// [`Encoding::Fraction`]'s decoding: the score is the integer part, the time the
    /// fraction scaled by `scale`, while the double still holds it.
    fn decode_fraction(z: f64, scale: i64, epoch: i64, unit: Unit) -> Result<Decoded, String> {
        if !z.is_finite() || z.abs() > EXACT {
            return Err("not a finite number within ±2^53".into());
        }
        let score = z.floor();
        let d = scale as f64;
        let part = ((z - score) * d).round() as i64;
        // The time survives only while the double's last bit, scaled up, stays well
        // under one unit of the time part (two roundings packed it).
        let ulp = f64::from_bits(z.abs().to_bits() + 1) - z.abs();
        if ulp * d > 0.25 || part >= scale {
            return Err(format!(
                "the time part is lost: at {z} a double keeps steps of {ulp:e}, too \
                 coarse for a time in units of 1/{scale}"
            ));
        }
        Ok(Decoded {
            score: score as i64,
            at_us: Some(Self::time(epoch, part, unit)?),
        })
    }
}

/// `--encoding` and its constants, as `import-redis` takes them.
#[derive(Debug, clap::Args)]
pub struct PackingFlags {
    /// How the ZSET packs score and time: plain, decimal, fraction, bits or divisor
    /// (docs/migrate.md).
    #[arg(long)]
    encoding: String,
    /// decimal: decimal digits of the time part.
    #[arg(long)]
    digits: Option<u32>,
    /// fraction: the denominator of the time part.
    #[arg(long)]
    scale: Option<i64>,
    /// bits: bits of the time part (e.g. 34 for seed 002's three-month window).
    #[arg(long)]
    bits: Option<u32>,
    /// decimal, fraction, bits: the constant C of `C − t`.
    #[arg(long, allow_hyphen_values = true)]
    epoch: Option<i64>,
    /// decimal, fraction, bits: the time's unit, s or ms.
    #[arg(long, default_value = "s")]
    unit: String,
}

impl PackingFlags {
    /// The encoding the flags name, or what is missing.
    pub fn encoding(&self) -> anyhow::Result<Encoding> {
        let unit = Unit::parse(&self.unit)
            .ok_or_else(|| anyhow::anyhow!("--unit must be s or ms, got {:?}", self.unit))?;
        let need = |v: Option<u32>, flag: &str| {
            v.ok_or_else(|| anyhow::anyhow!("--encoding {} needs --{flag}", self.encoding))
        };
        let epoch = || {
            self.epoch
                .ok_or_else(|| anyhow::anyhow!("--encoding {} needs --epoch", self.encoding))
        };
        Ok(match self.encoding.as_str() {
            "plain" => Encoding::Plain,
            "divisor" => Encoding::Divisor,
            "decimal" => Encoding::Decimal {
                digits: need(self.digits, "digits")?,
                epoch: epoch()?,
                unit,
            },
            "fraction" => Encoding::Fraction {
                scale: self.scale.filter(|s| *s > 0).ok_or_else(|| {
                    anyhow::anyhow!("--encoding fraction needs --scale, a positive integer")
                })?,
                epoch: epoch()?,
                unit,
            },
            "bits" => Encoding::Bits {
                bits: need(self.bits, "bits")?,
                epoch: epoch()?,
                unit,
            },
            other => anyhow::bail!(
                "--encoding must be plain, decimal, fraction, bits or divisor, got {other:?}"
            ),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2026-11-23T12:00:00.123Z in ms.
    const TS: i64 = 1_795_435_200_123;

    #[test]
    fn each_seed_packing_decodes_to_the_exact_score_and_time() {
        // 000, decimal: contribution · 10^13 + (C − ts).
        let c = 9_999_999_999_999;
        let dec = Encoding::Decimal {
            digits: 13,
            epoch: c,
            unit: Unit::Millis,
        };
        let z = (250 * 10_i64.pow(13) + (c - TS)) as f64;
        assert_eq!(
            dec.decode(z),
            Ok(Decoded {
                score: 250,
                at_us: Some(TS * 1000)
            })
        );
        // Past 2^53 the double lost the time's low digits: refused, not guessed.
        let z = (901 * 10_i64.pow(13) + (c - TS)) as f64;
        assert!(dec.decode(z).expect_err("err").contains("2^53"));
        // 000, fraction: contribution + (C − ts) · 10^−13.
        let frac = Encoding::Fraction {
            scale: 10_i64.pow(13),
            epoch: c,
            unit: Unit::Millis,
        };
        let z = 12.0_f64.floor() + (c - TS) as f64 * 1e-13;
        assert_eq!(
            frac.decode(z),
            Ok(Decoded {
                score: 12,
                at_us: Some(TS * 1000)
            })
        );
        // A large contribution leaves the fraction too few bits.
        let z = 5000.0 + (c - TS) as f64 * 1e-13;
        assert!(frac.decode(z).expect_err("err").contains("lost"));
        // 001: new_score + (T_MAX − ts) / (T_MAX + 1), T_MAX = 3e13.
        let t_max = 30_000_000_000_000_i64;
        let f001 = Encoding::Fraction {
            scale: t_max + 1,
            epoch: t_max,
            unit: Unit::Millis,
        };
        let z = 10.0 + (t_max as f64 - TS as f64) / (t_max as f64 + 1.0);
        assert_eq!(
            f001.decode(z),
            Ok(Decoded {
                score: 10,
                at_us: Some(TS * 1000)
            })
        );
        // 003: score + 1 − ts / 1e13.
        let f003 = Encoding::Fraction {
            scale: 10_i64.pow(13),
            epoch: 10_i64.pow(13),
            unit: Unit::Millis,
        };
        let z = 3.0 + (1.0 - TS as f64 / 10_000_000_000_000_f64);
        assert_eq!(
            f003.decode(z),
            Ok(Decoded {
                score: 3,
                at_us: Some(TS * 1000)
            })
        );
        // 002 (34 bits, a three-month window) and 004 (41 bits): point << bits | (end − ts).
        let end = TS + 86_400_000;
        for bits in [34, 41] {
            let enc = Encoding::Bits {
                bits,
                epoch: end,
                unit: Unit::Millis,
            };
            let z = ((777_i64 << bits) | (end - TS)) as f64;
            assert_eq!(
                enc.decode(z),
                Ok(Decoded {
                    score: 777,
                    at_us: Some(TS * 1000)
                })
            );
            let z = (((1_i64 << 22) << bits) | (end - TS)) as f64;
            assert!(enc.decode(z).is_err(), "{bits}");
        }
        // 002's divisor: point + 1e6 / ts; the time is not recoverable.
        let z = 42.0 + 1_000_000.0 / TS as f64;
        assert_eq!(
            Encoding::Divisor.decode(z),
            Ok(Decoded {
                score: 42,
                at_us: None
            })
        );
        // Plain: integers only.
        assert_eq!(
            Encoding::Plain.decode(-7.0),
            Ok(Decoded {
                score: -7,
                at_us: None
            })
        );
        assert!(Encoding::Plain.decode(1.5).is_err());
        // A time part larger than the epoch is no time at all.
        let z = (250 * 10_i64.pow(13) + 5) as f64;
        let small = Encoding::Decimal {
            digits: 13,
            epoch: 1,
            unit: Unit::Millis,
        };
        assert!(small.decode(z).expect_err("err").contains("after 1970"));
    }
}
