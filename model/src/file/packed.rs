//! The file model's packed state encoding: what the checker fingerprints when symmetry
//! reduction is off.
//!
//! The derived `Hash` feeds a hasher one call per field (a length, a discriminant, a flag),
//! through calls that keep the hasher in memory; on the unreduced 3 × 2 scenario that was a
//! fifth of the checker's time. [`State::pack`] writes the same information as a few bytes per
//! field into a buffer on the stack, and the checker mixes the buffer a word at a time
//! ([`Packer::fingerprint`]). Stateright's own checker cannot use this (it hashes states
//! through `Hash`); it is the checker's [`Checkable::visited_key`] hook.
//!
//! The encoding is injective: every field of [`State`] is in it (the destructuring below
//! does not compile if a field is added and forgotten), each table is preceded by its length,
//! and each entry has a fixed width. `model/tests/models/file/packed_states.rs` checks that the reachable
//! states of several scenarios get distinct encodings.
//!
//! [`Checkable::visited_key`]: crate::checker::Checkable::visited_key

use super::{Event, Faults, Pc, Proc, State, Thread};
use crate::checker::Packer;

impl State {
    /// The packed encoding's length; `None` if it does not fit a [`Packer`] (a scenario far
    /// bigger than any that is checked exhaustively).
    pub fn packed_len(&self) -> Option<usize> {
        if self.procs.len() > usize::from(u8::MAX) || self.threads.len() > usize::from(u8::MAX) {
            return None;
        }
        let len = self.os.encoded_len()? + 1 + self.procs.len() + 1 + 3 * self.threads.len() + 11;
        Packer::fits(len).then_some(len)
    }

    /// Writes the packed encoding of `self` into `out` (empty); the caller checked
    /// [`State::packed_len`].
    #[inline]
    pub fn pack(&self, out: &mut Packer) {
        let State {
            os,
            procs,
            threads,
            budget,
            orphaned,
            last,
        } = self;
        os.encode(|b| out.push(b));
        out.push(procs.len() as u8);
        for &Proc { alive, held, held2 } in procs {
            out.push(u8::from(alive) | u8::from(held) << 1 | u8::from(held2) << 2);
        }
        out.push(threads.len() as u8);
        for &Thread {
            pc,
            inode,
            blind,
            just_obtained,
        } in threads
        {
            let (code, arg) = match pc {
                Pc::Idle => (0, 0),
                Pc::Inserted => (1, 0),
                Pc::Opened => (2, 0),
                Pc::Blocked => (3, 0),
                Pc::BlockedClosed => (4, 0),
                Pc::BlockedRemoved => (5, 0),
                Pc::Holding => (6, 0),
                Pc::Writing => (7, 0),
                Pc::Checking(n) => (8, n),
                Pc::Unlocked => (9, 0),
                Pc::ReleasedClosed => (10, 0),
                Pc::ReleasedRemoved => (11, 0),
                Pc::Locked => (12, 0),
                Pc::Stale => (13, 0),
                Pc::StaleUnlocked => (14, 0),
            };
            out.push(
                code | u8::from(blind) << 4
                    | u8::from(inode.is_some()) << 5
                    | u8::from(just_obtained) << 6,
            );
            out.push(arg);
            out.push(inode.unwrap_or(0));
        }
        let Faults {
            crash,
            restart,
            unlink,
            replace,
            foreign,
            lose_lock,
            lock_error,
            unlock_error,
            close_error,
            write,
        } = *budget;
        for b in [
            crash,
            restart,
            unlink,
            replace,
            foreign,
            lose_lock,
            lock_error,
            unlock_error,
            close_error,
            write,
        ] {
            out.push(b);
        }
        let last = match last {
            Event::None => 0,
            Event::Refused => 1,
            Event::ObtainedAfterCrash => 2,
        };
        out.push(u8::from(*orphaned) | last << 1);
    }

    /// The checker's key for `self` without symmetry: the fingerprint of its packed
    /// encoding, or (a state too big to pack) of its derived `Hash`.
    #[inline]
    pub fn packed_fingerprint(&self) -> u64 {
        if self.packed_len().is_none() {
            return crate::checker::fingerprint(self);
        }
        let mut out = Packer::default();
        self.pack(&mut out);
        out.fingerprint()
    }
}
