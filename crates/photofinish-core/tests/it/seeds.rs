//! The seed articles' scenarios (docs/SPEC.md §1), as named tests.

use photofinish_core::{Op, Order, RankStyle, Ranking, Write};

fn set(r: &mut Ranking, member: &str, value: i64, at_us: i64) {
    r.submit(&Write {
        member,
        op: Some(Op::Set),
        values: photofinish_core::Operands::one(value),
        at_us,
        metadata: None,
        partition: None,
        team: None,
        hidden: false,
    })
    .expect("write");
}

fn column(r: &Ranking, style: RankStyle) -> Vec<(String, u64)> {
    r.page(0, 100, style)
        .into_iter()
        .map(|e| (e.member, e.rank))
        .collect()
}

/// Seed 000's tied-rank table: a 100, b 99, c 99, d 88, e 87.
#[test]
fn seed_000_tied_rank_table() {
    let mut r = Ranking::new(photofinish_core::Shape::single(Order::Desc, Op::Incr));
    for (i, (m, s)) in [("a", 100), ("b", 99), ("c", 99), ("d", 88), ("e", 87)]
        .into_iter()
        .enumerate()
    {
        set(&mut r, m, s, i as i64);
    }
    let expect = |ranks: [u64; 5]| -> Vec<(String, u64)> {
        ["a", "b", "c", "d", "e"]
            .iter()
            .map(|m| m.to_string())
            .zip(ranks)
            .collect()
    };
    assert_eq!(column(&r, RankStyle::Ordinal), expect([1, 2, 3, 4, 5]));
    assert_eq!(column(&r, RankStyle::Competition), expect([1, 2, 2, 4, 5]));
    assert_eq!(column(&r, RankStyle::Dense), expect([1, 2, 2, 3, 4]));
    assert_eq!(r.member("c", RankStyle::Competition).expect("c").rank, 2);
    assert_eq!(r.member("d", RankStyle::Dense).expect("d").rank, 3);
    assert_eq!(r.member("e", RankStyle::Competition).expect("e").rank, 5);
}

/// Seed 000's ZINCRBY walk-through: a 5, b 6, c 1, d 2, e 10; then d +3 and c +4. Redis
/// orders the three 5s by name (d, c, a reversed); first-reached order is a, d, c.
#[test]
fn seed_000_zincrby_example() {
    let mut r = Ranking::new(photofinish_core::Shape::single(Order::Desc, Op::Incr));
    for (i, (m, s)) in [("a", 5), ("b", 6), ("c", 1), ("d", 2), ("e", 10)]
        .into_iter()
        .enumerate()
    {
        r.submit(&Write {
            member: m,
            op: Some(Op::Incr),
            values: photofinish_core::Operands::one(s),
            at_us: i as i64,
            metadata: None,
            partition: None,
            team: None,
            hidden: false,
        })
        .expect("w");
    }
    let d = r
        .submit(&Write {
            member: "d",
            op: Some(Op::Incr),
            values: photofinish_core::Operands::one(3),
            at_us: 10,
            metadata: None,
            partition: None,
            team: None,
            hidden: false,
        })
        .expect("d");
    assert_eq!((d.score(), d.rank), (5, 4));
    let c = r
        .submit(&Write {
            member: "c",
            op: Some(Op::Incr),
            values: photofinish_core::Operands::one(4),
            at_us: 11,
            metadata: None,
            partition: None,
            team: None,
            hidden: false,
        })
        .expect("c");
    assert_eq!((c.score(), c.rank), (5, 5));
    let order: Vec<(String, i64)> = r
        .page(0, 10, RankStyle::Ordinal)
        .into_iter()
        .map(|e| (e.score(), e.member))
        .map(|(s, m)| (m, s))
        .collect();
    let want = [("e", 10), ("b", 6), ("a", 5), ("d", 5), ("c", 5)];
    assert_eq!(order, want.map(|(m, s)| (m.to_string(), s)));
}

/// Seeds 000/002/004: packed f64 scores lose precision past 2^53. The tuple key does not:
/// neighbours at the top of the i64 range stay distinct and in order.
#[test]
fn scores_past_two_to_the_53_stay_exact() {
    let mut r = Ranking::new(photofinish_core::Shape::single(Order::Desc, Op::Incr));
    let big = 1i64 << 53;
    set(&mut r, "x", big + 1, 1);
    set(&mut r, "y", big, 2);
    set(&mut r, "z", i64::MAX, 3);
    set(&mut r, "w", i64::MAX - 1, 4);
    let got: Vec<(String, i64)> = r
        .page(0, 10, RankStyle::Dense)
        .into_iter()
        .map(|e| (e.score(), e.member))
        .map(|(s, m)| (m, s))
        .collect();
    let want = [
        ("z", i64::MAX),
        ("w", i64::MAX - 1),
        ("x", big + 1),
        ("y", big),
    ];
    assert_eq!(got, want.map(|(m, s)| (m.to_string(), s)));
    assert_eq!(r.member("y", RankStyle::Dense).expect("y").rank, 4);
}

/// Asc boards (race times): lower is better, ties go to who set the time first.
#[test]
fn ascending_boards_rank_lower_first() {
    let mut r = Ranking::new(photofinish_core::Shape::single(Order::Asc, Op::Incr));
    let best = |r: &mut Ranking, m: &str, v: i64, at: i64| {
        r.submit(&Write {
            member: m,
            op: Some(Op::Best),
            values: photofinish_core::Operands::one(v),
            at_us: at,
            metadata: None,
            partition: None,
            team: None,
            hidden: false,
        })
        .expect("w")
    };
    best(&mut r, "slow", 62_000, 1);
    best(&mut r, "fast", 58_500, 2);
    best(&mut r, "tie", 58_500, 3);
    assert!(!best(&mut r, "fast", 59_000, 4).changed);
    let names: Vec<String> = r
        .page(0, 10, RankStyle::Ordinal)
        .into_iter()
        .map(|e| e.member)
        .collect();
    assert_eq!(names, ["fast", "tie", "slow"]);
}
