//! Refinement: the real copier's calls are steps the model allows (no Java needed).

use std::ops::ControlFlow;

use lockwright::replication::{Commit, Copier, Order, ReplicaFs, ReplicationError, TEMP_PREFIX};
use lockwright_model::replication::{
    Action, Faults, File, Name, Pace, ReaderKind, Scenario, State, Variant,
};
use lockwright_testkit::replication as orders;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use stateright::Model;

/// The replica as the model's directory: every call of the real copier is applied to the
/// model with `Scenario::step`, which refuses a step the model does not allow there; after
/// each call, some of the model's reader steps run, chosen at random. Every state on the
/// way is checked against the `always` properties.
struct ModelFs {
    sc: Scenario,
    s: State,
    rng: StdRng,
    trace: Vec<String>,
    violated: Vec<&'static str>,
}

fn file(name: &str) -> File {
    match name.strip_prefix("segments_") {
        Some(g) => File::Segments(g.parse().expect("a small generation")),
        None => File::Data(name[1..].parse().expect("a data file _i")),
    }
}

fn name(n: &str) -> Name {
    match n.strip_prefix(TEMP_PREFIX) {
        Some(f) => Name::Temp(file(f)),
        None => Name::Final(file(n)),
    }
}

impl ModelFs {
    fn new(sc: Scenario, seed: u64) -> ModelFs {
        ModelFs {
            sc,
            s: sc.init_states().remove(0),
            rng: StdRng::seed_from_u64(seed),
            trace: Vec::new(),
            violated: Vec::new(),
        }
    }

    fn take(&mut self, action: Action) {
        let next = self.sc.step(&self.s, action).unwrap_or_else(|| {
            panic!(
                "refinement failure: the model does not allow {action} here\n{:?}\ntrace: {:?}",
                self.s, self.trace
            )
        });
        self.trace.push(action.to_string());
        self.s = next;
        for v in self.sc.violated(&self.s) {
            if !self.violated.contains(&v) {
                self.violated.push(v);
            }
        }
    }

    /// One call of the real copier, then a few reader steps.
    fn call(&mut self, action: Action) -> Result<(), ReplicationError> {
        self.take(action);
        self.readers_wander();
        Ok(())
    }

    /// Up to two reader steps, at random.
    fn readers_wander(&mut self) {
        for _ in 0..self.rng.random_range(0..3) {
            let mut acts = Vec::new();
            for r in 0..self.sc.readers {
                self.sc.reader_actions(&self.s, r, &mut acts);
            }
            if acts.is_empty() {
                return;
            }
            let a = acts[self.rng.random_range(0..acts.len())];
            self.take(a);
        }
    }

    /// Keep-up: every reader finishes a reopen attempt before a round starts.
    fn readers_catch_up(&mut self) {
        while !self.sc.readers_caught_up(&self.s) {
            let mut acts = Vec::new();
            for r in 0..self.sc.readers {
                let rd = self.s.readers[r as usize];
                if !rd.reopened || rd.opening.is_some() {
                    self.sc.reader_actions(&self.s, r, &mut acts);
                }
            }
            self.take(acts[0]);
        }
    }
}

impl ReplicaFs for ModelFs {
    type Guard = ();
    fn lock(&mut self) -> Result<(), ReplicationError> {
        Ok(())
    }
    fn list(&mut self) -> Result<Vec<String>, ReplicationError> {
        Ok(self
            .s
            .replica
            .entries()
            .map(|(n, _)| n.to_string())
            .collect())
    }
    fn create(&mut self, n: &str) -> Result<(), ReplicationError> {
        self.call(Action::Create(file(n)))
    }
    fn fill(&mut self, n: &str) -> Result<(), ReplicationError> {
        self.call(Action::Fill(file(n)))
    }
    fn copy_to_temp(&mut self, n: &str, _temp: &str) -> Result<(), ReplicationError> {
        self.call(Action::CopyToTemp(file(n)))
    }
    fn fsync(&mut self, temp: &str) -> Result<(), ReplicationError> {
        self.call(Action::Fsync(name(temp).file()))
    }
    fn rename(&mut self, _from: &str, to: &str) -> Result<(), ReplicationError> {
        self.call(Action::Rename(file(to)))
    }
    fn sync_dir(&mut self) -> Result<(), ReplicationError> {
        self.call(Action::SyncDir)
    }
    fn delete(&mut self, n: &str) -> Result<(), ReplicationError> {
        self.call(Action::Delete(name(n)))
    }
}

