//! The document-store client (`lockwright::docstore`): its HTTP layer and error table against
//! the loopback store, the client's tables against the model's, the server's clock, bounded
//! time, the fixed recipe's requests, shuttle runs refined against the model, and the opt-in
//! real cluster. `cargo test -p lockwright-checks --test docstore`.

mod docstore_bodies;
mod docstore_shuttle_support;

mod bounded;
mod client_tables;
mod clock;
mod error_table;
mod fixed_recipe;
mod http;
mod loopback_bodies;
mod owned_guard;
mod real_cluster;
mod shuttle;
mod shuttle_store_faults;
