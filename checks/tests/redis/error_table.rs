//! The one table of every answer the recipe can get (`lockwright::redis::REPLY_TABLE`), run
//! row by row through the production mapping (`classify`), and each error's message and
//! advice.

use lockwright::redis::{classify, Answer, NoAnswer, RedisLockError, Reply, REPLY_TABLE};

fn err(code: &str) -> Result<Reply, NoAnswer> {
    Ok(Reply::Error {
        code: code.into(),
        detail: "detail".into(),
    })
}

#[test]
fn every_row_of_the_reply_table_maps_as_it_says() {
    let no_answer = Err(NoAnswer {
        instance: "127.0.0.1:1".into(),
        reason: "connection refused".into(),
    });
    // (row of REPLY_TABLE, answer, to an acquire?, what it must mean)
    let rows: Vec<(usize, Result<Reply, NoAnswer>, bool, &str)> = vec![
        (0, Ok(Reply::Ok), true, "granted"),
        (1, Ok(Reply::Int(7)), true, "granted"),
        (2, Ok(Reply::Nil), true, "refused"),
        (3, Ok(Reply::Int(1)), false, "done"),
        (4, Ok(Reply::Int(0)), false, "refused"),
        (5, err("LOADING"), true, "unavailable"),
        (6, err("READONLY"), true, "unavailable"),
        (7, err("MASTERDOWN"), true, "unavailable"),
        (8, err("OOM"), true, "unavailable"),
        (9, err("BUSY"), false, "unavailable"),
        (10, err("TRYAGAIN"), true, "unavailable"),
        (10, err("CLUSTERDOWN"), true, "unavailable"),
        (11, err("MISCONF"), true, "unavailable"),
        (11, err("NOREPLICAS"), false, "unavailable"),
        (12, err("WRONGTYPE"), true, "fatal"),
        (13, err("NOPERM"), true, "fatal"),
        (13, err("NOAUTH"), false, "fatal"),
        (13, err("WRONGPASS"), true, "fatal"),
        (14, err("ERR"), true, "fatal"),
        (15, no_answer, true, "unavailable"),
    ];
    let mut covered = vec![false; REPLY_TABLE.len()];
    for (row, reply, acquires, want) in rows {
        let got = match classify(&reply, acquires) {
            Answer::Granted(_) => "granted",
            Answer::Refused => "refused",
            Answer::Done => "done",
            Answer::Unavailable(_) => "unavailable",
            Answer::Fatal { .. } => "fatal",
        };
        assert_eq!(got, want, "{reply:?}");
        assert!(
            REPLY_TABLE[row].1.starts_with(want),
            "row {row} {:?} says {:?}",
            REPLY_TABLE[row].0,
            REPLY_TABLE[row].1
        );
        covered[row] = true;
    }
    assert!(covered.iter().all(|&c| c), "every row is exercised");
    assert_eq!(
        classify(&Ok(Reply::Int(3)), true),
        Answer::Granted(Some(3)),
        "the fenced script's counter is the token"
    );
}

#[test]
fn errors_name_the_key_give_advice_and_keep_their_source() {
    use std::error::Error as _;
    let cause = NoAnswer {
        instance: "127.0.0.1:1".into(),
        reason: "connection refused".into(),
    };
    let e = RedisLockError::TimedOut {
        key: "k".into(),
        waited: std::time::Duration::from_millis(5),
        last: Box::new(RedisLockError::Unavailable {
            key: "k".into(),
            granted: 0,
            needed: 1,
            first: "instance 0: 127.0.0.1:1 did not answer: connection refused".into(),
            source: Some(cause),
        }),
    };
    assert!(e.to_string().contains("\"k\""), "{e}");
    assert!(
        !e.to_string().contains("connection refused"),
        "Display leaves the source out: {e}"
    );
    let inner = e.source().expect("the last attempt");
    assert!(inner
        .source()
        .expect("no answer")
        .to_string()
        .contains("connection refused"));
    assert!(e.advice().is_some() && !e.is_held() && !e.is_lost());
    let lost = RedisLockError::NotOwner {
        key: "k".into(),
        confirmed: 0,
        needed: 1,
    };
    assert!(lost.is_lost() && lost.advice().unwrap().contains("stop writing"));
}
