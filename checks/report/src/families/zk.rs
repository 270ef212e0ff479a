//! The ZooKeeper mutex in the report (`docs/zookeeper.md`): its rows, and how its traces are
//! drawn — a lane per client, and on the right the ZooKeeper server (with the protected
//! resource), where the server's own steps and faults (`ExpireSession`, `ExpireOldSession`,
//! `RecreateParent`) happen.

use lockwright_model::zk::protocol::{
    AT_MOST_ONE_HOLDER, AT_MOST_ONE_LIVE_HOLDER, FENCED_WRITES_ARE_EXCLUSIVE,
    GRANTS_IN_REQUEST_ORDER, NO_LOST_UPDATE, NO_ORPHAN_NODE,
};
use lockwright_model::zk::WriteMode::{self, *};
use lockwright_model::zk::{Action, Faults, Guard, Scenario, SessionId, State, Variant};

use super::{clients_list, faults_slug, Presenter};
use crate::trace::Words;

const WORDS: Words = Words {
    server_title: "ZooKeeper server · protected resource",
    server_width: 560,
    intro: "Lanes: one per client (`c0` may re-enter the lock while holding it); on the \
            right the ZooKeeper server, where the server's own steps and faults happen \
            (`ExpireSession`, `ExpireOldSession`, `RecreateParent`), and the protected \
            resource the holders write to. *What happened* is the step as \
            `Scenario::describe_path` prints it, with zxids and sequence suffixes as a real \
            server would hand them out (in italics: a step inside the client — an event it \
            takes, a re-entry — with no request). *Server after* lists the lock nodes under \
            `/locks` with their owning session and `czxid`, the live sessions, and the \
            highest `czxid` whose write the resource accepted; *holders after* lists the \
            clients that believe they hold the lock (green bars in the diagram). Red: a fault.",
    effect_column: "what happened",
    server_column: "server after",
    local_note: "(in the client, no request)",
    legend: "green bar: the client believes it holds the lock · arrow: request to the server \
             or write to the resource · red: fault · brown: server state after the step",
    results_page: "results-zk.md",
    footer: "All rows: [results-zk.md](../../results-zk.md). The recipe, the faults, what each \
             property means and the incident behind each variant: \
             [zookeeper.md](../../zookeeper.md).",
    keep_answer: true,
};

/// Faults `expire=1,lose-reply=1,restart=1` (the rows' usual budget).
const EFR: &str = "expire=1,lose-reply=1,restart=1";
/// The same with a re-created parent.
const EFRP: &str = "expire=1,lose-reply=1,restart=1,recreate-parent=1";

/// A dropped acquire or release: `expire=1,lose-reply=1,abandon=1`.
const ELA: &str = "expire=1,lose-reply=1,abandon=1";
/// The same with a suspension (a dropped connection, the session alive).
const ELAS: &str = "expire=1,lose-reply=1,abandon=1,suspend=1";

/// Across the sequence counter's top (issue #33's "Done" scope): `expire=1,lose-reply=1`.
const TOP: &str = "expire=1,lose-reply=1";

/// Two mutexes sharing one client: `expire=1`.
const SHARED: &str = "expire=1";
/// Two mutexes sharing one client, with a lost reply: `expire=1,lose-reply=1`.
const SHARED_LOST: &str = "expire=1,lose-reply=1";

/// `variant` × `writes`, 2 clients (c0 reentrant).
fn sc(variant: Variant, writes: WriteMode, faults: &str) -> Scenario {
    Scenario::new(variant, writes)
        .with_clients(2)
        .with_faults(Faults::parse(faults).expect("valid fault list"))
}

