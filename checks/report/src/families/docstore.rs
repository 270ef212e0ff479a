//! Document-store locks in the report (`docs/docstore.md`): its rows, and how its traces are
//! drawn — a lane per client, and on the right the document store (the model of an
//! Elasticsearch index: no real server was run), where an operator's stray delete, a fail-over
//! and the clock act.

use lockwright_model::docstore::protocol::{
    AT_MOST_ONE_WRITER, DATA_INDEX, FENCED_WRITES_ARE_EXCLUSIVE, LOCK_INDEX, NO_LOST_UPDATE,
    NO_STALE_LOCK, READERS_AND_WRITER_EXCLUSIVE,
};
use lockwright_model::docstore::{Action, Delivery, Faults, Role, Scenario, State, Step};
use lockwright_model::docstore::{Variant, Writes};

use super::{clients_list, faults_slug, Presenter};
use crate::trace::Words;

const WORDS: Words = Words {
    server_title: "document store (modelled Elasticsearch index)",
    server_width: 600,
    intro: "Lanes: one per client; on the right the document store — the model of the \
            Elasticsearch indices `files-lock` (the lock document) and `files` (the protected \
            data document `files/1`); no real Elasticsearch server was run, see docstore.md — \
            where an operator's `StrayDelete`, `RecreateIndex` and `RecreateDoc`, a \
            `Failover` or `Rollback` and the clock's `Tick` happen. \
            *What happened* is the step as `lockwright check --family docstore` prints it: \
            the HTTP request, the store's answer and what the client makes of it (in italics: \
            a step with no request — a lease check, a crash, a pause). Sequence numbers and \
            times are the model's relative values (`seq`, `expires`: ticks from now). *Store \
            after* lists the documents with their `_seq_no`/`_primary_term`; *holders after* \
            lists the clients that hold the lock by the model's definition — a writer (its \
            acquire succeeded, it has not started to release, and, leased, its lease has not \
            passed or it is past its lease check) or a reader holding the shared lock — as \
            green bars in the diagram. Red: a fault.",
    effect_column: "what happened",
    server_column: "store after",
    local_note: "(no request)",
    legend: "green bar: the client holds the lock (a writer, or a reader of the shared lock) · \
             arrow: HTTP request · red: fault · brown: the store after the step",
    results_page: "results-docstore.md",
    footer: "All rows: [results-docstore.md](../../results-docstore.md). The recipes, the \
             store's semantics, the faults and what each property means: \
             [docstore.md](../../docstore.md).",
    keep_answer: true,
};

fn new(variant: Variant, writes: Writes, faults: &str) -> Scenario {
    Scenario::new(variant, writes).with_faults(Faults::parse(faults).expect("valid fault list"))
}

