//! Which lock family and scenario `lockwright check` and `lockwright explore` run: the
//! options, and how each family builds its model from them (every option not given takes the
//! family's standard scenario's value; an option of another family is an error).

use anyhow::bail;

/// The one of `all` whose command-line name is `given`.
///
/// # Errors
/// `unknown <what> `given` (one of: …)`.
fn pick<T: Copy>(
    given: &str,
    all: &[T],
    name: impl Fn(T) -> &'static str,
    what: &str,
) -> anyhow::Result<T> {
    all.iter()
        .copied()
        .find(|&x| name(x) == given)
        .ok_or_else(|| {
            let names: Vec<&str> = all.iter().map(|&x| name(x)).collect();
            anyhow::anyhow!("unknown {what} `{given}` (one of: {})", names.join(", "))
        })
}
use lockwright_model::file::{self, Faults, LockKind, Variant};
use lockwright_model::{docstore, etcd, redis, replication, zk};

/// `on` or `off`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Switch {
    On,
    Off,
}

impl ScenarioArgs {
    /// `--symmetry` if given, else `default`.
    fn symmetry_or(&self, default: bool) -> bool {
        self.symmetry.map_or(default, |s| s == Switch::On)
    }
}

/// The lock families `--family` accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum FamilyName {
    /// File locks: held set + OS advisory lock (Lucene's `write.lock`).
    File,
    /// The ZooKeeper mutex: Curator's `InterProcessMutex` and its broken variants.
    Zk,
    /// Document-store locks: the Elasticsearch recipes and a corrected (leased, fenced) one.
    Docstore,
    /// Index replication by generations: copy orders against readers of the replica.
    Replication,
    /// Redis locks: the single-instance lock and Redlock, Kleppmann's and Sanfilippo's
    /// scenarios.
    Redis,
    /// etcd's lease mutex: `concurrency.Mutex` 3.5 and 3.4, the lock service.
    Etcd,
}

impl FamilyName {
    /// The command-line name.
    pub fn name(self) -> &'static str {
        match self {
            FamilyName::File => "file",
            FamilyName::Zk => "zk",
            FamilyName::Docstore => "docstore",
            FamilyName::Replication => "replication",
            FamilyName::Redis => "redis",
            FamilyName::Etcd => "etcd",
        }
    }
}

