//! Small system snapshots: the clock readings a bundle carries so kernel times can be put on the
//! wall clock (`/proc/uptime`, a UTC `date`, `/proc/stat`'s `btime`).

mod clock;

pub use clock::{Btime, DateReading, SnapshotError, Uptime, parse_btime, parse_date, parse_uptime};