impl Presenter for Scenario {
    const TITLE: &'static str = "document-store locks (the Elasticsearch recipes)";
    const PAGE: &'static str = "docstore.md";
    const ROW_HEADERS: &'static [&'static str] = &["recipe × writes", "clients", "faults"];

    fn words() -> &'static Words {
        &WORDS
    }

    /// `docs/docstore.md` §5, rows 1–48 (`results-docstore.json` pins them).
    fn rows() -> Vec<Scenario> {
        use Variant::*;
        use Writes::*;
        vec![
            new(Global, Unfenced, "none"),
            new(Global, Unfenced, "crash=1,restart=1"),
            new(Global, Unfenced, "lose-reply=1"),
            new(Global, Unfenced, "stray-delete=1"),
            new(Global, Fenced, "stray-delete=1,lose-reply=1"),
            new(Document, Unfenced, "none"),
            new(Document, Unfenced, "crash=1,restart=1"),
            new(Document, Unfenced, "lose-reply=1"),
            new(Document, Fenced, "stray-delete=1"),
            new(ReadWrite, Unfenced, "none"),
            new(ReadWrite, Unfenced, "crash=1,restart=1"),
            new(ReadWrite, Unfenced, "lose-reply=1"),
            new(ReadWrite, Unfenced, "stray-delete=1"),
            new(ReadWrite, Unfenced, "stray-delete=1").with_clients(4),
            new(LeasedUpsert, Unfenced, "none"),
            new(
                LeasedUpsert,
                Unfenced,
                "crash=1,restart=1,lose-reply=1,failover=1",
            ),
            new(LeasedUpsert, Unfenced, "pause=1"),
            new(LeasedUpsert, Fenced, "pause=1"),
            Scenario::standard().with_variant(LeasedUpsert),
            new(
                LeasedUpsert,
                Fenced,
                "crash=1,restart=1,stray-delete=1,lose-reply=1,failover=1",
            ),
            new(LeasedNoop, Unfenced, "none"),
            new(LeasedNoop, Fenced, "none"),
            new(LeasedUpsert, FencedClaim, "pause=1"),
            new(
                LeasedUpsert,
                Fenced,
                "crash=1,restart=1,lose-reply=1,pause=1,failover=1",
            ),
            new(
                LeasedUpsert,
                FencedClaim,
                "crash=1,restart=1,stray-delete=1,lose-reply=1,failover=1",
            ),
            new(LeasedUpsert, FencedClaim, "recreate-index=1"),
            new(LeasedUpsert, FencedClaim, "recreate-doc=1"),
            new(LeasedUpsert, FencedClaim, "recreate-doc=1,pause=1"),
            new(LeasedUpsert, FencedClaim, "rollback=1"),
            new(LeasedUpsert, FencedClaim, "rollback=1,pause=1"),
            new(
                LeasedUpsert,
                FencedClaim,
                "recreate-index=1,recreate-doc=1,rollback=1,pause=1",
            ),
            new(DocumentBulk, Unfenced, "none"),
            new(DocumentBulk, Unfenced, "crash=1,restart=1"),
            new(DocumentBulk, Unfenced, "lose-reply=1"),
            new(DocumentBulk, FencedClaim, "lose-reply=1"),
            // The fix against the store's own faults (§6, "The store's own faults").
            Scenario::standard(),
            new(
                Leased,
                FencedClaim,
                "recreate-index=1,recreate-doc=1,rollback=1,pause=1",
            ),
            new(Leased, FencedClaim, "recreate-index=1"),
            new(Leased, FencedClaim, "stray-delete=1"),
            new(LeasedFixUpsert, FencedClaim, "recreate-index=1"),
            new(
                LeasedFixUnverified,
                FencedClaim,
                "recreate-doc=1,rollback=1",
            ),
            new(
                LeasedFixUnconditional,
                FencedClaim,
                "recreate-doc=1,pause=1",
            ),
            new(LeasedFixUnchecked, FencedClaim, "rollback=1,pause=1"),
            new(Leased, Fenced, "recreate-doc=1,rollback=1"),
            // Issue #35: the lock document re-installed after a lost index, the server's clock.
            new(Leased, FencedClaim, "pause=1,reinstall=1,skew=1"),
            new(
                LeasedFixUnguardedInstall,
                FencedClaim,
                "pause=1,reinstall=1,skew=1",
            ),
            new(Leased, FencedClaim, "reinstall=1"),
            new(Leased, FencedClaim, "skew=1"),
        ]
    }

    fn row_cells(&self) -> Vec<String> {
        let clients = match self.variant {
            Variant::ReadWrite => {
                format!("{}R+{}W", self.readers, self.clients - self.readers)
            }
            _ => self.clients.to_string(),
        };
        vec![
            format!("`{} × {}`", self.variant, self.writes),
            clients,
            format!("`{}`", self.faults),
        ]
    }

    fn slug(&self) -> String {
        let clients = match self.variant {
            Variant::ReadWrite => format!("{}r{}w", self.readers, self.clients - self.readers),
            _ => format!("{}c", self.clients),
        };
        let lease = if self.variant.leased() {
            format!(".lease{}", self.lease)
        } else {
            String::new()
        };
        format!(
            "{}.{}.{clients}{lease}.{}",
            self.variant,
            self.writes,
            faults_slug(&self.faults.to_string())
        )
    }

    fn clients(&self) -> Vec<(u8, String)> {
        (0..self.clients)
            .map(|c| {
                let note = match (self.variant, self.role(c)) {
                    (Variant::ReadWrite, Role::Reader) => "reader",
                    (Variant::ReadWrite, Role::Writer) => "writer",
                    _ => "",
                };
                (c, note.to_string())
            })
            .collect()
    }

    fn lane(action: &Action) -> Option<u8> {
        match *action {
            Action::Call(c, ..) | Action::Crash(c) | Action::Restart(c) | Action::Pause(c) => {
                Some(c)
            }
            Action::StrayDelete
            | Action::Tick
            | Action::Failover
            | Action::RecreateIndex
            | Action::RecreateDoc
            | Action::Rollback
            | Action::LoseLockIndex
            | Action::ReinstallLock
            | Action::SkewClock(_) => None,
        }
    }

    fn request(action: &Action) -> bool {
        matches!(action, Action::Call(_, step, _) if *step != Step::CheckLease)
    }

    fn fault(action: &Action) -> bool {
        match action {
            Action::Call(_, _, delivery) => *delivery != Delivery::Answered,
            Action::Crash(_)
            | Action::Restart(_)
            | Action::Pause(_)
            | Action::StrayDelete
            | Action::Failover
            | Action::RecreateIndex
            | Action::RecreateDoc
            | Action::Rollback
            | Action::LoseLockIndex
            | Action::SkewClock(_) => true,
            Action::Tick | Action::ReinstallLock => false,
        }
    }

    /// `files-lock/global: {} (seq 0/term 1); files/1: {name, fence: null} (seq 0/term 1)`.
    fn server_view(&self, s: &State) -> String {
        let mut parts = Vec::new();
        for (index, shard) in [(LOCK_INDEX, &s.locks), (DATA_INDEX, &s.files)] {
            let docs: Vec<String> = shard
                .docs()
                .map(|(id, d)| format!("{index}/{id}: {} ({})", d.source, d.token()))
                .collect();
            if docs.is_empty() {
                parts.push(format!("{index}: no documents"));
            } else {
                parts.extend(docs);
            }
        }
        parts.join("; ")
    }

    fn holders(&self, s: &State) -> Vec<u8> {
        (0..self.clients)
            .filter(|&c| self.is_writer(s, c) || self.is_reader(s, c))
            .collect()
    }

    fn explain(&self, s: &State, property: &str) -> String {
        let writers: Vec<u8> = (0..self.clients)
            .filter(|&c| self.is_writer(s, c))
            .collect();
        let readers: Vec<u8> = (0..self.clients)
            .filter(|&c| self.is_reader(s, c))
            .collect();
        let id = self.variant.lock_id();
        match property {
            AT_MOST_ONE_WRITER => format!(
                "{} are writers at once: each one's acquire succeeded and it has not started \
                 to release{}",
                clients_list(&writers),
                if self.variant.leased() {
                    " (and its lease has not passed, or it is past its lease check)"
                } else {
                    ""
                }
            ),
            READERS_AND_WRITER_EXCLUSIVE => format!(
                "reader{} {} hold{} the shared lock while writer {} holds the exclusive one",
                if readers.len() == 1 { "" } else { "s" },
                clients_list(&readers),
                if readers.len() == 1 { "s" } else { "" },
                clients_list(&writers)
            ),
            NO_STALE_LOCK => {
                let stuck: Vec<&str> = [(Role::Reader, "reader"), (Role::Writer, "writer")]
                    .into_iter()
                    .filter(|&(role, _)| {
                        (0..self.clients).any(|c| self.role(c) == role)
                            && !self.fresh_acquire_succeeds_eventually(s, role)
                    })
                    .map(|(_, name)| name)
                    .collect();
                let doc = match s.locks.get(&id) {
                    Some(d) => format!("{LOCK_INDEX}/{id} = {}", d.source),
                    None if self.variant.installs_lock_once() => format!(
                        "{LOCK_INDEX}/{id} is gone and the recipe never creates it again, so \
                         the lock"
                    ),
                    None => format!("{LOCK_INDEX}/{id}"),
                };
                format!(
                    "no live client holds the lock or is acquiring it, yet a fresh {}'s \
                     acquire (a new process_id) would be refused even after every lease has \
                     passed: {doc} stays forever",
                    stuck.join(" or ")
                )
            }
            FENCED_WRITES_ARE_EXCLUSIVE => format!(
                "{DATA_INDEX}/1 accepted a write of an older lock grant after it had accepted \
                 a write of a newer one: a stale write landed"
            ),
            NO_LOST_UPDATE => format!(
                "{DATA_INDEX}/1 accepted this write although, since its writer first read (or \
                 claimed) the document under its grant, it had accepted a write made under \
                 another grant: the writer computed from data that changed under it, and the \
                 other grant's update is lost"
            ),
            other => format!("violates “{other}”"),
        }
    }
}