/// Commit `g` shaped as the model's: `segments_g`, `_{g-1}`, `_g`.
fn commit(g: u64) -> Commit {
    Commit::new(
        g,
        vec![
            format!("segments_{g}"),
            format!("_{}", g - 1),
            format!("_{g}"),
        ],
    )
    .unwrap()
}

/// The model's scenario for `order`: its variant, readers by name that keep up, up to three
/// copier crashes.
fn scenario(order: Order) -> Scenario {
    let variant = Variant::from_name(order.name()).expect("every order is a model variant");
    Scenario::new(variant, ReaderKind::ReopenByName)
        .with_pace(Pace::KeepUp)
        .with_faults(Faults { crash: 3 })
}

/// Drives the real copier in `order` through the model's three rounds on the model's
/// directory (reader steps at random between its calls, a crash after a random call in
/// some rounds, readers catching up between rounds as `keep-up` says); returns the `always`
/// properties violated on the way.
fn drive(order: Order, seed: u64) -> Vec<&'static str> {
    let sc = scenario(order);
    let mut copier = Copier::new(ModelFs::new(sc, seed), order).with_previous(commit(1));
    for g in 2..=u64::from(sc.last_gen()) {
        loop {
            let fs = copier.fs_mut();
            fs.readers_catch_up();
            let crash_after = (fs.s.budget.crash > 0 && fs.rng.random_bool(0.5))
                .then(|| fs.rng.random_range(1..10));
            let mut calls = 0;
            copier = copier.with_hook(Box::new(move |_| {
                calls += 1;
                if Some(calls) == crash_after {
                    ControlFlow::Break(())
                } else {
                    ControlFlow::Continue(())
                }
            }));
            match copier.replicate(&commit(g)) {
                Ok(_) => {
                    let fs = copier.fs();
                    assert_eq!(
                        u64::from(fs.s.copier.round),
                        g - 1,
                        "{order}: the model's round for commit {g} is done\n{:?}\n{:?}",
                        fs.s,
                        fs.trace
                    );
                    break;
                }
                Err(ReplicationError::Interrupted { .. }) => {
                    let mut fs = copier.into_fs();
                    // Did the crash come after the round's last call?
                    let finished = u64::from(fs.s.copier.round) >= g - 1;
                    // (After the last call of the last round the model's copier is done:
                    // a crash then changes nothing.)
                    if fs.sc.target(&fs.s).is_some() {
                        fs.take(Action::CrashCopier);
                    }
                    // The restarted copier remembers no previous commit; its supervisor
                    // tells it the replica's newest complete commit (what the model's
                    // restarted copier reads). Unless the round was over, it runs the round
                    // again, or refuses the commit if the crashed round had already renamed
                    // its `segments_N` into place (the model refuses it too).
                    let base = fs.s.copier.base.map(|b| commit(u64::from(b)));
                    copier = Copier::new(fs, order).with_revision(base);
                    if finished {
                        break;
                    }
                }
                Err(ReplicationError::NotNewer { generation, .. }) => {
                    let fs = copier.fs();
                    assert!(
                        u64::from(fs.s.copier.round) >= generation - 1,
                        "{order}: the model did not refuse commit {generation}\n{:?}\n{:?}",
                        fs.s,
                        fs.trace
                    );
                    break;
                }
                Err(e) => panic!("{e}"),
            }
        }
    }
    let fs = copier.fs_mut();
    for _ in 0..4 {
        fs.readers_wander();
    }
    fs.violated.clone()
}

/// Every call the real copier makes, in every order, with crashes anywhere, is a step the
/// model allows at that point; and the properties violated on the way, over the random runs,
/// are exactly the ones the model's exhaustive check of the same scenario violates: none for
/// `lockwright`, each order's own set for the others.
#[test]
fn copier_calls_refine_the_model() {
    let orders = [
        Order::Lockwright,
        orders::LUCENE_410_HANDLER,
        orders::LUCENE_5_HANDLER,
        orders::LOCKWRIGHT_NO_RETENTION,
        orders::SEED_RULE,
        orders::SEGMENTS_FIRST,
        orders::ANY_ORDER,
    ];
    for order in orders {
        let mut seen: Vec<&str> = Vec::new();
        for seed in 0..300 {
            for v in drive(order, seed) {
                if !seen.contains(&v) {
                    seen.push(v);
                }
            }
        }
        seen.sort_unstable();
        let mut model = lockwright_model::check(&scenario(order)).violated();
        model.sort_unstable();
        println!("{order}: violated on some run: {seen:?}; the model: {model:?}");
        assert_eq!(
            seen, model,
            "{order}: the real copier's runs against the model's verdict"
        );
        if order == Order::Lockwright {
            assert!(seen.is_empty(), "{order}: {seen:?}");
        }
    }
}
