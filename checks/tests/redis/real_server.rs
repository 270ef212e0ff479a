//! Real `redis-server`s: see the `shuttle` and `sim` modules for the simulated suite.
