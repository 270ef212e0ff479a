//! Which verdicts each scenario has by design ([`Scenario::documented`]) and which properties
//! it can exercise at all ([`Scenario::applies`]): the reasons, in one place, for every row of
//! `docs/redis.md` (the report checks each row's verdicts against these).

use super::protocol::{
    ACQUIRED_AFTER_CRASH, AT_MOST_ONE_HOLDER, AT_MOST_ONE_LIVE_HOLDER, CONTENTION_SEEN,
    FENCED_WRITES_ARE_EXCLUSIVE, LOCK_LOST_REPORTED, NO_LOST_UPDATE, NO_STALE_LOCK, SECOND_GRANT,
    STALE_WRITE_ATTEMPTED,
};
use super::scenario::{Scenario, Variant, Writes};

impl Scenario {
    /// Whether the recipe's keys expire (every recipe but redis-py's default `timeout=None`).
    fn expires(&self) -> bool {
        self.variant != Variant::RedisPy
    }

    /// Whether a held key can vanish at the servers while its holder still counts on it: a
    /// restart without persistence, a fail-over to a replica that lacked it, or (keys without
    /// expiry) a delayed restart, whose wait is measured by a TTL the key does not have.
    fn key_can_vanish(&self) -> bool {
        let f = self.faults;
        f.restart > 0 || f.failover > 0 || (!self.expires() && f.delayed_restart > 0)
    }

    /// Whether a fast instance clock can outrun the drift allowance: one instance gaining
    /// `drift + 1` ticks on the clients' clocks lets its key expire while its holder's
    /// validity runs — enough for Redlock too, since two majorities share an instance (a
    /// holder counts that instance's grant while the next client is granted there again).
    fn skew_beats_drift(&self) -> bool {
        self.expires() && u32::from(self.faults.fast_clock) > self.drift
    }

    /// Whether two clients can hold at once with both validities still running.
    fn two_live(&self) -> bool {
        let f = self.faults;
        let unchecked_reacquire = self.variant == Variant::SingleUnchecked
            && f.pause > 0
            && (self.rounds >= 2 || self.clients >= 3);
        self.clients >= 2
            && (self.key_can_vanish()
                || (self.expires() && f.clock_jump > 0)
                || self.skew_beats_drift()
                || self.variant == Variant::RedlockNoRecheck
                || (self.variant == Variant::RedlockWrappingValidity && f.slow_acquire > 0)
                || unchecked_reacquire)
    }

    /// Whether a client can still believe it holds after another was granted.
    pub fn can_supersede(&self) -> bool {
        self.two_live() || (self.clients >= 2 && self.expires() && self.faults.pause > 0)
    }

    /// Whether fencing tokens can fail to grow with the holds: a counter lost by a restart or
    /// rolled back by a fail-over, or Redlock's token (the highest of the granting instances'
    /// counters), which a later hold's majority need not exceed.
    fn tokens_can_repeat(&self) -> bool {
        self.key_can_vanish() || self.variant.redlock()
    }

    /// Whether `property` can be exercised in this scenario at all: "stale write attempted"
    /// needs a way for a second grant to supersede a holder ([`Scenario::can_supersede`]);
    /// "acquired after crash" a crash; "lock lost reported" a pause (without one the timing
    /// assumption keeps every holder within its validity) and a recipe with a validity;
    /// "second grant" two clients or two rounds; "contention seen" two clients.
    pub fn applies(&self, property: &str) -> bool {
        match property {
            STALE_WRITE_ATTEMPTED => self.can_supersede(),
            ACQUIRED_AFTER_CRASH => self.faults.crash > 0,
            LOCK_LOST_REPORTED => self.faults.pause > 0 && self.expires(),
            SECOND_GRANT => self.clients >= 2 || self.rounds >= 2,
            CONTENTION_SEEN => self.clients >= 2,
            _ => true,
        }
    }

