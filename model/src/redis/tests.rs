//! Model-level checks of the Redis family that the golden rows (`docs/results-redis.json`)
//! cannot make: the documented verdicts against the whole single-fault matrix of the
//! single-instance recipes, Stateright's own BFS on the standard scenario, and the timing
//! assumptions' twins.

use crate::checker::pinned::{assert_stateright_agrees, reachable};
use crate::redis::protocol::*;
use crate::redis::scenario::{Faults, Scenario, Variant, Writes};
use crate::Family;

const SINGLE_FAULTS: [&str; 10] = [
    "none",
    "pause=1",
    "slow-acquire=1",
    "clock-jump=1",
    "fast-clock=1",
    "restart=1",
    "delayed-restart=1",
    "failover=1",
    "lose-reply=1",
    "crash=1",
];

fn violations(sc: &Scenario) -> (Vec<&'static str>, Vec<&'static str>) {
    let r = crate::check(sc);
    let mut got: Vec<&str> = r
        .verdicts
        .iter()
        .filter(|p| !p.holds() && sc.applies(p.name))
        .map(|p| p.name)
        .collect();
    let mut want: Vec<&str> = Family::documented(sc).iter().map(|d| d.0).collect();
    got.sort_unstable();
    want.sort_unstable();
    (got, want)
}

