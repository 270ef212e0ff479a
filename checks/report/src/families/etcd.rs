//! etcd's lease mutex in the report (`docs/etcd.md`): its rows, and how its traces are drawn —
//! a lane per client, and on the right the modelled etcd (revision, lock keys, leases, the
//! counter), where the clock, a leader change and a compaction act.

use lockwright_model::etcd::protocol::{
    AT_MOST_ONE_HOLDER, AT_MOST_ONE_LIVE_HOLDER, FENCED_WRITES_ARE_EXCLUSIVE,
    NO_GRANT_WITHOUT_A_KEY, NO_LOST_UPDATE, NO_ORPHAN_KEY,
};
use lockwright_model::etcd::{Action, Faults, Guard, Scenario, State, Variant, WriteMode};

use super::{clients_list, faults_slug, Presenter};
use crate::trace::Words;

const WORDS: Words = Words {
    server_title: "etcd (modelled)",
    server_width: 560,
    intro: "Lanes: one per client; on the right the modelled etcd, where the clock's `Tick`, a \
            `LeaderChange` and a `Compact` happen. *What happened* is the step as `lockwright \
            check --family etcd` prints it: the client's request and what it makes of the \
            answer, with its key (`pfx/<lease>@<create revision>`) and its client-side \
            deadline in ticks. *etcd after* lists the revision, the keys under the lock \
            prefix, the leases with the ticks they have left, and the counter. *Holders after* \
            lists the clients that believe they hold (told they hold, not unlocked, and with \
            a guard their deadline not passed): green bars. Red: a fault.",
    effect_column: "what happened",
    server_column: "etcd after",
    local_note: "(no request)",
    legend: "green bar: the client believes it holds · arrow: request to etcd · red: fault · \
             brown: etcd after the step",
    results_page: "results-etcd.md",
    footer: "All rows: [results-etcd.md](../../results-etcd.md). The recipes, etcd's \
             semantics, the faults and what each property means: [etcd.md](../../etcd.md).",
    keep_answer: true,
};

fn new(variant: Variant, writes: WriteMode, guard: Guard, clients: u8, faults: &str) -> Scenario {
    Scenario::new(variant, writes)
        .with_guard(guard)
        .with_clients(clients)
        .with_faults(Faults::parse(faults).expect("valid fault list"))
}

impl Presenter for Scenario {
    const TITLE: &'static str = "etcd's lease mutex";
    const PAGE: &'static str = "etcd.md";
    const ROW_HEADERS: &'static [&'static str] =
        &["recipe × writes", "guard", "clients × attempts", "faults"];

    fn words() -> &'static Words {
        &WORDS
    }

    /// `docs/etcd.md` §4, rows 1–14 (`results-etcd.json` pins them).
    fn rows() -> Vec<Scenario> {
        use Guard::{Lockwright, Session};
        use Variant::*;
        use WriteMode::*;
        vec![
            // 1: the standard scenario.
            Scenario::standard(),
            // 2–3: no faults; Go's session deadline against lockwright's.
            new(Etcd35, Guarded, Lockwright, 2, "none"),
            new(Etcd35, Guarded, Session, 2, "expire=1"),
            new(Etcd35, Guarded, Lockwright, 2, "expire=1"),
            // 5–6: #11456.
            new(Etcd34, Guarded, Guard::None, 2, "expire=1"),
            new(Etcd35, Guarded, Guard::None, 2, "expire=1"),
            // 7–8: #22082.
            new(UnlockRetryByName, Guarded, Lockwright, 2, "lose-reply=1").with_cycles(2),
            new(Etcd35, Guarded, Lockwright, 2, "lose-reply=1").with_cycles(2),
            // 9–10: the lease-id token.
            new(
                LeaseIdToken,
                Fenced,
                Lockwright,
                2,
                "pause=1,leader-change=1",
            ),
            new(Etcd35, Fenced, Lockwright, 2, "pause=1,leader-change=1"),
            // 11–12: the lock service's orphaned session.
            new(LockService, Guarded, Lockwright, 2, "restart=1"),
            new(Etcd35, Guarded, Lockwright, 2, "restart=1"),
            // 13–16: the writes of a paused holder.
            new(Etcd35, Unfenced, Lockwright, 2, "pause=1"),
            new(Etcd35, Fenced, Lockwright, 2, "pause=1"),
            new(Etcd35, FencedClaim, Lockwright, 2, "pause=1"),
            new(Etcd35, Guarded, Lockwright, 2, "pause=1,compact=1"),
            // 17: the revision counter at its top.
            new(Etcd35, Guarded, Lockwright, 2, "none")
                .with_cycles(2)
                .with_revision_width(2),
        ]
    }

    fn row_cells(&self) -> Vec<String> {
        vec![
            format!("`{} × {}`", self.variant, self.writes),
            format!("`{}`", self.guard),
            format!("{} × {}", self.clients, self.cycles),
            format!("`{}`", self.faults),
        ]
    }

    fn slug(&self) -> String {
        format!(
            "{}.{}.{}.{}c{}.w{}.{}",
            self.variant,
            self.writes,
            self.guard,
            self.clients,
            self.cycles,
            self.revision_width,
            faults_slug(&self.faults.to_string())
        )
    }

    fn clients(&self) -> Vec<(u8, String)> {
        (0..self.clients).map(|c| (c, String::new())).collect()
    }

    fn lane(action: &Action) -> Option<u8> {
        action.client()
    }

    fn request(action: &Action) -> bool {
        !matches!(
            action,
            Action::NoticeLost(_)
                | Action::Expire(_)
                | Action::Pause(_)
                | Action::Resume(_)
                | Action::Restart(_)
        )
    }

    fn fault(action: &Action) -> bool {
        action.fault()
    }

    fn server_view(&self, s: &State) -> String {
        Scenario::server_view(self, s)
    }

    fn holders(&self, s: &State) -> Vec<u8> {
        Scenario::holders(self, s).map(|c| c as u8).collect()
    }

    fn explain(&self, s: &State, property: &str) -> String {
        let holders: Vec<u8> = Presenter::holders(self, s);
        let live: Vec<u8> = self.live_holders(s).map(|c| c as u8).collect();
        match property {
            AT_MOST_ONE_HOLDER => format!(
                "{} believe they hold the lock at once.",
                clients_list(&holders)
            ),
            AT_MOST_ONE_LIVE_HOLDER => format!(
                "{} believe they hold the lock, and etcd still has each one's lease.",
                clients_list(&live)
            ),
            FENCED_WRITES_ARE_EXCLUSIVE => "The resource accepted a write from an older grant \
                 after a write from a newer one."
                .to_string(),
            NO_LOST_UPDATE => format!(
                "{} increments were acknowledged, but the counter holds {}: an update was lost.",
                s.acked,
                if self.writes == WriteMode::Guarded {
                    s.server.counter.value
                } else {
                    s.resource.value
                }
            ),
            NO_GRANT_WITHOUT_A_KEY => "A client was told it holds the lock while its key \
                 under the prefix no longer existed (its lease had expired)."
                .to_string(),
            NO_ORPHAN_KEY => "A key of a client that restarted stays under the prefix, its \
                 lease kept alive by the lock service's own session: nobody after it is ever \
                 granted."
                .to_string(),
            other => format!("“{other}” is violated."),
        }
    }
}