    /// The verdicts this scenario has by design (see `docs/redis.md` for the rows).
    pub fn documented(&self) -> Vec<(&'static str, &'static str)> {
        let f = self.faults;
        let mut out = Vec::new();
        let two_live = self.two_live();
        let two = self.can_supersede();
        if two {
            out.push((AT_MOST_ONE_HOLDER, self.why_two()));
        }
        if two_live {
            out.push((AT_MOST_ONE_LIVE_HOLDER, self.why_two_live()));
        }
        let fenced = self.writes.counted();
        if two && (!fenced || self.tokens_can_repeat()) {
            out.push((
                FENCED_WRITES_ARE_EXCLUSIVE,
                match self.writes {
                    Writes::Unfenced => {
                        "an unfenced resource accepts the superseded holder's write"
                    }
                    Writes::Cas => {
                        "check-and-set by the random value: the superseded holder's late claim \
                         takes the resource over (random tokens have no order)"
                    }
                    _ if self.key_can_vanish() => {
                        "the fencing counter is lost with the key (restart) or rolled back \
                         with it (fail-over): a later hold gets a token no greater than the \
                         earlier one's"
                    }
                    _ => {
                        "Redlock's token is the highest counter among the granting instances: \
                         a later majority's counters need not exceed it"
                    }
                },
            ));
        }
        let lost_update = match self.writes {
            Writes::Unfenced | Writes::Fenced => two,
            Writes::Cas => false,
            Writes::FencedClaim => {
                two && (self.key_can_vanish()
                    || (self.variant.redlock()
                        && (f.pause > 0
                            || self.variant == Variant::RedlockNoRecheck
                            || (self.variant == Variant::RedlockWrappingValidity
                                && f.slow_acquire > 0))))
            }
        };
        if lost_update {
            out.push((
                NO_LOST_UPDATE,
                match self.writes {
                    Writes::Unfenced => "two holders read the same version and both write",
                    Writes::Fenced => {
                        "a bare fence learns of the newer holder only at its first write \
                         (fenced-claim closes it)"
                    }
                    _ => "the claim orders holders by their tokens, and the tokens do not grow",
                },
            ));
        }
        if !self.expires() && (f.crash > 0 || f.lose_reply > 0 || f.failover > 0) {
            out.push((
                NO_STALE_LOCK,
                "redis-py's default lock has no expiry: a crashed holder's key, one set by a \
                 SET whose reply was lost, or one a fail-over brought back after its release \
                 stays forever",
            ));
        }
        if !self.expires() && f.crash > 0 {
            out.push((
                ACQUIRED_AFTER_CRASH,
                "a crashed holder's key has no expiry: nobody acquires again",
            ));
        }
        out
    }

    fn why_two_live(&self) -> &'static str {
        let f = self.faults;
        match self.variant {
            Variant::RedlockNoRecheck => {
                "without the re-check a majority counts as held for the full TTL, though the \
                 first key was set `elapsed` earlier and expires first"
            }
            Variant::RedlockWrappingValidity if f.slow_acquire > 0 => {
                "an acquisition slower than the TTL wraps the unsigned validity to a huge value"
            }
            _ if self.skew_beats_drift() && !self.key_can_vanish() && f.clock_jump == 0 => {
                "an instance's clock runs faster than the drift allowance covers: its key \
                 expires while the holder's validity still runs, and the next client is \
                 granted there (for Redlock: the instance two majorities share)"
            }
            Variant::SingleUnchecked if !self.key_can_vanish() && f.clock_jump == 0 => {
                "a holder paused past its TTL releases with a plain DEL: it deletes the next \
                 holder's key, and a third grant overlaps that holder"
            }
            _ if self.key_can_vanish() && f.clock_jump == 0 => {
                "a held key is lost at the servers (restart without persistence, or fail-over \
                 to a replica that never got it) while its holder's validity runs"
            }
            _ if self.key_can_vanish() => {
                "a held key is lost at the servers (a clock jump, a restart, a fail-over) while \
                 its holder's validity runs"
            }
            _ => {
                "a server's clock jumps forward: the key expires there while its holder's \
                 clock says it is valid"
            }
        }
    }

    fn why_two(&self) -> &'static str {
        if self.two_live() {
            "two holders, both within their validity (see \"at most one live holder\")"
        } else {
            "a holder paused past its validity still believes it holds when the next is granted"
        }
    }
}

#[cfg(test)]
mod explore {
    use super::*;
    use crate::redis::scenario::Faults;

    /// Prints every recipe × write mode × single fault with its violations and whether they
    /// are the documented ones (`cargo test -p lockwright-model --lib redis::verdicts --
    /// --ignored --nocapture`).
    #[test]
    #[ignore = "prints the whole single-fault matrix (about a minute); run by hand with --ignored --nocapture"]
    fn matrix() {
        let faults = [
            "none",
            "pause=1",
            "slow-acquire=1",
            "clock-jump=1",
            "restart=1",
            "delayed-restart=1",
            "failover=1",
            "lose-reply=1",
            "crash=1",
        ];
        for v in Variant::ALL {
            for w in Writes::ALL {
                for f in faults {
                    let sc = Scenario::new(v, w).with_faults(Faults::parse(f).unwrap());
                    let r = crate::check(&sc);
                    let mut got: Vec<&str> = r
                        .verdicts
                        .iter()
                        .filter(|p| !p.holds() && sc.applies(p.name))
                        .map(|p| p.name)
                        .collect();
                    let mut want: Vec<&str> = sc.documented().iter().map(|d| d.0).collect();
                    got.sort_unstable();
                    want.sort_unstable();
                    let mark = if got == want { "ok" } else { "DIFF" };
                    println!(
                        "{mark} {v} {w} {f}: {} states {got:?} want {want:?}",
                        r.unique_states
                    );
                }
            }
        }
    }
}
