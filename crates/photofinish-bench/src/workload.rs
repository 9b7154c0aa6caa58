//! The workload every target runs: members with 16-byte ids, picked with a Zipf-like skew,
//! and a mix of writes, rank lookups, top-10 pages and around(5,5) windows.

/// One kind of operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// Increment a member's score.
    Write,
    /// A member's rank.
    Rank,
    /// The top 10.
    Top10,
    /// 5 above and 5 below a member.
    Around,
}

/// Percentages of each operation.
#[derive(Debug, Clone, Copy)]
pub struct Mix {
    /// Cumulative thresholds out of the total weight: write, rank, top10, around.
    cumulative: [u32; 4],
}

impl Mix {
    /// Parses `W,R,T,A` weights, e.g. `40,40,10,10`.
    pub fn parse(s: &str) -> Result<Self, String> {
        let parts: Vec<u32> = s
            .split(',')
            .map(|p| p.trim().parse::<u32>())
            .collect::<Result<_, _>>()
            .map_err(|e| format!("--mix wants four integers W,R,T,A: {e}"))?;
        let [w, r, t, a] = parts[..] else {
            return Err(format!("--mix wants four weights W,R,T,A, got {s:?}"));
        };
        if w + r + t + a == 0 {
            return Err("--mix weights must not all be zero".into());
        }
        Ok(Self {
            cumulative: [w, w + r, w + r + t, w + r + t + a],
        })
    }

    /// The operation for a uniform draw `x`.
    pub fn pick(&self, x: u64) -> Op {
        let v = (x % u64::from(self.cumulative[3])) as u32;
        match self.cumulative.iter().position(|&c| v < c) {
            Some(0) => Op::Write,
            Some(1) => Op::Rank,
            Some(2) => Op::Top10,
            _ => Op::Around,
        }
    }
}

/// The 16-byte id of member `i`: `player0000000042`.
pub fn member(i: u64) -> String {
    format!("player{i:010}")
}

/// A small, fast generator (xorshift64*): one per client.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// Seeded; a zero seed is replaced.
    pub fn new(seed: u64) -> Self {
        Self(seed.max(1).wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Member indexes in [0, n) with P(i) ∝ 1/(i+1)^s (the continuous approximation, sampled
/// by inverting the CDF); s = 0 is uniform. Index 0 is the hottest member.
#[derive(Debug, Clone, Copy)]
pub struct Zipf {
    n: f64,
    s: f64,
}

impl Zipf {
    /// Over `n` members with exponent `s` (≥ 0).
    pub fn new(n: u64, s: f64) -> Self {
        Self {
            n: n.max(1) as f64,
            s: s.max(0.0),
        }
    }

    /// One index.
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        let u = rng.unit();
        let x = if (self.s - 1.0).abs() < 1e-9 {
            (self.n + 1.0).powf(u)
        } else {
            let a = 1.0 - self.s;
            (((self.n + 1.0).powf(a) - 1.0) * u + 1.0).powf(1.0 / a)
        };
        ((x - 1.0).floor() as u64).min(self.n as u64 - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mix_parses_and_picks_in_proportion() {
        let _serial = crate::alloc::serial();
        let m = Mix::parse("50,30,10,10").expect("mix");
        let mut rng = Rng::new(7);
        let mut counts = [0u32; 4];
        for _ in 0..100_000 {
            counts[m.pick(rng.next_u64()) as usize] += 1;
        }
        assert!((49_000..51_000).contains(&counts[0]), "{counts:?}");
        assert!((29_000..31_000).contains(&counts[1]), "{counts:?}");
        assert!(Mix::parse("1,2,3").is_err());
        assert!(Mix::parse("0,0,0,0").is_err());
        assert_eq!(Mix::parse("0,0,1,0").expect("mix").pick(12345), Op::Top10);
    }

    #[test]
    fn zipf_is_skewed_and_in_range() {
        let _serial = crate::alloc::serial();
        let z = Zipf::new(1_000_000, 1.0);
        let mut rng = Rng::new(3);
        let mut top = 0;
        for _ in 0..100_000 {
            let i = z.sample(&mut rng);
            assert!(i < 1_000_000);
            top += u32::from(i < 1000);
        }
        // Zipf(1) over 1M puts about half the mass in the first 1000.
        assert!((40_000..60_000).contains(&top), "{top}");
        let uniform = Zipf::new(1000, 0.0);
        let hits = (0..100_000)
            .filter(|_| uniform.sample(&mut rng) < 100)
            .count();
        assert!((9_000..11_000).contains(&hits), "{hits}");
        assert_eq!(member(42), "player0000000042");
        assert_eq!(member(42).len(), 16);
    }
}