/// Which family and scenario to check (shared with `lockwright explore`). Every option not
/// given takes its value from the family's standard scenario; options of another family are
/// refused.
#[derive(clap::Args, Debug, Clone)]
pub struct ScenarioArgs {
    /// Lock family.
    #[arg(long, value_enum, default_value = "file")]
    pub family: FamilyName,
    /// Protocol variant. file: native, native-4.10, native-delete-on-release,
    /// native-no-held-set, simple, single-instance, no-lock, mixed, native-blocking,
    /// native-two-held-sets, and the defects native-probe-last, native-skip-inode-check,
    /// native-skip-held-contains, native-carry-on-after-lock-error,
    /// native-blocking-no-recheck. zk: curator,
    /// no-protection, release-forgets, adopt-old-session, delete-by-name-retry,
    /// release-cancel-unsafe, give-up-cancel-unsafe, search-without-sync,
    /// abandon-without-delete, drop-own-on-session-swap, protection-id-per-client, text-order
    /// (differs from curator only with --sequence-width). docstore:
    /// global, document, read-write, leased, leased-upsert, leased-noop, leased-fix-upsert,
    /// leased-fix-unverified, leased-fix-unconditional, leased-fix-unchecked, document-bulk.
    /// replication: segments-first,
    /// any-order, seed-rule, lucene-4.10-handler, lucene-5-handler, lockwright-no-retention,
    /// lockwright. redis: single, single-unchecked, redlock, redlock-no-recheck,
    /// redlock-wrapping-validity, redis-py. etcd: etcd-3.5, etcd-3.4, lock-service, unlock-retry-by-name,
    /// lease-id-token.
    #[arg(long)]
    pub variant: Option<String>,
    /// file: OS lock kind of the native variants: flock, posix, ofd, nfs-flock (`mixed` always
    /// uses flock for even pids and posix for odd ones).
    #[arg(long, alias = "kind")]
    pub os: Option<String>,
    /// file: number of processes (1..=8).
    #[arg(long, value_parser = clap::value_parser!(u8).range(1..=8))]
    pub processes: Option<u8>,
    /// file: threads per process (1..=8).
    #[arg(long, value_parser = clap::value_parser!(u8).range(1..=8))]
    pub threads: Option<u8>,
    /// zk, docstore, redis, etcd: number of clients (zk 1..=4, client c0 re-enters; docstore
    /// 1..=4; redis 1..=3; etcd 1..=3).
    #[arg(long, value_parser = clap::value_parser!(u8).range(1..=4))]
    pub clients: Option<u8>,
    /// zk: clients c0 and c1 are two mutexes of one process sharing one ZooKeeper client (one
    /// session, renewed by whichever mutex learns first that it expired).
    #[arg(long)]
    pub shared_client: bool,
    /// zk: the lock directory's sequence counter is a signed N-bit one (2..=8) that behaves at
    /// its top as ZooKeeper 3.8's 32-bit one does: creates applied one at a time repeat the
    /// top suffix, creates in flight together wrap to negative ones. Default: a counter that
    /// never reaches its top.
    #[arg(long, value_parser = clap::value_parser!(u8).range(2..=8))]
    pub sequence_width: Option<u8>,
    /// zk: what a holder does when it learns its session expired: lockwright (reports the
    /// lock lost) or curator (`InterProcessMutex`: keeps believing it holds). etcd: what ends
    /// a holder's belief: none (the Mutex alone), session (Go's `Session.Done()`, a deadline
    /// from the keepalive reply's arrival) or lockwright (a deadline from the keepalive's send).
    #[arg(long)]
    pub guard: Option<String>,
    /// etcd: lock attempts per client (1..=3).
    #[arg(long, value_parser = clap::value_parser!(u8).range(1..=3))]
    pub cycles: Option<u8>,
    /// etcd: the revision counter's width in bits (2..=7); a write that would pass its top is
    /// not enabled (etcd's int64 is never reached).
    #[arg(long, value_parser = clap::value_parser!(u8).range(2..=7))]
    pub revision_width: Option<u8>,
    /// docstore `read-write`: how many of the clients are readers. replication: reader
    /// threads on the replica (1..=4).
    #[arg(long)]
    pub readers: Option<u8>,
    /// replication: how readers use files: open-handles, reopen-by-name (NFS-like).
    #[arg(long)]
    pub reader: Option<String>,
    /// replication: keep-up (every reader reopens between two syncs) or unbounded.
    #[arg(long)]
    pub pace: Option<String>,
    /// replication: commits the copier replicates (1..=6). redis: critical sections each
    /// client runs (1..=2).
    #[arg(long, value_parser = clap::value_parser!(u8).range(1..=6))]
    pub rounds: Option<u8>,
    /// replication: data files per commit (1..=4).
    #[arg(long, value_parser = clap::value_parser!(u8).range(1..=4))]
    pub data_files: Option<u8>,
    /// redis: Redis instances (1 for the single-instance recipes; 1, 3 or 5 for Redlock).
    #[arg(long, value_parser = clap::value_parser!(u8).range(1..=5))]
    pub instances: Option<u8>,
    /// redis: the clock-drift allowance the recipe subtracts from its validity, in ticks
    /// (0..=2; default 1). 0 is the formula without its drift term (the twin of the
    /// `fast-clock` rows).
    #[arg(long, value_parser = clap::value_parser!(u8).range(0..=2))]
    pub drift: Option<u8>,
    /// docstore `leased`: the lease length in clock ticks (1..=3).
    #[arg(long, value_parser = clap::value_parser!(u8).range(1..=3))]
    pub lease: Option<u8>,
    /// How the protected resource is written. zk: unfenced, check-then-write, fenced,
    /// fenced-claim, fenced-by-sequence, guarded. docstore: unfenced, fenced, fenced-claim.
    /// redis: unfenced, fenced, fenced-claim, cas.
    /// etcd: unfenced, fenced, fenced-claim, guarded.
    #[arg(long)]
    pub writes: Option<String>,
    /// Fault budgets, or `none`. file: crash, restart, unlink, replace, foreign, lose-lock,
    /// lock-error, unlock-error, close-error, write (e.g.
    /// `crash=2,restart=2,unlink=1,replace=1,foreign=1`). zk: expire, lose-reply,
    /// restart, recreate-parent, abandon, suspend, lag, misread. docstore: crash, restart, stray-delete,
    /// lose-reply, pause, failover, recreate-index, recreate-doc, rollback. replication: crash
    /// (of the copier). redis: pause, slow-acquire, clock-jump, fast-clock, restart,
    /// delayed-restart, failover, lose-reply, crash. etcd: expire, pause, lose-reply, leader-change, compact, restart.
    #[arg(long)]
    pub faults: Option<String>,
    /// Symmetry reduction: `on` merges states that differ only by renaming interchangeable
    /// parties (processes and threads, clients, readers); `off` explores the full space.
    /// Verdicts and counterexample lengths are the same; counts and the exact paths differ.
    /// Default: the family's standard scenario's setting.
    #[arg(long, value_enum)]
    pub symmetry: Option<Switch>,
    /// Start from the family's deep scenario (what `LOCKWRIGHT_DEEP=1` tests) instead of the
    /// standard one.
    #[arg(long)]
    pub deep: bool,
}

