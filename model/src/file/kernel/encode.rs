//! The kernel as bytes, for the checker's packed fingerprints (`file::packed`).

use super::{LockRec, Os};

impl Os {
    /// The length of [`Os::encode`]'s bytes; `None` when a table has more than 255 entries
    /// (its length would not fit a byte).
    pub fn encoded_len(&self) -> Option<usize> {
        let lens = [
            self.inodes.len(),
            self.descs.len(),
            self.locks.len(),
            self.written.len(),
        ];
        if lens.iter().any(|&n| n > usize::from(u8::MAX)) {
            return None;
        }
        Some(2 + 1 + 2 * lens[0] + 1 + 3 * lens[1] + 1 + 4 * lens[2] + 1 + 1 + lens[3])
    }

    /// Every field as bytes, an injective encoding (each table as its length, then its
    /// entries in order), for the checker's packed fingerprints (`file::packed`). Callers
    /// check [`Os::encoded_len`] first.
    #[inline]
    pub fn encode(&self, mut byte: impl FnMut(u8)) {
        let Os {
            path,
            inodes,
            descs,
            locks,
            next_inode,
            written,
        } = self;
        byte(u8::from(path.is_some()));
        byte(path.unwrap_or(0));
        byte(inodes.len() as u8);
        for (&i, &n) in inodes.iter() {
            byte(i);
            byte(n);
        }
        byte(descs.len() as u8);
        for (d, &i) in descs.iter() {
            byte(d.pid);
            byte(d.slot);
            byte(i);
        }
        byte(locks.len() as u8);
        for &l in locks.iter() {
            let (kind, inode, a, b) = match l {
                LockRec::Flock { inode, desc } => (0, inode, desc.pid, desc.slot),
                LockRec::Ofd { inode, desc } => (1, inode, desc.pid, desc.slot),
                LockRec::Posix { inode, pid } => (2, inode, pid, 0),
            };
            byte(kind);
            byte(inode);
            byte(a);
            byte(b);
        }
        byte(*next_inode);
        byte(written.len() as u8);
        for &i in written.iter() {
            byte(i);
        }
    }
}
