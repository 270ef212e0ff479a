//! Symmetry reduction for file locks: processes are interchangeable, and so are the threads
//! inside one process (same code, same lock kind), so the checker needs only one state of
//! each class of states that differ by renaming pids and thread slots.
//!
//! The representative sorts the threads of each process, then the processes, by everything
//! that belongs to them — a thread's program counter, remembered inode, open description and
//! the `flock`/OFD locks on it; a process's liveness, held set, sorted threads
//! and POSIX locks — and renames the kernel's description and lock tables to match. Two
//! processes (or threads) with equal keys are identical, so the sorted state is the same for
//! every member of a class: a canonical form, not just a cheaper fingerprint.
//!
//! `mixed` locks with `flock` on even pids and POSIX on odd ones: there only processes of the
//! same parity are interchangeable, and each keeps its parity. `native-two-held-sets` gives
//! even and odd tids different held sets: there only threads of the same parity are
//! interchangeable inside a process, and each keeps its parity.
//!
//! Everything a thread owns is in its key, `Thread::blind` (`native-probe-last`) and
//! `Thread::just_obtained` (the blocking variants) included, as one flags byte (bit 0 blind,
//! bit 1 just obtained: with the second bit clear it hashes and sorts as the `bool` it
//! replaced, so the other variants' keys are unchanged); the written-to inodes are shared
//! kernel state (`Os::hash_shared`).
//!
//! Sound because every property counts or quantifies over all processes and threads alike.
//! Inode generations are global (creation order), so renaming pids leaves them as they are.

use super::kernel::{Desc, Inode, LockRec, Pid};
use super::{Pc, Proc, Scenario, State, Tid, Variant};

/// Everything about one thread, in the order it is sorted by: the parity class of its slot
/// (`native-two-held-sets`; 0 elsewhere), pc, remembered inode, open description, `flock`
/// and OFD locks on it, the flags (`blind`, `just_obtained`: [`thread_flags`]).
type ThreadKey = (u8, Pc, Option<Inode>, Option<Inode>, bool, bool, u8);

/// A thread's flags as one byte: bit 0 `blind`, bit 1 `just_obtained`.
fn thread_flags(th: &super::Thread) -> u8 {
    u8::from(th.blind) | u8::from(th.just_obtained) << 1
}
/// Everything about one process, in the order it is sorted by.
type ProcKey = (Proc, Vec<ThreadKey>, Vec<Inode>);

/// At most this many processes, and threads per process, in a symmetric scenario.
const MAX: usize = 8;

impl Scenario {
    /// The checker's key for `s`'s class: a fingerprint of the shared kernel state, the
    /// global fields except `last`, and the processes' keys in sorted order (threads sorted
    /// inside each), computed without building the canonical state. Equal for every member
    /// of a class and for states that differ only in `last`; other classes collide only as
    /// distinct fingerprints do (the keys hold every pid- and slot-owned part of the state).
    pub fn class_fingerprint(&self, s: &State) -> u64 {
        use std::hash::{Hash, Hasher};
        let n = s.threads_per_process();
        let np = s.procs.len();
        assert!(
            n <= MAX && np <= MAX,
            "symmetry supports up to {MAX} × {MAX}"
        );
        let mut flock = [[false; MAX]; MAX];
        let mut ofd = [[false; MAX]; MAX];
        let mut posix = [0u128; MAX];
        for l in s.os.locks() {
            match l {
                LockRec::Flock { desc, .. } => flock[desc.pid as usize][desc.slot as usize] = true,
                LockRec::Ofd { desc, .. } => ofd[desc.pid as usize][desc.slot as usize] = true,
                LockRec::Posix { inode, pid } => posix[pid as usize] |= 1 << inode,
            }
        }
        let none: ThreadKey = (0, Pc::Idle, None, None, false, false, 0);
        let mut threads = [[none; MAX]; MAX];
        for p in 0..np {
            for t in 0..n {
                let th = s.threads[p * n + t];
                let desc = Desc {
                    pid: p as Pid,
                    slot: t as Tid,
                };
                threads[p][t] = (
                    self.slot_class(t as Tid),
                    th.pc,
                    th.inode,
                    s.os.desc_inode(desc),
                    flock[p][t],
                    ofd[p][t],
                    thread_flags(&th),
                );
            }
            // Sorted by class first: each class's keys, in order, at the class's place.
            threads[p][..n].sort_unstable();
        }
        let key = |p: usize| (s.procs[p], &threads[p][..n], posix[p]);
        let mut order: [usize; MAX] = [0, 1, 2, 3, 4, 5, 6, 7];
        let order = &mut order[..np];
        if self.variant == Variant::Mixed {
            // Even pids first, then odd, each class sorted: parities stay where they are.
            order.sort_unstable_by(|&a, &b| (a % 2, key(a)).cmp(&(b % 2, key(b))));
        } else {
            order.sort_unstable_by(|&a, &b| key(a).cmp(&key(b)));
        }
        let mut h = crate::checker::Fingerprinter::default();
        s.os.hash_shared(&mut h);
        s.budget.hash(&mut h);
        s.orphaned.hash(&mut h);
        // `last` (the outcome of the step that led here) is left out: no transition reads
        // it, so states that differ only there have the same future; the checker evaluates
        // `sometimes` properties on every transition, so nothing they read is lost.
        for &p in order.iter() {
            key(p).hash(&mut h);
        }
        h.finish()
    }