impl ScenarioArgs {
    /// The options given that `family` does not take, by their flag names.
    fn refuse(&self, takes: &[&str]) -> anyhow::Result<()> {
        let given = [
            ("--os", self.os.is_some()),
            ("--processes", self.processes.is_some()),
            ("--threads", self.threads.is_some()),
            ("--clients", self.clients.is_some()),
            ("--readers", self.readers.is_some()),
            ("--lease", self.lease.is_some()),
            ("--writes", self.writes.is_some()),
            ("--guard", self.guard.is_some()),
            ("--shared-client", self.shared_client),
            ("--sequence-width", self.sequence_width.is_some()),
            ("--reader", self.reader.is_some()),
            ("--pace", self.pace.is_some()),
            ("--rounds", self.rounds.is_some()),
            ("--data-files", self.data_files.is_some()),
            ("--instances", self.instances.is_some()),
            ("--drift", self.drift.is_some()),
            ("--cycles", self.cycles.is_some()),
            ("--revision-width", self.revision_width.is_some()),
        ];
        for (flag, set) in given {
            if set && !takes.contains(&flag) {
                bail!("{flag} does not apply to --family {}", self.family.name());
            }
        }
        Ok(())
    }

    /// The ZooKeeper family's scenario: the standard (or deep) one with the given options
    /// applied.
    ///
    /// # Errors
    /// An unknown variant, write mode, guard or fault, or an option of another family.
    pub fn zk(&self) -> anyhow::Result<zk::Scenario> {
        use zk::{Guard, Variant, WriteMode};
        self.refuse(&[
            "--clients",
            "--writes",
            "--guard",
            "--shared-client",
            "--sequence-width",
        ])?;
        let mut sc = if self.deep {
            zk::Scenario::deep()
        } else {
            zk::Scenario::standard()
        };
        if let Some(v) = &self.variant {
            sc = sc.with_variant(pick(v, &Variant::ALL, |x| x.name(), "variant")?);
        }
        if let Some(w) = &self.writes {
            sc = sc.with_writes(pick(w, &WriteMode::ALL, |x| x.name(), "write mode")?);
        }
        if let Some(g) = &self.guard {
            sc = sc.with_guard(pick(g, &Guard::ALL, |x| x.name(), "guard")?);
        }
        if let Some(c) = self.clients {
            sc = sc.with_clients(c);
        }
        if let Some(f) = &self.faults {
            sc = sc.with_faults(zk::Faults::parse(f).map_err(anyhow::Error::msg)?);
        }
        if self.shared_client {
            if sc.clients < 2 {
                bail!("--shared-client needs --clients 2 or more (c0 and c1 share the client)");
            }
            sc = sc.with_shared_client(true);
        }
        if let Some(w) = self.sequence_width {
            // A chain of creates in flight together, one per client, wraps from the top
            // through the negative values; with more clients than the negative half has
            // values it would wrap back to non-negative suffixes, which a 32-bit counter
            // never reaches with a real fleet: a verdict there would be the width's, not
            // ZooKeeper's.
            let negatives = 1usize << (w - 1);
            if usize::from(sc.clients) > negatives {
                bail!(
                    "--sequence-width {w} with --clients {}: at most {negatives} clients for a \
                     {w}-bit counter (more would wrap the counter back past its negative half); \
                     use --sequence-width {} or fewer clients",
                    sc.clients,
                    usize::BITS - (usize::from(sc.clients) - 1).leading_zeros() + 1
                );
            }
            sc = sc.with_sequence_width(Some(w));
        }
        Ok(sc.with_symmetry(self.symmetry_or(sc.symmetry)))
    }

