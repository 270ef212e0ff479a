//! Stateright model of the writer-lock protocol family (work in progress).

pub mod os;