impl Presenter for Scenario {
    const TITLE: &'static str = "the ZooKeeper mutex";
    const PAGE: &'static str = "zookeeper.md";
    const ROW_HEADERS: &'static [&'static str] = &["variant × writes", "clients", "faults"];

    fn words() -> &'static Words {
        &WORDS
    }

    /// `docs/zookeeper.md` §6, rows 1–32 (the standard scenario, then 2 clients; rows 17–19:
    /// claim-at-acquire; rows 20–22: a dropped acquire or release; rows 23–24: a suspension;
    /// rows 25–26: a lagging server answers the search; rows 27–28: a listing that does not
    /// recognize the own node; rows 29–32: two mutexes share one client; row 33: one protection id
    /// per client, with a dropped acquire's cleanup beside the next acquire; rows 34–36: a
    /// restart under a shared client, and a suspension alone; row 37: a session that cannot be
    /// re-opened; rows 38–39: the standard scenario's recipe and clients with a 3-bit sequence
    /// counter that reaches its top, the fix and the order it replaces, `text-order`; issue #33).
    fn rows() -> Vec<Scenario> {
        use Variant::*;
        vec![
            Scenario::standard(),
            sc(Curator, Fenced, "none"),
            sc(Curator, Fenced, "expire=1"),
            sc(Curator, Fenced, EFR),
            sc(Curator, Fenced, EFR).with_guard(Guard::Curator),
            sc(Curator, Unfenced, EFR),
            sc(Curator, CheckThenWrite, EFR),
            sc(Curator, Guarded, EFR),
            sc(Curator, Fenced, EFRP),
            sc(Curator, FencedBySequence, EFRP),
            sc(NoProtection, Fenced, EFR),
            sc(NoProtection, Fenced, EFRP),
            sc(ReleaseForgets, Fenced, EFR),
            sc(AdoptOldSession, Fenced, EFR),
            sc(DeleteByNameRetry, Fenced, EFR),
            sc(DeleteByNameRetry, Fenced, EFRP),
            sc(Curator, FencedClaim, EFR),
            sc(Curator, FencedClaim, EFRP),
            sc(Curator, FencedClaim, EFR).with_guard(Guard::Curator),
            sc(Curator, Fenced, ELA),
            sc(ReleaseCancelUnsafe, Fenced, ELA),
            sc(GiveUpCancelUnsafe, Fenced, ELA),
            sc(Curator, Fenced, ELAS),
            sc(NoProtection, Fenced, "suspend=1"),
            sc(Curator, Fenced, "lose-reply=1,lag=1"),
            sc(SearchWithoutSync, Fenced, "lose-reply=1,lag=1"),
            sc(Curator, Fenced, "lose-reply=1,misread=1"),
            sc(AbandonWithoutDelete, Fenced, "lose-reply=1,misread=1"),
            sc(Curator, Fenced, SHARED).with_shared_client(true),
            sc(DropOwnOnSessionSwap, Fenced, SHARED).with_shared_client(true),
            sc(Curator, Fenced, SHARED_LOST).with_shared_client(true),
            sc(DropOwnOnSessionSwap, Fenced, SHARED_LOST).with_shared_client(true),
            sc(ProtectionIdPerClient, Fenced, ELA),
            sc(Curator, Fenced, "restart=1").with_shared_client(true),
            sc(DropOwnOnSessionSwap, Fenced, "restart=1").with_shared_client(true),
            sc(Curator, Fenced, "suspend=1"),
            sc(
                Curator,
                FencedClaim,
                "expire=1,lose-reply=1,refuse-session=1",
            ),
            Scenario::standard()
                .with_faults(Faults::parse(TOP).expect("valid fault list"))
                .with_sequence_width(Some(3)),
            Scenario::standard()
                .with_variant(TextOrder)
                .with_faults(Faults::parse(TOP).expect("valid fault list"))
                .with_sequence_width(Some(3)),
        ]
    }

    fn row_cells(&self) -> Vec<String> {
        let guard = match self.guard {
            Guard::Lockwright => String::new(),
            g => format!(", guard `{g}`"),
        };
        vec![
            format!("`{} × {}`{guard}", self.variant, self.writes),
            match (self.shared_client, self.sequence_width) {
                (true, _) => format!("{} (c0, c1 share one client)", self.clients),
                (false, Some(w)) => format!("{} ({w}-bit sequence counter)", self.clients),
                (false, None) => self.clients.to_string(),
            },
            format!("`{}`", self.faults),
        ]
    }

    fn slug(&self) -> String {
        let guard = match self.guard {
            Guard::Lockwright => String::new(),
            g => format!(".guard-{g}"),
        };
        let shared = if self.shared_client { ".shared" } else { "" };
        let width = match self.sequence_width {
            Some(w) => format!(".seq{w}"),
            None => String::new(),
        };
        format!(
            "{}.{}{guard}.{}c{shared}{width}.{}",
            self.variant,
            self.writes,
            self.clients,
            faults_slug(&self.faults.to_string())
        )
    }

    fn clients(&self) -> Vec<(u8, String)> {
        (0..self.clients)
            .map(|c| {
                let note = match (self.is_reentrant(c), self.shares_client(c)) {
                    (true, true) => "reentrant, shares c0's client",
                    (false, true) => "shares c0's client",
                    (true, false) => "reentrant",
                    (false, false) => "",
                };
                (c, note.to_string())
            })
            .collect()
    }

    fn lane(action: &Action) -> Option<u8> {
        match action {
            Action::ExpireSession(_)
            | Action::ExpireOldSession(_)
            | Action::ApplySent(_)
            | Action::RecreateParent => None,
            a => a.client(),
        }
    }

    fn request(action: &Action) -> bool {
        !matches!(
            action,
            Action::Reenter(_)
                | Action::ReleaseInner(_)
                | Action::NoticeSessionChange(_)
                | Action::Abandon(_)
                | Action::Suspend(_)
                | Action::ApplySent(_)
                | Action::Reconnect(_)
                | Action::ReceiveWatchEvent(_)
                | Action::ReceiveSessionEvent(_)
        )
    }

    fn fault(action: &Action) -> bool {
        // `ExpireOldSession` is not a fault: an abandoned session always times out.
        matches!(
            action,
            Action::LoseReply(..)
                | Action::LoseCleanupReply(..)
                | Action::Abandon(_)
                | Action::Suspend(_)
                | Action::LaggedSearch(_)
                | Action::MisreadOwnNode(_)
                | Action::RestartClient(_)
                | Action::ExpireSession(_)
                | Action::RecreateParent
        )
    }

    /// `/locks: _c_c0-lock-0 (c0.s0, czxid 0); alive: c0.s0, c1.s0; resource: czxid 0`.
    fn server_view(&self, s: &State) -> String {
        let nodes: Vec<String> = s
            .server
            .children()
            .iter()
            .map(|z| format!("{} ({}, czxid {})", z.name, z.owner, z.czxid))
            .collect();
        let nodes = if nodes.is_empty() {
            "(empty)".to_string()
        } else {
            nodes.join(", ")
        };
        let alive: Vec<String> = s.server.sessions().iter().map(|x| x.to_string()).collect();
        let mut view = format!("/locks: {nodes}; alive: {}", alive.join(", "));
        if let Some(z) = s.resource.max_czxid {
            view.push_str(&format!("; resource: writes up to czxid {z}"));
        }
        if self.writes == FencedBySequence {
            if let Some(q) = s.resource.max_seq {
                view.push_str(&format!(", highest sequence token {q}"));
            }
        }
        view
    }

    fn holders(&self, s: &State) -> Vec<u8> {
        s.holders().collect()
    }

    fn explain(&self, s: &State, property: &str) -> String {
        let holders: Vec<u8> = s.holders().collect();
        let live: Vec<u8> = s.live_holders().collect();
        let granted_in = |c: u8| SessionId {
            client: c,
            epoch: s.clients[c as usize].held_in,
        };
        match property {
            AT_MOST_ONE_HOLDER => {
                let mut out = format!(
                    "{} believe they hold the lock (granted, not released, no LockLost)",
                    clients_list(&holders)
                );
                for &c in &holders {
                    let g = granted_in(c);
                    if !s.server.is_alive(g) {
                        out.push_str(&format!(
                            "; c{c} was granted in session {g}, which the server has expired, \
                             and has not heard yet"
                        ));
                    }
                }
                out
            }
            AT_MOST_ONE_LIVE_HOLDER => {
                let sessions: Vec<String> =
                    live.iter().map(|&c| granted_in(c).to_string()).collect();
                format!(
                    "{} believe they hold the lock, and the sessions they were granted in ({}) \
                     are alive: nothing will ever tell them the lock is gone",
                    clients_list(&live),
                    sessions.join(", ")
                )
            }
            FENCED_WRITES_ARE_EXCLUSIVE => format!(
                "the resource had already accepted a write made under grant {} (the model's \
                 grant history), and then accepted one from a holder granted before it: a \
                 stale write",
                s.resource
                    .max_grant
                    .map_or("?".to_string(), |g| g.to_string())
            ),
            NO_LOST_UPDATE => "the writer had read the resource, then the resource accepted a \
                 write made under another grant (the model's grant history), then the \
                 writer's own write: it overwrote that write unseen, computed from a state \
                 that no longer held (a lost update)"
                .to_string(),
            NO_ORPHAN_NODE => {
                let orphans: Vec<String> = self
                    .orphans(s)
                    .map(|z| {
                        format!(
                            "{} belongs to {}, the session c{} still uses, but c{} does not \
                             know it as its node",
                            z.name, z.owner, z.owner.client, z.owner.client
                        )
                    })
                    .collect();
                format!(
                    "{}: it blocks every node behind it for as long as that session lives",
                    orphans.join("; ")
                )
            }
            GRANTS_IN_REQUEST_ORDER => {
                let first = s.server.children().first();
                let why: Vec<String> = live
                    .iter()
                    .filter_map(|&c| {
                        let o = s.clients[c as usize].own?;
                        let mine = first.is_some_and(|z| z.name == o.name && z.czxid == o.czxid);
                        if mine {
                            return None;
                        }
                        Some(match s.server.node(o.name) {
                            Some(z) if z.czxid == o.czxid => format!(
                                "c{c} holds with {} (czxid {}), but {} is lower",
                                o.name,
                                o.czxid,
                                first.map_or("?".to_string(), |f| f.name.to_string())
                            ),
                            _ => format!(
                                "c{c} holds with {} (czxid {}), which no longer exists",
                                o.name, o.czxid
                            ),
                        })
                    })
                    .collect();
                format!(
                    "a live holder's node is not the lowest node under /locks: {}",
                    why.join("; ")
                )
            }
            other => format!("violates “{other}”"),
        }
    }

    /// With stable zxids and suffixes, as `Scenario::describe_path` numbers them.
    fn described(&self, path: &[Action]) -> Option<Vec<(String, State)>> {
        self.describe_path_with_states(path)
    }
}
