//! Integration tests of the store: recovery, snapshots, torn tails, damage, disk faults.

mod support;

mod damage;
mod faults;
mod import;
mod policies;
mod recovery;