    /// The etcd family's scenario: the standard (or deep) one with the given options applied.
    ///
    /// # Errors
    /// An unknown variant, write mode, guard or fault, more than 3 clients, or an option of
    /// another family.
    pub fn etcd(&self) -> anyhow::Result<etcd::Scenario> {
        use etcd::{Guard, Variant, WriteMode};
        self.refuse(&[
            "--clients",
            "--writes",
            "--guard",
            "--cycles",
            "--revision-width",
        ])?;
        let mut sc = if self.deep {
            etcd::Scenario::deep()
        } else {
            etcd::Scenario::standard()
        };
        if let Some(v) = &self.variant {
            sc = sc.with_variant(pick(v, &Variant::ALL, |x| x.name(), "variant")?);
        }
        if let Some(w) = &self.writes {
            sc = sc.with_writes(pick(w, &WriteMode::ALL, |x| x.name(), "write mode")?);
        }
        if let Some(g) = &self.guard {
            sc = sc.with_guard(pick(g, &Guard::ALL, |x| x.name(), "guard")?);
        }
        if let Some(c) = self.clients {
            if c > 3 {
                bail!("--clients must be 1..=3 for --family etcd");
            }
            sc = sc.with_clients(c);
        }
        if let Some(n) = self.cycles {
            sc = sc.with_cycles(n);
        }
        if let Some(w) = self.revision_width {
            sc = sc.with_revision_width(w);
        }
        if let Some(f) = &self.faults {
            sc = sc.with_faults(etcd::Faults::parse(f).map_err(anyhow::Error::msg)?);
        }
        if self.symmetry == Some(Switch::On) {
            bail!("--family etcd has no symmetry reduction (its clients' leases are ordered)");
        }
        Ok(sc)
    }

    /// The replication family's scenario: the standard (or deep) one with the given options
    /// applied.
    ///
    /// # Errors
    /// An unknown variant, reader kind, pace or fault, or an option of another family.
    pub fn replication(&self) -> anyhow::Result<replication::Scenario> {
        use replication::{Pace, ReaderKind, Variant};
        self.refuse(&[
            "--readers",
            "--reader",
            "--pace",
            "--rounds",
            "--data-files",
        ])?;
        let mut sc = if self.deep {
            replication::Scenario::deep()
        } else {
            replication::Scenario::standard()
        };
        if let Some(v) = &self.variant {
            let variant = pick(v, &Variant::ALL, |x| x.name(), "variant")?;
            sc = replication::Scenario { variant, ..sc };
        }
        if let Some(r) = &self.reader {
            sc = sc.with_reader(pick(r, &ReaderKind::ALL, |x| x.name(), "reader kind")?);
        }
        if let Some(p) = &self.pace {
            sc = sc.with_pace(pick(p, &Pace::ALL, |x| x.name(), "pace")?);
        }
        if let Some(n) = self.readers {
            if !(1..=4).contains(&n) {
                bail!("--readers must be 1..=4 for --family replication");
            }
            sc = sc.with_readers(n);
        }
        if let Some(n) = self.rounds {
            sc = sc.with_rounds(n);
        }
        if let Some(n) = self.data_files {
            sc = sc.with_data_files(n);
        }
        if let Some(f) = &self.faults {
            sc = sc.with_faults(replication::Faults::parse(f).map_err(anyhow::Error::msg)?);
        }
        let symmetry = self.symmetry_or(sc.symmetry);
        Ok(replication::Scenario { symmetry, ..sc })
    }