    /// Which slots a thread may be renamed to: those of the same class (the parity of the
    /// slot in `native-two-held-sets`, where it picks the held set; one class elsewhere).
    fn slot_class(&self, t: Tid) -> u8 {
        if self.variant.held_sets() > 1 {
            t % 2
        } else {
            0
        }
    }

    /// The canonical member of `s`'s symmetry class; `None` if `s` is canonical already (or
    /// symmetry reduction is off).
    pub fn canonical(&self, s: &State) -> Option<State> {
        if !self.symmetry {
            return None;
        }
        let n = s.threads_per_process();
        let thread_key = |p: Pid, t: Tid| -> ThreadKey {
            let th = s.thread(p, t);
            let desc = Desc { pid: p, slot: t };
            let mut flock = false;
            let mut ofd = false;
            for l in s.os.locks() {
                match l {
                    LockRec::Flock { desc: d, .. } if d == desc => flock = true,
                    LockRec::Ofd { desc: d, .. } if d == desc => ofd = true,
                    _ => {}
                }
            }
            (
                self.slot_class(t),
                th.pc,
                th.inode,
                s.os.desc_inode(desc),
                flock,
                ofd,
                thread_flags(&th),
            )
        };
        // Per process: the new order of its thread slots (new slot → old slot) and its key.
        let mut slot_order: Vec<Vec<Tid>> = Vec::with_capacity(s.procs.len());
        let mut keys: Vec<ProcKey> = Vec::with_capacity(s.procs.len());
        for p in 0..s.procs.len() as Pid {
            let mut threads: Vec<(ThreadKey, Tid)> =
                (0..n as Tid).map(|t| (thread_key(p, t), t)).collect();
            threads.sort();
            if self.variant.held_sets() > 1 {
                // Each parity class of slots keeps its slots: the class's sorted threads go
                // to the class's slots, in order.
                let mut by_class: Vec<Vec<(ThreadKey, Tid)>> = vec![Vec::new(); 2];
                for entry in threads {
                    by_class[usize::from(entry.0 .0)].push(entry);
                }
                let mut next = [0usize; 2];
                threads = (0..n as Tid)
                    .map(|slot| {
                        let c = usize::from(self.slot_class(slot));
                        next[c] += 1;
                        by_class[c][next[c] - 1]
                    })
                    .collect();
            }
            let posix: Vec<Inode> =
                s.os.locks()
                    .filter_map(|l| match l {
                        LockRec::Posix { inode, pid } if pid == p => Some(inode),
                        _ => None,
                    })
                    .collect();
            slot_order.push(threads.iter().map(|&(_, t)| t).collect());
            keys.push((
                s.procs[p as usize],
                threads.into_iter().map(|(k, _)| k).collect(),
                posix,
            ));
        }
        // The new order of the processes (new pid → old pid), within each parity class for
        // `mixed`.
        let classes: Vec<Vec<Pid>> = if self.variant == Variant::Mixed {
            let even = (0..s.procs.len() as Pid)
                .filter(|p| p.is_multiple_of(2))
                .collect();
            let odd = (0..s.procs.len() as Pid)
                .filter(|p| !p.is_multiple_of(2))
                .collect();
            vec![even, odd]
        } else {
            vec![(0..s.procs.len() as Pid).collect()]
        };
        let mut pid_order: Vec<Pid> = (0..s.procs.len() as Pid).collect();
        for class in classes {
            let mut sorted = class.clone();
            sorted.sort_by(|&a, &b| keys[a as usize].cmp(&keys[b as usize]));
            for (&position, &old) in class.iter().zip(&sorted) {
                pid_order[position as usize] = old;
            }
        }
        let identity = pid_order.iter().enumerate().all(|(i, &p)| i == p as usize)
            && slot_order
                .iter()
                .all(|o| o.iter().enumerate().all(|(i, &t)| i == t as usize));
        if identity {
            return None;
        }
        // Old (pid, slot) → new (pid, slot).
        let mut new_pid = vec![0 as Pid; s.procs.len()];
        for (new, &old) in pid_order.iter().enumerate() {
            new_pid[old as usize] = new as Pid;
        }
        let mut new_slot: Vec<Vec<Tid>> =
            slot_order.iter().map(|o| vec![0 as Tid; o.len()]).collect();
        for (p, order) in slot_order.iter().enumerate() {
            for (new, &old) in order.iter().enumerate() {
                new_slot[p][old as usize] = new as Tid;
            }
        }
        let rename = |d: Desc| -> Desc {
            if d.slot as usize >= n {
                return Desc {
                    pid: new_pid[d.pid as usize],
                    slot: d.slot,
                };
            }
            Desc {
                pid: new_pid[d.pid as usize],
                slot: new_slot[d.pid as usize][d.slot as usize],
            }
        };
        let mut out = s.clone();
        for (new, &old) in pid_order.iter().enumerate() {
            out.procs[new] = s.procs[old as usize];
            for (t, &old_t) in slot_order[old as usize].iter().enumerate() {
                out.threads[new * n + t] = s.thread(old, old_t);
            }
        }
        out.os.rename_owners(rename, |p| new_pid[p as usize]);
        Some(out)
    }
}