/// Every single-instance recipe (and redis-py's) × write mode × single fault comes out with
/// exactly its documented verdicts: `documented()` is a rule, not a list of the rows. (The
/// Redlock recipes' matrix takes about half a minute: `redis::verdicts::explore::matrix`.)
#[test]
fn documented_verdicts_match_the_single_instance_matrix() {
    let mut checked = 0;
    for v in [Variant::Single, Variant::SingleUnchecked, Variant::RedisPy] {
        for w in Writes::ALL {
            for f in SINGLE_FAULTS {
                let sc = Scenario::new(v, w).with_faults(Faults::parse(f).expect("valid"));
                let (got, want) = violations(&sc);
                assert_eq!(got, want, "{}", sc.label());
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 120);
}

/// The standard scenario holds everything but "at most one holder", which a pause breaks by
/// design; Stateright's BFS counts the same states.
#[test]
fn standard_scenario_counts_agree_with_stateright() {
    let sc = Scenario::standard();
    let r = assert_stateright_agrees(&sc, &sc.label(), 1);
    assert_eq!(r.violated(), vec![AT_MOST_ONE_HOLDER]);
}

/// `single-unchecked`'s plain `DEL` frees the next holder's key: two live holders once a
/// client comes back for a second round; the checked release (`single`) keeps them apart.
#[test]
fn unchecked_release_lets_two_live_holders_in_and_the_script_does_not() {
    let f = Faults::parse("pause=1").expect("valid");
    let unchecked = Scenario::new(Variant::SingleUnchecked, Writes::Unfenced)
        .with_rounds(2)
        .with_faults(f);
    let (got, want) = violations(&unchecked);
    assert!(got.contains(&AT_MOST_ONE_LIVE_HOLDER), "{got:?}");
    assert_eq!(got, want);
    let checked = Scenario::new(Variant::Single, Writes::Unfenced)
        .with_rounds(2)
        .with_faults(f);
    let (got, want) = violations(&checked);
    assert!(!got.contains(&AT_MOST_ONE_LIVE_HOLDER), "{got:?}");
    assert_eq!(got, want);
}

/// The timing assumption is what keeps a fault-free `single` exclusive: without any fault no
/// holder's validity ever reaches 0, and with a pause one does (not vacuous either way).
#[test]
fn only_a_pause_runs_out_a_holders_validity() {
    let quiet = Scenario::new(Variant::Single, Writes::Unfenced);
    let run_out = |s: &State| {
        s.holders()
            .any(|c| s.clients[c as usize].validity == Validity::Until(0))
    };
    assert!(!reachable(&quiet, run_out));
    assert!(reachable(&quiet, |s: &State| s.holders().count() == 1));
    let paused = quiet.with_faults(Faults::parse("pause=1").expect("valid"));
    assert!(reachable(&paused, run_out));
}

/// The wrapping arithmetic: an acquisition slower than `ttl - drift` wraps to a validity
/// longer than any TTL in `redlock-wrapping-validity` and is refused by `redlock`.
#[test]
fn wrapping_validity_turns_a_slow_acquisition_into_a_long_hold() {
    let wrapping = Scenario::new(Variant::RedlockWrappingValidity, Writes::Unfenced);
    let checked = Scenario::new(Variant::Redlock, Writes::Unfenced);
    let slow = wrapping.ttl - wrapping.drift + 1;
    assert_eq!(wrapping.validity(slow), Some(Validity::Long));
    assert_eq!(checked.validity(slow), None);
    assert_eq!(
        wrapping.validity(wrapping.ttl - wrapping.drift),
        None,
        "exactly 0"
    );
    assert_eq!(checked.validity(1), Some(Validity::Until(1)));
    assert_eq!(wrapping.validity(1), Some(Validity::Until(1)));
}

#[test]
fn fault_lists_round_trip() {
    let f = Faults::parse("pause=1,clock-jump=2,delayed-restart=1,lose-reply=1").expect("ok");
    assert_eq!(
        f.to_string(),
        "pause=1,clock-jump=2,delayed-restart=1,lose-reply=1"
    );
    assert_eq!(Faults::parse(&f.to_string()), Ok(f));
    assert!(Faults::parse("expire=1").is_err());
    assert_eq!(
        Faults::parse("none").map(|f| f.to_string()),
        Ok("none".into())
    );
}

/// The code draws a fresh token per attempt (`RedisLock::try_lock` calls `Backend::token`
/// each time), so a client that lost its first attempt to contention holds its second with a
/// new token. The model kept one token per round until the review of #38 (no key ever held
/// `tok0.0+1`); redis-py, which keeps one per `acquire()` call, still does.
#[test]
fn a_retry_holds_with_a_fresh_token_as_the_code_does() {
    let second_attempt = |s: &State| {
        s.instances[0]
            .key
            .is_some_and(|e| e.token.to_string() == "tok0.0+1")
            && s.clients[0].pc.holding()
    };
    let single = Scenario::new(Variant::Single, Writes::Unfenced);
    assert!(reachable(&single, second_attempt));
    let redis_py = Scenario::new(Variant::RedisPy, Writes::Unfenced)
        .with_faults(Faults::parse("crash=1").expect("valid"));
    assert!(!reachable(&redis_py, second_attempt));
    assert!(reachable(&redis_py, |s: &State| s.clients[0].pc.holding()
        && s.instances[0]
            .key
            .is_some_and(|e| e.token.to_string() == "tok0.0")));
}

/// The drift term of `validity = ttl − elapsed − drift` covers instance clocks that run fast
/// (`fast-clock`: an instance gains a tick on the clients'). Redlock with drift 1 holds when
/// an instance gains a tick — and the fault is exercised: a granting key's time left comes
/// down to the holder's validity (never without the fault: the drift keeps a tick of margin). The twin, the same formula with drift 0, lets the key on the
/// instance two majorities share expire under a live holder: two live holders. (The model had no such
/// fault before the review of #38: the drift term was never exercised.)
#[test]
fn the_drift_term_covers_fast_instance_clocks() {
    let f = Faults::parse("fast-clock=1").expect("a fault the model has");
    let real = Scenario::new(Variant::Redlock, Writes::Unfenced).with_faults(f);
    let (got, want) = violations(&real);
    assert!(got.is_empty(), "{got:?}");
    assert_eq!(got, want);
    let outlasts = |s: &State| {
        s.holders().any(|c| match s.clients[c as usize].validity {
            Validity::Until(v) => s.instances.iter().any(|i| {
                i.key
                    .is_some_and(|e| e.token.client == c && e.left.is_some_and(|l| l <= v))
            }),
            _ => false,
        })
    };
    assert!(
        reachable(&real, outlasts),
        "the fast clock eats the drift margin"
    );
    let quiet = Scenario::new(Variant::Redlock, Writes::Unfenced);
    assert!(
        !reachable(&quiet, outlasts),
        "without it a margin is always left"
    );
    let no_drift = Scenario { drift: 0, ..real };
    let (got, want) = violations(&no_drift);
    assert!(got.contains(&AT_MOST_ONE_LIVE_HOLDER), "{got:?}");
    assert_eq!(got, want);
    // The fast clock is what drift 0 fails on: without it, drift 0 holds everything.
    let no_drift_quiet = Scenario { drift: 0, ..quiet };
    let (got, _) = violations(&no_drift_quiet);
    assert!(got.is_empty(), "drift 0 without a fast clock: {got:?}");
}