    /// The Redis family's scenario: the standard (or deep) one with the given options applied
    /// (a different variant starts from its own defaults: three instances for Redlock, one
    /// otherwise).
    ///
    /// # Errors
    /// An unknown variant, write mode or fault, a count out of range, or an option of another
    /// family.
    pub fn redis(&self) -> anyhow::Result<redis::Scenario> {
        use redis::{Variant, Writes};
        self.refuse(&[
            "--clients",
            "--writes",
            "--rounds",
            "--instances",
            "--drift",
        ])?;
        if self.symmetry == Some(Switch::On) {
            bail!("--family redis has no symmetry reduction (its clients are not interchangeable: tokens order them)");
        }
        let base = if self.deep {
            redis::Scenario::deep()
        } else {
            redis::Scenario::standard()
        };
        let variant = match &self.variant {
            Some(v) => pick(v, &Variant::ALL, |x| x.name(), "variant")?,
            None => base.variant,
        };
        let mut sc = if variant == base.variant {
            base
        } else {
            redis::Scenario::new(variant, base.writes).with_faults(base.faults)
        };
        if let Some(w) = &self.writes {
            sc = sc.with_writes(pick(w, &Writes::ALL, |x| x.name(), "write mode")?);
        }
        if let Some(f) = &self.faults {
            sc = sc.with_faults(redis::Faults::parse(f).map_err(anyhow::Error::msg)?);
        }
        if let Some(c) = self.clients {
            if !(1..=3).contains(&c) {
                bail!("--clients must be 1..=3 for --family redis");
            }
            sc = sc.with_clients(c);
        }
        if let Some(r) = self.rounds {
            if !(1..=2).contains(&r) {
                bail!("--rounds must be 1..=2 for --family redis");
            }
            sc = sc.with_rounds(r);
        }
        if let Some(n) = self.instances {
            if !variant.redlock() && n != 1 {
                bail!("--instances {n}: --variant {variant} runs on one instance (Redlock's variants take 1, 3 or 5)");
            }
            if n % 2 == 0 {
                bail!("--instances {n}: Redlock needs an odd number of instances (1, 3 or 5)");
            }
            sc = sc.with_instances(n);
        }
        if let Some(d) = self.drift {
            sc = sc.with_drift(d.into());
        }
        Ok(sc)
    }

    /// The document-store family's scenario: the standard (or deep) one with the given
    /// options applied.
    ///
    /// # Errors
    /// An unknown variant, write mode or fault, or an option of another family.
    pub fn docstore(&self) -> anyhow::Result<docstore::Scenario> {
        use docstore::{Variant, Writes};
        self.refuse(&["--clients", "--readers", "--lease", "--writes"])?;
        let base = if self.deep {
            docstore::Scenario::deep()
        } else {
            docstore::Scenario::standard()
        };
        let variant = match &self.variant {
            Some(v) => pick(v, &Variant::ALL, |x| x.name(), "variant")?,
            None => base.variant,
        };
        let writes = match &self.writes {
            Some(w) => pick(w, &Writes::ALL, |x| x.name(), "write mode")?,
            None => base.writes,
        };
        let faults = match &self.faults {
            Some(f) => docstore::Faults::parse(f).map_err(anyhow::Error::msg)?,
            None => base.faults,
        };
        // A different variant starts from its own defaults (clients, readers).
        let mut sc = if variant == base.variant {
            base
        } else {
            docstore::Scenario::new(variant, writes)
        }
        .with_writes(writes)
        .with_faults(faults);
        if let Some(c) = self.clients {
            sc = sc.with_clients(c);
        }
        if let Some(r) = self.readers {
            if variant != Variant::ReadWrite {
                bail!("--readers applies to --variant read-write only");
            }
            sc = sc.with_readers(r);
        }
        if let Some(l) = self.lease {
            sc = sc.with_lease(u64::from(l));
        }
        Ok(sc.with_symmetry(self.symmetry_or(sc.symmetry)))
    }

    /// The file family's scenario: the standard (or deep) one with the given options applied.
    ///
    /// # Errors
    /// An unknown variant, lock kind or fault, or an option of another family.
    pub fn file(&self) -> anyhow::Result<file::Scenario> {
        self.refuse(&["--os", "--processes", "--threads"])?;
        let base = if self.deep {
            file::Scenario::deep()
        } else {
            file::Scenario::standard()
        };
        let variant = match &self.variant {
            Some(v) => pick(v, &Variant::ALL, |x| x.name(), "variant")?,
            None => base.variant,
        };
        let os = match &self.os {
            Some(k) => pick(k, &LockKind::ALL, |x| x.name(), "lock kind")?,
            None => base.os,
        };
        let faults = match &self.faults {
            Some(f) => Faults::parse(f).map_err(anyhow::Error::msg)?,
            None => base.faults,
        };
        Ok(file::Scenario {
            variant,
            os,
            processes: self.processes.unwrap_or(base.processes),
            threads: self.threads.unwrap_or(base.threads),
            faults,
            symmetry: self.symmetry_or(base.symmetry),
        })
    }
}
