//! Symmetry reduction: the non-reentrant clients are interchangeable, so the checker counts
//! states that differ only by a renaming of them once.

use std::borrow::Cow;

use crate::zk::scenario::Scenario;
use crate::zk::state::State;

impl Scenario {
    /// Symmetry: the non-reentrant clients are interchangeable. The representative orders
    /// them by a key that does not mention other clients' names (`Client::symmetry_key`);
    /// among clients with equal keys it takes the permutation giving the smallest state (by
    /// `Ord`). `None` when `s` is already its own representative.
    pub(crate) fn canonical(&self, s: &State) -> Option<State> {
        let first = self.first_symmetric();
        if !self.symmetry || self.clients < first + 2 {
            return None;
        }
        let key = |c: u8| s.clients[c as usize].symmetry_key();
        let sorted = (first + 1..self.clients).all(|c| key(c - 1) <= key(c));
        let ties = (first + 1..self.clients).any(|c| key(c - 1) == key(c));
        if sorted && !ties {
            return None;
        }
        if self.clients == first + 2 {
            // Two interchangeable clients (the standard scenario): the swap, or not.
            let mut swap = [0, 1, 2, 3, 4, 5, 6, 7];
            swap.swap(first as usize, first as usize + 1);
            let p = s.permuted(&swap[..self.clients as usize]);
            return (!sorted || p < *s).then_some(p);
        }
        // Candidates: permutations after which the keys are in order.
        let mut best: Option<Cow<State>> = None;
        for perm in self.permutations() {
            // perm[c] is c's new name: the client now at place k is at[k].
            let mut at = [0u8; 8];
            for c in 0..self.clients {
                at[perm[c as usize] as usize] = c;
            }
            if !(first + 1..self.clients).all(|k| key(at[k as usize - 1]) <= key(at[k as usize])) {
                continue;
            }
            let identity = perm.iter().enumerate().all(|(i, &p)| i as u8 == p);
            let candidate = if identity {
                Cow::Borrowed(s)
            } else {
                Cow::Owned(s.permuted(&perm))
            };
            if best
                .as_ref()
                .is_none_or(|b| candidate.as_ref() < b.as_ref())
            {
                best = Some(candidate);
            }
        }
        match best {
            Some(Cow::Owned(b)) => Some(b),
            _ => None,
        }
    }

    /// Every permutation of the interchangeable clients (identity first): `perm[c]` is the
    /// new name of client `c`; the reentrant client keeps its name.
    fn permutations(&self) -> Vec<Vec<u8>> {
        fn extend(prefix: &mut Vec<u8>, rest: &mut Vec<u8>, out: &mut Vec<Vec<u8>>) {
            if rest.is_empty() {
                out.push(prefix.clone());
                return;
            }
            for i in 0..rest.len() {
                let x = rest.remove(i);
                prefix.push(x);
                extend(prefix, rest, out);
                prefix.pop();
                rest.insert(i, x);
            }
        }
        let first = self.first_symmetric();
        let mut out = Vec::new();
        extend(
            &mut (0..first).collect(),
            &mut (first..self.clients).collect(),
            &mut out,
        );
        out
    }
}
