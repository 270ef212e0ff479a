//! `State`'s `Debug`: the compact summary the Explorer and counterexample listings show
//! (moved out of `state.rs` to keep it under 600 lines).

use std::fmt;

use crate::zk::state::{Cleanup, Event, Sent, State};

impl fmt::Debug for State {
    /// ```text
    /// /locks: _c_c0-lock-0 (czxid 2, c0.s0), _c_c1-lock-1 (czxid 3, c1.s0); next seq 2
    /// sessions alive: c0.s0, c1.s0, c2.s0; watches: _c_c0-lock-0 by c1.s0; fired: -
    /// c0 Updating [_c_c0-lock-0 czxid 2] session s0, grant 0 in s0, count 1
    /// c1 Waiting [_c_c1-lock-1 czxid 3] session s0
    /// resource: max czxid 2, max seq token -, latest grant written 0; faults left: expire=1; last step: contention
    /// ```
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let list = |v: Vec<String>| {
            if v.is_empty() {
                "-".to_string()
            } else {
                v.join(", ")
            }
        };
        let children = self
            .server
            .children()
            .iter()
            .map(|z| format!("{} (czxid {}, {})", z.name, z.czxid, z.owner))
            .collect();
        writeln!(
            f,
            "/locks: {}; next seq {}",
            list(children),
            self.server.next_seq()
        )?;
        let sessions = self
            .server
            .sessions()
            .iter()
            .map(|s| s.to_string())
            .collect();
        let watches = self
            .server
            .watches()
            .iter()
            .map(|(n, s)| format!("{n} by {s}"))
            .collect();
        let fired = (0..self.clients.len() as u8)
            .flat_map(|c| {
                let server = &self.server;
                server
                    .sessions()
                    .iter()
                    .filter(move |s| s.client == c && server.has_watch_event(**s))
                    .map(|s| s.to_string())
            })
            .collect();
        writeln!(
            f,
            "sessions alive: {}; watches: {}; fired: {}",
            list(sessions),
            list(watches),
            list(fired)
        )?;
        for (c, cl) in self.clients.iter().enumerate() {
            write!(f, "c{c} {:?}", cl.pc)?;
            if let Some(o) = cl.own {
                write!(f, " [{} czxid {}]", o.name, o.czxid)?;
            }
            if let Some(p) = cl.pred {
                write!(f, " pred {p}")?;
            }
            write!(f, " session s{}", cl.session)?;
            if cl.known != cl.session {
                write!(f, " (knows s{})", cl.known)?;
            }
            if cl.process != c as u8 {
                write!(f, " of c{}'s client", cl.process)?;
            }
            if cl.pc.believes() {
                write!(
                    f,
                    ", grant {} in s{}, count {}",
                    cl.grant, cl.held_in, cl.count
                )?;
            }
            if cl.overwritten {
                write!(f, ", its read OVERWRITTEN")?;
            }
            if cl.suspended {
                write!(f, ", SUSPENDED")?;
            }
            if cl.awaiting {
                write!(f, ", awaiting a lost answer")?;
            }
            match cl.queued {
                Some(Sent::Create(_)) => write!(f, ", create queued")?,
                Some(Sent::Delete(n)) => write!(f, ", delete {n} queued")?,
                None => {}
            }
            match cl.cleanup {
                Some(Cleanup::Search) => write!(f, ", cleanup searches")?,
                Some(Cleanup::Delete(n)) => write!(f, ", cleanup deletes {n}")?,
                None => {}
            }
            writeln!(f)?;
        }
        let opt = |o: Option<u8>| o.map_or("-".to_string(), |v| v.to_string());
        let last = match self.last {
            Event::None => "",
            Event::Contention => "; last step: contention",
            Event::CounterAtTop => "; last step: own suffix at the counter's top: refused",
            Event::WokenByWatch => "; last step: waiter woken by watch",
            Event::HandoffAfterExpiry => "; last step: granted after a holder's session expired",
            Event::LockLost => "; last step: lock lost reported",
            Event::Accepted {
                stale, lost_update, ..
            } => match (stale, lost_update) {
                (false, false) => "; last step: write accepted",
                (true, false) => "; last step: STALE WRITE ACCEPTED",
                (false, true) => "; last step: LOST UPDATE",
                (true, true) => "; last step: STALE WRITE ACCEPTED, LOST UPDATE",
            },
        };
        write!(
            f,
            "resource: max czxid {}, max seq token {}, latest grant written {}; faults left: {}{}{last}",
            opt(self.resource.max_czxid),
            self.resource.max_seq.map_or("-".to_string(), |v| v.to_string()),
            opt(self.resource.max_grant),
            self.budget,
            if self.expired_holder {
                "; a holder's session expired"
            } else {
                ""
            }
        )
    }
}
