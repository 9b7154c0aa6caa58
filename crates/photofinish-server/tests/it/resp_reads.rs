//! Pipelined member reads (`LB.SCORE`, `LB.RANK`), which a connection gathers and runs as
//! one read of each board (`resp/reads.rs`): on every backend each answers what it
//! answers sent alone — ranks in every style on boards of both orders, equal scores,
//! members absent and hidden, boards absent, refused arguments and names, partitions on a
//! board without them — and a read between writes sees exactly the writes before it.

use serde_json::Value;

use crate::support::*;

/// The same commands on two servers of one kind: the first gets them as one pipeline,
/// the second one at a time; their answers must agree, in order.
async fn pipelined_reads_answer_as_alone(kind: Kind) {
    let (piped, alone) = (Server::start(kind).await, Server::start(kind).await);
    let (mut pc, mut ac) = (resp(&piped).await, resp(&alone).await);
    let setup: Vec<Vec<String>> = [
        "LB.CREATE p",
        "LB.CREATE q ORDER asc",
        "LB.SET p m0 -9223372036854775808",
        "LB.SET q m0 9223372036854775807",
    ]
    .iter()
    .map(|c| c.split(' ').map(str::to_owned).collect())
    .chain((1..20).map(|i| {
        let board = if i % 2 == 0 { "p" } else { "q" };
        vec![
            "LB.SET".into(),
            board.into(),
            format!("m{i}"),
            (i % 4).to_string(),
        ]
    }))
    .chain([vec!["LB.HIDE".into(), "p".into(), "m4".into()]])
    .collect();
    for c in &setup {
        let args: Vec<&str> = c.iter().map(String::as_str).collect();
        assert_eq!(lb(&mut pc, &args).await, lb(&mut ac, &args).await, "{c:?}");
    }
    let commands = sequence(900, 17);
    let mut pipe = redis::pipe();
    pipe.ignore_errors();
    for c in &commands {
        let mut cmd = redis::cmd(&c[0]);
        for a in &c[1..] {
            cmd.arg(a);
        }
        pipe.add_command(cmd);
    }
    let got: Vec<redis::Value> = pipe.query_async(&mut pc).await.expect("pipeline");
    let got: Vec<Value> = got.into_iter().map(|v| reply_json(Ok(v))).collect();
    assert_eq!(got.len(), commands.len());
    for (i, (c, g)) in commands.iter().zip(&got).enumerate() {
        let args: Vec<&str> = c.iter().map(String::as_str).collect();
        assert_eq!(*g, lb(&mut ac, &args).await, "command {i}: {c:?}");
    }
    // Every kind of answer was met: ranks, scores, nils and refusals.
    let has = |f: &dyn Fn(&Value) -> bool| got.iter().any(f);
    assert!(has(&|v| v.is_i64()) && has(&Value::is_null), "{got:?}");
    for code in ["board_not_found", "invalid_parameter", "invalid_board_name"] {
        assert!(has(&|v| v["error"] == code), "{code}: {got:?}");
    }
    piped.stop().await;
    alone.stop().await;
}

/// `n` commands drawn from `seed`: runs of member reads (every rank style, members that
/// exist, are hidden or do not, three boards of which one is absent), broken by writes,
/// other reads and refused commands.
fn sequence(n: usize, seed: u64) -> Vec<Vec<String>> {
    let mut x = seed;
    let mut next = move |m: u64| {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (x >> 33) % m
    };
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let board = ["p", "q", "p", "q", "nope"][next(5) as usize].to_owned();
        let member = format!("m{}", next(24));
        let c: Vec<String> = match next(20) {
            0 => vec![
                "LB.INCR".into(),
                board,
                member,
                (next(3) as i64 - 1).to_string(),
            ],
            1 => vec!["LB.CARD".into(), board],
            2 => vec!["LB.RANK".into(), board],
            3 => vec![
                "LB.RANK".into(),
                board,
                member,
                "RANKING".into(),
                "weird".into(),
            ],
            4 => vec!["LB.SCORE".into(), "no good!".into(), member],
            5 => vec![
                "LB.RANK".into(),
                board,
                member,
                "PARTITION".into(),
                "eu".into(),
            ],
            6 => vec!["LB.SET".into(), board, member, "x".into()],
            7..=11 => {
                let style = ["ordinal", "competition", "dense"][next(3) as usize];
                vec![
                    "LB.RANK".into(),
                    board,
                    member,
                    "RANKING".into(),
                    style.into(),
                ]
            }
            12..=14 => vec!["LB.SCORE".into(), board, member],
            _ => vec!["LB.RANK".into(), board, member],
        };
        out.push(c);
    }
    out
}

conformance!(pipelined_reads_answer_as_alone);
